"""A package index's file list, read as data: which file stands for a version, the glibc its
wheel tags need, when it was uploaded. Pure: the files are the objects an index client returns
(``pypi_simple.DistributionPackage``: ``filename``, ``version``, ``package_type``,
``has_metadata``, ``upload_time``); ``doctor.shell.install.index`` fetches them."""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, Optional, Tuple

from doctor.versions import pep440, valid_pep440


def wheel_tags(filename: str) -> Tuple[str, str, str]:
    """(python tag, abi tag, platform tag) of a wheel filename."""
    parts = filename[:-4].split("-")
    return parts[-3], parts[-2], parts[-1]


def glibc_of(filename: str) -> Dict[str, str]:
    """Minimum glibc per architecture from a wheel's manylinux tags (the lowest tag it claims)."""
    if not filename.endswith(".whl"):
        return {}
    out: Dict[str, str] = {}
    legacy = {"1": "2.5", "2010": "2.12", "2014": "2.17"}
    for plat in wheel_tags(filename)[2].split("."):
        m = re.match(r"^manylinux(?:(1|2010|2014)|_(\d+)_(\d+))_(x86_64|aarch64)$", plat)
        if not m:
            continue
        glibc = legacy[m.group(1)] if m.group(1) else f"{m.group(2)}.{m.group(3)}"
        arch = m.group(4)
        if arch not in out or valid_pep440(glibc) < valid_pep440(out[arch]):  # digits and a dot
            out[arch] = glibc
    return out


def pick_file(files: Iterable[Any], version: str,
              prefer: Tuple[str, str] = ("cp311", "x86_64")) -> Optional[Any]:
    """The file whose metadata stands for ``version``: a wheel for the preferred Python tag and
    architecture when there is one, any wheel otherwise, else the sdist."""
    want = pep440(version)
    cands = [f for f in files if f.version and pep440(f.version) == want]
    if not cands:
        return None

    def rank(f: Any) -> Tuple[int, int, str]:
        if f.package_type != "wheel":
            return (3, 1, f.filename)
        py, _, plat = wheel_tags(f.filename)
        linux_arch = "linux" in plat and prefer[1] in plat
        return (0 if (py == prefer[0] and linux_arch) else 1 if linux_arch else 2,
                0 if f.has_metadata else 1, f.filename)

    return sorted(cands, key=rank)[0]


def release_glibc(files: Iterable[Any], version: str) -> Dict[str, str]:
    """Per-architecture glibc a release's wheels need (the highest over its wheels)."""
    want = pep440(version)
    out: Dict[str, str] = {}
    for f in files:
        if f.version and pep440(f.version) == want:
            for arch, g in glibc_of(f.filename).items():
                if arch not in out or valid_pep440(g) > valid_pep440(out[arch]):
                    out[arch] = g
    return out


def upload_date(f: Any) -> Optional[str]:
    """The PEP 700 upload time of a file as YYYY-MM-DD, when the index gives one."""
    return f.upload_time.date().isoformat() if f.upload_time is not None else None
