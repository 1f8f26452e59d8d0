"""The only place that reads the outside world: files under a root, the environment, commands.

``--root`` works like a chroot for reading: absolute paths (also those found in environment
variables and in symlinks) are looked up inside the root, so a mounted image or a fake host in
the tests reads exactly like a live one.
"""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Dict, List, Mapping, Optional, Sequence

from doctor.shell import prefetch
from doctor.facts import CommandFact
from doctor.shell.prefetch import find_executable
from doctor.shell.proc import run as proc_run
from doctor.shell.proc import wait as proc_wait

MAX_OUTPUT = 256 * 1024  # keep snapshots small; npu-smi on 16 dies is ~10 KB
MAX_FILE = 1024 * 1024


class Host:
    def __init__(self, root: str = "/", env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None):
        self.root = Path(root).resolve() if root not in ("", "/") else Path("/")
        self.env: Dict[str, str] = dict(os.environ if env is None else env)
        self.cwd = cwd or os.getcwd()

    @property
    def is_live(self) -> bool:
        return str(self.root) == "/"

    # -- paths ----------------------------------------------------------------------------
    def path(self, p: str) -> Path:
        """Map a host path into the root, following symlinks the way the chroot would."""
        if self.is_live:
            return Path(p)
        return self._resolve(p)

    def _resolve(self, p: str, depth: int = 0) -> Path:
        parts = PurePosixPath("/" + str(p).lstrip("/")).parts[1:]
        current = PurePosixPath("/")
        for i, part in enumerate(parts):
            if part == "..":
                current = current.parent
                continue
            candidate = current / part
            real = self.root / str(candidate).lstrip("/")
            if depth < 40 and real.is_symlink():
                target = os.readlink(real)
                rest = "/".join(parts[i + 1:])
                base = target if target.startswith("/") else str(current / target)
                return self._resolve(base + ("/" + rest if rest else ""), depth + 1)
            current = candidate
        return self.root / str(current).lstrip("/")

    def exists(self, p: str) -> bool:
        return self.path(p).exists()

    def is_dir(self, p: str) -> bool:
        return self.path(p).is_dir()

    def listdir(self, p: str) -> List[str]:
        try:
            return sorted(os.listdir(self.path(p)))
        except OSError:
            return []

    def stat(self, p: str) -> Optional[os.stat_result]:
        try:
            return os.stat(self.path(p))
        except OSError:
            return None

    def read_text(self, p: str, limit: int = MAX_FILE) -> Optional[str]:
        """File text, or None when it does not exist or cannot be read (undecodable bytes are
        replaced: version files copied from Windows or with a BOM still parse)."""
        try:
            with open(self.path(p), "rb") as fh:
                data = fh.read(limit)
        except (OSError, ValueError):
            return None
        return data.decode("utf-8", errors="replace")

    def realpath(self, p: str) -> str:
        """The host path a (possibly symlinked) path ends up at, without the root prefix."""
        if self.is_live:
            return os.path.realpath(p)
        real = self._resolve(p)
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
        return find_executable(name, dirs, lambda p: str(self.path(p)))

    def run(self, argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]] = None,
            map_executable: bool = True) -> CommandFact:
        """Run a command with a hard timeout (shell.proc: its group is killed on timeout, so a
        hung child that keeps the pipes open cannot hang the doctor)."""
        argv = [str(a) for a in argv]
        exe = str(self.path(argv[0])) if map_executable and argv[0].startswith("/") else argv[0]
        run_env = dict(self.env if env is None else env)
        cwd = self.cwd if os.path.isdir(self.cwd) else None
        taken = prefetch.take([exe] + argv[1:], run_env, cwd)
        if taken:  # started by the entry point while the doctor was importing
            proc, started = taken
            done = proc_wait(proc, argv, timeout, started, max_output=MAX_OUTPUT)
        else:
            done = proc_run([exe] + argv[1:], timeout, env=run_env, cwd=cwd, max_output=MAX_OUTPUT)
        return CommandFact(argv=list(argv), found=done.found, returncode=done.returncode, stdout=done.stdout,
                           stderr=done.stderr, timed_out=done.timed_out, error=done.error,
                           duration_ms=round(done.duration_s * 1000, 1))
