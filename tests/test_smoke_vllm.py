"""The vllm stage run for real by the target interpreter, against the stand-in vllm package
(smoke_fixtures/standin_vllm, installed with pip) on top of transformers and the tiny Llama."""
import pytest
from smoke_fixtures.envs import standin_vllm_site, target_python, tiny_llama

from doctor.shell.host import Host
from doctor.smoke.config import SmokeOptions
from doctor.usecases.smoke import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def setup():
    return str(target_python()), str(tiny_llama()), str(standin_vllm_site())


def vllm_smoke(setup, extra_env=None, **kw):
    py, model, site = setup
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": site, **(extra_env or {})}
    opts = SmokeOptions(device="cpu", timeout=300, model=model, stages=["vllm"], **kw)
    return run(opts, py, Host(env=env))


def test_engine_from_serve_args_generates_the_cpu_tokens(setup):
    report = vllm_smoke(setup, serve_args=f"vllm serve {setup[1]} --max-model-len 256 --port 8000 --host 0.0.0.0",
                        vllm_args=["max-num-seqs=4"])
    (st,) = report.stages
    assert st.status == "ok", st.title.text("en")
    m = st.metrics
    assert m["mode"] == "graph" and m["graph_capture_s"] == 1.0 and m["ttft_s"] > 0 and m["tokens_per_s"] > 0
    assert m["ignored"] == ["--port", "8000", "--host", "0.0.0.0"]  # front-end arguments, not engine ones
    assert m["comparison"]["ok"] and "same output as the CPU" in st.title.text("en")


def test_graph_mode_failure_that_eager_mode_does_not_have(setup):
    report = vllm_smoke(setup, {"STANDIN_VLLM_GRAPH_FAIL": "1"}, eager=True)
    (st,) = report.stages
    assert st.status == "fail" and st.metrics["eager_ok"] is True
    assert st.title.text("en").startswith("graph mode fails where eager mode works: failed at model load")
    assert "--enforce-eager" in st.hint.text("en")


def test_garbled_output_is_a_failure(setup):
    report = vllm_smoke(setup, {"STANDIN_VLLM_GARBLE": "1"})
    (st,) = report.stages
    assert st.status == "fail" and "wrong output: other tokens than the CPU (prompt 1, token 1" in st.title.text("en")
    assert report.exit_code() == 3


def test_without_vllm_installed(setup):
    py, model, _ = setup
    report = run(SmokeOptions(device="cpu", timeout=120, model=model, stages=["vllm"]), py,
                 Host(env={"PATH": "/usr/bin:/bin"}))
    assert "No module named 'vllm'" in report.stages[0].title.text("en")
