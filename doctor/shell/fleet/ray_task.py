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


MAX_STDOUT = 32 * 1024 * 1024  # as fleet_transport.MAX_SNAPSHOT (this module imports nothing of ours)
MAX_STDERR = 4000


def _read(stream, cap, keep_tail, sink):
    """Every byte of ``stream`` read, at most ``cap`` of them kept (the first ones, or the last
    with ``keep_tail``): a child that prints without end holds no more memory than that."""
    kept = bytearray()
    while True:
        block = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not block:
            break
        if keep_tail:
            kept += block
            del kept[:-cap]
        elif len(kept) < cap:
            kept += block[:cap - len(kept)]
    sink.append(bytes(kept))


def run_snapshot(argv, timeout, max_stdout=MAX_STDOUT):
    import threading

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
    got_out: list = []
    got_err: list = []
    readers = [threading.Thread(target=_read, args=(child.stdout, max_stdout, False, got_out), daemon=True),
               threading.Thread(target=_read, args=(child.stderr, MAX_STDERR * 4, True, got_err), daemon=True)]
    for r in readers:
        r.start()
    try:
        end = started + timeout
        child.wait(timeout=timeout)
        for r in readers:
            r.join(max(0.0, end - time.monotonic()))
        if any(r.is_alive() for r in readers):  # a grandchild keeps the pipes open
            raise subprocess.TimeoutExpired(argv, timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            child.kill()
        child.wait()
        for r in readers:
            r.join(2)
        out["timed_out"] = True
    except BaseException:  # the task was cancelled: take the child down with it
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    out["returncode"] = child.returncode
    out["stdout"] = (got_out or [b""])[0].decode("utf-8", "replace")
    out["stderr"] = (got_err or [b""])[0].decode("utf-8", "replace")[-MAX_STDERR:]
    out["seconds"] = round(time.monotonic() - started, 2)
    return out
