"""The only place that reads the outside world: files under a root, the environment, commands.

``--root`` works like a chroot for reading: absolute paths (also those found in environment
variables and in symlinks) are looked up inside the root, so a mounted image or a fake host in
the tests reads exactly like a live one. Symlinks are followed by us, one component at a time,
never by the OS: a chain that cannot be resolved inside the root (a loop, more than 40 links) is
an error (:class:`RootEscape`), never a read outside it.

Paths the user (or the interpreter the user named) gave are taken as given: the target
interpreter's ``sys.path`` and ``--site-packages`` directories are live paths (``given``).

Nothing found inside ``--root`` is ever executed: commands run only on the live host, or when the
user named the binary (``--python PATH``, ``--npu-smi PATH``: ``named``).

Every file is read with :func:`doctor.shell.host.files.open_regular`: regular files only (a FIFO or a
device in place of a host file is an unreadable file, not a hang), up to a cap.
"""
from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_mod
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Dict, Iterable, List, Mapping, Optional, Sequence

from doctor.facts import CommandFact
from doctor.shell.host import files
from doctor.shell.runtime import prefetch
from doctor.shell.runtime.prefetch import find_executable
from doctor.shell.runtime.proc import run as proc_run
from doctor.shell.runtime.proc import wait as proc_wait

MAX_OUTPUT = 256 * 1024  # keep snapshots small; npu-smi on 16 dies is ~10 KB
MAX_FILE = 1024 * 1024
MAX_LINKS = 40  # as the kernel (MAXSYMLINKS)
MAX_MODES = 20_000  # paths whose lstat one Host keeps (~2 MB at most)


class RootEscape(OSError):
    """A symlink chain under --root that does not resolve inside it."""

    def __init__(self, path: str, why: str):
        super().__init__(errno.ELOOP, why, path)
        self.why = why


class NotRun(Exception):
    """A binary inside --root that the user did not name: it is never executed."""


class Host:
    def __init__(self, root: str = "/", env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                 named: Iterable[str] = ()):
        self.root = Path(root).resolve() if root not in ("", "/") else Path("/")
        self.env: Dict[str, str] = dict(os.environ if env is None else env)
        self.cwd = cwd or os.getcwd()
        self.named = {os.path.abspath(p) for p in named}  # binaries the user named: may run
        self.given: List[str] = []  # live directories taken as given (the target's sys.path)
        self.problems: List[str] = []  # symlink chains that escaped the root, for the snapshot
        self._live: Optional["Host"] = None
        self._is_live = str(self.root) == "/"
        self._modes: Dict[str, Optional[int]] = {}  # lstat of paths under the root (_lstat_mode)

    @property
    def is_live(self) -> bool:
        return self._is_live

    def real(self, p: str) -> str:
        """The path to open on this machine for a host path (see path())."""
        p = str(p)
        if self._is_live or (self.given and self._is_given(p)):
            return p
        return self._mapped(p)

    @property
    def live(self) -> "Host":
        """The same environment without the root: for the doctor's own working directory."""
        if self.is_live:
            return self
        if self._live is None:
            self._live = Host("/", self.env, self.cwd, self.named)
        return self._live

    def add_given(self, dirs: Iterable[str]) -> None:
        for d in dirs:
            d = os.path.normpath(d) if d else ""
            if d and d != "/" and d not in self.given:
                self.given.append(d)

    def _is_given(self, p: str) -> bool:
        return any(p == d or p.startswith(d + "/") for d in self.given)

    # -- paths ----------------------------------------------------------------------------
    def path(self, p: str) -> Path:
        """Map a host path into the root, following symlinks the way the chroot would.
        Raises RootEscape for a chain that does not end inside the root."""
        p = str(p)
        if self.is_live or self._is_given(p):
            return Path(p)
        return Path(self._mapped(p))

    def _mapped(self, p: str) -> str:
        try:
            return self._resolve(p)
        except RootEscape as e:
            if e.why not in self.problems:
                self.problems.append(e.why)
            raise

    def _resolve(self, p: str) -> str:
        # strings, not pathlib: check maps thousands of paths, and each component costs an lstat
        base = str(self.root).rstrip("/")
        todo = [x for x in p.split("/") if x and x != "."]
        todo.reverse()  # a stack: the next component is at the end
        done: List[str] = []  # components resolved so far, none of them a symlink
        missing_from = -1  # done[missing_from:] do not exist: below them nothing can (no lstat)
        links = 0
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if done:
                    done.pop()
                    if len(done) <= missing_from:
                        missing_from = -1
                continue
            if missing_from >= 0:
                done.append(part)
                continue
            real = "/".join((base, *done, part))
            mode = self._lstat_mode(real)
            if mode is None:  # missing (or unreadable): the rest is taken literally
                missing_from = len(done)
                done.append(part)
                continue
            if not stat_mod.S_ISLNK(mode):
                done.append(part)
                continue
            links += 1
            if links > MAX_LINKS:
                raise RootEscape(p, f"{p}: more than {MAX_LINKS} symbolic links (a loop?) under --root {self.root}; "
                                    "not read")
            target = os.readlink(real)
            if target.startswith("/"):
                done = []
            todo.extend(x for x in reversed(target.split("/")) if x and x != ".")
        return "/".join((base, *done)) if done else (base or "/")

    def _lstat_mode(self, real: str) -> Optional[int]:
        """lstat's mode of a path under the root, None when it cannot be had; each asked once per
        Host (one run reads a root that nothing writes to: an image, a snapshot, a mounted disk),
        as a run maps thousands of paths through the same few dozen directories."""
        if real in self._modes:
            return self._modes[real]
        try:
            mode: Optional[int] = os.lstat(real).st_mode
        except OSError:
            mode = None
        if len(self._modes) < MAX_MODES:
            self._modes[real] = mode
        return mode

    def exists(self, p: str) -> bool:
        try:
            return os.path.exists(self.real(p))
        except OSError:
            return False

    def is_dir(self, p: str) -> bool:
        try:
            return os.path.isdir(self.real(p))
        except OSError:
            return False

    def is_file(self, p: str) -> bool:
        try:
            return os.path.isfile(self.real(p))
        except OSError:
            return False

    def listdir(self, p: str) -> List[str]:
        try:
            return sorted(os.listdir(self.real(p)))
        except OSError:
            return []

    def walk(self, p: str):
        """os.walk of a directory (links to directories are not followed), yielding host paths."""
        try:
            real = str(self.path(p))
        except OSError:
            return
        base = p.rstrip("/") or "/"
        for dirpath, dirnames, filenames in os.walk(real):
            rel = os.path.relpath(dirpath, real)
            yield (base if rel == "." else os.path.join(base, rel)), dirnames, filenames

    def stat(self, p: str) -> Optional[os.stat_result]:
        try:
            return os.stat(self.real(p))
        except OSError:
            return None

    def denied(self, p: str) -> Optional[str]:
        """The host path that refuses this process access to ``p`` (permission denied: EACCES
        or EPERM): ``p`` itself (a file it may not read, a directory it may not list) or a
        directory above it it may not search. None when nothing refuses (``p`` is readable, or
        missing). Probes ask after a read came back empty, so that "not there" and "not allowed"
        are two different facts."""
        parts = PurePosixPath("/" + str(p).lstrip("/")).parts[1:]
        here = "/"
        for part in parts:
            below = posixpath.join(here, part)
            try:
                os.stat(self.real(below))
            except PermissionError:
                return here  # `here` was listed fine, but may not be searched
            except OSError:
                return None  # missing (or a loop): not a permission problem
            here = below
        try:
            real = self.real(here)
            if os.path.isdir(real):
                os.listdir(real)
            else:
                os.close(os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)))
        except PermissionError:
            return here
        except OSError:
            return None
        return None

    def read_bytes(self, p: str, limit: int = MAX_FILE) -> Optional[bytes]:
        """At most ``limit`` bytes of a regular file, or None (missing, unreadable, a FIFO or a
        device, a link chain leaving the root)."""
        try:
            real = self.real(p)
            # inside the root every link was resolved by us: a link there now is a swap, refuse it
            return files.open_regular(real, limit, follow=self._is_live or real == str(p))
        except (OSError, ValueError):
            return None

    def read_text(self, p: str, limit: int = MAX_FILE) -> Optional[str]:
        """File text, or None when it does not exist or cannot be read (undecodable bytes are
        replaced: version files copied from Windows or with a BOM still parse)."""
        data = self.read_bytes(p, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    def open_binary(self, p: str) -> BinaryIO:
        """A regular file opened for seeking reads (ELF headers); OSError otherwise."""
        real = self.real(p)
        return files.open_binary(real, follow=self._is_live or real == str(p))

    def realpath(self, p: str) -> str:
        """The host path a (possibly symlinked) path ends up at, without the root prefix."""
        if self.is_live or self._is_given(str(p)):
            return os.path.realpath(p)
        try:
            real = self.path(p)
        except OSError:
            return str(p)
        try:
            rel = str(real.relative_to(self.root))
        except ValueError:
            return str(real)
        return "/" if rel == "." else "/" + rel

    # -- commands -------------------------------------------------------------------------
    def which(self, name: str, extra_dirs: Sequence[str] = ()) -> Optional[str]:
        """Find an executable on the environment's PATH (inside the root) or in extra_dirs;
        returns the path as seen on the host."""
        dirs = self.env.get("PATH", "").split(os.pathsep) + list(extra_dirs)

        def real(p: str) -> str:
            try:
                return str(self.path(p))
            except OSError:
                return ""

        return find_executable(name, dirs, real)

    def may_run(self, executable: str) -> bool:
        """Only the live host's binaries and those the user named run; nothing inside --root."""
        return self.is_live or os.path.abspath(executable) in self.named

    def run(self, argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None,
            map_executable: bool = False) -> CommandFact:
        """Run a live command with a hard timeout (shell.proc: its group is killed on timeout, so
        a hung child that keeps the pipes open cannot hang the doctor). Under --root only a
        binary the user named runs (NotRun otherwise: the probes ask may_run first).
        ``map_executable`` is accepted for older callers and ignored: executables are never
        looked up inside the root."""
        argv = [str(a) for a in argv]
        if not self.may_run(argv[0]):
            raise NotRun(f"{argv[0]} is not run: nothing inside --root {self.root} is executed")
        run_env = dict(self.env if env is None else env)
        cwd = self.cwd if os.path.isdir(self.cwd) else None
        taken = prefetch.take(argv, run_env, cwd)
        if taken:  # started by the entry point while the doctor was importing
            proc, started = taken
            done = proc_wait(proc, argv, timeout, started, max_output=MAX_OUTPUT)
        else:
            done = proc_run(argv, timeout, env=run_env, cwd=cwd, max_output=MAX_OUTPUT)
        return CommandFact(argv=list(argv), found=done.found, returncode=done.returncode, stdout=done.stdout,
                           stderr=done.stderr, timed_out=done.timed_out, error=done.error,
                           duration_ms=round(done.duration_s * 1000, 1))
