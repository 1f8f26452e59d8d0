"""One total budget of seconds across many waits: the index client's (every page and file of a
`matrix verify`), a socket's (resolve, connect, read), each caller's own error once it is spent."""
from __future__ import annotations

import time
from typing import Callable, Optional


def _spent(d: "Deadline", what: str) -> BaseException:
    return TimeoutError(f"no answer within {d.seconds:g}s" + (f" ({what})" if what else ""))


class Deadline:
    """``left()`` is the seconds still to spend (for the next timeout), and raises
    ``expired(self, what)`` once there are none."""

    def __init__(self, seconds: float, expired: Optional[Callable[["Deadline", str], BaseException]] = None):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = expired or _spent

    def left(self, what: str = "") -> float:
        rest = self.end - time.monotonic()
        if rest <= 0:
            raise self.expired(self, what)
        return rest

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.end
