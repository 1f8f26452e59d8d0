"""What a long operation says while it runs, whatever shows it: the one progress protocol.

The use cases and the shell's long reads report through :class:`Progress`; the medium decides
what is seen: ``doctor.shell.host.progress.TerminalProgress`` draws it on a terminal's stderr
(nothing in logs or pipes, so --json output stays clean), :class:`Silent` shows nothing (the
default, and what tests pass).
"""
from __future__ import annotations

from typing import Optional, Protocol


class Progress(Protocol):
    def stage(self, name: str) -> None:
        """A part starts: a smoke stage, a log being read, a shard being hashed (``name`` is data)."""

    def step(self, text: str) -> None:
        """Something happened within the part (the display may redraw)."""

    def count(self, done: int, total: Optional[int], phase: str = "") -> None:
        """How far the part is: ``done`` of ``total`` units (None: not known), while ``phase``."""

    def close(self) -> None:
        """Nothing more is reported; whatever was drawn goes away or stays, as the medium does."""


class Silent:
    """Progress nobody sees."""

    def stage(self, name: str) -> None:
        pass

    def step(self, text: str) -> None:
        pass

    def count(self, done: int, total: Optional[int], phase: str = "") -> None:
        pass

    def close(self) -> None:
        pass
