"""Signals to the process a test saw, never to whatever has its number now. pid_max is 32768 on
these machines and the suite starts tens of thousands of processes: a number read from a file
or a journal a moment ago can already belong to another test's process (a fork server, a pip),
and a SIGKILL sent to the number kills that one. A pidfd names the process itself."""
from __future__ import annotations

import os
import signal
from typing import Optional

from doctor.shell.runtime.proc import process_start_time


def hold(pid: int, start: Optional[str] = None) -> Optional[int]:
    """A pidfd for ``pid`` if it is alive now (and, given ``start``, is the process that started
    then: /proc/PID/stat field 22), else None."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    if process_start_time(pid) is None or (start is not None and process_start_time(pid) != start):
        os.close(fd)
        return None
    return fd


def kill(fd: Optional[int], sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to the held process (a no-op once it is gone) and let it go; whether it was
    delivered."""
    if fd is None:
        return False
    try:
        signal.pidfd_send_signal(fd, sig)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
