"""Where a transaction keeps its state, and the only way state files are opened.

Everything under the state directory is untrusted input: it travels with the environment (a
copied venv, a Docker layer, a prefix another user can write) and ``fix``/``rollback`` often run
as root. So, as ssh does for its keys, a state directory or file that belongs to another user
(root excepted) or that others can write is refused, never used; every file is opened with
O_NOFOLLOW (a planted symlink is refused, not written through), created with O_EXCL, checked to
be a regular file, and synced before the step that depends on it.
"""
from __future__ import annotations

import errno
import os
import secrets
import shlex
import stat
from pathlib import Path
from typing import IO, Mapping, Optional

from doctor import xdg
from doctor.errors import DoctorError, UsageError
from doctor.i18n import T
from doctor.shell.host.files import read_fd

STATE_NAME = ".ascend-doctor"
MIN_FREE = 1024 * 1024  # below this a transaction cannot even keep its journal and log
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class UntrustedState(UsageError):
    """A state directory or file the doctor will not act on (exit 2, what to do by hand)."""


def _trusted_owner(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


# the words for what check_stat is asked about, in the catalogue
STATE_KIND = {"file": "fix.state_kind.file", "directory": "fix.state_kind.directory"}


def check_stat(path: Path, st: os.stat_result, what: str) -> None:
    """Refuse state that another user owns or that others may write (ssh's StrictModes)."""
    if not _trusted_owner(st.st_uid):
        raise UntrustedState(T("fix.error.state_foreign_owner", what=T(STATE_KIND[what]), path=str(path), uid=st.st_uid,
                                 me=os.geteuid()))
    if st.st_mode & 0o022:
        raise UntrustedState(T("fix.error.state_writable", what=T(STATE_KIND[what]), path=str(path),
                                 mode=f"{stat.S_IMODE(st.st_mode):o}", command=shlex.join(["chmod", "go-w", "--", str(path)])))


def check_dir(path: Path) -> None:
    """An existing state directory: a real directory (not a symlink), ours or root's, private."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UntrustedState(T("fix.error.state_dir_symlink" if stat.S_ISLNK(st.st_mode) else "fix.error.state_dir_not_dir",
                               path=str(path)))
    check_stat(path, st, "directory")


def make_dir(path: Path) -> Path:
    """A private state directory: created 0700, or an existing one checked."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check_dir(path)
    return path


def state_dir(prefix: str, env: Mapping[str, str]) -> Path:
    """Where the transactions of one environment live: next to it when writable (it travels
    with the environment, e.g. a Docker layer), else under the user's XDG state home."""
    own = Path(prefix) / STATE_NAME
    try:
        make_dir(own)
        if os.access(own, os.W_OK):
            return own
    except UntrustedState:
        raise
    except OSError:
        pass
    alt = xdg.state_dir(env) / (str(Path(prefix).resolve()).strip("/").replace("/", "_") or "root")
    try:
        alt.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        make_dir(alt)
    except UntrustedState:
        raise
    except OSError as e:
        raise DoctorError(T("fix.error.state_cannot_create", own=str(own), alt=str(alt), error=e.strerror or str(e)))
    return alt


def existing_state_dirs(prefix: str, env: Mapping[str, str]) -> list:
    """The state directories of an environment that exist now (nothing is created)."""
    own = Path(prefix) / STATE_NAME
    alt = xdg.state_dir(env) / (str(Path(prefix).resolve()).strip("/").replace("/", "_") or "root")
    out = []
    for d in (own, alt):
        if os.path.lexists(d) and d not in out:
            check_dir(d)
            out.append(d)
    return out


def planned_state_dir(prefix: Optional[str]) -> str:
    """The state directory a dry run names (nothing is created)."""
    return str(Path(prefix or "/") / STATE_NAME)


def free_space(path: Path) -> Optional[int]:
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_bavail * st.f_frsize


# ---------------------------------------------------------------------------------------------
# files


def open_state(path: Path, flags: int, mode: int = 0o600) -> int:
    """A state file's descriptor: never through a symlink, a regular file, ours and private."""
    try:
        fd = os.open(path, flags | NOFOLLOW | CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise UntrustedState(T("fix.error.state_symlink_read", path=str(path))) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedState(T("fix.error.state_not_regular", path=str(path)))
        check_stat(path, st, "file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_state(path: Path, cap: int) -> Optional[bytes]:
    """At most ``cap`` bytes of a state file; None when it does not exist. A symlink, a FIFO or
    a device in its place is refused (UntrustedState), as is one bigger than the cap."""
    try:
        fd = open_state(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        data = read_fd(fd, cap + 1)  # one byte over the cap tells a file that is too big
    finally:
        os.close(fd)
    if len(data) > cap:
        raise UntrustedState(T("fix.error.state_too_large", path=str(path), cap=cap))
    return data


def write_new(path: Path, data: bytes, sync: bool = True) -> None:
    """Create a state file that must not exist yet (O_EXCL: never through a planted link)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600)
    except FileExistsError:
        if os.path.islink(path):
            raise UntrustedState(T("fix.error.state_symlink_write", path=str(path))) from None
        raise
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes) -> None:
    """Atomically replace a state file: a fresh temporary file (O_EXCL), synced, renamed over
    it (a rename replaces a symlink itself, never what it points to), the directory synced."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW | CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_log(path: Path) -> IO[str]:
    """The transaction's log, opened for appending (O_NOFOLLOW, private)."""
    fd = open_state(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    return os.fdopen(fd, "a", encoding="utf-8", errors="replace")
