"""How `ascend-doctor mooncake build` shows its steps on stderr: a spinner per step on a
terminal, one line per step for logs and pipes (imported only when a build runs)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Sequence

from doctor import textsafe
from doctor.shell.mooncake.build import Reporter, StepResult

if TYPE_CHECKING:  # rich is imported lazily at run time
    from rich.console import Console
    from rich.progress import TaskID


def _show(argv: Sequence[str]) -> str:
    """The command for display: inline scripts (python -c ...) shortened."""
    return " ".join("<script>" if "\n" in a else a for a in argv)


class PlainReporter(Reporter):
    """One line per step, for logs and pipes."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def start(self, name: str, argv: Sequence[str]) -> None:
        self.console.print(f"→ {name}: {textsafe.clean(_show(argv)[:200])}", markup=False)

    def finish(self, name: str, result: StepResult) -> None:
        mark = "✓" if result.ok else "✗"
        self.console.print(f"{mark} {name} ({result.duration_s:.1f}s)", markup=False)

    def close(self) -> None:
        pass


class RichReporter(Reporter):
    """A spinner per step with the elapsed time and the last line of the log."""

    def __init__(self, console: Console) -> None:
        from doctor.shell.host.progress import rich_bar

        self.progress = rich_bar(("spinner", "text", "elapsed", "last"), transient=False, console=console)
        self.tasks: Dict[str, TaskID] = {}

    def start(self, name: str, argv: Sequence[str]) -> None:
        self.tasks[name] = self.progress.add_task(name, total=None, last=textsafe.markup(_show(argv)[:80]))

    def tick(self, name: str, last_line: str) -> None:  # a line of the build's log: data
        if name in self.tasks:
            self.progress.update(self.tasks[name], last=textsafe.markup(last_line[-90:]))

    def finish(self, name: str, result: StepResult) -> None:
        if name in self.tasks:
            mark = "[green]✓[/]" if result.ok else "[red]✗[/]"
            self.progress.update(self.tasks[name], description=f"{mark} {name}", last="", total=1, completed=1)

    def close(self) -> None:
        self.progress.stop()
