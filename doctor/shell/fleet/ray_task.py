"""What runs on each Ray node: the node's own doctor, with a deadline. Standard library only,
because it is shipped to the node by value (the node need not have this module, only the doctor
as installed there). Its child gets a process group of its own and is killed with it on timeout.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time


def run_snapshot(argv, timeout):
    started = time.monotonic()
    out = {"hostname": socket.gethostname(), "returncode": None, "stdout": "", "stderr": "", "timed_out": False,
           "found": True, "seconds": 0.0}
    try:
        child = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 start_new_session=True)
    except FileNotFoundError:
        out["found"], out["returncode"] = False, 127
        out["stderr"] = "%s: not found on this node" % argv[0]
        return out
    except OSError as e:
        out["returncode"], out["stderr"] = 126, "%s: %s" % (argv[0], e.strerror or e)
        return out
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            child.kill()
        stdout, stderr = child.communicate()
        out["timed_out"] = True
    except BaseException:  # the task was cancelled: take the child down with it
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    out["returncode"] = child.returncode
    out["stdout"] = stdout.decode("utf-8", "replace")
    out["stderr"] = stderr.decode("utf-8", "replace")[-4000:]
    out["seconds"] = round(time.monotonic() - started, 2)
    return out
