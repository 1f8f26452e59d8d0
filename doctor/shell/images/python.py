"""The interpreter of an image and its sys.path, derived from files (nothing in the image runs).

Where ``docker run IMAGE python3`` would start: the config's VIRTUAL_ENV / CONDA_PREFIX, else the
first ``python3`` on the config's PATH, else the usual locations. Its version comes from
``pyvenv.cfg`` or ``include/pythonX.Y/patchlevel.h`` (else the binary's name), its glibc from
the image's libc, its architecture from the image config. sys.path is what ``site`` would build:
PYTHONPATH, the standard library, the site directories and the path lines of their ``.pth``
files. Paths in the returned facts are paths of the view (Host.root + image path): the probes
read them as they are; the caller maps them back to image paths.
"""
from __future__ import annotations

import posixpath
from typing import List, Optional, Tuple

from doctor.facts import PythonFacts
from doctor.parse import pyenv
from doctor.shell.host.root import Host

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # what docker sets
USUAL = ("/usr/local/bin", "/usr/bin", "/opt/conda/bin", "/root/miniconda3/bin", "/opt/python/bin")
LIBC_DIRS = ("/lib/{triplet}", "/usr/lib/{triplet}", "/lib64", "/usr/lib64", "/lib", "/usr/lib")


def find_interpreter(host: Host) -> Tuple[Optional[str], List[str]]:
    """(image path of the interpreter, the places looked at)."""
    env = host.env
    looked: List[str] = []
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(var)
        if prefix:
            for name in ("python3", "python"):
                p = posixpath.join(prefix, "bin", name)
                looked.append(p)
                if _is_file(host, p):
                    return p, looked
    dirs = [d for d in (env.get("PATH") or DEFAULT_PATH).split(":") if d.startswith("/")]
    for d in dirs + [d for d in USUAL if d not in dirs] + _versioned_prefixes(host):
        for name in ("python3", "python"):
            p = posixpath.join(d, name)
            looked.append(p)
            if _is_file(host, p):
                return p, looked
    return None, looked


def _versioned_prefixes(host: Host) -> List[str]:
    """/usr/local/python3.11.13/bin: where the CANN base images put their CPython."""
    return [f"/usr/local/{n}/bin" for n in host.listdir("/usr/local") if n.startswith("python3")]


def _is_file(host: Host, path: str) -> bool:
    return host.path(path).is_file()


def probe_static_python(host: Host, machine: str) -> PythonFacts:
    facts = PythonFacts(source="image")
    exe, looked = find_interpreter(host)
    if exe is None:
        facts.error = "no python3 in the image (looked at " + ", ".join(looked[:6]) + (" ..." if len(looked) > 6 else "") + ")"
        return facts
    facts.executable = exe
    real = host.realpath(exe)
    xy = pyenv.version_from_binary(posixpath.basename(real))
    venv_root = posixpath.dirname(posixpath.dirname(exe))
    cfg_text = host.read_text(posixpath.join(venv_root, "pyvenv.cfg"))
    cfg = pyenv.pyvenv_cfg(cfg_text) if cfg_text is not None else {}
    base_prefix = posixpath.dirname(posixpath.dirname(real))
    if cfg.get("home"):
        base_prefix = posixpath.dirname(cfg["home"].rstrip("/")) or "/"
    prefix = venv_root if cfg else base_prefix
    full = _cfg_version(cfg) or _patchlevel(host, base_prefix, xy)
    if xy is None and full:
        xy = ".".join(full.split(".")[:2])
    if xy is None:
        xy = _lib_version(host, base_prefix)
    if xy is None:
        facts.error = f"cannot tell the Python version of {exe} (no pythonX.Y binary, pyvenv.cfg or patchlevel.h)"
        return facts
    version = full if full and full.startswith(xy + ".") else xy + ".0"
    facts.found = True
    facts.version = version
    facts.implementation = "cpython"
    facts.machine = machine
    facts.glibc = find_glibc(host, machine)
    facts.prefix, facts.base_prefix = prefix, base_prefix
    facts.sys_path = sys_path(host, prefix, base_prefix, xy, cfg)  # the image's own paths: probes read via host
    facts.markers = pyenv.markers(version, machine)
    return facts


def _cfg_version(cfg: dict) -> Optional[str]:
    v = cfg.get("version") or cfg.get("version_info")
    return v.split("-")[0].strip() if v else None


def _patchlevel(host: Host, base_prefix: str, xy: Optional[str]) -> Optional[str]:
    names = [f"python{xy}", f"python{xy}d", f"python{xy}m"] if xy else [
        n for n in host.listdir(posixpath.join(base_prefix, "include")) if n.startswith("python3")]
    for name in names:
        text = host.read_text(posixpath.join(base_prefix, "include", name, "patchlevel.h"))
        if text:
            return pyenv.patchlevel(text)
    return None


def _lib_version(host: Host, base_prefix: str) -> Optional[str]:
    for lib in ("lib", "lib64"):
        for n in host.listdir(posixpath.join(base_prefix, lib)):
            v = pyenv.version_from_binary(n)
            if v and v.startswith("3."):
                return v
    return None


def sys_path(host: Host, prefix: str, base_prefix: str, xy: str, cfg: dict) -> List[str]:
    """What ``site`` would put on sys.path (image paths, in order, existing directories)."""
    env = host.env
    lib64 = host.is_dir(posixpath.join(base_prefix, "lib64", f"python{xy}"))
    out: List[str] = []

    def add(p: str) -> None:
        p = posixpath.normpath(p)
        if p not in out and host.is_dir(p):
            out.append(p)

    for p in (env.get("PYTHONPATH") or "").split(":"):
        if p.startswith("/"):
            add(p)
    for p in pyenv.stdlib_dirs(base_prefix, xy, lib64):
        add(p)
    in_venv = bool(cfg)
    system_site = not in_venv or cfg.get("include-system-site-packages", "false").lower() == "true"
    sites: List[str] = []
    if not env.get("PYTHONNOUSERSITE") and not in_venv:
        home = env.get("HOME") or "/root"
        sites.append(f"{home}/.local/lib/python{xy}/site-packages")
    if in_venv:
        sites += pyenv.site_dirs(prefix, xy, debian=False, lib64=lib64)
    if system_site:
        debian = base_prefix == "/usr" and (host.is_dir("/usr/lib/python3/dist-packages")
                                            or host.is_dir(f"/usr/local/lib/python{xy}/dist-packages"))
        sites += pyenv.site_dirs(base_prefix, xy, debian=debian, lib64=lib64)
    for site in sites:
        if not host.is_dir(site):
            continue
        add(site)
        for name in host.listdir(site):
            if not name.endswith(".pth"):
                continue
            text = host.read_text(posixpath.join(site, name)) or ""
            for line in pyenv.pth_paths(text):
                add(line if line.startswith("/") else posixpath.join(site, line))
    return out


def find_glibc(host: Host, machine: str) -> Optional[str]:
    triplet = f"{machine}-linux-gnu"
    for d in LIBC_DIRS:
        d = d.format(triplet=triplet)
        path = posixpath.join(d, "libc.so.6")
        if not host.exists(path):
            continue
        real = host.realpath(path)
        named = pyenv.glibc_from_name(posixpath.basename(real))
        if named:
            return named
        try:
            with open(host.path(path), "rb") as fh:
                data = fh.read(16 * 1024 * 1024)
        except OSError:
            continue
        found = pyenv.glibc_from_bytes(data)
        if found:
            return found
    return None
