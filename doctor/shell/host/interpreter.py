"""Is the file named with ``--python`` a Python interpreter? Asked before the probe runs, so that
a wrong path is a one-line usage error at once rather than a verdict after the probe's timeout.

An executable (ELF) is a Python when it carries the interpreter's entry point, in its own symbols
or as the name it imports from libpython (``Py_BytesMain``, ``Py_Main``; PyPy's
``pypy_main_startup``): looked up in the file, nothing runs. A script (pyenv's shims, wrappers
that exec a Python) cannot be told apart by reading: it is started once without ``site`` and
must say it is a Python within a few seconds (a script that fails naming Python, as a wrapper of
an interpreter whose libpython is missing does, is a broken Python: the probe reports it).
"""
from __future__ import annotations

import mmap
import os
from typing import Mapping, Optional

ENTRY_POINTS = (b"Py_BytesMain", b"Py_Main", b"pypy_main_startup")
START_TIMEOUT = 3.0  # a Python without site starts in milliseconds; a wrapper script in well under a second
MAX_BINARY = 1 << 30
MARK = "ascend-doctor-python:"


def not_python(path: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Why ``path`` is not a Python interpreter (a short reason), or None when it is one."""
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return "not a regular file"
    if not os.access(real, os.X_OK):
        return "not executable"
    try:
        with open(real, "rb") as fh:
            head = fh.read(4)
            if head == b"\x7fELF":
                return None if _carries_entry_point(fh) else "an executable without a Python runtime in it"
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    if head[:2] == b"#!":
        return _script_answer(path, env)
    return "neither an executable nor a script"


def _carries_entry_point(fh) -> bool:
    size = os.fstat(fh.fileno()).st_size
    if size == 0 or size > MAX_BINARY:
        return False
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return any(m.find(name) != -1 for name in ENTRY_POINTS)


def _script_answer(path: str, env: Optional[Mapping[str, str]]) -> Optional[str]:
    from doctor.shell.runtime import proc

    r = proc.run([path, "-S", "-c", f"import sys; print({MARK!r} + sys.version.split()[0])"], timeout=START_TIMEOUT,
                 env=env)
    if r.timed_out:
        return f"a script that did not start a Python within {START_TIMEOUT:g} s"
    if MARK in (r.stdout or ""):
        return None
    if not r.ok and "python" in (r.stderr or "").lower():
        return None  # a Python that fails to start (a missing libpython): the probe reports why, as a finding
    said = ((r.stderr or r.error or r.stdout or "").strip().splitlines() or [""])[-1][:120]
    return f"a script that is not a Python interpreter (exit {r.returncode}{': ' + said if said else ''})"
