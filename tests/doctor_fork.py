"""`python -m doctor ...` for the tests, without paying for Python's start and the doctor's imports
each time: a fork server (a "zygote") per test process imports the doctor once, and forks a
child for each run. Hundreds of tests run the doctor as a process of its own (its exit code, its
stdout and stderr, its signals and its children are what they test); a start costs ~0.1-0.25 s of
CPU of a ~0.3 s check, and the suite is CPU-bound.

The child is a real process with its own pid, file descriptors 0-2 (the caller's, passed over a
Unix socket), working directory, environment and argv, set before the doctor's ``__main__`` runs
as ``python -m doctor`` runs it; atexit handlers run and the exit code is the process's. What
differs from a fresh interpreter is only the modules already imported (the server imports them
and runs nothing else) and the stdio encoding (UTF-8, the only one the tests' environments give).
The interpreter's other start variables (PYTHONHASHSEED, PYTHONSAFEPATH, PYTHONWARNINGS...) are
the server's own: there is one server per set of them. ``run`` falls back to a real
``subprocess.run`` where a fork could not reproduce the start (a variable that sets the stdio
encoding or the locale, PYTHONINSPECT or PYTHONPROFILEIMPORTTIME, a locale that is not UTF-8 or
C, a PYTHONPATH other than the repository's), and everywhere when
ASCEND_DOCTOR_TESTS_NO_FORK=1 (tests/test_doctor_fork.py runs both ways and compares).

The zygote learns what to import: each child appends the modules it imported to a file, and the
zygote imports those between runs (only the doctor's and installed packages', never the smoke
scripts that run on the target).
"""
from __future__ import annotations

import atexit
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
MAIN = str(REPO / "doctor" / "__main__.py")
# variables a real interpreter reads at its start (the zygote read its own)
_START_VARS = ("PYTHONHOME", "PYTHONSAFEPATH", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONHASHSEED",
               "PYTHONSTARTUP", "PYTHONOPTIMIZE", "PYTHONDEBUG", "PYTHONVERBOSE", "PYTHONNOUSERSITE", "PYTHONUSERBASE",
               "PYTHONDEVMODE", "PYTHONINSPECT", "PYTHONPLATLIBDIR", "PYTHONEXECUTABLE",
               "PYTHONMALLOC", "PYTHONFAULTHANDLER", "PYTHONTRACEMALLOC", "PYTHONPROFILEIMPORTTIME", "PYTHONCOERCECLOCALE",
               "PYTHONNODEBUGRANGES", "PYTHONINTMAXSTRDIGITS", "PYTHONWARNDEFAULTENCODING", "PYTHONBREAKPOINT",
               "PYTHONCASEOK", "PYTHONPYCACHEPREFIX", "PYTHONLEGACYWINDOWSSTDIO")


# -- the client ----------------------------------------------------------------------------------


# what no server can give a forked child: the stdio encoding and locale it would start with, an
# interactive prompt after the run, the import-time report of its own imports
_NOT_FORKED = ("PYTHONIOENCODING", "PYTHONUTF8", "PYTHONCOERCECLOCALE", "PYTHONINSPECT", "PYTHONPROFILEIMPORTTIME",
               "PYTHONLEGACYWINDOWSSTDIO")


class _Zygote:
    def __init__(self, start: Dict[str, Optional[str]]) -> None:
        """A server started with the interpreter start variables ``start`` (name -> value or None)."""
        # a short path: a Unix socket's name has at most 107 bytes (a test's TMPDIR can be longer)
        self.dir = tempfile.mkdtemp(prefix="doctor-zygote-", dir="/tmp" if os.path.isdir("/tmp") else None)
        self.sock = os.path.join(self.dir, "s")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and k not in _START_VARS}
        env.update({k: v for k, v in start.items() if v is not None})
        env.update(PYTHONPATH=str(REPO), LC_ALL="C.UTF-8")
        env.pop("LANG", None)
        self.proc = subprocess.Popen([sys.executable, __file__, "serve", self.sock, str(os.getpid())],
                                     cwd=str(REPO), env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the doctor's fork server did not start")
            time.sleep(0.01)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)


# one server per set of start variables (PYTHONHASHSEED, PYTHONWARNINGS...): a run is forked from
# the one started as its interpreter would have started
_ZYGOTES: Dict[tuple, _Zygote] = {}
CPU = [0.0]  # the CPU seconds of every forked run (the kernel reaps them: no rusage reaches this process)


def _zygote(env: Mapping[str, str]) -> _Zygote:
    start = _start_vars(env)
    key = tuple(sorted(start.items()))
    z = _ZYGOTES.get(key)
    if z is None or z.proc.poll() is not None:
        z = _ZYGOTES[key] = _Zygote(start)
        atexit.register(z.close)
    return z


def _start_vars(env: Mapping[str, str]) -> Dict[str, Optional[str]]:
    return {k: env.get(k) for k in _START_VARS if k not in _NOT_FORKED}


def forkable(env: Optional[Mapping[str, str]]) -> bool:
    """Whether a child forked from a server starts as ``python -m doctor`` would in ``env``."""
    env = dict(os.environ if env is None else env)
    if os.environ.get("ASCEND_DOCTOR_TESTS_NO_FORK") == "1" or any(env.get(k) for k in _NOT_FORKED):
        return False
    if env.get("PYTHONPATH", str(REPO)) != str(REPO):
        return False
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or "C"
    return locale in ("C", "POSIX") or locale.replace("-", "").lower().endswith(".utf8")


def _send(conn: socket.socket, doc: Dict[str, Any], fds: Sequence[int] = ()) -> None:
    data = json.dumps(doc).encode()
    msg = struct.pack("!I", len(data)) + data
    if fds:
        socket.send_fds(conn, [msg], list(fds))
    else:
        conn.sendall(msg)


def _recv(conn: socket.socket, nfds: int = 0):
    head, fds, _, _ = socket.recv_fds(conn, 4, nfds) if nfds else (conn.recv(4, socket.MSG_WAITALL), [], 0, None)
    if len(head) < 4:
        return None, fds
    (size,) = struct.unpack("!I", head)
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return None, fds
        data += chunk
    return json.loads(data), fds


def run(argv: Sequence[str], *, env: Optional[Dict[str, str]] = None, cwd: Any = None, input: Any = None,
        timeout: Optional[float] = None, text: bool = False, capture_output: bool = False, stdout: Any = None,
        stderr: Any = None, check: bool = False) -> subprocess.CompletedProcess:
    """subprocess.run for ``[sys.executable, "-m", "doctor", ...]`` (any other argv runs as
    subprocess.run runs it), with the same arguments and result, TimeoutExpired included."""
    argv = [str(a) for a in argv]
    if argv[:3] != [sys.executable, "-m", "doctor"] or not forkable(env) or stdout not in (None, subprocess.PIPE, subprocess.DEVNULL) \
            or stderr not in (None, subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT):
        return subprocess.run(argv, env=env, cwd=cwd, input=input, timeout=timeout, text=text,
                              capture_output=capture_output, stdout=stdout, stderr=stderr, check=check)
    if capture_output:
        stdout = stderr = subprocess.PIPE
    zygote = _zygote(os.environ if env is None else env)
    mine: List[int] = []  # our ends, read or written here
    theirs: List[int] = []  # the child's 0, 1, 2, closed here once sent

    def end(spec, fd: int, reading: bool) -> Optional[int]:
        if spec == subprocess.PIPE:
            r, w = os.pipe()
            theirs.append(r if reading else w)
            mine.append(w if reading else r)
            return mine[-1]
        if spec == subprocess.DEVNULL:
            theirs.append(os.open(os.devnull, os.O_RDONLY if reading else os.O_WRONLY))
        else:
            theirs.append(os.dup(fd))
        return None

    stdin_w = end(subprocess.PIPE if input is not None else None, 0, True)
    out_r = end(stdout, 1, False)
    if stderr == subprocess.STDOUT:
        theirs.append(os.dup(theirs[1]))
        err_r = None
    else:
        err_r = end(stderr, 2, False)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(zygote.sock)
        _send(conn, {"argv": argv[3:], "env": dict(os.environ if env is None else env),
                     "cwd": os.path.abspath(str(cwd) if cwd is not None else os.getcwd())}, theirs)
    finally:
        for fd in theirs:
            os.close(fd)
    started, _ = _recv(conn)
    if not started or "pid" not in started:
        for fd in mine:
            os.close(fd)
        conn.close()
        raise RuntimeError(f"the doctor's fork server refused the run: {started}")
    pid = started["pid"]
    data = input.encode() if isinstance(input, str) else input
    outs: Dict[int, bytearray] = {fd: bytearray() for fd in (out_r, err_r) if fd is not None}
    sel = selectors.DefaultSelector()
    for fd in outs:
        sel.register(fd, selectors.EVENT_READ)
    sel.register(conn, selectors.EVENT_READ)
    if stdin_w is not None:
        if data:
            sel.register(stdin_w, selectors.EVENT_WRITE)
        else:
            os.close(stdin_w)
            mine.remove(stdin_w)
    status: Optional[int] = None
    maxrss = 0
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = False
    try:
        while sel.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                if timed_out:
                    break
                timed_out = True
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                deadline = time.monotonic() + 5  # what is left of the output, as subprocess.run collects it
                continue
            for key, _ in sel.select(left):
                fd = key.fd
                if fd == conn.fileno():
                    doc, _ = _recv(conn)
                    sel.unregister(conn)
                    if doc is not None:
                        status, maxrss = doc["status"], doc["maxrss_kb"]
                        CPU[0] += doc["cpu"]
                elif fd == stdin_w:
                    try:
                        n = os.write(fd, data[:65536])
                    except BrokenPipeError:
                        n = len(data)
                    data = data[n:]
                    if not data:
                        sel.unregister(fd)
                        os.close(fd)
                        mine.remove(fd)
                else:
                    chunk = os.read(fd, 65536)
                    if chunk:
                        outs[fd] += chunk
                    else:
                        sel.unregister(fd)
    finally:
        sel.close()
        conn.close()
        for fd in mine:
            os.close(fd)

    def decoded(fd: Optional[int]):
        if fd is None:
            return None
        raw = bytes(outs[fd])
        # text=True reads with the locale's encoding and universal newlines, as subprocess does
        return raw.decode().replace("\r\n", "\n").replace("\r", "\n") if text else raw

    out, err = decoded(out_r), decoded(err_r)
    if timed_out:
        raise subprocess.TimeoutExpired(argv, timeout, output=out, stderr=err)
    code = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL
    done = subprocess.CompletedProcess(argv, code, out, err)
    done.maxrss_kb = maxrss  # type: ignore[attr-defined]  # the child's peak RSS, as wait4 tells it
    if check:
        done.check_returncode()
    return done


# -- the zygote ----------------------------------------------------------------------------------


class _Learner:
    """The server's side of the file of learned names: read from where it left off, each name
    imported once (the doctor's modules and installed packages only)."""

    def __init__(self, path: str) -> None:
        self.path, self.offset, self.tried = path, 0, set()

    def catch_up(self) -> None:
        import importlib

        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return
        self.offset += len(data)
        for name in data.decode(errors="replace").split():
            if name in self.tried or name in sys.modules:
                continue
            self.tried.add(name)
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - a module that needs the child's state stays for the child
                pass


def _worth_learning(name: str, module: Any) -> bool:
    if name.startswith(("doctor.smoke_target", "tests.", "fakehost", "doctor_fork")) or name in ("__main__", "tests"):
        return False
    path = getattr(module, "__file__", None) or ""
    return name.split(".")[0] == "doctor" or (path.startswith(sys.prefix) and "site-packages" in path)


def _child(request: Dict[str, Any], fds: List[int], conn: socket.socket, learn: str, zygote_path: List[str]) -> None:
    """In the forked child: become ``python -m doctor ARGV`` in the request's place, and exit."""
    import atexit as child_atexit
    import io
    import runpy
    import traceback

    imported = set(sys.modules)  # what the server has: only the rest is worth telling it
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    conn.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    env = request["env"]
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(env)
    if "LC_ALL" not in env and (env.get("LC_CTYPE") or env.get("LANG") or "C") in ("C", "POSIX"):
        os.environ["LC_CTYPE"] = "C.UTF-8"  # PEP 538: the interpreter coerces the C locale and says so in its environment
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    # sys.path as -m makes it: the working directory, then PYTHONPATH, then the rest
    rest = [p for p in zygote_path[1:] if p != str(REPO)]  # [0] is this file's directory
    here = [] if getattr(sys.flags, "safe_path", False) else [os.getcwd()]  # -P / PYTHONSAFEPATH: no cwd
    sys.path[:] = [*here, *([str(REPO)] if env.get("PYTHONPATH") else []), *rest]
    sys.argv = [MAIN, *request["argv"]]
    sys.orig_argv = [sys.executable, "-m", "doctor", *request["argv"]]
    # the interpreter's stdio: stdout line-buffered on a terminal, block-buffered otherwise, both
    # unbuffered under PYTHONUNBUFFERED (as -u)
    raw = bool(env.get("PYTHONUNBUFFERED"))

    def stream(fd: int, errors: str, lines: bool) -> io.TextIOWrapper:
        binary = io.FileIO(fd, "w", closefd=False) if raw else io.open(fd, "wb", closefd=False)
        return io.TextIOWrapper(binary, encoding="utf-8", errors=errors, line_buffering=lines, write_through=raw)

    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.open(0, "rb", closefd=False), encoding="utf-8", errors="strict")
    sys.stdout = sys.__stdout__ = stream(1, "strict", os.isatty(1))
    sys.stderr = sys.__stderr__ = stream(2, "backslashreplace", True)
    code: Any = 0
    try:
        runpy.run_module("doctor", run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    try:
        child_atexit._run_exitfuncs()
    finally:
        for out in (sys.stdout, sys.stderr):
            try:
                out.flush()
            except BaseException:  # noqa: BLE001
                code = 120
        try:
            names = [n for n, m in list(sys.modules.items()) if n not in imported and _worth_learning(n, m)]
            if names:
                with open(learn, "a") as fh:
                    fh.write("\n".join(names) + "\n")
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code & 0xFF)


def serve(path: str, parent: int) -> None:
    import doctor.cli.check_command  # noqa: F401 - what every run needs, before the first one
    import doctor.cli.main  # noqa: F401
    import doctor.cli.runner  # noqa: F401
    import doctor.entry  # noqa: F401

    learner = _Learner(os.path.join(os.path.dirname(path), "learned"))
    zygote_path = list(sys.path)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the waiters are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    # listening before the name appears: the client connects as soon as it sees the name, and a
    # connect to a bound socket that is not listening yet is refused (ECONNREFUSED)
    listener.listen(64)
    os.rename(path + ".tmp", path)
    listener.settimeout(1.0)
    try:
        _serve(listener, learner, zygote_path, parent)
    finally:  # the test process is gone (xdist workers end without atexit): leave nothing behind
        import shutil

        shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _serve(listener: socket.socket, learner: _Learner, zygote_path: List[str], parent: int) -> None:
    while os.getppid() == parent:  # dies with the test process
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            learner.catch_up()
            continue
        conn.settimeout(None)
        try:
            request, fds = _recv(conn, 3)
        except OSError:
            conn.close()
            continue
        if request is None or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            conn.close()
            continue
        if os.fork() == 0:  # the waiter: starts the child, tells its pid and then how it ended
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            pid = os.fork()
            if pid == 0:
                _child(request, fds, conn, learner.path, zygote_path)
            for fd in fds:
                os.close(fd)
            try:
                _send(conn, {"pid": pid})
                _, status, usage = os.wait4(pid, 0)
                _send(conn, {"status": status, "maxrss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime})
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        conn.close()
        learner.catch_up()


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    serve(sys.argv[2], int(sys.argv[3]))
