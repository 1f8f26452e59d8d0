"""One fix or rollback at a time per environment: an exclusive flock on ``<state>/lock``. The
kernel drops it when the holder dies, so a killed fix never leaves a stale lock. The file names
the holder for the refusal message; it is opened O_NOFOLLOW (a planted link is refused, never
truncated through)."""
from __future__ import annotations

import datetime
import errno
import os
from pathlib import Path
from typing import Optional

from doctor.errors import UsageError
from doctor.shell.transaction.statedir import open_state

BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)


def _holder(fd: int) -> str:
    return os.read(fd, 200).decode("utf-8", "replace").strip() or "unknown process"


class Lock:
    def __init__(self, path: Path, what: str):
        self.path = path
        self.what = what
        self.fd: Optional[int] = None

    def __enter__(self) -> "Lock":
        import fcntl

        fd = open_state(self.path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _holder(fd) if e.errno in BUSY else ""
            os.close(fd)
            if e.errno not in BUSY:
                raise
            raise self.refusal(holder)
        os.ftruncate(fd, 0)
        now = datetime.datetime.now().isoformat(timespec="seconds")
        os.write(fd, f"pid {os.getpid()}, {self.what}, since {now}\n".encode())
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
            fd = open_state(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in BUSY:
                raise
            raise self.refusal(_holder(fd))
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
