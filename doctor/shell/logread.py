"""Logs as byte streams: regular files, standard input, and pipes or devices the user names.

Nothing is read whole: chunks of 1 MiB go to the scanner, which caps line length, so even
/dev/zero (endless, newline-free) keeps memory flat. A progress bar shows on a terminal once an
input is big enough to take a moment."""
from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator, List, Optional

if TYPE_CHECKING:  # rich is imported when a bar is shown
    from rich.progress import Progress as RichProgress, TaskID

CHUNK = 1 << 20
PROGRESS_FROM = 4 << 20  # bytes: below this a log is read before a bar would show


class LogInputError(Exception):
    def __init__(self, path: str, reason: str, directory: bool = False):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.directory = path, reason, directory


@dataclass
class LogInput:
    path: str  # as the user gave it ('-' for standard input)
    stream: BinaryIO
    size: Optional[int]  # bytes, when known (a regular file)

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
        try:
            st = os.fstat(stream.fileno())
            if stat.S_ISREG(st.st_mode):
                size = st.st_size
        except (OSError, ValueError, AttributeError):  # a test's in-memory stdin
            pass
        return LogInput(path, stream, size)
    try:
        st = os.stat(path)
    except OSError as e:
        raise LogInputError(path, e.strerror or str(e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise LogInputError(path, "is a directory", directory=True)
    try:
        stream = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by LogInput.close
    except OSError as e:
        raise LogInputError(path, e.strerror or str(e)) from None
    return LogInput(path, stream, st.st_size if stat.S_ISREG(st.st_mode) else None)


def chunks(log: LogInput, on_bytes: Optional[Callable[[int], None]] = None) -> Iterator[bytes]:
    read = log.stream.read
    while True:
        try:
            data = read(CHUNK)
        except OSError as e:
            raise LogInputError(log.label, e.strerror or str(e)) from None
        if not data:
            return
        if on_bytes is not None:
            on_bytes(len(data))
        yield data


class Progress:
    """A rich progress bar on stderr, only on a terminal, and only once the input is big: a
    known total of PROGRESS_FROM bytes or more, or that many bytes read from a pipe."""

    def __init__(self, inputs: List[LogInput], label: Callable[[str], str], enabled: Optional[bool] = None):
        sizes = [i.size for i in inputs]
        self.total = sum(s for s in sizes if s is not None) if all(s is not None for s in sizes) else None
        self.enabled = bool(sys.stderr.isatty() if enabled is None else enabled)
        self.label = label
        self._name = ""
        self._bar: Optional[RichProgress] = None
        self._task: Optional[TaskID] = None
        self._seen = 0

    def start(self, name: str) -> None:
        self._name = name
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, description=self.label(name))

    def advance(self, n: int) -> None:
        self._seen += n
        if self._bar is None and self.enabled:
            big = self.total >= PROGRESS_FROM if self.total is not None else self._seen >= PROGRESS_FROM
            if big:
                self._open()
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self._seen)

    def _open(self) -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress as Bar, TextColumn, TransferSpeedColumn

        from doctor import terminal, textsafe

        self._bar = Bar(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                        console=terminal.console(stderr=True), transient=True)
        self._bar.start()  # a file name is data: shown as written
        self._task = self._bar.add_task(textsafe.markup(self.label(self._name)), total=self.total, completed=self._seen)

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
