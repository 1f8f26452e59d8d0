"""The entry point starts the slow probe commands early; the probes take them over."""
import json
import subprocess
import sys
import time
from pathlib import Path

from fakehost import fixture

from doctor.shell.runtime import prefetch
from doctor.shell.host.root import Host
from doctor.probes.python_env import probe_python

ROOT = Path(__file__).resolve().parents[3]


def test_the_interpreter_probe_takes_over_the_started_process(fake):
    fake.venv({"torch": "2.7.1+cpu"})
    prefetch.for_command_line(["check", "--json", "--python", str(fake.python)])
    assert len(prefetch._started) == 1
    facts = probe_python(Host(), str(fake.python))
    assert facts.found and facts.executable and not prefetch._started


def test_a_command_line_that_does_not_probe_starts_nothing():
    for args in (["explain", "log.txt"], ["check", "--from", "host.json"], ["check", "--help"], ["matrix", "show"]):
        prefetch.for_command_line(args)
        assert not prefetch._started, args


def test_a_taken_over_command_keeps_its_timeout_from_its_start(tmp_path):
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nsleep 30 &\nwait\n")
    slow.chmod(0o755)
    host = Host()
    prefetch.start([str(slow)], host.env, host.cwd)
    time.sleep(0.5)
    start = time.monotonic()
    result = host.run([str(slow)], timeout=1.0)
    assert result.timed_out and time.monotonic() - start < 1.5  # 1 s from the prefetch, not from now


def test_npu_smi_runs_once_per_check(tmp_path):
    """End to end through the console entry: npu-smi started early, parsed, and not run twice."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    count = tmp_path / "runs"
    out = tmp_path / "npu-smi.out"
    out.write_text(fixture("npu-smi-910b4-32g.txt"))
    smi = bin_dir / "npu-smi"
    smi.write_text(f'#!/bin/sh\necho run >> "{count}"\ncat "{out}"\n')
    smi.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    proc = subprocess.run([sys.executable, "-m", "doctor", "check", "--json", "--stage", "runtime",
                           "--python", sys.executable], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    doc = json.loads(proc.stdout)
    npu = next(f for f in doc["findings"] if f["id"] == "devices.npu_smi")
    assert npu["status"] == "ok" and "8 chips" in npu["title"]
    assert count.read_text().count("run") == 1
