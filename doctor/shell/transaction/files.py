"""The files of a transaction: which files a distribution owns, copying them aside (synced),
putting them back and deleting them. Every path acted on must lie inside the roots the doctor
computed for the environment (roots.py); a backup is read only from inside the transaction's
own backup directory, never through a link."""
from __future__ import annotations

import filecmp
import os
import shutil
import stat
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set

from doctor.facts import Distribution
from doctor.parse import metadata
from doctor.shell.host.files import read_text
from doctor.shell.host.root import Host
from doctor.shell.transaction.roots import Roots
from doctor.shell.transaction.statedir import CLOEXEC, NOFOLLOW, fsync_dir

_LIVE = Host()
MAX_RECORD = 64 * 1024 * 1024


def scan_dists(paths: Iterable[str]) -> Dict[str, Distribution]:
    """The distributions in the target's site directories (live paths: a transaction changes
    the live environment only)."""
    return metadata.scan(list(paths), _LIVE).dists


def dist_record(d: Distribution) -> Dict[str, object]:
    return {"name": d.name, "version": d.version, "location": d.location, "metadata_path": d.metadata_path,
            "editable": d.editable, "direct_url": d.direct_url, "installer": d.installer}


def record_entries(d: Distribution) -> List[str]:
    """The paths a distribution's RECORD lists, absolute."""
    text = read_text(os.path.join(d.metadata_path, "RECORD"), cap=MAX_RECORD)
    if text is None:
        return []
    return [os.path.normpath(os.path.join(d.location, p)) for p in metadata.record_paths(text)]


def has_record(d: Distribution) -> bool:
    return bool(d.metadata_path) and os.path.isfile(os.path.join(d.metadata_path, "RECORD"))


def dist_files(d: Distribution, roots: Optional[Roots] = None) -> List[str]:
    """Every file pip would remove for this distribution: its RECORD, the whole metadata
    directory and the bytecode of its .py files (only those inside ``roots``: a RECORD naming
    ``../../../etc/x`` names nothing the doctor touches)."""
    meta = Path(d.metadata_path)
    out: List[str] = []
    seen: Set[str] = set()
    caches: Dict[str, List[str]] = {}

    def add(p: str) -> None:
        p = os.path.normpath(p)
        if p not in seen and (os.path.isfile(p) or os.path.islink(p)) and (roots is None or roots.inside(p)):
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
    if meta.is_dir() and not meta.is_symlink():
        for dirpath, _, files in os.walk(meta):
            for f in files:
                add(os.path.join(dirpath, f))
    elif meta.is_file():
        add(str(meta))
    return out


def backup_path(backup_root: Path, f: str) -> Path:
    return backup_root / f.lstrip("/")


def _copy_file(src: str, dest: str, st: os.stat_result) -> None:
    """Copy a regular file to a path that does not exist (O_EXCL: never through a link), with
    its mode, times and (as root) owner; synced."""
    fin = os.open(src, os.O_RDONLY | NOFOLLOW | CLOEXEC)
    try:
        fout = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600)
        try:
            while True:
                block = os.read(fin, 1 << 20)
                if not block:
                    break
                view = memoryview(block)
                while view:
                    view = view[os.write(fout, view):]
            os.fsync(fout)
        finally:
            os.close(fout)
    finally:
        os.close(fin)
    _same_owner(dest, st)
    os.chmod(dest, stat.S_IMODE(st.st_mode), follow_symlinks=False)
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)


def _same_owner(dest: str, st: os.stat_result) -> None:
    if os.geteuid() == 0:
        try:
            os.lchown(dest, st.st_uid, st.st_gid)
        except OSError:
            pass


def _copy(src: str, dest: str) -> None:
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(src), dest)
        _same_owner(dest, st)
        return
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{src} is not a regular file")
    _copy_file(src, dest, st)


def backup_files(files: Iterable[str], backup_root: Path) -> List[str]:
    """Copy files (their bytes synced, mode, times and owner kept) under backup_root by their
    absolute path; the directories they land in are synced too."""
    done = []
    dirs: Set[str] = set()
    for f in files:
        dest = backup_path(backup_root, f)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(dest):
            os.unlink(dest)
        _copy(f, str(dest))
        dirs.add(str(dest.parent))
        done.append(f)
    for d in sorted(dirs, key=len, reverse=True):
        fsync_dir(Path(d))
    return done


def _backup_source(backup_root: Path, f: str) -> Optional[str]:
    """The backed-up copy of ``f``, when it lies inside the backup directory (no link among its
    parents leads out of it)."""
    src = backup_path(backup_root, f)
    real_root = os.path.realpath(backup_root)
    if not os.path.realpath(src.parent).startswith(real_root.rstrip("/") + "/") and \
            os.path.realpath(src.parent) != real_root:
        return None
    return str(src) if os.path.lexists(src) else None


def identical(src: str, dest: str) -> bool:
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
        return filecmp.cmp(src, dest, shallow=False)
    except OSError:
        return False


def restore_files(files: Iterable[str], backup_root: Path, roots: Roots) -> List[str]:
    """Put backed-up files back (skipping those already identical); returns those that could
    not be restored, or that lie outside the environment's roots (never written)."""
    failed = []
    for f in files:
        if not roots.inside(f):
            failed.append(f)
            continue
        src = _backup_source(backup_root, f)
        if src is None:
            failed.append(f)
            continue
        if identical(src, f):
            continue
        try:
            os.makedirs(os.path.dirname(f), exist_ok=True)
            if not roots.inside(f):  # a directory made on the way may not lead out either
                raise OSError(f"{f} leads outside the environment")
            if os.path.lexists(f) and (os.path.islink(f) or not os.path.isdir(f)):
                os.unlink(f)
            _copy(src, f)
        except OSError:
            failed.append(f)
    return failed


def remove_files(files: Iterable[str], roots: Roots) -> List[str]:
    """Delete files (and the directories that become empty) inside the roots; returns those
    that could not be deleted (a read-only file system: the caller reports, never crashes)."""
    dirs = set()
    failed = []
    for f in files:
        if not roots.inside(f):
            failed.append(f)
            continue
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError:
            failed.append(f)
        dirs.add(os.path.dirname(f))
    prune_empty(dirs, roots)
    return failed


def remove_tree(path: str, roots: Roots) -> bool:
    """Delete a file, a link or a whole directory inside the roots; False if it is still there."""
    if not roots.inside(path):
        return not os.path.lexists(path)
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass
    return not os.path.lexists(path)


def prune_empty(dirs: Iterable[str], roots: Roots) -> None:
    """Remove directories left empty, up to (never including) a root."""
    keep = {os.path.normpath(r) for r in roots.allowed} | {"/"}
    for d in sorted(set(dirs), key=len, reverse=True):
        while d and d not in keep and roots.inside(d) and os.path.isdir(d) and not os.path.islink(d):
            try:
                os.rmdir(d)
            except OSError:
                break
            d = os.path.dirname(d)
