"""The target interpreter: version, arch, glibc, sys.path and PEP 508 marker environment.

The interpreter is run once with a tiny script that imports nothing heavy (doctor/prefetch.py:
the entry point may have started this very command already); when it is the very interpreter
the doctor runs in, the same script runs in-process instead (saves a process start).
"""
from __future__ import annotations

import json
import sys
from typing import List

from doctor.facts import PythonFacts
from doctor.shell.host import Host
from doctor.shell.prefetch import PYTHON_PROBE, is_self, python_path

def probe_python(host: Host, executable: str, timeout: float = 15.0) -> PythonFacts:
    facts = PythonFacts(source="interpreter", executable=executable)
    path = python_path(executable, host.env)
    if path is None:
        facts.error = f"interpreter {executable!r} not found"
        return facts
    facts.executable = path
    if host.is_live and is_self(path, host.env):
        import contextlib
        import io

        buf = io.StringIO()
        saved = sys.path
        sys.path = [""] + [p for p in saved[1:]]
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(PYTHON_PROBE, "<python-probe>", "exec"), {"__name__": "__probe__"})
        finally:
            sys.path = saved
        out = buf.getvalue()
    else:
        result = host.run([path, "-c", PYTHON_PROBE], timeout=timeout, map_executable=False)
        if result.timed_out:
            facts.error = f"{path} did not answer within {timeout:g}s"
            return facts
        if not result.ok:
            tail = (result.stderr or result.error or "").strip().splitlines()[-1:] or [""]
            facts.error = f"{path} failed (exit {result.returncode}): {tail[0]}"
            return facts
        out = result.stdout
    try:
        data = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        facts.error = f"{path} printed something unexpected"
        return facts
    facts.found = True
    facts.executable = data.get("executable") or path
    facts.version = data.get("version")
    facts.implementation = data.get("implementation")
    facts.machine = data.get("machine")
    facts.glibc = data.get("glibc") or None
    facts.prefix = data.get("prefix")
    facts.base_prefix = data.get("base_prefix")
    facts.sys_path = list(data.get("sys_path") or [])
    facts.markers = dict(data.get("markers") or {})
    return facts


def python_from_site_packages(dirs: List[str]) -> PythonFacts:
    """No interpreter to ask (a copied site-packages, a foreign-arch image): paths only."""
    return PythonFacts(source="site-packages", found=False, sys_path=list(dirs))
