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
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from doctor import terminal, textsafe

    bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=30), DownloadColumn(), TimeRemainingColumn(),
                   console=terminal.console(stderr=True, highlight=False), transient=True)
    task = bar.add_task(textsafe.markup(label), total=None)

    def update(name: str, done: int, total: int) -> None:  # a shard's name is data: shown as written
        bar.update(task, description=textsafe.markup(f"{label} {name}"), completed=done, total=total or None)

    with bar:
        yield update
