"""The one way the doctor runs a command: an argv list, a timeout, a process group of its own,
and a child that dies with the doctor.

Every child starts in a new session (its own process group), so one signal stops it together
with the children that keep its pipes open (a hung driver call, a compiler). On Linux the child
also asks the kernel for SIGKILL when the thread that started it dies (PR_SET_PDEATHSIG), which
covers kill -9 of the doctor; every started group is remembered and killed on the doctor's
normal, error and signal exits (``kill_all``).
"""
from __future__ import annotations

import collections
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Callable, Deque, List, Mapping, Optional, Sequence, Set, Union

MAX_OUTPUT = 256 * 1024  # kept per stream; npu-smi on 16 dies is ~10 KB

_live: Set[subprocess.Popen] = set()
_lock = threading.Lock()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


@dataclass
class Finished:
    argv: List[str]
    returncode: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    found: bool = True
    error: Optional[str] = None  # could not start it (permission, exec format...)
    duration_s: float = 0.0
    tail: List[str] = field(default_factory=list)  # last lines, for stream()

    @property
    def ok(self) -> bool:
        return self.found and self.error is None and not self.timed_out and self.returncode == 0


Out = Union[int, IO, None]


def start(argv: Sequence[str], *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
          stdin: Out = subprocess.DEVNULL, stdout: Out = subprocess.PIPE, stderr: Out = subprocess.PIPE) -> subprocess.Popen:
    """Start a child in its own process group that dies with the doctor. Raises OSError."""
    proc = subprocess.Popen([str(a) for a in argv], stdin=stdin, stdout=stdout, stderr=stderr,
                            env=None if env is None else dict(env), cwd=cwd, start_new_session=True,
                            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    with _lock:
        _live.add(proc)
    return proc


def forget(proc: subprocess.Popen) -> None:
    with _lock:
        _live.discard(proc)


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except OSError:
            pass


def kill_all() -> None:
    """Kill every child group still running (the doctor is exiting)."""
    with _lock:
        procs = list(_live)
        _live.clear()
    for proc in procs:
        if proc.poll() is None:
            kill_group(proc)
        else:  # its group may still hold grandchildren that kept running
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _start_error(fact: Finished, e: OSError) -> Finished:
    if isinstance(e, FileNotFoundError):
        fact.found = False
        fact.error = "not found"
    else:
        fact.error = e.strerror or str(e)
    return fact


def wait(proc: subprocess.Popen, argv: Sequence[str], timeout: float, started: Optional[float] = None,
         input: Optional[bytes] = None, max_output: int = MAX_OUTPUT) -> Finished:
    """Collect a started child's output within the timeout (counted from ``started``); on a
    timeout or any exception (Ctrl-C) its whole group is killed."""
    fact = Finished(argv=[str(a) for a in argv])
    began = time.monotonic() if started is None else started
    try:
        out, err = proc.communicate(input=input, timeout=max(0.0, timeout - (time.monotonic() - began)))
    except subprocess.TimeoutExpired:
        kill_group(proc)
        try:
            out, err = proc.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
        fact.timed_out = True
    except BaseException:
        kill_group(proc)
        raise
    finally:
        forget(proc)
    fact.returncode = proc.returncode
    fact.stdout = (out or b"")[:max_output].decode("utf-8", errors="replace")
    fact.stderr = (err or b"")[:max_output].decode("utf-8", errors="replace")
    fact.duration_s = time.monotonic() - began
    return fact


def run(argv: Sequence[str], timeout: float, *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
        input: Optional[bytes] = None, max_output: int = MAX_OUTPUT) -> Finished:
    """Run a command to completion with its output captured (capped). Never raises for the
    command's own failures: not found, could not start, timed out and exit codes are in the
    result."""
    began = time.monotonic()
    try:
        proc = start(argv, env=env, cwd=cwd, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
    except OSError as e:
        return _start_error(Finished(argv=[str(a) for a in argv]), e)
    return wait(proc, argv, timeout, began, input, max_output)


def stream(argv: Sequence[str], timeout: float, *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
           on_line: Optional[Callable[[str], None]] = None, on_start: Optional[Callable[[subprocess.Popen], None]] = None,
           tail: int = 40, tick: Optional[Callable[[], None]] = None) -> Finished:
    """Run a long command (pip, a build) with stdout and stderr merged and handed over line by
    line as they come (to a log, a progress bar); only the last ``tail`` lines are kept."""
    fact = Finished(argv=[str(a) for a in argv])
    began = time.monotonic()
    try:
        proc = start(argv, env=env, cwd=cwd, stderr=subprocess.STDOUT)
    except OSError as e:
        return _start_error(fact, e)
    if on_start:
        on_start(proc)
    last: Deque[str] = collections.deque(maxlen=tail)

    def pump() -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            last.append(line)
            if on_line:
                on_line(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        while True:
            try:
                fact.returncode = proc.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() - began > timeout:
                    kill_group(proc)
                    fact.returncode = proc.wait()
                    fact.timed_out = True
                    break
                if tick:
                    tick()
    except BaseException:
        kill_group(proc)  # Ctrl-C: never leave a child running behind us
        proc.wait()
        reader.join(2)
        forget(proc)
        raise
    reader.join(5)
    forget(proc)
    fact.duration_s = time.monotonic() - began
    fact.tail = list(last)
    return fact
