"""A byte progress bar on stderr for long reads (hashing model shards): rich on a terminal,
nothing in logs or pipes, so --json output stays clean."""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable, Iterator, Optional

from doctor import textsafe

Callback = Callable[[str, int, int], None]


@contextlib.contextmanager
def bytes_bar(enabled: bool, label: str) -> Iterator[Optional[Callback]]:
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from doctor import terminal

    bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=30), DownloadColumn(), TimeRemainingColumn(),
                   console=terminal.console(stderr=True, highlight=False), transient=True)
    task = bar.add_task(textsafe.markup(label), total=None)

    def update(name: str, done: int, total: int) -> None:  # a shard's name is data: shown as written
        bar.update(task, description=textsafe.markup(f"{label} {name}"), completed=done, total=total or None)

    with bar:
        yield update


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
