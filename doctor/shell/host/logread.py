"""Logs as byte streams: regular files, standard input, and pipes or character devices the user
names.

Nothing is read whole: chunks of 1 MiB go to the scanner, which caps line length and what it
keeps, so memory stays flat. Every read is bounded: all inputs together give at most
``max_bytes`` (so /dev/zero, endless, ends there) and reading stops at a deadline, also while
a pipe or FIFO waits for a writer (it is polled, never read blocking). Either bound, when hit,
is a :class:`LogBoundError` that names it. A progress bar shows on a terminal once the inputs
are big enough to take a moment (:func:`progress`)."""
from __future__ import annotations

import os
import select
import stat
import sys
import time
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator, List, Optional

from doctor.shell.host.progress import TerminalProgress

CHUNK = 1 << 20
PROGRESS_FROM = 4 << 20  # bytes: below this a log is read before a bar would show
MAX_BYTES = 2 << 30  # default bound on the bytes read from all inputs together (--max-bytes)
MAX_SECONDS = 600.0  # default bound on the time spent reading them (--max-seconds)


class LogInputError(Exception):
    def __init__(self, path: str, reason: str, directory: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.directory = path, reason, directory


class LogBoundError(Exception):
    """A bound on reading was hit: ``bound`` is "bytes" or "seconds", ``limit`` its value."""

    def __init__(self, path: str, bound: str, limit: float):
        super().__init__(f"{path}: {bound} bound {limit} reached")
        self.path, self.bound, self.limit = path, bound, limit


@dataclass
class LogInput:
    path: str  # as the user gave it ('-' for standard input)
    stream: BinaryIO
    size: Optional[int]  # bytes, when known (a regular file)
    regular: bool = False  # a regular file: its end is where a read gives nothing

    @property
    def label(self) -> str:
        return "<stdin>" if self.path == "-" else self.path

    def close(self) -> None:
        if self.path != "-":
            self.stream.close()


def open_log(path: str, stdin: Optional[BinaryIO] = None) -> LogInput:
    """Open a log for streaming; LogInputError says why it cannot be read."""
    if path == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        size = None
        regular = False
        try:
            st = os.fstat(stream.fileno())
            if stat.S_ISREG(st.st_mode):
                size, regular = st.st_size, True
        except (OSError, ValueError, AttributeError):  # a test's in-memory stdin
            regular = True  # nothing to wait on
        return LogInput(path, stream, size, regular)
    try:
        st = os.stat(path)
    except OSError as e:
        raise LogInputError(path, e.strerror or str(e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise LogInputError(path, "is a directory", directory=True)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
        raise LogInputError(path, "not a file, pipe or character device")
    # Non-blocking: opening a FIFO (or a path swapped for one since the stat) would wait for a
    # writer; reads are polled under the deadline instead (a regular file ignores the flag).
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        raise LogInputError(path, e.strerror or str(e)) from None
    try:
        st = os.fstat(fd)  # what was opened (the path may have changed since)
        if stat.S_ISDIR(st.st_mode):
            raise LogInputError(path, "is a directory", directory=True)
        regular = stat.S_ISREG(st.st_mode)
        if not (regular or stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            raise LogInputError(path, "not a file, pipe or character device")
        stream = os.fdopen(fd, "rb", buffering=0)  # closed by LogInput.close
    except BaseException:
        os.close(fd)
        raise
    return LogInput(path, stream, st.st_size if regular else None, regular)


class Budget:
    """What all inputs of one run may still read: bytes in all, and time until a deadline."""

    def __init__(self, max_bytes: int = MAX_BYTES, max_seconds: float = MAX_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.max_bytes, self.max_seconds, self.clock = max_bytes, max_seconds, clock
        self.left = max_bytes
        self.deadline = clock() + max_seconds

    def remaining(self) -> float:
        return self.deadline - self.clock()


def chunks(log: LogInput, on_bytes: Optional[Callable[[int], None]] = None,
           budget: Optional[Budget] = None) -> Iterator[bytes]:
    """The bytes of ``log`` in chunks of at most CHUNK, within ``budget`` (LogBoundError past it)."""
    budget = budget if budget is not None else Budget()
    read = log.stream.read
    try:  # polled before each read, a regular file too: one in /proc (kmsg) may wait for data
        fd = log.stream.fileno()
    except (OSError, ValueError, AttributeError):
        fd = -1
    while True:
        if budget.remaining() <= 0:
            raise LogBoundError(log.label, "seconds", budget.max_seconds)
        if budget.left <= 0:
            if _at_end(log, fd):
                return
            raise LogBoundError(log.label, "bytes", budget.max_bytes)
        if fd >= 0:
            _wait_readable(log, fd, budget)
        try:
            data = read(min(CHUNK, budget.left))
        except BlockingIOError:  # a FIFO's writer came and went without a byte, or a spurious wake
            continue
        except OSError as e:
            raise LogInputError(log.label, e.strerror or str(e)) from None
        if data is None:  # non-blocking and nothing yet
            continue
        if not data:
            return
        budget.left -= len(data)
        if on_bytes is not None:
            on_bytes(len(data))
        yield data


def _readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` can be read without waiting (data, end of file or an error), waiting up
    to ``timeout`` seconds. A descriptor that cannot be polled counts as readable."""
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLPRI)
            return bool(poller.poll(max(0, int(timeout * 1000))))
        ready, _, _ = select.select([fd], [], [], max(0.0, timeout))
        return bool(ready)
    except (OSError, ValueError):
        return True


def _wait_readable(log: LogInput, fd: int, budget: Budget) -> None:
    while not _readable(fd, min(budget.remaining(), 1.0)):
        if budget.remaining() <= 0:
            raise LogBoundError(log.label, "seconds", budget.max_seconds)


def _at_end(log: LogInput, fd: int) -> bool:
    """Whether ``log`` has nothing more to give (at the byte bound: a log of exactly that size
    is read whole, not refused)."""
    if log.regular:
        try:
            return log.stream.read(1) == b""
        except OSError:
            return True
    if fd < 0:
        return False
    if not _readable(fd, 0):
        return False
    try:
        return log.stream.read(1) == b""
    except (OSError, ValueError):
        return False


def progress(inputs: List[LogInput], label: Callable[[str], str], enabled: Optional[bool] = None) -> TerminalProgress:
    """The bar of reading ``inputs``: on a terminal (or when ``enabled``), and only once they are
    big: a known total of PROGRESS_FROM bytes or more, or that many bytes read from a pipe. Its
    count is the bytes read from all inputs so far."""
    sizes = [i.size for i in inputs]
    total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
    return TerminalProgress(label, ("text", "bar", "bytes", "speed"), enabled=enabled, total=total,
                            show_from=PROGRESS_FROM, per_stage=False)
