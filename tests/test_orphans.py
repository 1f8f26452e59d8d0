"""No child outlives the doctor (issue 9, item 8): Ctrl-C, SIGTERM, SIGHUP or SIGKILL during a
check whose npu-smi hangs (with a child of its own keeping the pipes open, as a stuck driver
call does) leave neither npu-smi nor its child running."""
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from fakehost import REPO
import pidref


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"  # a zombie is dead; only its parent (or init) has to reap it


def interruptible():
    """Signals as a terminal delivers them: a test run started in the background ignores SIGINT
    (`cmd &`) and SIGHUP (nohup), a child inherits that, and the doctor rightly keeps a signal
    its caller chose to ignore, so it would never see them."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def hung_npu_smi(fake) -> Path:
    d = fake.base
    body = (f"#!/bin/sh\necho $$ > {d}/npu-smi.pid\nsleep 60 &\necho $! > {d}/child.pid\nwait\n")
    return fake.write("/usr/local/bin/npu-smi", body, 0o755)


def wait_for(path: Path, timeout: float = 30) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def threads_asleep(pid: int) -> bool:
    """Every thread of ``pid`` is blocked (state S: waiting on a pipe, a lock, a child), none
    running or runnable."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        states = [Path(f"/proc/{pid}/task/{t}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] for t in tasks]
    except (OSError, IndexError):
        return False
    return bool(states) and all(s == b"S" for s in states)


def wait_until_blocked(pid: int, timeout: float = 60) -> None:
    """Until the doctor has nothing left to do but wait (its probes done or stuck on npu-smi,
    its imports finished), seen twice in a row: an event, however loaded the machine is, where a
    fixed sleep was too short under load."""
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        seen = seen + 1 if threads_asleep(pid) else 0
        if seen >= 2:
            return
        time.sleep(0.05)
    raise AssertionError(f"the doctor (pid {pid}) never settled on waiting for npu-smi")


@contextmanager
def doctor_waiting_on_npu_smi(fake, preexec) -> Iterator[Tuple[subprocess.Popen, int, int]]:
    """A doctor check blocked on a hung npu-smi (past its imports), with the pids of npu-smi and of
    its child; whatever the test does, the doctor and both children are gone afterwards."""
    fake.ascend_host()
    binary = hung_npu_smi(fake)
    argv = [sys.executable, "-m", "doctor", "check", "--root", str(fake.root), "--site-packages", str(fake.base),
            "--npu-smi", str(binary), "--npu-smi-timeout", "60"]
    doctor = subprocess.Popen(argv, env=dict(fake.env, PYTHONPATH=str(REPO)), cwd=fake.workdir,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec)
    held = []
    try:
        smi, child = wait_for(fake.base / "npu-smi.pid"), wait_for(fake.base / "child.pid")
        held = [pidref.hold(smi), pidref.hold(child)]
        wait_until_blocked(doctor.pid)
        yield doctor, smi, child
    finally:
        if doctor.poll() is None:
            doctor.kill()
        for fd in held:
            pidref.kill(fd)


def all_gone(*pids: int, timeout: float = 5) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
                         ids=["ctrl-c", "sigterm", "sighup", "sigkill"])
def test_children_die_with_the_doctor(fake, sig):
    with doctor_waiting_on_npu_smi(fake, interruptible) as (doctor, smi, child):
        assert alive(smi) and alive(child) and doctor.poll() is None
        doctor.send_signal(sig)
        doctor.wait(timeout=20)
        assert all_gone(smi, child), (sig, doctor.stderr.read().decode()[-2000:])
        err = doctor.stderr.read().decode()
        # (CPython drops an exception raised while it runs a weakref callback of the import
        # system and says so: "Exception ignored in"; the children are killed before that.)
        assert "internal error" not in err and ("Traceback" not in err or "Exception ignored in" in err), err
        if sig == signal.SIGINT:  # exiting "by SIGINT" after the cleanup is what CPython does
            assert doctor.returncode in (130, -signal.SIGINT), err
        elif sig != signal.SIGKILL:
            assert doctor.returncode == 128 + sig, err


def test_a_doctor_started_under_nohup_keeps_running_through_a_hangup(fake):
    """`nohup ascend-doctor fix --apply` on a flaky SSH session: the hangup its caller chose to
    ignore stays ignored (the doctor installs no handler over SIG_IGN); a later SIGTERM still ends
    it, and its children with it. An exit of 129 would mean the hangup ended it."""
    def under_nohup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    with doctor_waiting_on_npu_smi(fake, under_nohup) as (doctor, smi, child):
        doctor.send_signal(signal.SIGHUP)  # discarded by the kernel: the disposition is SIG_IGN
        doctor.send_signal(signal.SIGTERM)
        doctor.wait(timeout=20)
        assert doctor.returncode == 128 + signal.SIGTERM, doctor.stderr.read().decode()[-2000:]
        assert all_gone(smi, child)


def test_a_swallowed_interrupt_still_ends_the_doctor_but_never_mid_rollback(tmp_path):
    """Python drops exceptions raised in weakref callbacks and __del__: a doctor whose
    KeyboardInterrupt was lost still ends (the exit watchdog), and its children are killed at
    once; a rollback in progress (shielded) is waited for."""
    script = tmp_path / "swallow.py"
    script.write_text(f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
from doctor.shell.runtime import proc
proc.EXIT_GRACE = 1.0
proc.install_signal_handlers()
child = proc.start(["sleep", "60"])
announced = False
while True:
    try:
        if not announced:  # inside the try: the signal may come while print returns
            announced = True
            print(child.pid, flush=True)
        time.sleep(0.05)
    except KeyboardInterrupt:
        if sys.argv[1] == "shield":
            with proc.shielded():
                time.sleep(2.5)  # a rollback putting files back
            print("rolled back", flush=True)
        # else: swallowed, as CPython does inside a weakref callback
""")
    # (never before EXIT_GRACE, or before EXIT_GRACE after the shield; the upper bounds leave a
    # loaded machine seconds of slack: without the watchdog the doctor would never end)
    for mode, least, most in (("swallow", 0.9, 8), ("shield", 3.3, 12)):
        p = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, text=True,
                             preexec_fn=interruptible)
        child = int(p.stdout.readline())
        start = time.monotonic()
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
        took = time.monotonic() - start
        assert p.returncode == 128 + signal.SIGINT and least < took < most, (mode, p.returncode, took)
        assert not alive(child)
        if mode == "shield":
            assert p.stdout.read().strip() == "rolled back"


def _stop_while_defining_a_class(stop: BaseException) -> None:
    """What CPython does when a signal handler raises while a class body's __set_name__ runs
    (every dataclass field has one): the stop comes back as a RuntimeError caused by it."""
    class Field:
        def __set_name__(self, owner, name):
            raise stop

    class Row:  # noqa: B903
        version = Field()


@pytest.mark.parametrize("stop, code, said", [(KeyboardInterrupt(), 130, "interrupted"),
                                              ("hup", 128 + signal.SIGHUP, f"terminated by signal {signal.SIGHUP}")])
def test_a_stop_wrapped_by_python_is_a_stop_not_an_internal_error(monkeypatch, capsys, stop, code, said):
    from doctor.cli import main as cli
    from doctor.shell.runtime import proc

    stop = proc.Terminated(signal.SIGHUP) if stop == "hup" else stop
    with pytest.raises(RuntimeError) as wrapped:
        _stop_while_defining_a_class(stop)
    assert proc.stop_behind(wrapped.value) is stop
    assert proc.stop_behind(RuntimeError("plain")) is None

    def version_command() -> None:
        _stop_while_defining_a_class(stop)

    monkeypatch.setattr(cli.app.registered_commands[-1], "callback", version_command)
    assert cli._command_name(cli.app.registered_commands[-1]) == "version"
    with pytest.raises(SystemExit) as done:
        cli.main(["version"])
    err = capsys.readouterr().err
    assert done.value.code == code and said in err and "internal error" not in err, err
