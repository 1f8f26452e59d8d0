"""The fault harness of `fix --apply` (issue 9), shared by tests/shell/transaction/test_recovery.py (a few
trials) and bench/faults.py (the long run): kill the doctor (SIGKILL, or SIGHUP as when an SSH
session drops) at a random point of the install step of a wheel of thousands of files, run
`rollback` at once, and compare every file in site-packages and bin with what was there before.

Everything is real: pip, the wheels, the signals, the doctor's processes. Only the wheels'
contents are stand-ins (metadata-faithful stubs).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

from . import REPO, FakeHost
from . import wheelhouse as wh
from .dists import Stub

BIG_FILES = 4000


def big_house(house_dirs: Dict[str, Path], dest: Path, files: int = BIG_FILES) -> List[Path]:
    """A copy of the wheelhouse whose vllm-ascend 0.11.0 wheel holds ``files`` modules (the size
    of the real one), so that its install step takes long enough to be interrupted."""
    dirs = {}
    for k, d in house_dirs.items():
        dirs[k] = dest / k
        if not dirs[k].exists():
            shutil.copytree(d, dirs[k])
    wheel = dirs[wh.PYPI] / wh.wheel_name("vllm-ascend", "0.11.0")
    wheel.unlink()
    extra = {f"vllm_ascend/ops/m{i:04d}.py": (f"X{i} = {i}\n" * 50).encode() for i in range(files)}
    wh.write_wheel(dirs[wh.PYPI], Stub("vllm-ascend", "0.11.0"), extra_files=extra)
    return [dirs[wh.PYPI], dirs[wh.CPU], dirs[wh.ASCEND]]


def tree(fake: FakeHost) -> Dict[str, str]:
    """Every file (sha256) and directory of site-packages and bin/, the doctor's state excluded."""
    return wh.tree_state(fake.site, fake.python.parent)


def state_dir(fake: FakeHost) -> Path:
    return fake.python.parent.parent / ".ascend-doctor"


def journal(fake: FakeHost) -> Optional[dict]:
    runs = sorted((state_dir(fake) / "transactions").glob("*/journal.json"))
    if not runs:
        return None
    try:
        return json.loads(runs[-1].read_text())
    except (OSError, ValueError):
        return None  # being replaced this very moment


def doctor_argv(fake: FakeHost, *args: str) -> List[str]:
    return [sys.executable, "-m", "doctor", *args, *fake.args()]


def doctor_env(fake: FakeHost, dirs: List[Path]) -> Dict[str, str]:
    return dict(wh.pip_env(fake.env, dirs), PYTHONPATH=str(REPO))


def run(fake: FakeHost, dirs: List[Path], *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(doctor_argv(fake, *args), env=doctor_env(fake, dirs), cwd=fake.workdir,
                          capture_output=True, text=True, timeout=timeout)


@dataclass
class Trial:
    signal: str
    delay_s: float  # after vllm-ascend's install step started
    killed: bool = False  # the signal was sent during the install step
    doctor_code: Optional[int] = None  # -9 for SIGKILL; 1 ("rolled back") when it caught SIGHUP
    rollback_codes: List[int] = field(default_factory=list)
    identical: bool = False
    differences: List[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""


def _as_in_a_terminal() -> None:
    """The doctor as started from a shell: SIGHUP with its default action (a harness run under
    nohup would hand it down ignored, and the doctor rightly keeps ignoring it)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def interrupt_install(fake: FakeHost, dirs: List[Path], sig: int, delay: float, target: str = "0.11.0") -> Trial:
    """One trial: fix --apply, ``sig`` to the doctor ``delay`` seconds into the install step of
    the big vllm-ascend wheel, `rollback --yes` at once, then compare."""
    start = time.monotonic()
    before = tree(fake)
    trial = Trial(signal=signal.Signals(sig).name, delay_s=round(delay, 3))
    doctor = subprocess.Popen(doctor_argv(fake, "fix", "--apply", "--yes", "--no-smoke", "--target",
                                          f"vllm-ascend=={target}"),
                              env=doctor_env(fake, dirs), cwd=fake.workdir, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)
    try:
        deadline = time.monotonic() + 300
        began = None
        while time.monotonic() < deadline and doctor.poll() is None:
            j = journal(fake) or {}
            step = next((s for s in j.get("steps", []) if s.get("status") == "running"
                         and any(f"vllm_ascend-{target}" in a for a in s.get("argv") or [])), None)
            if step and began is None:
                began = time.monotonic()
            if began is not None and time.monotonic() - began >= delay:
                doctor.send_signal(sig)
                trial.killed = True
                break
            time.sleep(0.005)
        if sig == signal.SIGKILL or not trial.killed:
            pass  # `rollback` at once: the kernel dropped the dead doctor's lock already
        for _ in range(600):  # SIGHUP: the doctor rolls back itself and holds the lock meanwhile
            proc = run(fake, dirs, "rollback", "--yes")
            trial.rollback_codes.append(proc.returncode)
            if "is changing this environment" not in proc.stderr:
                break
            time.sleep(0.1)
        doctor.wait(timeout=300)
        trial.doctor_code = doctor.returncode
        last = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines()[:1] or [""])[-1]
        doctor_last = (doctor.stderr.read().strip().splitlines() or [""])[-1] if doctor.stderr else ""
        trial.note = f"doctor: {doctor_last[:160]} | rollback: {last[:160]}"
    finally:
        if doctor.poll() is None:
            doctor.kill()
            doctor.wait()
    after = tree(fake)
    trial.identical = after == before
    if not trial.identical:
        keys = sorted(set(before) | set(after))
        trial.differences = [k for k in keys if before.get(k) != after.get(k)][:10]
    trial.seconds = round(time.monotonic() - start, 1)
    return trial


def fresh_host(base: Path, template: Path) -> FakeHost:
    """The downgrade scenario (vllm-ascend 0.13.0rc1 -> 0.11.0): four steps before vllm-ascend's."""
    fake = FakeHost(base)
    wh.downgrade(fake, template)
    return fake


def random_delay(rng: random.Random) -> float:
    return rng.uniform(0.0, 1.5)


# ---------------------------------------------------------------------------------------------
# read-only site-packages (a read-only bind mount as root, permissions otherwise)


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` cannot be written while inside: a read-only bind mount (root ignores
    permissions), else the write bits removed."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(path), str(path)], check=True, capture_output=True)
        try:
            subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], check=True, capture_output=True)
            yield
        finally:
            subprocess.run(["umount", str(path)], check=True, capture_output=True)
        return
    modes = {}
    for dirpath, _dirnames, _ in os.walk(path):
        modes[dirpath] = os.stat(dirpath).st_mode
        os.chmod(dirpath, modes[dirpath] & ~0o222)
    try:
        yield
    finally:
        for d, mode in modes.items():
            os.chmod(d, mode)


def can_make_read_only(tmp: Path) -> bool:
    d = tmp / "ro-probe"
    d.mkdir(exist_ok=True)
    try:
        with read_only(d):
            try:
                (d / "x").write_text("x")
                return False
            except OSError:
                return True
    except (OSError, subprocess.CalledProcessError):
        return False
