"""`fix --apply` runs the smoke stages configured in the smoke configuration file."""
import json

import pytest
from smoke_fixtures.openai_server import Server
from test_fix_apply import build, doctor, pip_env  # the wheelhouse is the session fixture `house` (conftest.py)

pytestmark = pytest.mark.slow


def test_fix_apply_runs_the_configured_endpoint_stage(tmp_path, house):
    fake = build("numpy_2", tmp_path, house)
    env = pip_env(fake, house)
    with Server(first=0.01, gap=0.001) as srv:
        cfg = tmp_path / "smoke.toml"
        cfg.write_text(f'[smoke]\nstages = ["endpoint"]\n[endpoint]\nurl = "{srv.url}"\nrequests = 2\noutput_len = 4\n')
        env["ASCEND_DOCTOR_SMOKE_CONFIG"] = str(cfg)
        proc = doctor(fake, house, "fix", "--apply", "--yes", "--json", env=env)
    doc = json.loads(proc.stdout)
    smoke = doc["result"]["smoke"]
    assert [s["name"] for s in smoke["stages"]] == ["endpoint"] and smoke["exit_code"] == 0
    # the check after the fix still warns (the kit's CANN 8.3.RC2 has no documented driver pairing)
    after = doc["result"]["check_after"]
    assert proc.returncode == 4 and not [f for f in after["findings"] if f["status"] == "fail"], proc.stderr


def test_fix_apply_reports_a_broken_smoke_config(tmp_path, house):
    fake = build("numpy_2", tmp_path, house)
    env = pip_env(fake, house)
    cfg = tmp_path / "smoke.toml"
    cfg.write_text("[endpoit]\nurl = 'http://127.0.0.1:1'\n")
    env["ASCEND_DOCTOR_SMOKE_CONFIG"] = str(cfg)
    proc = doctor(fake, house, "fix", "--apply", "--yes", "--json", env=env)
    doc = json.loads(proc.stdout)
    assert doc["result"]["smoke"]["exit_code"] == 2 and "unknown table [endpoit]" in doc["result"]["smoke"]["why"]
    assert proc.returncode == 3


def test_fix_apply_text_ends_with_every_failing_stage(tmp_path, house):  # noqa: F811
    """numpy is fixed, the check after the fix is clean, the smoke stage fails: the report never
    says all is well, and its last line names the failing stage with exit 3 (issue 10)."""
    fake = build("numpy_2", tmp_path, house)
    env = pip_env(fake, house)
    cfg = tmp_path / "smoke.toml"
    cfg.write_text('[smoke]\nstages = ["endpoint"]\n[endpoint]\nurl = "http://127.0.0.1:1"\nrequests = 1\n')
    env["ASCEND_DOCTOR_SMOKE_CONFIG"] = str(cfg)
    proc = doctor(fake, house, "fix", "--apply", "--yes", "--lang", "en", env=env)
    lines = proc.stdout.rstrip().splitlines()
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "All good" not in proc.stdout and "consistent." not in proc.stdout
    # the verdict first (issue 22), then the check after the fix and the smoke stage that failed
    verdict = lines.index("✗ failing: smoke (endpoint)  →  exit 3")
    after = next(i for i, line in enumerate(lines) if line.startswith("check after the fix: "))
    assert verdict < after and lines[after + 1].startswith("smoke: ✗ exit ") and "endpoint" in lines[after + 1]
