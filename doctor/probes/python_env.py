"""The target interpreter: version, arch, glibc, sys.path and PEP 508 marker environment.

The interpreter is run once with a tiny script that imports nothing heavy (doctor/prefetch.py:
the entry point may have started this very command already); when it is the very interpreter
the doctor runs in, the same script runs in-process instead (saves a process start).
"""
from __future__ import annotations

import json
import posixpath
import re
import sys
from typing import Callable, List, Optional, Sequence

from doctor.facts import PythonFacts
from doctor.shell.host.root import Host
from doctor.shell.runtime.prefetch import PYTHON_PROBE, is_self, python_path


def target_python(host: Host, python: Optional[str], timeout: float = 15.0) -> PythonFacts:
    """The interpreter a command judges or drives, as every command finds it: ``--python``, else
    the default (``default_python``: the active environment, else ``python3`` on PATH), asked for
    its own ``sys.executable`` (a pyenv shim or a wrapper names the interpreter it starts)."""
    from doctor.shell.runtime.prefetch import default_python

    return probe_python(host, python or default_python(host.env), timeout)


def probe_python(host: Host, executable: str, timeout: float = 15.0) -> PythonFacts:
    facts = PythonFacts(source="interpreter", executable=executable)
    path = python_path(executable, host.env)
    if path is None:
        facts.error = f"interpreter {executable!r} not found"
        return facts
    facts.executable = path
    if host.is_live and is_self(path, host.env):
        import contextlib
        import io

        buf = io.StringIO()
        saved = sys.path
        sys.path = [""] + [p for p in saved[1:]]
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(PYTHON_PROBE, "<python-probe>", "exec"), {"__name__": "__probe__"})
        finally:
            sys.path = saved
        out = buf.getvalue()
    else:
        result = host.run([path, "-c", PYTHON_PROBE], timeout=timeout)
        if result.timed_out:
            facts.error = f"{path} did not answer within {timeout:g}s"
            return facts
        if not result.ok:
            tail = (result.stderr or result.error or "").strip().splitlines()[-1:] or [""]
            facts.error = f"{path} failed (exit {result.returncode}): {tail[0]}"
            return facts
        out = result.stdout
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError, RecursionError):
        facts.error = f"{path} printed something unexpected"
        return facts
    if not isinstance(data, dict):
        facts.error = f"{path} printed something unexpected"
        return facts
    facts.found = True
    facts.executable = data.get("executable") or path
    facts.version = data.get("version")
    facts.implementation = data.get("implementation")
    facts.machine = data.get("machine")
    facts.glibc = data.get("glibc") or None
    facts.prefix = data.get("prefix")
    facts.base_prefix = data.get("base_prefix")
    facts.externally_managed = data.get("externally_managed") is True
    facts.sys_path = list(data.get("sys_path") or [])
    facts.markers = dict(data.get("markers") or {})
    # The interpreter's own directories are live paths, taken as given even under --root
    # (those that exist: a PYTHONPATH entry of the image's environment is a path inside it).
    live = host.live
    host.add_given(p for p in facts.sys_path + [facts.prefix or "", facts.base_prefix or ""] if p and live.is_dir(p))
    return facts


def python_from_site_packages(dirs: List[str]) -> PythonFacts:
    """No interpreter to ask (a copied site-packages, a foreign-arch image): paths only."""
    return PythonFacts(source="site-packages", found=False, sys_path=list(dirs))


_SITE_DIR = re.compile(r"^(?P<prefix>/.*?)/lib(?:64)?/python(?P<ver>3\.\d+)/(?:site|dist)-packages/?$")
_DEBIAN_DIR = re.compile(r"^(?P<prefix>/usr(?:/local)?)/lib/python3/dist-packages/?$")


def owning_interpreter(dirs: Sequence[str], is_executable: Callable[[str], bool]) -> Optional[str]:
    """The interpreter whose environment holds the site-packages ``dirs`` (``PREFIX/lib/python3.X/
    site-packages`` is ``PREFIX/bin/python3.X``; Debian's ``/usr/lib/python3/dist-packages`` is
    ``/usr/bin/python3``), when every directory names the same prefix and ``is_executable`` finds it;
    else None (a copied directory, or directories of two environments)."""
    owners = set()
    candidates: List[str] = []
    for d in dirs:
        m = _SITE_DIR.match(d) or _DEBIAN_DIR.match(d)
        if not m:
            return None
        owners.add(m.group("prefix"))
        ver = m.groupdict().get("ver")
        bin_dir = posixpath.join(m.group("prefix"), "bin")
        candidates += [posixpath.join(bin_dir, n) for n in ((f"python{ver}",) if ver else ()) + ("python3", "python")]
    if len(owners) != 1:
        return None
    return next((c for c in candidates if is_executable(c)), None)


# Where images keep their interpreters' site-packages: a venv or conda env named by the image's
# environment, the vllm-ascend images' /usr/local/python3.X.Y, the distribution's own Python.
ROOT_PREFIXES = ("/usr/local", "/usr", "/opt/conda")


def python_in_root(host: Host) -> PythonFacts:
    """--root without --python: nothing inside the root is run, so the site-packages
    directories of the image's interpreters are read instead (like --site-packages): those of
    the environment the image activates (VIRTUAL_ENV, CONDA_PREFIX), else every Python found."""
    active = [v.strip().rstrip("/") for v in (host.env.get("VIRTUAL_ENV"), host.env.get("CONDA_PREFIX"))
              if v and v.strip().startswith("/")]
    dirs = _site_dirs(host, active)
    if not dirs:
        found = [posixpath.join("/usr/local", n) for n in host.listdir("/usr/local") if re.match(r"^python3[\d.]*$", n)]
        dirs = _site_dirs(host, found + list(ROOT_PREFIXES))
    facts = python_from_site_packages(dirs)
    facts.error = "not run: nothing inside --root is executed (name an interpreter with --python PATH)"
    return facts


def _site_dirs(host: Host, prefixes: List[str]) -> List[str]:
    dirs: List[str] = []
    for prefix in prefixes:
        for lib in ("lib", "lib64"):
            base = posixpath.join(prefix, lib)
            for name in host.listdir(base):
                if not re.match(r"^python3(\.\d+)?$", name):
                    continue
                for sub in ("site-packages", "dist-packages"):
                    d = posixpath.join(base, name, sub)
                    if d not in dirs and host.is_dir(d):
                        dirs.append(d)
    return dirs
