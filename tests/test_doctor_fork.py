"""tests/doctor_fork.py: a doctor forked from the fork server says what `python -m doctor` says,
in its own working directory, environment and argv, with the same exit code; a run past its
timeout is killed and raises TimeoutExpired; what a fork could not reproduce runs as a real
process; and the server dies with the process that started it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import doctor_fork
import pytest
from fakehost import REPO
from kitrun import kit_run


@pytest.fixture(autouse=True)
def _forking(monkeypatch):
    """These tests are about the fork: ASCEND_DOCTOR_TESTS_NO_FORK=1 (every other run a real
    process) does not apply to them."""
    monkeypatch.delenv("ASCEND_DOCTOR_TESTS_NO_FORK", raising=False)


def _both(argv, **kw):
    forked = doctor_fork.run(argv, **kw)
    assert hasattr(forked, "maxrss_kb")  # it was forked, not run as a process of its own
    real = subprocess.run(argv, **kw)
    return forked, real


def _diff(real: str, forked: str) -> str:
    import difflib

    return "".join(list(difflib.unified_diff(real.splitlines(True), forked.splitlines(True), "real", "forked"))[:40])


def _untimed(text: str) -> str:
    doc = json.loads(text)
    doc.pop("timings_ms", None)
    return json.dumps(doc, sort_keys=True)


@pytest.mark.parametrize("scenario", ["healthy_a2_documented",
                                      pytest.param("seed_001_official_image", marks=pytest.mark.slow),
                                      pytest.param("vllm_folder_in_cwd", marks=pytest.mark.slow)])
@pytest.mark.slow  # ~1 s of CPU or more: real interpreters beside forked ones
def test_a_forked_run_says_what_a_real_one_says(scenario):
    fake = kit_run(scenario).fake
    env = dict(fake.env, PYTHONPATH=str(REPO))
    doctor = [sys.executable, "-m", "doctor"]
    target = [*fake.args(), "--npu-smi-timeout", "120"]  # a loaded machine must not make one of the two time out
    for args, as_json in ((["check", "--json", *target], True), (["check", *target], False),
                          (["fix", "--offline", *target], False), (["fix", "--offline", "--json", *target], True),
                          (["check", "--lang", "zh", *target], False), (["nosuch"], False), (["--version"], False)):
        forked, real = _both(doctor + args, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)
        assert forked.returncode == real.returncode, (args, forked.stderr, real.stderr)
        if as_json:
            assert _untimed(forked.stdout) == _untimed(real.stdout), (args, _diff(real.stdout, forked.stdout))
        else:
            assert forked.stdout == real.stdout, (args, _diff(real.stdout, forked.stdout))
        assert forked.stderr == real.stderr, (args, _diff(real.stderr, forked.stderr))


@pytest.mark.slow  # ~0.5 s of CPU or more: real interpreters beside forked ones
def test_stdin_bytes_and_stderr_into_stdout_as_subprocess_gives_them(tmp_path):
    # an environment of its own: whatever another test left in os.environ does not decide the fork
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "PYTHONPATH": str(REPO)}
    log = "ImportError: libascend_hal.so: cannot open shared object file: No such file or directory\n"
    argv = [sys.executable, "-m", "doctor", "explain", "--json", "-"]
    forked, real = _both(argv, env=env, cwd=tmp_path, input=log.encode(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120)
    assert forked.returncode == real.returncode == 0
    assert isinstance(forked.stdout, bytes) and forked.stderr is None
    assert json.loads(forked.stdout) == json.loads(real.stdout) and b"libascend_hal" in forked.stdout


@pytest.mark.slow  # ~0.5 s of CPU or more: real interpreters beside forked ones
def test_the_working_directory_and_environment_are_the_runs_own(tmp_path):
    """A `vllm` directory in the working directory shadows the package for a target started
    there: the doctor sees it only from that directory, and only through the environment's
    PYTHONPATH-free start; the same run from another directory does not."""
    fake = kit_run("healthy_a2_documented").fake
    env = dict(fake.env, PYTHONPATH=str(REPO))
    here = tmp_path / "here"
    (here / "vllm").mkdir(parents=True)
    (here / "vllm" / "__init__.py").write_text("")
    argv = [sys.executable, "-m", "doctor", "check", "--json", *fake.args(), "--npu-smi-timeout", "120"]
    shadowed, real = _both(argv, env=env, cwd=here, capture_output=True, text=True, timeout=300)
    plain = doctor_fork.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)
    assert _untimed(shadowed.stdout) == _untimed(real.stdout)
    assert _untimed(shadowed.stdout) != _untimed(plain.stdout)
    assert str(here) in shadowed.stdout and str(here) not in plain.stdout


def test_a_run_past_its_timeout_is_killed_and_raises(tmp_path):
    fake = kit_run("healthy_a2_documented").fake
    hung = tmp_path / "npu-smi"
    started = tmp_path / "started"
    hung.write_text(f"#!/bin/sh\necho $$ > {started}\nexec sleep 300\n")
    hung.chmod(0o755)
    argv = [sys.executable, "-m", "doctor", "check", "--root", str(fake.root), "--python", str(fake.python),
            "--npu-smi", str(hung), "--npu-smi-timeout", "300"]
    began = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        doctor_fork.run(argv, env=dict(fake.env, PYTHONPATH=str(REPO)), cwd=fake.workdir, capture_output=True,
                        text=True, timeout=3)
    assert time.monotonic() - began < 60
    # the doctor was killed with SIGKILL; its guard then kills the npu-smi it had started
    pid = int(started.read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the hung npu-smi outlived the killed doctor")


@pytest.mark.parametrize("extra", [{"PYTHONIOENCODING": "latin-1"}, {"PYTHONPATH": "/elsewhere"},
                                   {"LC_ALL": "zh_CN.GB18030"}, {"PYTHONUTF8": "1"}])
def test_what_a_fork_cannot_reproduce_runs_as_a_process(extra):
    env = {**os.environ, "PYTHONPATH": str(REPO), **extra}
    assert not doctor_fork.forkable(env)
    done = doctor_fork.run([sys.executable, "-m", "doctor", "--version"], env=env, capture_output=True, text=True,
                           timeout=120)
    assert done.returncode == 0 and not hasattr(done, "maxrss_kb")


@pytest.mark.slow  # ~0.5 s of CPU or more: real interpreters beside forked ones
def test_another_start_variable_is_served_by_a_server_started_with_it(tmp_path):
    """A run whose interpreter would start under PYTHONSAFEPATH (no working directory on sys.path)
    or another hash seed is forked from a server started that way: the vllm directory in the
    working directory does not shadow anything for the doctor itself, and the output is the real
    process's."""
    fake = kit_run("healthy_a2_documented").fake
    argv = [sys.executable, "-m", "doctor", "check", "--json", *fake.args(), "--npu-smi-timeout", "120"]
    before = len(doctor_fork._ZYGOTES)  # slow tests run first: this process may have started none yet
    for extra in ({"PYTHONSAFEPATH": "1"}, {"PYTHONHASHSEED": "123"}):
        env = dict(fake.env, PYTHONPATH=str(REPO), **extra)
        assert doctor_fork.forkable(env)
        forked, real = _both(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=300)
        assert forked.returncode == real.returncode and _untimed(forked.stdout) == _untimed(real.stdout)
    assert len(doctor_fork._ZYGOTES) >= before + 2  # one server for each of the two start variables


def test_the_server_dies_with_the_process_that_started_it(tmp_path):
    script = ("import os, sys; sys.path.insert(0, %r); import doctor_fork\n"
              "done = doctor_fork.run([sys.executable, '-m', 'doctor', '--version'], capture_output=True, timeout=120)\n"
              "(z,) = doctor_fork._ZYGOTES.values()\n"
              "print(z.proc.pid, z.dir, flush=True)\n"
              "os._exit(done.returncode)  # no atexit: only the server's own watch can end it\n") % str(REPO / "tests")
    env = {k: v for k, v in os.environ.items() if k != "ASCEND_DOCTOR_TESTS_NO_FORK"}
    out = subprocess.run([sys.executable, "-c", script], env=dict(env, PYTHONPATH=str(REPO)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    server, where = out.stdout.split()
    server = int(server)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{server}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the fork server outlived its test process")
    deadline = time.monotonic() + 10
    while os.path.exists(where) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(where), "the fork server left its directory behind"
