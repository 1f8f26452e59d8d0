"""The transaction's bookkeeping on disk: state directory, lock, journal, file backups and the
snapshot of what was on disk before, and putting those files back. No pip here.

Layout (docs/fix.md): ``<target prefix>/.ascend-doctor/`` (or, when the prefix is not writable,
``$XDG_STATE_HOME/ascend-doctor/<prefix with / as _>``) holds ``lock``, ``last`` (id of the last
committed transaction), ``constraints.txt`` (the pins) and ``transactions/<id>/`` with
``journal.json``, ``pip.log``, ``snapshot.json``, ``backup/`` and ``wheels/`` (downloads).
"""
from __future__ import annotations

import datetime
import errno
import filecmp
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set

from doctor.errors import DoctorError, UsageError
from doctor.facts import Distribution
from doctor.parse import metadata
from doctor.shell import proc
from doctor.shell.files import read_text
from doctor.shell.host import Host

STATE_NAME = ".ascend-doctor"
MIN_FREE = 1024 * 1024  # below this a transaction cannot even keep its journal and log

# Journal states. A transaction in one of UNFINISHED was left by a doctor that died or could
# not roll back: nothing else may change the environment until `rollback` has finished it.
BEFORE_CHANGES = ("started", "downloading")  # nothing in the environment changed yet
UNFINISHED = BEFORE_CHANGES + ("installing", "rolling-back", "rolling-back-later", "rollback-failed")
FINAL = ("committed", "rolled-back", "rolled-back-later", "aborted")


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


def free_space(path: Path) -> Optional[int]:
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


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
            raise self.refusal(holder)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, {self.what}, since {_now()}\n".encode())
        self.fd = fd
        return self

    def refusal(self, holder: str) -> UsageError:
        return UsageError(f"another ascend-doctor fix or rollback is changing this environment ({holder}); "
                          f"wait for it to finish (lock: {self.path})")

    def refuse_if_held(self) -> None:
        """The refusal, when a live process holds the lock now (nothing is created or taken):
        its transaction is unfinished because it is running, not because it was left."""
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            raise self.refusal(os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown process")
        finally:
            os.close(fd)

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
        j = cls(d, {"id": d.name, "status": "started", "started": _now(), "pid": os.getpid(),
                    "pid_start": proc.process_start_time(os.getpid())})
        try:
            j.save()
        except OSError:
            j.discard()
            raise
        return j

    def discard(self) -> None:
        """A transaction that failed before it changed anything leaves nothing behind."""
        shutil.rmtree(self.dir, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path) -> "Journal":
        text = read_text(str(directory / "journal.json"), cap=64 * 1024 * 1024)
        try:
            data = json.loads(text) if text is not None else None
        except (ValueError, RecursionError) as e:
            raise UsageError(f"cannot read the journal in {directory}: {e}")
        if not isinstance(data, dict):
            raise UsageError(f"cannot read the journal in {directory}")
        return cls(directory, data)

    def update(self, **values) -> None:
        self.data.update(values)
        self.save()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(self.data, indent=1, ensure_ascii=False))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError:
            try:
                os.unlink(tmp)  # a half-written file on a full disk
            except OSError:
                pass
            raise

    @property
    def status(self) -> str:
        return str(self.data.get("status") or "")


def last_transaction(state: Path) -> Optional[Path]:
    name = (read_text(str(state / "last"), cap=4096) or "").strip()
    if not name or "/" in name or name in (".", ".."):
        return None
    d = state / "transactions" / name
    return d if d.is_dir() else None


def _status(d: Path) -> Optional[str]:
    text = read_text(str(d / "journal.json"), cap=64 * 1024 * 1024)
    try:
        data = json.loads(text) if text else None
    except (ValueError, RecursionError):
        return None
    return data.get("status") if isinstance(data, dict) else None


def unfinished(state: Path) -> List[Path]:
    """Transactions a killed doctor left half-done, or whose rollback failed (their journal
    says so), oldest first."""
    base = state / "transactions"
    if not base.is_dir():
        return []
    return [d for d in sorted(base.iterdir()) if _status(d) in UNFINISHED]


# ---------------------------------------------------------------------------------------------
# the processes of a transaction


def record_process(pid: int) -> Dict[str, object]:
    """What the journal keeps of a step's process: its group and its start time, so that a later
    doctor can tell our pip (still running after the doctor was killed) from a new process that
    got the same number."""
    return {"pid": pid, "pgid": pid, "start": proc.process_start_time(pid)}


def leftover_processes(journal: "Journal") -> Optional[Dict[str, Any]]:
    """The process of the journal's current step when it (or anything in its group) still runs:
    its record in the journal (JSON: ``pgid`` an int, ``pid`` and ``start`` when known)."""
    current = journal.data.get("current") or {}
    if not isinstance(current, dict) or not isinstance(current.get("pgid"), int):
        return None
    pid, pgid, start = current.get("pid"), current["pgid"], current.get("start")
    leader = isinstance(pid, int) and start is not None and proc.process_start_time(pid) == start
    # While any process is left in a group, the kernel gives nobody its number: members of the
    # group are ours even when the leader is gone. A live leader with another start time is not.
    if leader or (proc.process_start_time(pgid) is None and proc.group_alive(pgid)):
        return current
    return None


def wait_for_leftovers(journal: "Journal", timeout: float = 30.0, grace: float = 3.0,
                       say: Callable[[str], None] = lambda s: None) -> None:
    """A doctor killed during a step leaves its pip to PDEATHSIG and the guard (milliseconds);
    the next doctor must not touch the files before pip is gone. Wait for it; after ``grace``
    seconds kill what is left of the transaction's own group; refuse if even that does not
    end it (a process stuck in the kernel)."""
    left = leftover_processes(journal)
    if left is None:
        return
    say(f"waiting for pid {left['pid']} of transaction {journal.data.get('id')} to end")
    start = time.monotonic()
    killed = False
    while left is not None:
        waited = time.monotonic() - start
        if not killed and waited > grace:
            try:  # ours beyond doubt: its start time, or a group whose number cannot be reused
                os.killpg(int(left["pgid"]), 9)
            except OSError:
                pass
            killed = True
        if waited > timeout:
            raise UsageError(f"process {left['pid']} of transaction {journal.data.get('id')} is still running "
                             f"and would race the rollback; stop it first: kill -9 -- -{left['pgid']}")
        time.sleep(0.05)
        left = leftover_processes(journal)


# ---------------------------------------------------------------------------------------------
# distributions and their files


def dist_record(d: Distribution) -> Dict[str, object]:
    return {"name": d.name, "version": d.version, "location": d.location, "metadata_path": d.metadata_path,
            "editable": d.editable, "direct_url": d.direct_url, "installer": d.installer}


_LIVE = Host()
MAX_RECORD = 64 * 1024 * 1024


def scan_dists(paths: Iterable[str]) -> Dict[str, Distribution]:
    """The distributions in the target's site directories (live paths: a transaction changes
    the live environment only)."""
    return metadata.scan(list(paths), _LIVE).dists


def record_entries(d: Distribution) -> List[str]:
    """The paths a distribution's RECORD lists, absolute."""
    text = read_text(os.path.join(d.metadata_path, "RECORD"), cap=MAX_RECORD)
    if text is None:
        return []
    return [os.path.normpath(os.path.join(d.location, p)) for p in metadata.record_paths(text)]


def dist_files(d: Distribution) -> List[str]:
    """Every file pip would remove for this distribution: its RECORD, the whole metadata
    directory and the bytecode of its .py files."""
    meta = Path(d.metadata_path)
    out: List[str] = []
    seen: Set[str] = set()
    caches: Dict[str, List[str]] = {}

    def add(p: str) -> None:
        p = os.path.normpath(p)
        if p not in seen and (os.path.isfile(p) or os.path.islink(p)):
            seen.add(p)
            out.append(p)

    for p in record_entries(d):
        add(p)
        if p.endswith(".py"):
            cache = os.path.join(os.path.dirname(p), "__pycache__")
            if cache not in caches:
                try:
                    caches[cache] = os.listdir(cache)
                except OSError:
                    caches[cache] = []
            stem = os.path.basename(p)[:-3] + "."
            for c in caches[cache]:
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


def identical(src: Path, dest: str) -> bool:
    """The file on disk already is the backed-up one (bytes, link target and mode): nothing to
    write. A read-only environment that nothing changed is then restored without a write."""
    try:
        if os.path.islink(src):
            return os.path.islink(dest) and os.readlink(dest) == os.readlink(src)
        if os.path.islink(dest) or not os.path.isfile(dest):
            return False
        a, b = os.stat(src), os.stat(dest)
        if a.st_size != b.st_size or (a.st_mode & 0o7777) != (b.st_mode & 0o7777):
            return False
        return filecmp.cmp(str(src), dest, shallow=False)
    except OSError:
        return False


def restore_files(files: Iterable[str], backup_root: Path) -> List[str]:
    """Put backed-up files back (skipping those already identical); returns those that could
    not be restored."""
    failed = []
    for f in files:
        src = backup_root / f.lstrip("/")
        if identical(src, f):
            continue
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


def remove_files(files: Iterable[str]) -> List[str]:
    """Delete files (and the directories that become empty); returns those that could not be
    deleted (a read-only file system: the caller reports, never crashes)."""
    dirs = set()
    failed = []
    for f in files:
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError:
            failed.append(f)
        dirs.add(os.path.dirname(f))
    prune_empty(dirs)
    return failed


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
    back. Returns what could not be done ("cannot delete X", "cannot restore X")."""
    new_files, new_dirs = snapshot.new_paths()
    failed: List[str] = []
    for f in new_files:
        try:
            if os.path.isdir(f) and not os.path.islink(f):
                shutil.rmtree(f)
            else:
                os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError:
            failed.append(f"cannot delete {f}")
    for d in sorted(new_dirs, key=len, reverse=True):
        shutil.rmtree(d, ignore_errors=True)
        if os.path.isdir(d):
            failed.append(f"cannot delete {d}/")
    failed += [f"cannot restore {f}" for f in restore_files(backed_up, backup_root)]
    for d in sorted(snapshot.dirs):  # empty directories an uninstall removed
        if not os.path.isdir(d):
            try:
                os.makedirs(d, exist_ok=True)
            except OSError:
                failed.append(f"cannot recreate {d}/")
    return failed

