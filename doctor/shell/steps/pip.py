"""pip steps of a resolved plan: download exactly the files the resolver named, every one
checked against its hash (pip's --require-hashes, then our own sha256), and install each step
from those files only (--no-index --no-deps)."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from doctor.errors import DoctorError


def hashed_requirements(files: Sequence) -> str:
    """One ``name==version --hash=...`` line per resolved file (pip's hash-checking mode)."""
    lines = []
    for r in files:
        hashes = " ".join(f"--hash={algo}:{digest}" for algo, digest in sorted(r.hashes.items()))
        lines.append(f"{r.name}=={r.version} {hashes}".rstrip())
    return "\n".join(lines) + "\n"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(files: Sequence, directory: Path) -> Dict[str, Path]:
    """name -> the file in ``directory`` for each resolved file, its sha256 checked."""
    out: Dict[str, Path] = {}
    for r in files:
        path = directory / r.filename
        if not path.is_file():
            raise DoctorError(f"{r.filename} is missing from {directory}")
        want = r.hashes.get("sha256")
        if not want:
            raise DoctorError(f"{r.filename}: the resolver gave no sha256 to check it against")
        got = sha256_of(path)
        if got != want:
            raise DoctorError(f"{r.filename}: sha256 {got} does not match the resolved {want} (file altered or corrupt)")
        out[r.name] = path
    return out


def download_resolved(steps, plan, choice, env: Mapping[str, str], runner, dest: Path, timeout: float,
                      on_start: Optional[Callable[[int], None]] = None) -> List[Dict]:
    """The download phase of a resolved plan; returns each step's install command. ``runner``
    runs pip through shell.proc; ``on_start`` journals its process (a killed doctor's download
    must end before the next fix touches anything)."""
    files = list(plan.resolved_files)
    (dest.parent / "resolved-requirements.txt").write_text(hashed_requirements(files))  # kept for the record
    # the doctor fetches exactly these files itself: in parallel, each sha256 checked, from its
    # cache when a dry run or an earlier --apply left them there (doctor.shell.downloads)
    from doctor.shell.downloads import fetch_resolved
    from doctor.shell.progress import bytes_bar

    cfg = getattr(choice, "index", None)
    with bytes_bar(True, "download") as bar:
        fetch_resolved(files, dest, cert=cfg.cert if cfg else None, proxy=cfg.proxy if cfg else None,
                       index_urls=cfg.urls if cfg else (), deadline=timeout,
                       progress=(lambda d, t, name: bar(name, d, t)) if bar else None)
    runner.note(f"downloaded {len(files)} files ({sum(r.size or 0 for r in files)} bytes), sha256 checked")
    paths = verify(files, dest)
    from doctor.shell.downloads import read_metadata

    for p in paths.values():
        read_metadata(p)  # every file readable before anything changes
    inst = choice.installer
    out: List[Dict] = []
    for s in steps:
        if s.action == "remove":
            out.append({"argv": list(s.argv)})
        elif s.kind == "pip" and s.action == "install":
            names = [canonicalize_name(Requirement(p).name) for p in s.packages]
            out.append({"argv": inst.install_files([str(paths[n]) for n in names])})
        elif s.kind == "fetch":
            out.append({"argv": None, "note": "done in the download phase"})
        else:
            out.append({"argv": list(s.argv) if s.argv else None})
    return out
