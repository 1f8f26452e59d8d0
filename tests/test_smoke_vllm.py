"""The vllm stage run for real by the target interpreter, against the stand-in vllm package
(smoke_fixtures/standin_vllm, installed with pip) on top of transformers and the tiny Llama;
and the stage's judgement of what its runs reported (wrong output, graph against eager mode) on
plain data, as the runs report it."""
import pytest
from smoke_fixtures.envs import bare_env, standin_vllm_site, target_python, tiny_llama

from doctor.findings import judge
from doctor.shell.host.root import Host
from doctor.smoke.config import SmokeOptions
from doctor.smoke.events import ScriptRun
from doctor.smoke.result import Outcome
from doctor.usecases.smoke import run, vllm_failure, vllm_result


@pytest.fixture(scope="module")
def setup():
    return str(target_python()), str(tiny_llama()), str(standin_vllm_site())


def vllm_smoke(setup, extra_env=None, **kw):
    py, model, site = setup
    env = bare_env(PYTHONPATH=site, **(extra_env or {}))
    opts = SmokeOptions(device="cpu", timeout=300, model=model, stages=["vllm"], **kw)
    return run(opts, py, Host(env=env))


@pytest.mark.slow
def test_engine_from_serve_args_generates_the_cpu_tokens(setup):
    report = vllm_smoke(setup, serve_args=f"vllm serve {setup[1]} --max-model-len 256 --port 8000 --host 0.0.0.0",
                        vllm_args=["max-num-seqs=4"])
    (st,) = report.stages
    assert st.status == "ok", st.title.text("en")
    m = st.metrics
    assert m["mode"] == "graph" and m["graph_capture_s"] == 1.0 and m["ttft_s"] > 0 and m["tokens_per_s"] > 0
    assert m["ignored"] == ["--port", "8000", "--host", "0.0.0.0"]  # front-end arguments, not engine ones
    assert m["comparison"]["ok"] and "same output as the CPU" in st.title.text("en")


@pytest.mark.slow
def test_graph_mode_failure_that_eager_mode_does_not_have(setup):
    report = vllm_smoke(setup, {"STANDIN_VLLM_GRAPH_FAIL": "1"}, eager=True)
    (st,) = report.stages
    assert st.status == "fail" and st.metrics["eager_ok"] is True
    assert st.title.text("en").startswith("graph mode fails where eager mode works: failed at model load")
    assert "--enforce-eager" in st.hint.text("en")


PROMPT = [1, 15043, 29892]  # what the reference and the run were made for


def outputs(shift=0):
    """Three prompts' outputs as the vllm script reports them (tokens and their top logprobs)."""
    return [{"prompt": PROMPT[: i + 1], "tokens": [(40 + i + k + shift) % 90 for k in range(4)],
             "top": [[[(40 + i + k + shift) % 90, -0.1]] for k in range(4)]} for i in range(3)]


def finished(outs=None, fail_at=None):
    """An Outcome as the runner builds it from the script's events: import, load, generate."""
    sr = ScriptRun()
    for name, metrics in (("import", {"versions": {"vllm": "0.0.0+standin", "torch": "2.13.0"}}),
                          ("load", {"graph_capture_s": 1.0}), ("generate", {"ttft_s": 0.01, "tokens_per_s": 50.0})):
        if name == fail_at:
            sr.add({"event": "step", "step": name, "ok": False, "seconds": 0.2,
                    "error": "RuntimeError: ACL stream synchronize failed, error code is 107027",
                    "traceback": ["Traceback (most recent call last):",
                                  "RuntimeError: ACL stream synchronize failed, error code is 107027"]})
            break
        sr.add({"event": "step", "step": name, "ok": True, "seconds": 0.1, "metrics": metrics})
    if outs is not None:
        sr.add({"event": "outputs", "run": "vllm", "outputs": outs})
    log = ["[ERROR] RUNTIME(1234) graph capture failed, error code 107027"] if fail_at else []
    return Outcome(run=sr, seconds=0.5, returncode=3 if fail_at else 0, log=log, timeout=300)


def figures(out):
    return dict(out.run.metrics(), mode="graph")


def quiet(text):
    return None


def test_garbled_output_is_a_failure():
    """Other tokens than the CPU reference: a failure naming the first one (what the stand-in's
    STANDIN_VLLM_GARBLE run showed, judged on the run's outputs); the same outputs pass."""
    out = finished(outputs(shift=7))
    st = vllm_result(out, figures(out), None, quiet, "cpu", outputs(), out.run.outputs["vllm"])
    assert st.status == "fail" and "wrong output: other tokens than the CPU (prompt 1, token 1" in st.title.text("en")
    assert judge([st.finding()]).exit_code() == 3
    good = finished(outputs())
    ok = vllm_result(good, figures(good), None, quiet, "cpu", outputs(), good.run.outputs["vllm"])
    assert ok.status == "ok" and "same output as the CPU" in ok.title.text("en") and ok.metrics["comparison"]["ok"]


def test_graph_mode_against_eager_mode_judged():
    out = finished(fail_at="load")
    graph_only = vllm_failure(out, figures(out), finished(outputs()), quiet)
    assert graph_only is not None and graph_only.metrics["eager_ok"] is True
    assert graph_only.title.text("en").startswith("graph mode fails where eager mode works: failed at model load")
    assert "--enforce-eager" in graph_only.hint.text("en")
    both = vllm_failure(out, figures(out), finished(fail_at="load"), quiet)
    assert both is not None and both.metrics["eager_ok"] is False
    assert not both.title.text("en").startswith("graph mode fails where eager mode works")
    alone = vllm_failure(out, figures(out), None, quiet)  # no eager run: eager mode is the hint
    assert alone is not None and "eager_ok" not in alone.metrics
    assert alone.hint.text("en").endswith("run the stage again with --eager")
    assert vllm_failure(finished(outputs()), figures(out), None, quiet) is None


@pytest.mark.slow
def test_without_vllm_installed(setup):
    py, model, _ = setup
    report = run(SmokeOptions(device="cpu", timeout=120, model=model, stages=["vllm"]), py,
                 Host(env=bare_env()))
    assert "No module named 'vllm'" in report.stages[0].title.text("en")
