"""Expensive test fixtures built once and shared safely.

The suite runs in several processes (pytest-xdist workers, and other checkouts' runs on the same
machine). Two kinds of sharing:

- per run: :func:`once_per_run` builds a directory once in the directory every worker of this
  run shares (the ``pytest-N`` base temporary directory), under a lock; the other workers wait
  for it and reuse it (the wheelhouse, the doctor's wheel);
- per checkout: the caches under ``.cache/`` (the CPU-torch venv, the tiny models) are made
  under :func:`exclusive` so two workers never build the same venv at once, and
  :func:`verified_this_run` lets one import probe of a cached venv stand for the whole run.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Iterator

READY = ".ready"
_STARTED = f"{os.getpid()}-{time.time():.6f}"  # a pid alone may be reused by a later run


@contextlib.contextmanager
def exclusive(lock: Path) -> Iterator[None]:
    """An exclusive flock on ``lock`` (released when the holder exits, even if it is killed)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def run_root(tmp_path_factory) -> Path:
    """The directory all workers of this run share: an xdist worker's base temporary directory
    is ``<run>/popen-gwN``; without xdist it is the run's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """``<run root>/<name>``, made by ``build(dir)`` in exactly one worker of this run.

    A marker written after ``build`` returns tells the others it is complete; a build that
    failed leaves no marker, so the next worker tries again (and fails the same way, loudly)."""
    root = run_root(tmp_path_factory)
    target = root / name
    with exclusive(root / f"{name}.lock"):
        if not (target / READY).is_file():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            build(target)
            (target / READY).write_text("")
    return target


def run_id() -> str:
    """This run: xdist gives its workers one id; a run without xdist is one process."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{_STARTED}"


def verified_this_run(stamp: Path, verify: Callable[[], bool]) -> bool:
    """``verify()`` once per run for this stamp (call under the cache's lock): the result
    True is remembered in ``stamp`` with this run's id, False never is."""
    rid = run_id()
    try:
        if stamp.read_text() == rid:
            return True
    except OSError:
        pass
    if not verify():
        return False
    stamp.write_text(rid)
    return True
