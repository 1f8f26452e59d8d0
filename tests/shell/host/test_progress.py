"""doctor/shell/host/progress.py: the terminal progress (TerminalProgress), the byte bar and the
step lines, drawn on a terminal's stderr only (a real pty)."""
import io
import os
import pty
import select
import sys
import time

from doctor.shell.host.progress import ByteBar, bytes_bar


def _on_a_terminal(monkeypatch):
    master, slave = pty.openpty()
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(os.fdopen(slave, "wb", buffering=0), write_through=True))
    return master


def test_the_bar_shows_on_a_terminal_and_names_data_as_written(monkeypatch):
    master = _on_a_terminal(monkeypatch)
    with ByteBar("reading [bold]img[/bold]", speed=True, width=24) as bar:
        assert bar.bar is not None
        bar.total(100)
        bar.update(50)
        bar.status("pulling [red]x")
    with bytes_bar(True, "sha256") as item:
        assert item is not None
        item("a.safetensors", 10, 100)
    shown = _shown(master, "reading [bold]img[/bold]")
    assert "reading [bold]img[/bold]" in shown  # markup in data is text, not style


def test_nothing_in_a_pipe_or_when_off(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with bytes_bar(True, "sha256") as item:
        assert item is None
    with ByteBar("x") as bar:
        assert bar.bar is None
        bar.update(1), bar.total(2), bar.status("s"), bar.item("a", 1, 2)  # no-ops
    assert sys.stderr.getvalue() == ""
    master = _on_a_terminal(monkeypatch)
    with ByteBar("x", enabled=False) as bar:
        assert bar.bar is None and master


def _shown(master, *expected: str, within: float = 10.0) -> str:
    """What reached the terminal, read until every expected text is in it. A pty hands the written
    bytes to its master side asynchronously, so under load one read may return only the first
    escape sequence; wait on the data arriving (select), not on a sleep."""
    sys.stderr.flush()
    shown = b""
    deadline = time.monotonic() + within
    while True:
        text = shown.decode(errors="replace")
        left = deadline - time.monotonic()
        if all(e in text for e in expected) and shown or left <= 0:
            return text
        if select.select([master], [], [], left)[0]:
            shown += os.read(master, 1 << 16)


def test_a_stage_and_its_count_on_one_line(monkeypatch):
    from doctor.shell.host.progress import TerminalProgress

    master = _on_a_terminal(monkeypatch)
    bar = TerminalProgress(lambda s: f"stage {s}", ("spinner", "text", "bar", "of", "elapsed"))
    bar.stage("[red]model")
    bar.count(3, 10, "requests")
    bar.step("tick")
    bar.close()
    shown = _shown(master, "stage [red]model · requests", "3/10")
    assert "stage [red]model · requests" in shown and "3/10" in shown  # data is shown as written
    assert not bar.shown


def test_each_stage_counts_from_zero_or_all_of_them_together(monkeypatch):
    from doctor.shell.host.progress import TerminalProgress

    master = _on_a_terminal(monkeypatch)
    bar = TerminalProgress(lambda s: s, ("text", "of"))
    bar.stage("one")
    bar.count(5, 5, "a")
    bar.stage("two")  # a new stage: nothing done yet
    assert bar.bar.tasks[0].completed == 0 and bar.bar.tasks[0].description == "two"
    bar.close()
    across = TerminalProgress(lambda s: f"reading {s}", ("text", "bytes"), total=300, per_stage=False)
    across.stage("a.log")
    across.count(100, 300)
    across.stage("b.log")
    across.count(250, 300)
    assert across.bar.tasks[0].completed == 250 and across.bar.tasks[0].total == 300
    assert across.bar.tasks[0].description == "reading b.log"
    across.close()
    assert master


def test_a_small_input_shows_no_bar_and_a_big_one_does(monkeypatch):
    from doctor.shell.host.progress import TerminalProgress

    master = _on_a_terminal(monkeypatch)
    small = TerminalProgress(lambda s: s, ("text", "bytes"), total=10, show_from=100, per_stage=False)
    small.stage("a")
    small.count(10, 10)
    assert not small.shown
    piped = TerminalProgress(lambda s: f"reading {s}", ("text", "bytes"), show_from=100, per_stage=False)
    piped.stage("<stdin>")
    piped.count(99, None)
    assert not piped.shown
    piped.count(150, None)  # no total: shown once that much was read
    assert piped.shown and piped.bar.tasks[0].completed == 150
    piped.close()
    assert "reading <stdin>" in _shown(master, "reading <stdin>")


def test_nothing_in_a_pipe_unless_asked(monkeypatch):
    from doctor.progress import Progress, Silent
    from doctor.shell.host.progress import TerminalProgress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar: Progress = TerminalProgress(lambda s: s, ("text", "of"))
    bar.stage("x"), bar.count(1, 2, "p"), bar.step("s"), bar.close()
    assert sys.stderr.getvalue() == ""
    quiet: Progress = Silent()
    quiet.stage("x"), quiet.count(1, None), quiet.step("s"), quiet.close()
    asked = TerminalProgress(lambda s: s, ("text",), enabled=True)  # --progress in a pipe: rich decides
    assert asked.shown
    asked.close()


def test_a_transaction_in_a_log_is_one_plain_line_per_step(monkeypatch):
    from doctor.shell.host.progress import StepProgress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with StepProgress(True) as steps:
        steps.add(-1, "download")
        steps.add(0, "install vllm\x1b[2J")
        steps.add(1, "remove x")
        steps.start(-1), steps.done(-1), steps.start(0), steps.done(0), steps.skip(1, "nothing to do")
    lines = sys.stderr.getvalue().splitlines()
    assert lines[0] == "[download] download"
    assert lines[1].startswith("[1/2] install vllm") and "\x1b" not in lines[1]
    assert lines[2] == "[2/2] remove x: skipped (nothing to do)"
