"""A Python environment described from its files, without running the interpreter.

Used for images: nothing inside an image is ever executed, so what ``python -c 'import sys'``
would say is derived from the files CPython itself reads at start-up: ``pyvenv.cfg``, the
``site-packages`` layout, ``.pth`` files (their path lines; ``import`` lines are code and are
never run) and ``patchlevel.h`` for the exact version.
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional

_PATCHLEVEL = re.compile(r'^#define\s+PY_VERSION\s+"([0-9][^"]*)"', re.M)
_GLIBC_NAME = re.compile(r"^libc-(\d+\.\d+)\.so$")
_GLIBC_BANNER = re.compile(rb"GNU C Library[^\n\0]*?version (\d+\.\d+)")
_GLIBC_SYMVER = re.compile(rb"GLIBC_(\d+)\.(\d+)(?:\.\d+)?\0")
_BIN_VERSION = re.compile(r"^python(\d+)\.(\d+)$")


def pth_paths(text: str) -> List[str]:
    """The directory lines of a .pth file, as ``site.addpackage`` reads them; lines starting
    with ``import`` are code (skipped: nothing from an image runs), ``#`` lines are comments."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(("import ", "import\t")):
            continue
        out.append(line.rstrip())
    return out


def pyvenv_cfg(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip().lower()] = value.strip()
    return out


def patchlevel(text: str) -> Optional[str]:
    """``#define PY_VERSION "3.11.13"`` in Include/patchlevel.h."""
    m = _PATCHLEVEL.search(text)
    return m.group(1).rstrip("+") if m else None


def version_from_binary(name: str) -> Optional[str]:
    """``python3.11`` -> ``3.11``."""
    m = _BIN_VERSION.match(name)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def glibc_from_name(name: str) -> Optional[str]:
    """Before glibc 2.34 ``libc.so.6`` links to ``libc-2.31.so``."""
    m = _GLIBC_NAME.match(name)
    return m.group(1) if m else None


def glibc_from_bytes(data: bytes) -> Optional[str]:
    """The version in libc's banner string, else its newest symbol version (GLIBC_2.35)."""
    m = _GLIBC_BANNER.search(data)
    if m:
        return m.group(1).decode()
    best = None
    for major, minor in _GLIBC_SYMVER.findall(data):
        v = (int(major), int(minor))
        if best is None or v > best:
            best = v
    return f"{best[0]}.{best[1]}" if best else None


def site_dirs(prefix: str, xy: str, debian: bool, lib64: bool) -> List[str]:
    """``site.getsitepackages()`` for one prefix. Debian's python3 (prefix /usr) uses
    dist-packages; Fedora/openEuler builds with platlibdir lib64 list lib64 first."""
    if debian:
        return [f"/usr/local/lib/python{xy}/dist-packages", "/usr/lib/python3/dist-packages",
                f"/usr/lib/python{xy}/dist-packages"]
    dirs = [f"{prefix}/lib64/python{xy}/site-packages"] if lib64 else []
    return dirs + [f"{prefix}/lib/python{xy}/site-packages"]


def stdlib_dirs(prefix: str, xy: str, lib64: bool) -> List[str]:
    lib = "lib64" if lib64 else "lib"
    nodot = xy.replace(".", "")
    return [f"{prefix}/lib/python{nodot}.zip", f"{prefix}/{lib}/python{xy}", f"{prefix}/{lib}/python{xy}/lib-dynload"]


def markers(version: str, machine: str) -> Dict[str, str]:
    """The PEP 508 marker environment of CPython ``version`` on Linux ``machine``; the kernel
    fields are the host's at run time, unknown here (empty)."""
    parts = version.split(".")
    return {
        "implementation_name": "cpython",
        "implementation_version": version,
        "os_name": "posix",
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": version,
        "python_version": ".".join(parts[:2]),
        "sys_platform": "linux",
    }
