"""The external commands of `check`, started before the doctor has finished importing itself.

Starting Python and importing typer, packaging, the matrix and the rules takes ~250 ms. The two
slow probes are external processes: the target interpreter (~50 ms) and ``npu-smi info``
(hundreds of ms on a busy 8-card host). The entry point starts them from the raw command line;
``Host.run`` takes a started process over when it asks for exactly the same command (argv, env
and working directory); anything not taken over is killed at exit with every other child
(``proc.kill_all`` at exit and on signals, the guard and PDEATHSIG when the doctor is killed).

This module is imported first, so it imports nothing heavy. It also holds what the probes and
the entry point must agree on: the interpreter script, where npu-smi lives, how a command is
found on PATH.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.shell.runtime.proc import start as proc_start

# Runs in the target interpreter (any CPython >= 3.6): stdlib only, no site-packages imports, and
# not json, re or platform either: importing them doubles the probe's CPU (~25 ms of a ~50 ms
# start), so the few values platform would compute come from os.uname() and sys.version, and the
# JSON is written here (every non-ASCII or control character escaped, as json.dumps does).
PYTHON_PROBE = r"""
import os, sys
def q(s):
    out = []
    for ch in s:
        o = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= o < 0x7f:
            out.append(ch)
        elif o > 0xffff:
            o -= 0x10000
            out.append("\\u%04x\\u%04x" % (0xd800 | (o >> 10), 0xdc00 | (o & 0x3ff)))
        else:
            out.append("\\u%04x" % o)
    return '"' + "".join(out) + '"'
def j(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{" + ", ".join(q(k) + ": " + j(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(j(x) for x in v) + "]"
    return q(v)
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (AttributeError, ValueError, OSError):
    libc = ""
impl = sys.implementation
iv = impl.version
impl_version = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
if iv.releaselevel != "final":
    impl_version += iv.releaselevel[0] + str(iv.serial)
names = {"cpython": "CPython", "pypy": "PyPy"}
if impl.name in names:  # what platform.python_version() and python_implementation() say for them
    version, implementation = sys.version.split()[0], names[impl.name]
else:
    import platform
    version, implementation = platform.python_version(), platform.python_implementation()
u = os.uname()
base = getattr(sys, "base_prefix", sys.prefix)
print(j({
    "executable": sys.executable,
    "version": version,
    "implementation": impl.name,
    "machine": u.machine,
    "glibc": libc.split()[-1] if libc.startswith("glibc") else "",
    "prefix": sys.prefix,
    "base_prefix": base,
    "externally_managed": sys.prefix == base and os.path.isfile(
        os.path.join(__import__("sysconfig").get_path("stdlib"), "EXTERNALLY-MANAGED")),
    "sys_path": [p for p in sys.path[1:] if p],
    "markers": {
        "implementation_name": impl.name,
        "implementation_version": impl_version,
        "os_name": os.name,
        "platform_machine": u.machine,
        "platform_python_implementation": implementation,
        "platform_release": u.release,
        "platform_system": u.sysname,
        "platform_version": u.version,
        "python_full_version": version,
        "python_version": ".".join(version.split(".")[:2]),
        "sys_platform": sys.platform,
    },
}))
"""
NPU_SMI_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/bin", "/usr/sbin")
_PYTHON_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONUSERBASE")


def default_python(env: Mapping[str, str]) -> str:
    """The active virtualenv/conda env's interpreter, else ``python3`` from PATH; never the
    doctor's own environment (the README's set-up activates it: the serving environment is
    another one), so its prefix and its bin directory on PATH are passed over."""
    own_bin = os.path.dirname(os.path.abspath(sys.executable))
    own = {os.path.abspath(p) for p in (sys.prefix, os.path.dirname(own_bin))}
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(var)
        if prefix and os.path.abspath(prefix) not in own:
            for name in ("python3", "python"):
                candidate = os.path.join(prefix, "bin", name)
                if os.path.exists(candidate):
                    return candidate
    dirs = env.get("PATH", "").split(os.pathsep)
    if any(d and os.path.abspath(d) == own_bin for d in dirs):
        found = find_executable("python3", [d for d in dirs if d and os.path.abspath(d) != own_bin])
        return found or "python3"
    return "python3"


def find_executable(name: str, dirs: Sequence[str], real: Callable[[str], str] = lambda p: p) -> Optional[str]:
    """The first ``dir/name`` that is an executable file; ``real`` maps it into a --root."""
    seen = set()
    for d in dirs:
        if not d or d in seen:
            continue
        seen.add(d)
        candidate = os.path.join(d, name)
        path = real(candidate)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return candidate
    return None


def python_path(executable: str, env: Mapping[str, str]) -> Optional[str]:
    """The target interpreter as a path (``python3`` is looked up on the env's PATH)."""
    if os.sep in executable:
        return executable if os.path.exists(executable) else None
    return find_executable(executable, env.get("PATH", "").split(os.pathsep))


def is_self(executable: str, env: Mapping[str, str]) -> bool:
    """The doctor's own environment: venv pythons are symlinks to one base interpreter, so the
    bin directory is compared, not the resolved file."""
    own = os.path.dirname(os.path.abspath(sys.executable))
    target = os.path.dirname(os.path.abspath(executable))
    if own != target or not os.path.basename(executable).startswith("python"):
        return False
    return all(env.get(k) == os.environ.get(k) for k in _PYTHON_ENV)


# ---------------------------------------------------------------------------------------------
# started processes

_started: Dict[tuple, Tuple[subprocess.Popen, float]] = {}


def _key(argv: Sequence[str], env: Mapping[str, str], cwd: Optional[str]) -> tuple:
    return tuple(argv), tuple(sorted(env.items())), cwd


def start(argv: List[str], env: Mapping[str, str], cwd: Optional[str] = None) -> None:
    try:
        proc = proc_start(argv, env=env, cwd=cwd)
    except OSError:
        return  # the probe will run it itself and report why it cannot
    _started[_key(argv, env, cwd)] = (proc, time.monotonic())


def take(argv: Sequence[str], env: Mapping[str, str], cwd: Optional[str]) -> Optional[Tuple[subprocess.Popen, float]]:
    return _started.pop(_key(argv, env, cwd), None)


def _options(args: Sequence[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """The subcommand and the value options of a command line (``--x v`` and ``--x=v``)."""
    command = None
    opts: Dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--") and "=" in arg:
            name, _, value = arg.partition("=")
            opts[name] = value
        elif arg in ("--root", "--python", "--from", "--site-packages", "--npu-smi", "--image", "--image-tar") \
                and i + 1 < len(args):
            opts[arg] = args[i + 1]
            i += 1
        elif not arg.startswith("-") and command is None:
            command = arg
        i += 1
    return command, opts


def for_command_line(args: Sequence[str]) -> None:
    """Start what `check`, `snapshot` or `fix` with these arguments will run. A guess that turns
    out different (an option parsed otherwise) costs nothing: the process is simply not taken."""
    command, opts = _options(args)
    if command not in ("check", "snapshot", "fix") or "--from" in opts or "--help" in args:
        return
    if "--image" in opts or "--image-tar" in opts:
        return  # an image: nothing of this machine is asked
    env = dict(os.environ)
    cwd = os.getcwd()
    live = opts.get("--root", "/") in ("/", "")
    # The same rule as Host.may_run: with --root, only what the user named runs.
    if "--site-packages" not in opts and (live or "--python" in opts):
        python = python_path(opts.get("--python") or default_python(env), env)
        if python and not is_self(python, env):
            start([python, "-c", PYTHON_PROBE], env, cwd)
    npu_smi = opts.get("--npu-smi")
    if npu_smi is None and live:
        npu_smi = find_executable("npu-smi", env.get("PATH", "").split(os.pathsep) + list(NPU_SMI_DIRS))
    if npu_smi:
        start([npu_smi, "info"], env, cwd)
