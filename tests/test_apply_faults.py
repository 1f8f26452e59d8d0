"""Fault injection for `fix --apply`: whatever goes wrong, the environment afterwards is
identical to before (same distributions, versions and file hashes), and two fixes never run
on one environment at once."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakehost import REPO, FakeHost
from fakehost import wheelhouse as wh
from fakehost.dists import Stub
import doctor_fork
import pidref


def scenario(name, base, house):
    fake = FakeHost(base)
    wh.SCENARIOS[name][0](fake, house["template"])
    return fake


def state(fake):
    return wh.tree_state(fake.site, fake.python.parent)


# uv comes with the test extras (pyproject: .[test]), next to the interpreter running the tests
UV = shutil.which("uv") or next((str(p) for p in [Path(sys.executable).parent / "uv"] if p.exists()), None)
# uv is the doctor's default installer: the fast loop runs each fault with it, the full suite with pip too
INSTALLERS = [pytest.param("pip", marks=pytest.mark.slow),
              pytest.param("uv", marks=pytest.mark.skipif(UV is None, reason="no uv"))]


def installer_env(env, installer):
    if installer == "uv":
        env = dict(env, PATH=str(Path(UV).parent) + os.pathsep + env.get("PATH", ""))
    return env


def start_fix(fake, dirs, *extra, mode="run", installer="pip"):
    env = installer_env(wh.pip_env(fake.env, dirs), installer)
    argv = [sys.executable, "-m", "doctor", "fix", "--apply", "--yes", "--no-smoke", "--installer", installer, *extra,
            *fake.args()]
    if mode == "popen":
        return subprocess.Popen(argv, env=env, cwd=fake.workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return doctor_fork.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)


def house_copy(house, tmp_path, change):
    """A copy of the wheelhouse with one file changed."""
    dirs = {}
    for k, d in house["dirs"].items():
        dirs[k] = tmp_path / "house" / k
        shutil.copytree(d, dirs[k])
    change(dirs)
    return [dirs[wh.PYPI], dirs[wh.CPU], dirs[wh.ASCEND]]


def journal(fake):
    runs = sorted((fake.python.parent.parent / ".ascend-doctor" / "transactions").glob("*/journal.json"))
    return json.loads(runs[-1].read_text()) if runs else None


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_missing_wheel_changes_nothing(tmp_path, house):
    """The PyTorch CPU index is not reachable: torch 2.7.1+cpu cannot be downloaded."""
    fake = scenario("cuda_torch", tmp_path, house)
    before = state(fake)
    # the resolver says so before --apply starts (exit 3, pip's message, nothing changed) ...
    proc = start_fix(fake, [house["dirs"][wh.PYPI], house["dirs"][wh.ASCEND]])
    assert proc.returncode == 3 and "No matching distribution found for torch==2.7.1+cpu" in proc.stdout, proc.stdout
    assert state(fake) == before and journal(fake) is None
    # ... and without the resolver, the transaction's download phase still changes nothing
    proc = start_fix(fake, [house["dirs"][wh.PYPI], house["dirs"][wh.ASCEND]], "--offline")
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.strip().splitlines()[-1]
    assert err.startswith("ascend-doctor: error: download failed, nothing was changed") and "torch==2.7.1+cpu" in err
    assert state(fake) == before
    assert journal(fake)["status"] == "aborted"


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_corrupt_wheel_changes_nothing(tmp_path, house):
    def truncate(dirs):
        w = dirs[wh.PYPI] / wh.wheel_name("vllm", "0.11.0")
        w.write_bytes(w.read_bytes()[:300])

    fake = scenario("seed_001", tmp_path, house)
    before = state(fake)
    proc = start_fix(fake, house_copy(house, tmp_path, truncate), "--offline")
    assert proc.returncode == 1, proc.stderr
    assert "nothing was changed" in proc.stderr and "Traceback" not in proc.stderr
    assert state(fake) == before


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.slow  # ~0.5 s of CPU or more: real uv and pip against the wheelhouse
def test_wheel_failing_to_install_rolls_back_the_local_vllm_build(tmp_path, house, installer):
    """vllm 0.11.2+empty is removed (step 1), then installing vllm 0.11.0 fails (step 2): the
    editable local build, which no index has, must come back from the transaction's backup."""
    def poison(dirs):
        bad = Stub("vllm", "0.11.0")
        (dirs[wh.PYPI] / wh.wheel_name("vllm", "0.11.0")).unlink()
        # pip refuses the member outside its directory; uv skips that one, and fails on a file
        # whose parent is a file (pip would too)
        wh.write_wheel(dirs[wh.PYPI], bad, extra_files={"../../../../outside.py": b"x = 1\n",
                                                        f"{bad.module}/__init__.py/clash.py": b"x = 1\n"})

    fake = scenario("seed_001", tmp_path, house)
    before = state(fake)
    proc = start_fix(fake, house_copy(house, tmp_path, poison), installer=installer)
    assert proc.returncode == 1, proc.stderr
    assert "rolled back, the environment is as it was" in proc.stderr, proc.stderr
    assert state(fake) == before
    assert wh.versions(fake.site)["vllm"] == "0.11.2+empty"
    j = journal(fake)
    assert j["status"] == "rolled-back"
    assert [s["status"] for s in j["steps"]][:2] == ["done", "failed"]


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.slow  # ~1 s of CPU or more: real pip, killed
def test_pip_killed_in_the_middle_of_the_install_phase(tmp_path, house, installer):
    """SIGKILL to pip while it writes vllm-ascend's files (after torch, torch-npu and vllm were
    already replaced in the same installer run): everything goes back."""
    def big(dirs):
        (dirs[wh.PYPI] / wh.wheel_name("vllm-ascend", "0.11.0")).unlink()
        files = {f"vllm_ascend/ops/m{i:04d}.py": (f"X{i} = {i}\n" * 50).encode() for i in range(3000)}
        wh.write_wheel(dirs[wh.PYPI], Stub("vllm-ascend", "0.11.0"), extra_files=files)

    fake = scenario("downgrade", tmp_path, house)
    before = state(fake)
    versions = wh.versions(fake.site)
    proc = start_fix(fake, house_copy(house, tmp_path, big), "--target", "vllm-ascend==0.11.0", mode="popen",
                     installer=installer)
    killed = None
    replaced = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and killed is None:
        j = journal(fake)
        for s in (j or {}).get("steps", []):
            if s.get("status") == "running" and any("vllm_ascend-0.11.0" in a for a in s.get("argv") or []) \
                    and s.get("pid") and (fake.site / "vllm_ascend" / "ops").is_dir():
                now = wh.versions(fake.site)
                current = j.get("current") or {}
                if current.get("pid") != s["pid"] or not pidref.kill(pidref.hold(s["pid"], current.get("start"))):
                    continue  # pip already finished this step: not "in the middle"
                killed = s["index"]
                replaced = {n: v for n, v in now.items() if versions.get(n) != v}
                break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=120)
    assert killed is not None, err[-2000:]
    assert replaced, "nothing had been replaced yet when pip was killed"
    assert proc.returncode == 1, err
    assert "killed by signal 9" in err and "rolled back" in err
    assert state(fake) == before
    assert journal(fake)["status"] == "rolled-back"


HOLD_AT_INSTALL = """
import os, sys, time
from doctor.shell.transaction import runner

run = runner.Runner.run


def held(self, argv, *args, **kwargs):
    if "install" in argv:  # inside the transaction, the lock held: wait until the test says go
        deadline = time.monotonic() + 240
        while not os.path.exists(os.environ["HOLD_RELEASE"]) and time.monotonic() < deadline:
            time.sleep(0.01)
    return run(self, argv, *args, **kwargs)


runner.Runner.run = held
from doctor.cli.main import main
main(sys.argv[1:])
"""


@pytest.mark.slow  # ~1 s of CPU or more: two real fixes with real pip
def test_two_concurrent_fixes_one_refuses(tmp_path, house):
    fake = scenario("downgrade", tmp_path, house)
    dirs = [house["dirs"][k] for k in (wh.PYPI, wh.CPU, wh.ASCEND)]
    release = tmp_path / "release"
    # the first fix waits at its install step until the second has been refused (an event, not
    # a race against how fast the first one finishes)
    env = installer_env(dict(wh.pip_env(fake.env, dirs), PYTHONPATH=str(REPO), HOLD_RELEASE=str(release)), "pip")
    first = subprocess.Popen([sys.executable, "-c", HOLD_AT_INSTALL, "fix", "--apply", "--yes", "--no-smoke",
                              "--installer", "pip", "--target", "vllm-ascend==0.11.0", *fake.args()],
                             env=env, cwd=fake.workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = fake.python.parent.parent / ".ascend-doctor" / "lock"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None and not (lock.is_file() and "pid" in lock.read_text()):
        time.sleep(0.01)
    try:
        second = start_fix(fake, dirs, "--target", "vllm-ascend==0.11.0")
    finally:
        release.write_text("go")
    out, err = first.communicate(timeout=300)
    assert second.returncode == 2, second.stderr
    line = second.stderr.strip().splitlines()[-1]
    assert line.startswith("ascend-doctor: error: another ascend-doctor fix or rollback is changing this environment")
    assert f"pid {first.pid}" in line
    # 4: the repaired host keeps one warning, its CANN 8.3.RC2 / driver 25.0.rc1.1 pairing is undocumented
    assert first.returncode in (0, 4), err[-2000:]
    assert wh.versions(fake.site)["vllm-ascend"] == "0.11.0"


LOST_SIGTERM = """
import signal, sys
from doctor.shell.runtime import proc
from doctor.shell.transaction import runner

run = runner.Runner.run


def run_then_lose_a_sigterm(self, argv, *args, **kwargs):
    done = run(self, argv, *args, **kwargs)
    if "install" in argv and not proc.signalled():
        # SIGTERM arrived while this step's pip was started, and Python dropped the exception
        # the handler raised (it ran inside an at-fork callback): only the record of it is left
        proc._signalled.append(signal.SIGTERM)
    return done


runner.Runner.run = run_then_lose_a_sigterm
from doctor.cli.main import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.slow  # ~1 s of CPU or more: real pip, signalled
def test_a_sigterm_whose_exception_was_lost_still_rolls_back(tmp_path, house, installer):
    """Python drops an exception raised inside an at-fork callback (every process start runs
    logging's): the transaction must still stop at the next step and roll back."""
    fake = scenario("downgrade", tmp_path, house)
    before = state(fake)
    dirs = [house["dirs"][k] for k in (wh.PYPI, wh.CPU, wh.ASCEND)]
    argv = [sys.executable, "-c", LOST_SIGTERM, "fix", "--apply", "--yes", "--no-smoke", "--offline",
            "--target", "vllm-ascend==0.11.0", "--installer", installer, *fake.args()]
    env = installer_env(dict(wh.pip_env(fake.env, dirs), PYTHONPATH=str(REPO)), installer)
    proc = subprocess.run(argv, env=env, cwd=fake.workdir,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "interrupted" in proc.stderr and "rolled back" in proc.stderr, proc.stderr[-2000:]
    assert [s["status"] for s in journal(fake)["steps"]][:2] == ["done", "failed"]
    assert state(fake) == before


@pytest.mark.parametrize("installer", INSTALLERS)
def test_sigterm_to_the_doctor_rolls_back(tmp_path, house, installer):
    fake = scenario("downgrade", tmp_path, house)
    before = state(fake)
    dirs = [house["dirs"][k] for k in (wh.PYPI, wh.CPU, wh.ASCEND)]
    proc = start_fix(fake, dirs, "--target", "vllm-ascend==0.11.0", mode="popen", installer=installer)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        j = journal(fake)
        if j and any(s.get("status") == "done" for s in j.get("steps", [])):
            proc.send_signal(signal.SIGTERM)
            break
        time.sleep(0.01)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "interrupted" in err and "rolled back" in err, err[-2000:]
    assert state(fake) == before


LSB_SPY = """#!/bin/sh
# who asked: the command line of the process that ran lsb_release
tr '\\0' ' ' < /proc/$PPID/cmdline >> "$LSB_LOG"; echo >> "$LSB_LOG"
exit 0
"""


@pytest.mark.parametrize("installer", INSTALLERS)
@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_apply_runs_one_installer_process_and_no_lsb_release_for_it(tmp_path, house, installer):
    """Issue 26: the removal costs no pip process (the transaction removes from the RECORD, as
    pip does), every wheel of the plan goes in with one installer run, and that run (--no-index:
    pip's user agent goes nowhere) does not start lsb_release for it. The downgrade's plan has
    five install steps (torch, torch-npu, vllm, vllm-ascend, the rest)."""
    fake = scenario("downgrade", tmp_path, house)
    spy = tmp_path / "spy-bin"
    spy.mkdir()
    (spy / "lsb_release").write_text(LSB_SPY)
    (spy / "lsb_release").chmod(0o755)
    log = tmp_path / "lsb.log"
    log.write_text("")
    dirs = [house["dirs"][k] for k in (wh.PYPI, wh.CPU, wh.ASCEND)]
    env = installer_env(wh.pip_env(fake.env, dirs), installer)
    env = dict(env, PATH=f"{spy}{os.pathsep}{env['PATH']}", LSB_LOG=str(log))
    argv = [sys.executable, "-m", "doctor", "fix", "--apply", "--yes", "--no-smoke", "--installer", installer,
            "--target", "vllm-ascend==0.11.0", *fake.args()]
    proc = doctor_fork.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 4), proc.stderr[-2000:]
    j = journal(fake)
    removal = [s for s in j["steps"] if s["action"] == "remove"]
    assert removal and all(s["argv"] is None and s["status"] == "done" for s in removal)  # no pip uninstall
    installs = [s for s in j["steps"] if s["action"] == "install"]
    assert len(installs) >= 4 and len({tuple(s["argv"]) for s in installs}) == 1, j["steps"]
    commands = [line[2:] for line in (Path(j["log"])).read_text().splitlines() if line.startswith("$ ")]
    downloads = [c for c in commands if " download " in c]
    installs = [c for c in commands if " install " in c]
    # the resolved files are fetched by the doctor itself (doctor/shell/install/downloads.py): no pip download
    assert not downloads and len(installs) == 1 and len(commands) == 1, commands
    assert not [c for c in commands if " uninstall " in c]
    assert "--no-index" in installs[0]
    asked = [line for line in log.read_text().splitlines() if line.strip()]
    assert not [a for a in asked if " install " in a and "--no-index" in a], asked
