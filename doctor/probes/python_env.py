"""The target interpreter: version, arch, glibc, sys.path and PEP 508 marker environment.

The interpreter is run once with a tiny script that imports nothing heavy; when it is the very
interpreter the doctor runs in, the same script runs in-process instead (saves a process start).
"""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional

from ..facts import PythonFacts
from ..host import Host

# Runs in the target interpreter (any CPython >= 3.6): stdlib only, no site-packages imports.
PROBE_SCRIPT = r"""
import json, os, platform, sys
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (AttributeError, ValueError, OSError):
    libc = ""
impl = sys.implementation
iv = impl.version
impl_version = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
if iv.releaselevel != "final":
    impl_version += iv.releaselevel[0] + str(iv.serial)
print(json.dumps({
    "executable": sys.executable,
    "version": platform.python_version(),
    "implementation": impl.name,
    "machine": platform.machine(),
    "glibc": libc.split()[-1] if libc.startswith("glibc") else "",
    "prefix": sys.prefix,
    "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "sys_path": [p for p in sys.path[1:] if p],
    "markers": {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_python_implementation": platform.python_implementation(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    },
}))
"""

_ENV_KEYS = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONUSERBASE")


def default_python(env: dict) -> str:
    """The active virtualenv/conda env's interpreter, else ``python3`` from PATH."""
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(var)
        if prefix:
            for name in ("python3", "python"):
                candidate = os.path.join(prefix, "bin", name)
                if os.path.exists(candidate):
                    return candidate
    return "python3"


def _is_self(executable: str, host: Host) -> bool:
    """Same environment as the doctor's own interpreter (venv pythons are symlinks to one base
    interpreter, so compare the bin directory, not the resolved file)."""
    if not host.is_live:
        return False
    own = os.path.dirname(os.path.abspath(sys.executable))
    target = os.path.dirname(os.path.abspath(executable))
    if own != target or not os.path.basename(executable).startswith("python"):
        return False
    return all(host.env.get(k) == os.environ.get(k) for k in _ENV_KEYS)


def _which(executable: str, host: Host) -> Optional[str]:
    if os.sep in executable:
        return executable if os.path.exists(executable) else None
    for d in host.env.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(d, executable)
        if d and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def probe_python(host: Host, executable: str, timeout: float = 15.0) -> PythonFacts:
    facts = PythonFacts(source="interpreter", executable=executable)
    path = _which(executable, host)
    if path is None:
        facts.error = f"interpreter {executable!r} not found"
        return facts
    facts.executable = path
    if _is_self(path, host):
        import contextlib
        import io

        buf = io.StringIO()
        saved = sys.path
        sys.path = [""] + [p for p in saved[1:]]
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(PROBE_SCRIPT, "<python-probe>", "exec"), {"__name__": "__probe__"})
        finally:
            sys.path = saved
        out = buf.getvalue()
    else:
        result = host.run([path, "-c", PROBE_SCRIPT], timeout=timeout, map_executable=False)
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
