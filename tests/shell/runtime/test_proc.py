"""doctor/shell/runtime/proc.py: what run() keeps of a child's output, and when it gives up on it."""
from __future__ import annotations

import subprocess
import sys

import pytest

from fakehost import REPO

from doctor.shell.runtime import proc


def test_a_child_that_writes_without_end_costs_only_the_kept_bytes():
    """The output is capped while it is read: communicate() held all of it (300 MB from one
    child, then a copy to cut it) before keeping max_output, so a node printing without end
    under `fleet check --ssh` or a runaway tool grew the doctor by what it printed."""
    # the peak of this process's own memory (VmHWM): ru_maxrss also counts the RSS of the pytest
    # worker that started it (Linux keeps it across exec), which failed the test on a busy CI
    code = ("from doctor.shell.runtime import proc\n"
            "f = proc.run(['sh', '-c', 'head -c 300000000 /dev/zero; echo tail >&2'], 120, max_output=1 << 20)\n"
            "assert len(f.stdout) == 1 << 20 and f.stderr == 'tail\\n' and f.returncode == 0, f\n"
            "print(next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) < 150, f"{done.stdout.strip()} MB held"  # communicate(): about 600


def test_input_fed_and_output_kept_up_to_the_cap():
    f = proc.run(["cat"], 30, input=b"x" * 1_000_000, max_output=4096)
    assert (f.returncode, f.stdout, f.timed_out) == (0, "x" * 4096, False)
    f = proc.run(["true"], 30, input=b"x" * 10_000_000)  # a child that never reads its stdin
    assert (f.returncode, f.timed_out) == (0, False)


def test_a_grandchild_that_keeps_the_pipe_open_is_a_timeout():
    f = proc.run(["sh", "-c", "sleep 60 & echo started"], 1.5)
    assert f.timed_out and f.stdout == "started\n" and f.duration_s < 10


def test_a_child_that_finished_before_a_late_reader_is_not_a_timeout():
    """The entry point starts npu-smi while the doctor imports; on a loaded machine the probe can
    come to read it after its timeout has passed. A child that finished by then has not timed out
    (its output and exit are taken); one still running has, whether silent or writing without end,
    and the late reading of an endless writer stops within LATE_READ_S."""
    import time

    done = proc.start(["sh", "-c", "echo done"])
    done.wait()
    f = proc.wait(done, ["sh"], 5, time.monotonic() - 10)  # started 10 s ago, a 5 s timeout
    assert (f.timed_out, f.returncode, f.stdout) == (False, 0, "done\n")
    silent = proc.start(["sleep", "30"])
    assert proc.wait(silent, ["sleep"], 5, time.monotonic() - 10).timed_out
    endless = proc.start(["yes"])
    import select

    select.select([endless.stdout], [], [], 60)  # its pipe holds output (a loaded machine starts it late)
    t = time.monotonic()
    f = proc.wait(endless, ["yes"], 5, time.monotonic() - 10, max_output=4096)
    assert f.timed_out and len(f.stdout) == 4096 and time.monotonic() - t < proc.LATE_READ_S + 5


LOOP = r'''
import os, sys, time
from doctor.shell.runtime import proc
marker = sys.argv[1]
proc.install_signal_handlers()
print("ready", flush=True)
try:
    while True:
        # as the transaction does between steps: a stop whose exception Python dropped (it
        # landed in the last Popen's __del__) is raised here, not lost until the exit watchdog
        proc.raise_if_signalled()
        p = proc.start(["sleep", marker])
        proc.kill_group(p); p.wait(); proc.forget(p)
except BaseException as e:
    time.sleep(0.3)
    left = 0
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read() == b"sleep\0" + marker.encode() + b"\0":
                    left += 1
                    os.kill(int(pid), 9)
        except (OSError, ValueError):
            pass
    print("stopped", type(proc.stop_behind(e) or e).__name__, "left", left, flush=True)
    os._exit(0)
'''


@pytest.mark.slow  # ~0.5 s of CPU or more: trials of real child processes stopped at random
def test_a_stop_while_a_child_is_being_started_leaves_no_child_running():
    """SIGTERM lands at a random point of a loop that starts children: inside Popen (between the
    fork and the exec, before the child is registered) it was raised out of Popen and the child
    went on running, unkilled (a pip installing while the transaction rolled back; 15 of 20
    trials leaked one). The stop is now held until the child is known, then it is killed."""
    import random
    import signal
    import time

    leaks = []
    for trial in range(6):  # 15 of 20 trials leaked before the fix: six all pass by chance 1 in 4,000
        marker = f"{600 + trial}.{random.randint(1000, 9999)}"
        child = subprocess.Popen([sys.executable, "-c", LOOP, marker], cwd=REPO, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        time.sleep(random.uniform(0.02, 0.2))
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
        assert out.startswith("stopped Terminated"), (child.returncode, out, err[-2000:])
        if "left 0" not in out:
            leaks.append(out.strip())
    assert not leaks, leaks
