"""The files `pip download` left for a transaction: which distribution and version each one is
(``packaging`` parses wheel and sdist file names) and what its metadata says (the one metadata
reader, doctor.parse.metadata), checked before anything in the environment changes."""
from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.requirements import Requirement
from packaging.utils import (InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename,
                             parse_wheel_filename)
from packaging.version import InvalidVersion, Version

from doctor.errors import DoctorError
from doctor.parse.metadata import CoreMetadata, parse_core_metadata

MAX_METADATA = 4 * 1024 * 1024


def file_name_version(filename: str) -> Optional[Tuple[str, str]]:
    """(canonical name, version) of a wheel or sdist file name, None for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return canonicalize_name(name), str(version)
        if filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            return canonicalize_name(name), str(version)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion, ValueError):
        return None
    return None


def read_metadata(path: Path) -> CoreMetadata:
    """Name, Version and Requires-Dist of a downloaded wheel or sdist; DoctorError when the file
    is damaged."""
    try:
        if path.name.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                bad = z.testzip()
                if bad is not None:
                    raise DoctorError(f"downloaded file {path.name} is corrupt ({bad} fails its CRC check)")
                names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
                if not names:
                    raise DoctorError(f"downloaded file {path.name} is not a wheel (no .dist-info/METADATA)")
                with z.open(names[0]) as fh:
                    raw = fh.read(MAX_METADATA)
        elif path.name.endswith(".tar.gz"):
            with tarfile.open(path, "r:gz") as tar:
                member = next((m for m in tar if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")), None)
                if member is None or not member.isfile():
                    raise DoctorError(f"downloaded file {path.name} has no PKG-INFO")
                member_file = tar.extractfile(member)
                raw = member_file.read(MAX_METADATA) if member_file is not None else b""
        else:
            raise DoctorError(f"downloaded file {path.name}: unknown format")
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as e:
        raise DoctorError(f"downloaded file {path.name} is corrupt: {e}")
    meta = parse_core_metadata(raw)
    if meta.problem:
        raise DoctorError(f"downloaded file {path.name}: {meta.problem}")
    return meta


def match_downloads(specs: Sequence[str], directory: Path) -> Dict[str, Path]:
    """The downloaded file for each requirement string, checked (readable, right name/version)."""
    files: Dict[str, List[Tuple[str, Path]]] = {}
    for p in sorted(directory.iterdir()):
        nv = file_name_version(p.name)
        if nv:
            files.setdefault(nv[0], []).append((nv[1], p))
    out: Dict[str, Path] = {}
    for spec in specs:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        cands = [p for v, p in files.get(name, []) if req.url or contains(req, v)]
        if not cands:
            raise DoctorError(f"pip download did not produce {spec}")
        meta = read_metadata(cands[0])
        if meta.canonical_name != name or (not req.url and not contains(req, meta.version)):
            raise DoctorError(f"downloaded file {cands[0].name} holds {meta.canonical_name} {meta.version}, not {spec}")
        out[spec] = cands[0]
    return out


def contains(req: Requirement, version: str) -> bool:
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except (InvalidVersion, ValueError):
        return False
