"""The one way the doctor runs a command: an argv list, a timeout, a process group of its own,
and a child that dies with the doctor.

Every child starts in a new session (its own process group), so one signal stops it together
with the children that keep its pipes open (a hung driver call, a compiler). Three layers make
sure none outlives the doctor, whatever ends it:

- normal, error and signal exits (Ctrl-C, SIGTERM, SIGHUP: ``install_signal_handlers``) kill
  every started group (``kill_all``);
- on Linux the child asks the kernel for SIGKILL when the thread that started it dies
  (PR_SET_PDEATHSIG), which covers kill -9 of the doctor for the child itself;
- a guard (``/bin/sh`` reading a pipe, in a session of its own) learns every group the doctor
  starts; when the doctor dies in any way the pipe closes and the guard kills the groups that
  are left, grandchildren included (PDEATHSIG does not reach those).
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from doctor.record import field, record
from typing import IO, Any, Callable, Deque, Dict, List, Mapping, Optional, Sequence, Set, Union

MAX_OUTPUT = 256 * 1024  # kept per stream; npu-smi on 16 dies is ~10 KB

_live: Set[subprocess.Popen] = set()
# the main thread inside start() (depth), and the stop that arrived meanwhile (held), raised by start()
_starting = {"depth": 0}
_held: List[int] = []
_lock = threading.Lock()

# The guard: "+ PGID" when a group starts, "- PGID" when it is gone; at EOF (the doctor exited or
# was killed) it kills what is left. It ignores the terminal's signals so it outlives a Ctrl-C.
GUARD_SCRIPT = r"""
trap '' INT TERM HUP QUIT
live=" "
while read -r op id; do
  case "$op" in
    +) live="$live$id " ;;
    -) case "$live" in *" $id "*) live="${live%% $id *} ${live#* $id }" ;; esac ;;
  esac
done
for g in $live; do kill -9 "-$g" 2>/dev/null; done
"""
_guard: Optional[subprocess.Popen] = None


def _tell_guard(line: str) -> None:
    """Best effort: without /bin/sh there is no guard, PDEATHSIG and kill_all remain."""
    global _guard
    if not sys.platform.startswith(("linux", "darwin")):
        return
    with _lock:
        try:
            if _guard is None:
                if not os.path.exists("/bin/sh"):
                    return
                _guard = subprocess.Popen(["/bin/sh", "-c", GUARD_SCRIPT], stdin=subprocess.PIPE,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            assert _guard.stdin is not None
            _guard.stdin.write(line.encode() + b"\n")
            _guard.stdin.flush()
        except (OSError, ValueError):
            pass


def guard_pid() -> Optional[int]:
    return _guard.pid if _guard is not None else None


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass


@record
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
    """Start a child in its own process group that dies with the doctor. Raises OSError.

    A stop (Ctrl-C, SIGTERM, SIGHUP) that lands while the main thread is inside Popen (between
    the fork and the exec, or before the child is known) is held until the child is in ``_live``,
    then its children are killed and the stop raised here: raised inside Popen it would leave a
    running child nobody kills (a pip that goes on installing while the transaction rolls back)."""
    main = threading.current_thread() is threading.main_thread()
    proc: Optional[subprocess.Popen] = None
    if main:
        _starting["depth"] += 1
    try:
        proc = subprocess.Popen([str(a) for a in argv], stdin=stdin, stdout=stdout, stderr=stderr,
                                env=None if env is None else dict(env), cwd=cwd, start_new_session=True,
                                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        with _lock:
            _live.add(proc)
        _tell_guard(f"+ {proc.pid}")
    finally:
        if main:
            _starting["depth"] -= 1
            held = _held.pop() if _held and not _starting["depth"] else None
            if held is not None:
                _held.clear()
                _kill_now()
                _reaped(proc)
                raise KeyboardInterrupt if held == signal.SIGINT else Terminated(held)  # a stop wins over an OSError
    assert proc is not None
    return proc


def _reaped(proc: Optional[subprocess.Popen]) -> None:
    """The child a held stop killed, waited for (briefly): the caller never gets it to wait on,
    and what rolls back next must not race a process that is still going."""
    if proc is None:
        return
    try:
        proc.wait(timeout=5)
    except (subprocess.TimeoutExpired, OSError):
        pass


def forget(proc: subprocess.Popen) -> None:
    """The child has ended: kill what is left of its group (a grandchild that kept running)
    and stop watching it."""
    with _lock:
        _live.discard(proc)
    if proc.returncode is not None:
        _killpg(proc.pid)
        _tell_guard(f"- {proc.pid}")


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _reap(proc: subprocess.Popen) -> None:
    try:
        proc.wait(timeout=5)
    except BaseException:  # a second Ctrl-C while waiting: the guard still has the group
        pass


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
            _killpg(proc.pid)
    for proc in procs:
        try:
            proc.wait(timeout=2)
        except (subprocess.TimeoutExpired, OSError):
            continue
        _tell_guard(f"- {proc.pid}")


atexit.register(kill_all)


class Terminated(BaseException):
    """SIGTERM or SIGHUP: unwind like Ctrl-C (a transaction rolls back, children die)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_signalled: List[int] = []


def signalled() -> Optional[int]:
    """The signal that asked the doctor to stop, if one did (its exception may have been
    swallowed: Python drops exceptions raised inside weakref callbacks and __del__)."""
    return _signalled[0] if _signalled else None


def stop_behind(e: BaseException) -> Optional[BaseException]:
    """The Ctrl-C or Terminated an exception wraps: a signal that lands while Python runs
    ``__set_name__`` (a dataclass being defined) or an import hook comes back as a RuntimeError
    whose cause is the stop."""
    seen = set()
    cur: Optional[BaseException] = e
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, (KeyboardInterrupt, Terminated)):
            return cur
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return None


def raise_if_signalled() -> None:
    """Raise the stop a signal asked for, in case its exception was lost. Every process start
    runs at-fork callbacks (logging registers one), and Python drops an exception raised inside
    them, so a SIGTERM that lands while a step's pip is being started would otherwise let the
    transaction carry on. Called between steps that must not go on after a stop."""
    if _signalled:
        if _signalled[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(_signalled[0])


def _kill_now() -> None:
    """From a signal handler: SIGKILL every live group at once, no lock, no waiting."""
    for proc in list(_live):
        _killpg(proc.pid)


EXIT_GRACE = 10.0  # seconds a stopped doctor has to unwind before the watchdog ends it
_shield = {"depth": 0, "released": 0.0}


def _on_signal(signum, frame) -> None:
    first = not _signalled
    _signalled.append(signum)
    _kill_now()  # first, so that children are gone even if the exception below is lost
    if first:
        threading.Thread(target=_watchdog, args=(signum,), name="exit-watchdog", daemon=True).start()
    if _starting["depth"]:  # the main thread is starting a child: start() raises once it is known
        _held.append(signum)
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _watchdog(signum: int) -> None:
    """An exception raised from a signal handler can be lost (Python drops it inside weakref
    callbacks and __del__, and one raised inside the import system can leave a module lock
    held). Whatever happens to it, the doctor ends EXIT_GRACE seconds after the signal, never
    in the middle of a rollback (``shielded``) and not before EXIT_GRACE seconds after one."""
    start = time.monotonic()
    while True:
        time.sleep(0.2)
        if _shield["depth"] == 0 and time.monotonic() > max(start, _shield["released"]) + EXIT_GRACE:
            kill_all()
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os._exit(128 + signum)


class shielded:
    """Ctrl-C, SIGTERM and SIGHUP wait while files are being put back (a half rollback is worse
    than a late exit); the exit watchdog waits too."""

    SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)

    def __enter__(self) -> "shielded":
        self.old: List = []
        _shield["depth"] += 1
        if threading.current_thread() is threading.main_thread():
            self.old = [(s, signal.signal(s, signal.SIG_IGN)) for s in self.SIGNALS]
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self.old:
            signal.signal(s, handler)
        _shield["depth"] -= 1
        _shield["released"] = time.monotonic()


def install_signal_handlers() -> None:
    """Ctrl-C, SIGTERM and SIGHUP (an SSH session that drops) kill the children at once and
    raise in the main thread (KeyboardInterrupt, Terminated), so every exit path runs the same
    cleanup (kill_all, a transaction's rollback)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler, None):
            signal.signal(sig, _on_signal)


def process_start_time(pid: int) -> Optional[str]:
    """The kernel's start time of a process (clock ticks since boot, /proc/PID/stat field 22),
    so a recorded pid is not mistaken for a new process that got the same number."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read(4096)
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None  # gone, or a zombie: dead
    return fields[19].decode()


def group_alive(pgid: int) -> bool:
    """Any process (not a zombie) left in the group."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    except OSError:
        return False
    try:
        names = os.listdir("/proc")
    except OSError:
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read(4096)
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()
        if len(fields) > 3 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _start_error(fact: Finished, e: OSError) -> Finished:
    if isinstance(e, FileNotFoundError):
        fact.found = False
        fact.error = "not found"
    else:
        fact.error = e.strerror or str(e)
    return fact


LATE_READ_S = 0.5  # how long a pipe that is still ready is read after the deadline


def _waited(proc: subprocess.Popen, deadline: float) -> bool:
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        return True
    except subprocess.TimeoutExpired:
        return False


class _Pipes:
    """A child's stdin fed and its stdout/stderr read as communicate() does, but only the first
    ``cap`` bytes of each stream kept (the rest is read and dropped): a child that writes without
    end holds no more memory than that."""

    def __init__(self, proc: subprocess.Popen, data: Optional[bytes], cap: int):
        import selectors

        self.cap, self.data, self.sent = cap, data or b"", 0
        self.out, self.err = bytearray(), bytearray()
        self.sel = selectors.DefaultSelector()
        self.bufs: Dict[Any, bytearray] = {}
        self.stdin = proc.stdin
        if proc.stdin is not None:
            if self.data:
                self.sel.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                self._close(proc.stdin)
        for f, buf in ((proc.stdout, self.out), (proc.stderr, self.err)):
            if f is not None:
                self.sel.register(f, selectors.EVENT_READ)
                self.bufs[f] = buf

    def _close(self, f) -> None:
        try:
            self.sel.unregister(f)
        except (KeyError, ValueError):
            pass
        try:
            f.close()
        except OSError:
            pass

    def collect(self, deadline: float) -> bool:
        """Read (and write) until every pipe is closed (True) or the deadline passed (False). A
        deadline that passed before anyone read (a child the entry point started while the doctor
        was importing, on a loaded machine) still lets what the pipes already hold be read: a
        child that finished in the meantime has not timed out. That late reading stops as soon
        as nothing is ready, and after LATE_READ_S at most (a child that writes without end)."""
        late_until = None
        while self.sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                if late_until is None:
                    late_until = time.monotonic() + LATE_READ_S
                elif time.monotonic() >= late_until:
                    return False
                left = 0.0
            ready = self.sel.select(left)
            if not ready and left == 0.0:
                return False
            for key, _ in ready:
                f = key.fileobj
                if f is self.stdin:
                    try:
                        self.sent += os.write(key.fd, self.data[self.sent:self.sent + 65536])
                    except OSError:  # the child closed its stdin (BrokenPipe)
                        self.sent = len(self.data)
                    if self.sent >= len(self.data):
                        self._close(f)
                    continue
                try:
                    block = os.read(key.fd, 65536)
                except OSError:
                    block = b""
                if not block:
                    self._close(f)
                    continue
                buf = self.bufs[f]
                room = self.cap - len(buf)
                if room > 0:
                    buf += block[:room]
        return True

    def close(self) -> None:
        for key in list(self.sel.get_map().values()):
            self._close(key.fileobj)
        self.sel.close()


def wait(proc: subprocess.Popen, argv: Sequence[str], timeout: float, started: Optional[float] = None,
         input: Optional[bytes] = None, max_output: int = MAX_OUTPUT) -> Finished:
    """Collect a started child's output within the timeout (counted from ``started``); on a
    timeout or any exception (Ctrl-C) its whole group is killed."""
    fact = Finished(argv=[str(a) for a in argv])
    began = time.monotonic() if started is None else started
    pipes = _Pipes(proc, input, max_output)
    try:
        if not pipes.collect(began + timeout) or not _waited(proc, began + timeout):
            kill_group(proc)
            pipes.collect(time.monotonic() + 2)
            _reap(proc)
            fact.timed_out = True
    except BaseException:
        kill_group(proc)
        _reap(proc)
        raise
    finally:
        pipes.close()
        forget(proc)
    fact.returncode = proc.returncode
    fact.stdout = bytes(pipes.out).decode("utf-8", errors="replace")
    fact.stderr = bytes(pipes.err).decode("utf-8", errors="replace")
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
        _reap(proc)
        reader.join(2)
        forget(proc)
        raise
    reader.join(5)
    forget(proc)
    fact.duration_s = time.monotonic() - began
    fact.tail = list(last)
    return fact
