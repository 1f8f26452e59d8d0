"""A byte progress bar on stderr for long reads (hashing model shards): rich on a terminal,
nothing in logs or pipes, so --json output stays clean."""
from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator, Optional

Callback = Callable[[str, int, int], None]


@contextlib.contextmanager
def bytes_bar(enabled: bool, label: str) -> Iterator[Optional[Callback]]:
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=30), DownloadColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True, highlight=False), transient=True)
    task = bar.add_task(label, total=None)

    def update(name: str, done: int, total: int) -> None:
        bar.update(task, description=f"{label} {name}", completed=done, total=total or None)

    with bar:
        yield update


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
