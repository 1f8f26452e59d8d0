"""The collective stage with gloo on the CPU: real torch.distributed across 4 processes, and
one of 2 processes that hangs (named in the result). The device lists ("0-1", "0,1,2,3") and the
bus factor for other rank counts are tested on plain data (test_smoke_core)."""
from pathlib import Path

import pytest
from smoke_fixtures.envs import bare_env, target_python

from doctor.shell.host.root import Host
from doctor.smoke.config import SmokeOptions
from doctor.usecases.smoke import run

HANG = Path(__file__).resolve().parent / "smoke_fixtures" / "hang_rank"


@pytest.fixture(scope="module")
def py():
    return str(target_python())


def collective(py, devices, env=None, timeout=120):
    opts = SmokeOptions(device="cpu", devices=devices, timeout=timeout, stages=["collective"])
    return run(opts, py, Host(env=bare_env(**(env or {}))), explain=lambda t: None)


@pytest.mark.slow
def test_gloo_all_reduce(py):
    n = 4
    st = collective(py, "0,1,2,3").stages[0]
    assert st.status == "ok", st.title.text("en")
    rows = st.metrics["sizes"]
    assert [r["bytes"] for r in rows] == [4096, 65536, 1 << 20] and all(r["wrong"] == 0 for r in rows)
    for r in rows:  # busbw = algbw * 2(n-1)/n
        assert r["busbw_gbps"] == pytest.approx(r["algbw_gbps"] * 2 * (n - 1) / n, rel=1e-3)
    assert st.metrics["backend"] == "gloo" and st.metrics["ranks"] == n


@pytest.mark.slow
def test_a_hanging_rank_is_named(py):
    st = collective(py, "0-1", env={"PYTHONPATH": str(HANG), "SMOKE_TEST_HANG_RANK": "1"}, timeout=60).stages[0]
    assert st.status == "fail"
    named = st.metrics["culprits"]
    assert [c["rank"] for c in named] == [1] and named[0]["hung"] is True
    assert "rank 1 (device 1) hung in all_reduce" in st.title.text("en")
