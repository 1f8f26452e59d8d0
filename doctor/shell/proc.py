"""Killing a command together with everything it started.

Every command runs in a session of its own (start_new_session=True), so one signal to its
process group also stops the children that keep its pipes open (a hung driver call, a compiler).
"""
from __future__ import annotations

import os
import signal
import subprocess


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except OSError:
            pass
