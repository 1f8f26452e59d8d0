"""`ascend-doctor smoke` with the real torch on the CPU; torch_npu failures from recorded output."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakehost.torchenv import torch_python

from doctor.shell.host import Host
from doctor.shell.smoke import SCRIPT, run_smoke

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def torch_py():
    return str(torch_python())


def cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "doctor", "smoke", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_cpu_smoke_runs_real_inference(torch_py):
    proc = cli("--python", torch_py, "--device", "cpu", "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    by_id = {f["id"]: f for f in doc["findings"]}
    assert [by_id[f"smoke.{s}"]["status"] for s in ("import", "device", "compute", "decode")] == ["ok"] * 4
    assert "torch 2.13.0" in by_id["smoke.import"]["title"]
    assert "tokens decoded, same as the CPU" in by_id["smoke.decode"]["title"]


def test_npu_smoke_without_torch_npu_fails_at_import(torch_py):
    result = run_smoke(Host(), torch_py, "npu", timeout=300)
    status = {f.id: f.status for f in result.verdict.findings}
    assert status == {"smoke.import": "fail", "smoke.device": "skip", "smoke.compute": "skip", "smoke.decode": "skip"}
    assert "No module named 'torch_npu'" in result.verdict.findings[0].title.en
    assert result.verdict.exit_code() == 3


def test_driver_missing_message_gets_its_cause_and_fix(torch_py, tmp_path):
    """torch_npu on a host without the driver raises this ImportError (formats.md 8b)."""
    pkg = tmp_path / "site" / "torch_npu"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        'raise ImportError("libascend_hal.so: cannot open shared object file: No such file or directory, '
        'You can disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0.")\n')
    host = Host(env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    result = run_smoke(host, torch_py, "npu", timeout=300)
    first = result.verdict.findings[0]
    assert first.status == "fail" and "libascend_hal.so" in first.title.en
    assert first.hint is not None and "driver" in first.hint.en.lower()


def test_a_hanging_interpreter_becomes_a_finding(tmp_path):
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nsleep 60 &\nwait\n")
    hang.chmod(0o755)
    result = run_smoke(Host(), str(hang), "cpu", timeout=1)
    assert result.command.timed_out
    assert "no answer within 1s" in result.verdict.findings[0].title.en


def test_a_crashing_interpreter_becomes_a_finding(tmp_path):
    crash = tmp_path / "python"
    crash.write_text("#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n")
    crash.chmod(0o755)
    result = run_smoke(Host(), str(crash), "cpu", timeout=10)
    assert "the interpreter died: Segmentation fault" in result.verdict.findings[0].title.en


def test_bad_usage_is_one_line_exit_2():
    proc = cli("--device", "gpu")
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "--device" in proc.stderr


def test_script_is_python39_syntax():
    compile(SCRIPT, "<smoke>", "exec")  # the target may be an older interpreter than the doctor's
