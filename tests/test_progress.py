"""doctor/shell/host/progress.py: the one byte bar, drawn on a terminal's stderr only (a real pty)."""
import io
import os
import pty
import sys

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
    sys.stderr.flush()
    shown = os.read(master, 1 << 16).decode(errors="replace")
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
