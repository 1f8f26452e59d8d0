"""Where the doctor's text meets the terminal: every rich console the doctor prints through is
made here, and every plain ``print`` of a line that holds data goes through :func:`say`.

A console made here filters what it renders (doctor/textsafe.py): whatever a render site forgot
to clean, no control character of the text reaches the terminal (the console's own styling is
not text and stays). The render sites still clean their data themselves, because only they know
what one datum is: a package name with a line break in it must not become two lines.
"""
from __future__ import annotations

import errno
import os
import sys
from typing import Any, Iterable, List, Optional

from rich.console import Console, RenderHook

from doctor import textsafe


def console(**kwargs: Any) -> Console:
    """``rich.console.Console(**kwargs)`` that shows control characters of its text escaped."""
    c = _Console(**kwargs)
    c.push_render_hook(_Hook())
    return c


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """stdout's reader went (`| head`): rich's own answer is SystemExit(1), the contract's
        "the doctor itself failed"; this one is the EPIPE the command's end (doctor/cli/runner.py)
        makes exit 141 of. What is left to write goes to /dev/null, as in rich."""
        self.quiet = True
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


class _Hook(RenderHook):
    """Each renderable printed is rendered through :class:`_Clean`."""

    def process_renderables(self, renderables: List[Any]) -> List[Any]:
        return [_Clean(r) for r in renderables]


class _Clean:
    def __init__(self, inner: Any):
        self.inner = inner

    def __rich_console__(self, console, options) -> Iterable[Any]:
        from rich.segment import Segment

        for seg in console.render(self.inner, options):
            if seg.control or textsafe.is_clean(seg.text.replace("\n", "")):
                yield seg
            else:
                yield Segment(textsafe.clean_block(seg.text), seg.style)


def say(text: str, file: Optional[Any] = None) -> None:
    """print() of a line that holds data, its control characters shown escaped."""
    print(textsafe.clean_block(text), file=file or sys.stdout)
