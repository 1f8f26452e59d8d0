"""The one log runner: a command through shell.runtime.proc (argv list, own process group, PDEATHSIG,
the guard: it dies with the doctor) with a hard timeout, its output streamed line by line to a
log (and to ``echo`` with -v), the last lines kept for the error message. The transaction's
steps and the Mooncake build both run through it."""
from __future__ import annotations

import shlex
from collections import deque
from pathlib import Path
from typing import IO, Callable, Deque, Mapping, Optional, Sequence, Union

from doctor.shell.runtime import proc


class StepFailed(Exception):
    pass


class Runner:
    def __init__(self, log: Union[Path, IO[str]], echo: Optional[Callable[[str], None]] = None):
        if isinstance(log, Path):
            self.log_path: Optional[Path] = log
            self.log: IO[str] = open(log, "a", encoding="utf-8", errors="replace")
        else:
            self.log_path = Path(log.name) if isinstance(getattr(log, "name", None), str) else None
            self.log = log
        self.echo = echo
        self.tail: Deque[str] = deque(maxlen=40)
        self.last = ""  # the last line that was not blank (a progress display shows it)

    def close(self) -> None:
        try:
            self.log.close()
        except OSError:
            pass

    def note(self, text: str) -> None:
        try:
            self.log.write(text.rstrip("\n") + "\n")
            self.log.flush()
        except (OSError, ValueError):  # a full disk must not stop a rollback
            pass

    def _line(self, line: str) -> None:
        try:
            self.log.write(line.rstrip("\n") + "\n")
        except (OSError, ValueError):
            pass
        self.tail.append(line.rstrip())
        if line.strip():
            self.last = line.strip()
        if self.echo:
            self.echo(line.rstrip())

    def run(self, argv: Sequence[str], env: Mapping[str, str], timeout: float, *, cwd: Optional[str] = None,
            on_start: Optional[Callable[[int], None]] = None, tick: Optional[Callable[[], None]] = None) -> proc.Finished:
        """Run to the end; the command's own failures (not found, timeout, exit code) are in the
        result, never raised."""
        self.tail.clear()
        self.last = ""
        self.note(f"$ {shlex.join(argv)}" + (f"   (in {cwd})" if cwd else ""))
        done = proc.stream(list(argv), timeout, env=env, cwd=cwd, on_line=self._line, tick=tick,
                           on_start=(lambda p: on_start(p.pid)) if on_start else None)
        try:
            self.log.flush()
        except (OSError, ValueError):
            pass
        if done.error is None:
            self.note(f"# timed out after {timeout:g}s: killed" if done.timed_out else f"# exit {done.returncode}")
        return done

    def check(self, argv: Sequence[str], env: Mapping[str, str], timeout: float, **kw) -> proc.Finished:
        """Run; StepFailed unless it ran and exited 0."""
        done = self.run(argv, env, timeout, **kw)
        if done.error is not None:
            raise StepFailed(f"cannot run {argv[0]}: {done.error}")
        if done.timed_out:
            raise StepFailed(f"timed out after {timeout:g}s")
        rc = done.returncode
        if rc != 0:
            reason = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit code {rc}"
            raise StepFailed(f"{reason}: {self.last_error()}")
        return done

    def last_error(self) -> str:
        for line in reversed(self.tail):
            if line.startswith("ERROR:") or "Error" in line:
                return line.strip()[:300]
        return self.tail[-1].strip()[:300] if self.tail else "no output"
