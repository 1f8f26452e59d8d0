"""Where the serving process's ``import vllm`` (vllm_ascend, torch, torch_npu) finds its package.

The installed distribution is one thing; what the serving process imports is another. A launch
script that keeps ``export PYTHONPATH=$PYTHONPATH:/vllm-workspace/vllm`` after vllm was
reinstalled makes ``import vllm`` load the source tree (PYTHONPATH entries come before
site-packages on sys.path), whatever the metadata says.

Nothing is imported (importing the package is running it): the serving process's sys.path
(PYTHONPATH from its environment or the --serve-args-file exports, then the interpreter's own
entries) is walked the way Python's path finder walks it: in each entry a directory with an
``__init__`` file is a regular package and wins, then a module file; a directory without
``__init__`` is only a namespace portion, used when no entry has the real thing.
"""
from __future__ import annotations

import os
import posixpath
from typing import Iterable, List, Optional, Tuple

from doctor.facts import Facts, ImportLocation, ImportsFacts, canonical
from doctor.shell.host.root import Host

WATCHED = (("vllm", "vllm"), ("vllm_ascend", "vllm-ascend"), ("torch", "torch"), ("torch_npu", "torch-npu"))
INIT_FILES = ("__init__.py", "__init__.pyc")
MODULE_SUFFIXES = (".py", ".pyc", ".so", ".abi3.so")


def split_path(value: Optional[str], cwd: str) -> List[str]:
    """PYTHONPATH entries as the serving process gets them: empty entries and variables the
    script could not expand (``$PYTHONPATH`` when it was unset) dropped, relative entries made
    absolute against the working directory (as ``site`` does)."""
    out: List[str] = []
    for part in (value or "").split(os.pathsep):
        part = part.strip()
        if not part or "$" in part:
            continue
        part = posixpath.normpath(part if part.startswith("/") else posixpath.join(cwd, part))
        if part not in out:
            out.append(part)
    return out


def serving_sys_path(interpreter_path: Iterable[str], env_python_path: List[str], serve_python_path: List[str]) -> List[str]:
    """The interpreter's sys.path (read with the doctor's environment, whose PYTHONPATH entries
    lead it) with those leading entries replaced by the serving process's PYTHONPATH."""
    rest = [posixpath.normpath(p) for p in interpreter_path if p]
    for entry in env_python_path:
        if rest and rest[0] == entry:
            rest.pop(0)
    out: List[str] = []
    for p in serve_python_path + rest:
        if p not in out:
            out.append(p)
    return out


def locate(host: Host, entries: Iterable[str], name: str) -> Tuple[Optional[str], Optional[str], str]:
    """(found path, sys.path entry, kind) of ``import name`` on these entries."""
    portion: Optional[Tuple[str, str]] = None
    for entry in entries:
        if not host.is_dir(entry):
            continue  # a missing entry, or a zip file (no stack package ships as one)
        base = posixpath.join(entry, name)
        is_dir = host.is_dir(base)
        if is_dir and any(host.is_file(posixpath.join(base, init)) for init in INIT_FILES):
            return base, entry, "package"
        for suffix in MODULE_SUFFIXES:
            if host.is_file(base + suffix):
                return base + suffix, entry, "module"
        if is_dir and portion is None:
            portion = (base, entry)
    if portion is not None:
        return portion[0], portion[1], "namespace"
    return None, None, ""


def _installed_dir(facts: Facts, dist_name: str, module: str) -> Optional[str]:
    """Where the installed distribution has ``module``: site-packages, or an editable install's
    source tree."""
    d = facts.dist(dist_name)
    if d is None:
        return None
    if d.editable and d.direct_url and d.direct_url.startswith("file://"):
        return posixpath.join(d.direct_url[len("file://"):], module)
    return posixpath.join(d.location, module) if d.location else None


def _same(host: Host, found: str, installed: str) -> bool:
    if host.realpath(found) == host.realpath(installed):
        return True
    # an editable install of a src-layout project keeps the package in <source>/src/<name>
    src = posixpath.join(posixpath.dirname(installed), "src", posixpath.basename(installed))
    return host.realpath(found) == host.realpath(src)


def probe_imports(host: Host, facts: Facts) -> Optional[ImportsFacts]:
    py = facts.python
    if py is None or facts.packages is None or not py.sys_path:
        return None
    env_path = split_path(host.env.get("PYTHONPATH"), host.cwd)
    out = ImportsFacts(python_path=env_path, python_path_source="environment")
    m = facts.mooncake
    if m is not None and m.serve_args is not None and "PYTHONPATH" in m.serve_env:
        out.python_path = split_path(m.serve_env["PYTHONPATH"], host.cwd)
        out.python_path_source = m.serve_args_source
    out.sys_path = serving_sys_path(py.sys_path, env_path, out.python_path)
    for module, dist in WATCHED:
        if facts.dist(dist) is None:
            continue  # nothing installed to compare with (the stack rules report what is missing)
        found, entry, kind = locate(host, out.sys_path, module)
        installed = _installed_dir(facts, dist, module)
        loc = ImportLocation(name=module, dist=canonical(dist), found=found, entry=entry, kind=kind, installed=installed)
        loc.same_as_installed = found is None or installed is None or _same(host, found, installed)
        out.located.append(loc)
    return out
