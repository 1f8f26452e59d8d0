"""The model stage with the real torch (and transformers) on the CPU: the seeded tiny model, a
real tiny Llama-style model directory, a corrupt weights file, a missing tokenizer, golden files,
and interpreters that hang, crash or lack torch_npu."""
import json
import shutil
import sys
from pathlib import Path

import pytest
from smoke_fixtures.envs import bare_env, target_python, tiny_llama

from doctor.shell.host.root import Host
from doctor.smoke.config import SmokeOptions
from doctor.usecases.smoke import run
import doctor_fork

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def py():
    return str(target_python())


@pytest.fixture(scope="module")
def llama():
    return tiny_llama()


def smoke(py, host=None, **kw):
    opts = SmokeOptions(device=kw.pop("device", "cpu"), timeout=kw.pop("timeout", 300), **kw)
    return run(opts, py, host or Host())


@pytest.mark.slow  # ~1 s of CPU or more: real torch in a subprocess
def test_cli_tiny_model_on_cpu(py):
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "smoke", "--python", py, "--device", "cpu", "--json",
                           "--lang", "zh"], capture_output=True, text=True, timeout=300, cwd=REPO)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    (st,) = doc["stages"]
    assert st["name"] == "model" and st["status"] == "ok" and st["seconds"] > 0
    assert st["metrics"]["versions"]["torch"].startswith("2.13.0")
    assert st["metrics"]["comparison"]["ok"] is True and st["metrics"]["tokens"] == 24
    # in Chinese, the model's words too (the target's script reports facts, the catalogue says them)
    assert st["title"].startswith("固定种子的微型 transformer（2 层，磁盘上没有权重） 在 cpu 上"), st["title"]
    assert "输出与 CPU 一致" in st["title"]
    assert [f["id"] for f in doc["findings"]] == ["smoke.model"]


@pytest.mark.slow
def test_real_llama_directory_on_cpu(py, llama, tmp_path):
    report = smoke(py, model=str(llama), record_golden=str(tmp_path / "golden.json"))
    (st,) = report.stages
    assert st.status == "ok", st.title.text("en")
    assert st.metrics["parameters"] > 50_000 and st.metrics["dtype"] == "float32"
    assert st.metrics["comparison"]["ok"] and st.metrics["tokens_per_s"] > 0
    doc = json.loads((tmp_path / "golden.json").read_text())
    assert doc["model"]["config_sha256"] and len(doc["outputs"]["model"]) == 3
    # the golden file is the reference next time: a tampered token fails as wrong output
    doc["outputs"]["model"][1]["tokens"][2] = (doc["outputs"]["model"][1]["tokens"][2] + 1) % 90
    doc["outputs"]["model"][1]["top"][2] = [[doc["outputs"]["model"][1]["tokens"][2], -0.01]]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    bad = smoke(py, model=str(llama), golden=str(tmp_path / "bad.json"))
    assert bad.stages[0].status == "fail"
    assert "other tokens than the golden file (prompt 2, token 3" in bad.stages[0].title.text("en")
    assert bad.exit_code() == 3


@pytest.mark.slow
def test_corrupt_weights(py, llama, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(llama, broken)
    data = (broken / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(data[: len(data) // 3])  # a truncated copy
    report = smoke(py, model=str(broken))
    st = report.stages[0]
    assert st.status == "fail" and st.metrics["failed_step"] == "load"
    assert "failed at model load" in st.title.text("en")
    assert "weight files cannot be read" in st.hint.text("en")


@pytest.mark.slow
def test_missing_tokenizer(py, llama, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(llama, bare)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (bare / name).unlink(missing_ok=True)
    report = smoke(py, model=str(bare))
    st = report.stages[0]
    assert st.status == "fail" and st.metrics["failed_step"] == "load"
    assert "no usable tokenizer" in st.hint.text("en")


@pytest.mark.slow
def test_npu_without_torch_npu_fails_at_import(py):
    report = smoke(py, device="npu")
    st = report.stages[0]
    assert st.status == "fail" and st.metrics["failed_step"] == "import"
    assert "No module named 'torch_npu'" in st.title.text("en")


@pytest.mark.slow
def test_driver_missing_message_gets_its_cause_and_fix(py, tmp_path):
    """torch_npu on a host without the driver raises this ImportError (recorded on a real host)."""
    pkg = tmp_path / "site" / "torch_npu"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        'raise ImportError("libascend_hal.so: cannot open shared object file: No such file or directory, '
        'You can disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0.")\n')
    host = Host(env=bare_env(PYTHONPATH=str(tmp_path / "site")))
    st = smoke(py, host=host, device="npu").stages[0]
    assert st.status == "fail" and "libascend_hal.so" in st.title.text("en")
    assert st.hint is not None and "driver" in st.hint.text("en").lower()


def test_a_hanging_interpreter_becomes_a_finding(tmp_path):
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nsleep 60 &\nwait\n")
    hang.chmod(0o755)
    report = smoke(str(hang), timeout=1)
    assert "no answer within 1s" in report.stages[0].title.text("en")
    assert report.stages[0].seconds < 10


def test_a_crashing_interpreter_becomes_a_finding(tmp_path):
    crash = tmp_path / "python"
    crash.write_text("#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n")
    crash.chmod(0o755)
    report = smoke(str(crash), timeout=10)
    assert "the interpreter died during start-up: Segmentation fault" in report.stages[0].title.text("en")


def test_a_missing_interpreter(tmp_path):
    report = smoke(str(tmp_path / "nope" / "python"))
    assert "cannot run the target interpreter" in report.stages[0].title.text("en")
    assert report.exit_code() == 3


@pytest.mark.slow  # ~1 s of CPU or more: subprocess smoke runs
def test_bad_usage_is_one_line_exit_2(tmp_path):
    for args in (["--device", "gpu"], ["--slo", "ttft=fast"], ["--duration", "soon"], ["--stages", "model,gpu"],
                 ["--model", str(tmp_path / "none")], ["--config", str(tmp_path / "none.toml")]):
        proc = doctor_fork.run([sys.executable, "-m", "doctor", "smoke", *args], capture_output=True, text=True,
                              timeout=60, cwd=REPO)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_what_the_load_step_loaded_is_said_in_the_reports_language():
    """The target's script reports facts (metrics); the words come from the catalogue, so a
    Chinese report says in Chinese which model ran (issue 22)."""
    from doctor.i18n import Text
    from doctor.usecases.smoke import loaded_model_words

    tiny = loaded_model_words({"detail": "seeded tiny transformer", "metrics": {"model": "tiny", "parameters": 12288}}, "tiny")
    assert isinstance(tiny, Text)
    assert tiny.text("en") == "seeded tiny transformer (2 layers, no weights on disk)"
    assert tiny.text("zh") == "固定种子的微型 transformer（2 层，磁盘上没有权重）"
    hf = loaded_model_words({"metrics": {"model": "/models/Qwen2-0.5B/", "parameters": 494_032_768, "dtype": "bfloat16"}}, "x")
    assert hf.text("en") == "Qwen2-0.5B (494.0M parameters, bfloat16)" and hf.text("zh") == "Qwen2-0.5B（494.0M 参数，bfloat16）"
    assert loaded_model_words({}, "/m") == "/m"  # an older script without metrics: its own words

