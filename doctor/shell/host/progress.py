"""Progress on a terminal: the one implementation of doctor.progress.Progress for people
(:class:`TerminalProgress`), the byte bar of long reads (:class:`ByteBar`: hashing model
shards, reading an image), the per-step lines of a transaction (:class:`StepProgress`) and the
spinner of a wait (:func:`waiting`). All of them draw on stderr through :func:`rich_bar`, only on
a terminal: nothing in logs or pipes, so --json output stays clean. A description that names data
(a file, a shard, an image, a stage) is shown as written, never read as markup."""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Callable, Dict, Iterator, Optional, Sequence

from doctor import textsafe

Callback = Callable[[str, int, int], None]


def on_a_terminal() -> bool:
    return hasattr(sys.stderr, "isatty") and sys.stderr.isatty()


def rich_bar(columns: Sequence[str], *, width: Optional[int] = None, transient: bool = True,
             highlight: bool = True, console: Any = None) -> Any:
    """The one rich progress display of the doctor, started: on ``console`` (one of
    doctor.terminal's), else on stderr. ``columns`` by name: spinner, text (the description),
    bar (``width`` wide, else rich's 40), bytes (done/total), of (``n/m``), speed, elapsed,
    remaining, last (a task's ``last`` field, dim)."""
    from rich import progress as rp

    from doctor import terminal

    make: Dict[str, Callable[[], Any]] = {"spinner": rp.SpinnerColumn, "text": lambda: rp.TextColumn("{task.description}"),
            "bar": lambda: rp.BarColumn(bar_width=width) if width else rp.BarColumn(),
            "bytes": rp.DownloadColumn, "of": rp.MofNCompleteColumn, "speed": rp.TransferSpeedColumn,
            "elapsed": rp.TimeElapsedColumn, "remaining": rp.TimeRemainingColumn,
            "last": lambda: rp.TextColumn("[dim]{task.fields[last]}", markup=True)}
    kwargs: dict = {} if highlight else {"highlight": False}
    bar = rp.Progress(*(make[c]() for c in columns), console=console or terminal.console(stderr=True, **kwargs),
                      transient=transient)
    bar.start()
    return bar


def stop(bar: Any) -> None:
    """Stop a display; a terminal that is gone (SIGHUP) is not an error: the outcome matters."""
    try:
        bar.stop()
    except OSError:
        pass


class TerminalProgress:
    """doctor.progress.Progress on a terminal: one line, the running part's ``label`` and, once
    counted, how far it is. ``show_from``: drawn only once that many units are known to come
    (a total) or were counted (no total); 0: from the start. ``per_stage``: each stage counts
    from zero (smoke's stages), else the count runs across stages (the logs of one explain)."""

    def __init__(self, label: Callable[[str], str], columns: Sequence[str], *, enabled: Optional[bool] = None,
                 total: Optional[int] = None, show_from: int = 0, per_stage: bool = True):
        self.label, self.columns, self.per_stage = label, columns, per_stage
        self.enabled = on_a_terminal() if enabled is None else bool(enabled)
        self.total, self.show_from = total, show_from
        self.name = ""
        self.done = 0
        self.bar: Any = None
        self.task: Any = None
        if self.enabled and show_from <= 0:
            self.bar = rich_bar(columns)

    def _describe(self, phase: Optional[str] = None) -> str:
        text = self.label(self.name)
        return textsafe.markup(text if phase is None else f"{text} · {phase}")

    def _open(self) -> None:
        self.bar = rich_bar(self.columns)
        self.task = self.bar.add_task(self._describe(), total=self.total, completed=self.done)

    def stage(self, name: str) -> None:
        self.name = name
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(self._describe(), total=None if self.per_stage else self.total)
        elif self.per_stage:
            self.bar.update(self.task, description=self._describe(), total=None, completed=0)
        else:
            self.bar.update(self.task, description=self._describe())

    def step(self, text: str) -> None:
        if self.task is not None:
            self.bar.refresh()

    def count(self, done: int, total: Optional[int], phase: str = "") -> None:
        self.done = done
        if self.bar is None and self.enabled and self.show_from > 0:
            known = self.total if self.total is not None else done
            if known >= self.show_from:
                self._open()
            return
        if self.task is not None:
            if self.per_stage:
                self.bar.update(self.task, description=self._describe(phase), completed=done, total=total)
            else:
                self.bar.update(self.task, completed=done)

    @property
    def shown(self) -> bool:
        return self.bar is not None

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class ByteBar:
    """The one byte bar: bytes read or downloaded so far, as a rich bar on stderr, only on a
    terminal (nothing in logs or pipes, so --json output stays clean). ``speed``: transfer speed
    and elapsed time (an image read), else the time remaining (hashing, a download). The
    description names data (a shard, an image): shown as written, never read as markup."""

    def __init__(self, description: str, enabled: bool = True, speed: bool = False, width: int = 30):
        self.description = textsafe.markup(description)
        self.enabled = enabled and on_a_terminal()
        self.speed, self.width = speed, width
        self.bar: Any = None
        self.task: Any = None
        self._last = 0.0

    def __enter__(self) -> "ByteBar":
        if self.enabled:
            timing = ("speed", "elapsed") if self.speed else ("remaining",)
            self.bar = rich_bar(("text", "bar", "bytes") + timing, width=self.width, highlight=False)
            self.task = self.bar.add_task(self.description, total=None)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()

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
            self.bar = rich_bar(("spinner", "text", "bar", "elapsed"), width=20, transient=False, highlight=False)
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            stop(self.bar)

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
