"""The transaction's bookkeeping on disk: state directory, lock, journal, file backups and the
snapshot of what was on disk before, and putting those files back. No pip here.

Layout (docs/fix.md): ``<target prefix>/.ascend-doctor/`` (or, when the prefix is not writable,
``$XDG_STATE_HOME/ascend-doctor/<prefix with / as _>``) holds ``lock``, ``last`` (id of the last
committed transaction), ``constraints.txt`` (the pins) and ``transactions/<id>/`` with
``journal.json``, ``pip.log``, ``snapshot.json``, ``backup/`` and ``wheels/`` (downloads).
"""
from __future__ import annotations

import csv
import datetime
import errno
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Set

from doctor.errors import DoctorError, UsageError
from doctor.facts import Distribution
from doctor.probes.packages import scan

STATE_NAME = ".ascend-doctor"


def state_dir(prefix: str, env: Mapping[str, str]) -> Path:
    """Where the transactions of one environment live: next to it when writable (it travels
    with the environment, e.g. a Docker layer), else under the user's XDG state home."""
    own = Path(prefix) / STATE_NAME
    try:
        own.mkdir(exist_ok=True)
        if os.access(own, os.W_OK):
            return own
    except OSError:
        pass
    home = Path(env.get("XDG_STATE_HOME") or Path(env.get("HOME") or os.path.expanduser("~")) / ".local" / "state")
    alt = home / "ascend-doctor" / (str(Path(prefix).resolve()).strip("/").replace("/", "_") or "root")
    try:
        alt.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DoctorError(f"cannot create a state directory ({own} or {alt}): {e.strerror or e}")
    return alt


def planned_state_dir(prefix: Optional[str]) -> str:
    """The state directory a dry run names (nothing is created)."""
    return str(Path(prefix or "/") / STATE_NAME)


# ---------------------------------------------------------------------------------------------
# lock


class Lock:
    """An exclusive flock on ``<state>/lock``; the kernel drops it when the holder dies, so a
    killed fix never leaves a stale lock. The file names the holder for the refusal message."""

    def __init__(self, path: Path, what: str):
        self.path = path
        self.what = what
        self.fd: Optional[int] = None

    def __enter__(self) -> "Lock":
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                raise
            holder = os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown process"
            os.close(fd)
            raise UsageError(f"another ascend-doctor fix or rollback is changing this environment ({holder}); "
                             f"wait for it to finish (lock: {self.path})")
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, {self.what}, since {_now()}\n".encode())
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        import fcntl

        if self.fd is not None:
            try:
                os.ftruncate(self.fd, 0)
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None


def _now() -> str:
    return datetime.datetime.now().isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------------------
# journal


class Journal:
    """journal.json, rewritten atomically on every change, so a crash leaves the last state."""

    def __init__(self, directory: Path, data: Optional[Dict] = None):
        self.dir = directory
        self.path = directory / "journal.json"
        self.data: Dict = data if data is not None else {}

    @classmethod
    def create(cls, state: Path) -> "Journal":
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        base = state / "transactions"
        base.mkdir(parents=True, exist_ok=True)
        for n in range(1000):
            d = base / (f"{stamp}-{os.getpid()}" + (f"-{n}" if n else ""))
            try:
                d.mkdir()
                break
            except FileExistsError:
                continue
        j = cls(d, {"id": d.name, "status": "started", "started": _now(), "pid": os.getpid()})
        j.save()
        return j

    @classmethod
    def load(cls, directory: Path) -> "Journal":
        try:
            data = json.loads((directory / "journal.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot read the journal in {directory}: {e}")
        return cls(directory, data)

    def update(self, **values) -> None:
        self.data.update(values)
        self.save()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, indent=1, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.path)


def last_transaction(state: Path) -> Optional[Path]:
    marker = state / "last"
    if not marker.is_file():
        return None
    d = state / "transactions" / marker.read_text().strip()
    return d if d.is_dir() else None


def unfinished(state: Path) -> List[Path]:
    """Transactions a killed doctor left half-done (their journal says so)."""
    out = []
    base = state / "transactions"
    if not base.is_dir():
        return out
    for d in sorted(base.iterdir()):
        try:
            status = json.loads((d / "journal.json").read_text()).get("status")
        except (OSError, ValueError):
            continue
        if status in ("started", "downloading", "installing", "rolling-back"):
            out.append(d)
    return out


# ---------------------------------------------------------------------------------------------
# distributions and their files


def dist_record(d: Distribution) -> Dict[str, object]:
    return {"name": d.name, "version": d.version, "location": d.location, "metadata_path": d.metadata_path,
            "editable": d.editable, "direct_url": d.direct_url, "installer": d.installer}


def scan_dists(paths: Iterable[str]) -> Dict[str, Distribution]:
    return scan(list(paths)).dists


def dist_files(d: Distribution) -> List[str]:
    """Every file pip would remove for this distribution: its RECORD, the whole metadata
    directory and the bytecode of its .py files."""
    meta = Path(d.metadata_path)
    out: List[str] = []
    seen: Set[str] = set()

    def add(p: str) -> None:
        p = os.path.normpath(p)
        if p not in seen and (os.path.isfile(p) or os.path.islink(p)):
            seen.add(p)
            out.append(p)

    record = meta / "RECORD"
    if record.is_file():
        with open(record, newline="", encoding="utf-8", errors="replace") as fh:
            for row in csv.reader(fh):
                if not row or not row[0]:
                    continue
                p = os.path.join(d.location, row[0])
                add(p)
                if p.endswith(".py"):
                    cache = os.path.join(os.path.dirname(p), "__pycache__")
                    stem = os.path.basename(p)[:-3] + "."
                    if os.path.isdir(cache):
                        for c in os.listdir(cache):
                            if c.startswith(stem) and c.endswith(".pyc"):
                                add(os.path.join(cache, c))
    if meta.is_dir():
        for dirpath, _, files in os.walk(meta):
            for f in files:
                add(os.path.join(dirpath, f))
    elif meta.is_file():
        add(str(meta))
    return out


def backup_files(files: Iterable[str], backup_root: Path) -> List[str]:
    """Copy files (keeping mode and times) under backup_root by their absolute path."""
    done = []
    for f in files:
        dest = backup_root / f.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if os.path.islink(f):
            if os.path.lexists(dest):
                os.unlink(dest)
            os.symlink(os.readlink(f), dest)
        else:
            shutil.copy2(f, dest)
        done.append(f)
    return done


def restore_files(files: Iterable[str], backup_root: Path) -> List[str]:
    """Put backed-up files back; returns those that could not be restored."""
    failed = []
    for f in files:
        src = backup_root / f.lstrip("/")
        try:
            os.makedirs(os.path.dirname(f), exist_ok=True)
            if os.path.lexists(f) and (os.path.islink(f) or not os.path.isdir(f)):
                os.unlink(f)
            if os.path.islink(src):
                os.symlink(os.readlink(src), f)
            else:
                shutil.copy2(src, f)
        except OSError:
            failed.append(f)
    return failed


def remove_files(files: Iterable[str]) -> None:
    dirs = set()
    for f in files:
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
        dirs.add(os.path.dirname(f))
    prune_empty(dirs)


def prune_empty(dirs: Iterable[str], keep: Iterable[str] = ()) -> None:
    keep_set = {os.path.normpath(k) for k in keep}
    for d in sorted(set(dirs), key=len, reverse=True):
        while d and d not in keep_set and os.path.isdir(d):
            try:
                os.rmdir(d)
            except OSError:
                break
            d = os.path.dirname(d)


# ---------------------------------------------------------------------------------------------
# what was on disk before


@dataclass
class Snapshot:
    """Paths (files and directories) under the tracked roots before the install phase. Anything
    found there afterwards that is not in the snapshot was made by the transaction (including
    half-written files of a killed pip and pip's own ~-prefixed stash directories)."""

    roots: List[str]
    files: Set[str]
    dirs: Set[str]

    @classmethod
    def take(cls, roots: Iterable[str]) -> "Snapshot":
        files: Set[str] = set()
        dirs: Set[str] = set()
        real_roots = [r for r in dict.fromkeys(os.path.normpath(r) for r in roots) if os.path.isdir(r)]
        for root in real_roots:
            for dirpath, dirnames, filenames in os.walk(root):
                dirs.add(dirpath)
                for f in filenames:
                    files.add(os.path.join(dirpath, f))
                for dname in dirnames:  # symlinks to directories are files for our purpose
                    p = os.path.join(dirpath, dname)
                    if os.path.islink(p):
                        files.add(p)
        return cls(real_roots, files, dirs)

    def new_paths(self) -> tuple:
        now = Snapshot.take(self.roots)
        return sorted(now.files - self.files), sorted(now.dirs - self.dirs)

    def to_json(self) -> Dict:
        return {"roots": self.roots, "files": sorted(self.files), "dirs": sorted(self.dirs)}

    @classmethod
    def from_json(cls, data: Dict) -> "Snapshot":
        return cls(list(data["roots"]), set(data["files"]), set(data["dirs"]))


def undo_to_snapshot(snapshot: Snapshot, backed_up: Iterable[str], backup_root: Path) -> List[str]:
    """Delete what the transaction added under the tracked roots, then put every backed-up file
    back. Returns files that could not be restored."""
    new_files, new_dirs = snapshot.new_paths()
    for f in new_files:
        try:
            if os.path.isdir(f) and not os.path.islink(f):
                shutil.rmtree(f)
            else:
                os.unlink(f)
        except FileNotFoundError:
            pass
    for d in sorted(new_dirs, key=len, reverse=True):
        shutil.rmtree(d, ignore_errors=True)
    failed = restore_files(backed_up, backup_root)
    for d in sorted(snapshot.dirs):  # empty directories an uninstall removed
        if not os.path.isdir(d):
            try:
                os.makedirs(d, exist_ok=True)
            except OSError:
                failed.append(d + "/")
    return failed

