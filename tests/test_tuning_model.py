"""The model directory checks on real directories made with transformers (fakehost.models):
shards, index, config, tokenizer and sampled checksums, then through check itself."""
import json
import shutil

import pytest

from doctor.findings import FAIL, INFO, OK, WARN
from doctor.probes.model import probe_model
from doctor.rules import tuning_model, tuning_serve
from doctor.rules.engine import make_context, run_rules
from fakehost import FakeHost, finding
from fakehost.models import tiny_llama
from fakehost.scenarios import ascend_host
from rules.test_tuning import facts, status
from shipped import matrix as shipped_matrix

# Making the model installs transformers into the shared CPU-torch venv and runs it once per
# machine (cached under .cache/): minutes on a fresh CI machine, seconds afterwards.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return tiny_llama(tmp_path_factory.mktemp("llama") / "model")


@pytest.fixture
def model(made, tmp_path):
    dest = tmp_path / "model"
    shutil.copytree(made, dest, symlinks=True)
    return dest


def judge(path, matrix, release="0.13.0", verify=False, sample=3, serve=None, npu="npu-smi-910b4-32g.txt"):
    m = probe_model(str(path), str(path), "--model", verify=verify, sample=sample)
    f = facts(model=m, serve=serve, npu=npu, davinci=2 if "310p" in npu else 8)
    ctx = make_context(f, matrix, "runtime", release)
    return [x for x in run_rules(ctx, tuning_model.RULES + tuning_serve.RULES).findings]


def test_a_complete_model(model, matrix):
    found = judge(model, matrix)
    assert {f.id: f.status for f in found} == {
        "tuning.model_config": OK, "tuning.model_weights": OK, "tuning.model_index": OK, "tuning.model_tokenizer": OK}
    assert "7 weight file(s)" in [f for f in found if f.id == "tuning.model_weights"][0].title.text()


def test_a_missing_shard(model, matrix):
    (model / "model-00003-of-00007.safetensors").unlink()
    f = [x for x in judge(model, matrix) if x.id == "tuning.model_weights"]
    assert [x.status for x in f] == [FAIL] and "model-00003-of-00007" in f[0].title.text()


def test_an_index_naming_a_file_that_is_not_there(model, matrix):
    index = json.loads((model / "model.safetensors.index.json").read_text())
    index["weight_map"]["model.layers.3.mlp.up_proj.weight"] = "model-00008-of-00007.safetensors"
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    f = [x for x in judge(model, matrix) if x.id == "tuning.model_weights"]
    assert f[0].status == FAIL and "model-00008-of-00007.safetensors" in f[0].observed
    # and the shard that held it now lacks nothing the index places there: only one failure
    assert len(f) == 1


def test_a_tensor_the_shard_does_not_hold(model, matrix):
    index = json.loads((model / "model.safetensors.index.json").read_text())
    index["weight_map"]["model.layers.0.self_attn.extra.weight"] = "model-00002-of-00007.safetensors"
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    f = [x for x in judge(model, matrix) if x.id == "tuning.model_weights"][0]
    assert f.status == FAIL and f.evidence == ["model.layers.0.self_attn.extra.weight"]


def test_a_truncated_shard(model, matrix):
    shard = model / "model-00004-of-00007.safetensors"
    data = shard.read_bytes()
    shard.write_bytes(data[:-100])
    f = [x for x in judge(model, matrix) if x.id == "tuning.model_weights"][0]
    assert f.status == FAIL and f.observed == f"{len(data) - 100} bytes" and f.expected == f"{len(data)} bytes"


def test_config_declares_more_layers_than_the_index_has(model, matrix):
    config = json.loads((model / "config.json").read_text())
    config["num_hidden_layers"] = 6
    (model / "config.json").write_text(json.dumps(config))
    assert status(judge(model, matrix), "tuning.model_index") == FAIL
    (model / "config.json").write_text("{not json")
    assert status(judge(model, matrix), "tuning.model_config") == FAIL


def test_no_tokenizer(model, matrix):
    (model / "tokenizer.json").unlink()
    assert status(judge(model, matrix), "tuning.model_tokenizer") == FAIL
    assert status(judge(model, matrix, serve=f"vllm serve {model} --skip-tokenizer-init"), "tuning.model_tokenizer") is None


def test_verify_weights_against_the_download_metadata(model, matrix):
    ok = [x for x in judge(model, matrix, verify=True, sample=0) if x.id == "tuning.model_checksums"][0]
    assert ok.status == OK and "7 sampled" in ok.title.text()
    sampled = [x for x in judge(model, matrix, verify=True, sample=2) if x.id == "tuning.model_checksums"][0]
    assert "2 sampled" in sampled.title.text()
    shard = model / "model-00007-of-00007.safetensors"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # same size, same header: only the hash can tell
    shard.write_bytes(bytes(data))
    found = judge(model, matrix, verify=True, sample=0)
    assert status(found, "tuning.model_weights") == OK and status(found, "tuning.model_checksums") == FAIL
    assert status(judge(model, matrix), "tuning.model_checksums") is None  # only with --verify-weights
    shutil.rmtree(model / ".cache")
    assert status(judge(model, matrix, verify=True), "tuning.model_checksums") == INFO  # nothing published


def test_bfloat16_model_on_a_300i_duo(model, matrix):
    duo = "npu-smi-310p-duo.txt"
    assert status(judge(model, matrix, serve=f"vllm serve {model} --enforce-eager", npu=duo), "tuning.dtype") == WARN
    assert status(judge(model, matrix, serve=f"vllm serve {model} --dtype bfloat16 --enforce-eager", npu=duo),
                  "tuning.dtype") == FAIL
    assert status(judge(model, matrix, serve=f"vllm serve {model} --dtype float16 --enforce-eager", npu=duo),
                  "tuning.dtype") == OK
    assert status(judge(model, matrix, serve=f"vllm serve {model} --dtype bfloat16"), "tuning.dtype") is None  # A2


def test_check_reads_the_model_the_serve_command_names(made, tmp_path):
    fake = FakeHost(tmp_path / "host")
    ascend_host(fake, "0.13.0", npu="npu-smi-310p-duo.txt")
    shutil.copytree(made, fake.p("/models/tiny"), symlinks=True)
    (fake.p("/models/tiny") / "model-00002-of-00007.safetensors").unlink()
    doc = fake.judge(serve_args="vllm serve /models/tiny --dtype bfloat16 --enforce-eager")
    assert finding(doc, "tuning.model_weights")["status"] == "fail"
    assert finding(doc, "tuning.dtype")["status"] == "fail"
    assert finding(doc, "tuning.dtype")["edits"] == [{"action": "flag", "name": "dtype", "value": "float16"}]
    assert doc["exit_code"] == 3
