"""A byte progress bar on stderr for long reads (hashing model shards): rich on a terminal,
nothing in logs or pipes, so --json output stays clean."""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Callable, Iterator, Optional

from doctor import textsafe

Callback = Callable[[str, int, int], None]


class ByteBar:
    """The one byte bar: bytes read or downloaded so far, as a rich bar on stderr, only on a
    terminal (nothing in logs or pipes, so --json output stays clean). ``speed``: transfer speed
    and elapsed time (an image read), else the time remaining (hashing, a download). The
    description names data (a shard, an image): shown as written, never read as markup."""

    def __init__(self, description: str, enabled: bool = True, speed: bool = False, width: int = 30):
        self.description = textsafe.markup(description)
        self.enabled = enabled and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        self.speed, self.width = speed, width
        self.bar: Any = None
        self.task: Any = None
        self._last = 0.0

    def __enter__(self) -> "ByteBar":
        if self.enabled:
            from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn, TransferSpeedColumn)

            from doctor import terminal

            timing = [TransferSpeedColumn(), TimeElapsedColumn()] if self.speed else [TimeRemainingColumn()]
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=self.width), DownloadColumn(),
                                *timing, console=terminal.console(stderr=True, highlight=False), transient=True)
            self.bar.__enter__()
            self.task = self.bar.add_task(self.description, total=None)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def total(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, total=n)

    def update(self, count: int) -> None:
        """Bytes so far (at most ten redraws a second)."""
        now = time.monotonic()
        if self.bar is not None and now - self._last > 0.1:
            self._last = now
            self.bar.update(self.task, completed=count)

    def status(self, text: str) -> None:
        """What the source says it is doing (an engine's pull status: data)."""
        if self.bar is not None:
            self.bar.update(self.task, description=f"{self.description}: {textsafe.markup(text[:60])}")

    def item(self, name: str, done: int, total: int) -> None:
        """One item of several (a shard), its bytes done of its total."""
        if self.bar is not None:
            self.bar.update(self.task, description=f"{self.description} {textsafe.markup(name)}", completed=done,
                            total=total or None)


@contextlib.contextmanager
def bytes_bar(enabled: bool, label: str) -> Iterator[Optional[Callback]]:
    """A :class:`ByteBar` as the ``(name, done, total)`` callback the hashing and downloads take;
    None when no bar is shown."""
    with ByteBar(label, enabled=enabled) as bar:
        yield bar.item if bar.bar is not None else None


class StepProgress:
    """Per-step progress of a transaction on stderr: rich bars on a terminal, one plain line per
    step in logs. Key -1 is the download phase; 0.. the plan's steps."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar: Any = None
        self.tasks: dict = {}
        self.texts: dict = {}
        self.plain = enabled and not sys.stderr.isatty()

    def __enter__(self) -> "StepProgress":
        if self.enabled and not self.plain:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            from doctor import terminal

            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                TimeElapsedColumn(), console=terminal.console(stderr=True, highlight=False),
                                transient=False)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            try:
                self.bar.__exit__(*exc)
            except OSError:  # the terminal is gone (SIGHUP): the outcome matters, not the bar
                pass

    def _count(self) -> int:
        return len([k for k in self.texts if k >= 0])

    def add(self, key: int, text: str) -> None:
        self.texts[key] = text
        if self.bar is not None:
            self.tasks[key] = self.bar.add_task(textsafe.markup(text), total=1, start=False)  # names data

    def start(self, key: int) -> None:
        if self.plain:
            where = "download" if key < 0 else f"{key + 1}/{self._count()}"
            self._print(f"[{where}] {self.texts.get(key, '')}")
        if self.bar is not None and key in self.tasks:
            self.bar.start_task(self.tasks[key])

    def skip(self, key: int, note: str) -> None:
        if self.plain:
            self._print(f"[{key + 1}/{self._count()}] {self.texts.get(key, '')}: skipped ({note})")
        self.done(key)

    def done(self, key: int) -> None:
        if self.bar is not None and key in self.tasks:
            self.bar.update(self.tasks[key], completed=1)

    def _print(self, line: str) -> None:
        try:
            print(textsafe.clean_block(line), file=sys.stderr, flush=True)
        except OSError:
            pass

    def echo(self, line: str) -> None:
        try:
            if self.bar is not None:
                self.bar.console.print(line, markup=False, highlight=False, style="dim")
            else:
                print(textsafe.clean_block(line), file=sys.stderr)  # a step's output: data
        except OSError:
            pass


@contextlib.contextmanager
def waiting(enabled: bool, text: str, after: float = 2.0) -> Iterator[None]:
    """A spinner line on stderr with ``text`` once the wait has lasted ``after`` seconds (a wait
    on npu-smi, an image being read, a remote host), gone when it ends; only on a terminal, so
    a pipe, a log and --json output get nothing extra."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    import threading

    from rich.console import Console

    status = Console(stderr=True, highlight=False).status(text)
    lock = threading.Lock()
    shown = {"on": False, "done": False}

    def show() -> None:
        with lock:
            if not shown["done"]:
                status.start()
                shown["on"] = True

    timer = threading.Timer(after, show)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            shown["done"] = True
            if shown["on"]:
                status.stop()
