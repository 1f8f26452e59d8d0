"""The model probe reads only files of the model directory (or of its Hugging Face cache) and
within bounds: names from the weight index or a sha256sum file that lead elsewhere are refused
and named in a finding, symlinks out are not followed, crafted JSON is refused by its shape, and
the reading has a time bound. Real files, hand-made safetensors (no transformers needed)."""
import builtins
import hashlib
import json
import os
import struct
import subprocess
import sys
import time

import pytest

from doctor.findings import FAIL, OK, WARN
from doctor.parse import jsonshape, safetensors
from doctor.probes import model as probe
from doctor.probes.model import plain_name, probe_model
from doctor.rules import tuning_model
from doctor.rules.engine import make_context, run_rules
from rules.test_tuning import facts
from shipped import matrix as shipped_matrix

CONFIG = {"model_type": "qwen2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}
SECRET = b"root:x:0:0:the outside file's content\n"


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


def shard(path, tensors=("model.layers.0.w", "model.layers.1.w")):
    header = {t: {"dtype": "BF16", "shape": [2], "data_offsets": [4 * i, 4 * i + 4]} for i, t in enumerate(tensors)}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * (4 * len(tensors)))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_model(d, weight_map=None, sums=None):
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.json").write_text(json.dumps(CONFIG))
    if weight_map is not None:
        (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 8},
                                                                    "weight_map": weight_map}))
    if sums is not None:
        (d / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for h, n in sums))
    return d


@pytest.fixture
def outside(tmp_path):
    o = tmp_path / "outside"
    o.mkdir()
    (o / "secret").write_bytes(SECRET)
    return o / "secret"


def judge(path, matrix, verify=True):
    m = probe_model(str(path), str(path), "--model", verify=verify, sample=0)
    ctx = make_context(facts(model=m), matrix, "build", "0.13.0")
    return m, run_rules(ctx, tuning_model.RULES).findings


def texts(found, rule_id, lang="en"):
    return [f.title.text(lang) for f in found if f.id == rule_id]


@pytest.fixture
def opened(monkeypatch):
    """Every file the process opens (os.open by name, a relative one resolved through its fd;
    builtin open), so that a test can say what was never opened."""
    seen = []
    real_open, real_builtin = os.open, builtins.open

    def spy(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        seen.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        return fd

    def spy_builtin(file, *a, **k):
        if isinstance(file, (str, bytes, os.PathLike)):
            seen.append(os.path.realpath(file))
        return real_builtin(file, *a, **k)

    monkeypatch.setattr(os, "open", spy)
    monkeypatch.setattr(builtins, "open", spy_builtin)
    return seen


def test_plain_names():
    assert plain_name("model-00001.safetensors") == ("model-00001.safetensors", "")
    assert plain_name("./x.safetensors") == ("x.safetensors", "")
    assert plain_name(".//x") == ("x", "")
    assert plain_name("/etc/passwd") == (None, "absolute")
    assert plain_name("../../etc/hostname") == (None, "parent")
    assert plain_name("a/../../x") == (None, "parent")
    assert plain_name("sub/x.safetensors") == (None, "subdir")
    assert plain_name("x\x00y") == (None, "control")
    assert plain_name("\x1b[31mx") == (None, "control")
    assert plain_name("") == (None, "subdir") and plain_name(5) == (None, "subdir")


def test_index_and_sums_naming_outside_files_are_refused_and_not_opened(tmp_path, outside, matrix, opened):
    model = tmp_path / "models" / "m"
    esc = "\x1b[31mRED\x1b]0;pwn\x07.safetensors"
    rel = os.path.relpath(outside, model)
    good = model / "model-00001-of-00001.safetensors"
    make_model(model, {"model.layers.0.w": "./model-00001-of-00001.safetensors",
                       "model.layers.1.w": "model-00001-of-00001.safetensors",
                       "a": str(outside), "b": rel, "c": "/etc/hostname", "d": "../../../../etc/hostname", "e": esc})
    digest = shard(good)
    secret_hash = hashlib.sha256(SECRET).hexdigest()
    (model / "SHA256SUMS").write_text(f"{secret_hash}  {outside}\n{secret_hash}  {rel}\n{digest}  ./{good.name}\n")
    m, found = judge(model, matrix)
    assert [s.name for s in m.shards] == [good.name]  # ./x and x are one file, read once
    assert {r.name: r.reason for r in m.refused} == {
        str(outside): "absolute", rel: "parent", "/etc/hostname": "absolute", "../../../../etc/hostname": "parent",
        esc: "control"}
    assert [c.name for c in m.verified] == [good.name] and m.verified[0].actual == digest
    titles = texts(found, "tuning.model_weights")
    assert any(str(outside) in t and "was not read" in t for t in titles)
    assert any("\\x1b[31mRED\\x1b]0;pwn\\x07" in t for t in titles) and not any("\x1b" in t for t in titles)
    assert any("未读取" in t for t in texts(found, "tuning.model_weights", "zh"))
    assert {f.status for f in found if f.id == "tuning.model_weights"} == {FAIL, WARN}  # the index, the sums file
    assert [f.status for f in found if f.id == "tuning.model_checksums"] == [OK]
    assert str(outside) not in opened and "/etc/hostname" not in opened and "/etc/passwd" not in opened
    assert secret_hash not in json.dumps([c.actual for c in m.verified])


def test_a_symlink_out_is_not_followed(tmp_path, outside, matrix, opened):
    model = make_model(tmp_path / "m", {"model.layers.0.w": "model-1.safetensors", "model.layers.1.w": "model-2.safetensors"})
    shard(model / "model-1.safetensors")
    foreign = tmp_path / "foreign.safetensors"
    shard(foreign)
    (model / "model-2.safetensors").symlink_to(foreign)  # an outside safetensors file, readable
    (model / "SHA256SUMS").write_text(f"{hashlib.sha256(foreign.read_bytes()).hexdigest()}  model-2.safetensors\n")
    (model / "checksums.sha256").symlink_to(outside)
    m, found = judge(model, matrix)
    assert [s.name for s in m.shards] == ["model-1.safetensors"]
    assert {(r.name, r.reason) for r in m.refused} == {("model-2.safetensors", "outside"), ("checksums.sha256", "outside")}
    assert any("model-2.safetensors (named by model.safetensors.index.json) was not read: a symlink" in t for t in texts(found, "tuning.model_weights"))
    assert str(foreign) not in opened and str(outside) not in opened
    assert all(c.name != "model-2.safetensors" for c in m.verified)


def test_config_symlinked_out_is_not_read(tmp_path, outside, matrix):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").symlink_to(outside)
    m, found = judge(model, matrix, verify=False)
    assert m.config_error and m.config == {}
    assert any("config.json was not read" in t for t in texts(found, "tuning.model_config"))


def test_a_symlink_inside_the_directory_is_followed(tmp_path, matrix):
    model = make_model(tmp_path / "m", {"model.layers.0.w": "model.safetensors", "model.layers.1.w": "model.safetensors"})
    (model / "real").mkdir()
    shard(model / "real" / "weights.safetensors")
    (model / "model.safetensors").symlink_to("real/weights.safetensors")
    m, found = judge(model, matrix, verify=False)
    assert [s.exists for s in m.shards] == [True] and not m.refused
    assert [f.status for f in found if f.id == "tuning.model_weights"] == [OK]


def hf_cache(root):
    """models--org--name/{blobs/<sha256>, snapshots/<rev>/<file> -> ../../blobs/<sha256>}, as huggingface_hub lays it out."""
    snap = root / "models--org--tiny" / "snapshots" / "0123abcd"
    blobs = root / "models--org--tiny" / "blobs"
    snap.mkdir(parents=True)
    blobs.mkdir()
    staging = root / "staging"
    make_model(staging, {"model.layers.0.w": "model-00001-of-00002.safetensors",
                         "model.layers.1.w": "model-00002-of-00002.safetensors"})
    shard(staging / "model-00001-of-00002.safetensors", ("model.layers.0.w",))
    shard(staging / "model-00002-of-00002.safetensors", ("model.layers.1.w",))
    for f in sorted(staging.iterdir()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        os.replace(f, blobs / digest)
        (snap / f.name).symlink_to(f"../../blobs/{digest}")
    staging.rmdir()
    return snap


def test_a_hugging_face_cache_still_verifies(tmp_path, matrix, outside):
    snap = hf_cache(tmp_path / "hub")
    m, found = judge(snap, matrix)
    assert not m.refused and not m.config_error
    assert [s.hash_source for s in m.shards] == ["huggingface cache blob"] * 2
    assert [c.actual == c.expected for c in m.verified] == [True, True]
    status = {f.id: f.status for f in found}
    assert status["tuning.model_weights"] == OK and status["tuning.model_checksums"] == OK
    # a snapshot link that leaves the cache is still refused
    os.unlink(snap / "model-00002-of-00002.safetensors")
    (snap / "model-00002-of-00002.safetensors").symlink_to(outside)
    m, _ = judge(snap, matrix)
    assert [(r.name, r.reason) for r in m.refused] == [("model-00002-of-00002.safetensors", "outside")]
    assert hashlib.sha256(SECRET).hexdigest() not in [c.actual for c in m.verified]


def test_a_hard_linked_shard_is_read_once(tmp_path, matrix, monkeypatch):
    names = [f"model-{i}.safetensors" for i in range(4)]
    model = make_model(tmp_path / "m", {f"model.layers.{i}.w": n for i, n in enumerate(names)})
    first = model / names[0]
    digest = shard(first, [f"model.layers.{i}.w" for i in range(4)])
    for n in names[1:]:
        os.link(first, model / n)
    (model / "SHA256SUMS").write_text("".join(f"{digest}  {n}\n" for n in names))
    parsed, fed = [], []
    real_parse = safetensors.parse_header
    monkeypatch.setattr(probe.safetensors, "parse_header", lambda n, b: parsed.append(n) or real_parse(n, b))
    real_sha = hashlib.sha256

    class Counting:
        def __init__(self):
            self.h = real_sha()

        def update(self, block):
            fed.append(len(block))
            self.h.update(block)

        def hexdigest(self):
            return self.h.hexdigest()

    monkeypatch.setattr(hashlib, "sha256", Counting)
    m, _ = judge(model, matrix)
    assert len(parsed) == 1 and len(m.shards) == 4 and all(s.missing_count == 0 for s in m.shards)
    assert [c.actual for c in m.verified] == [digest] * 4 and sum(fed) == first.stat().st_size


@pytest.mark.parametrize("doc, bound", [
    (b"[" * 100 + b"]" * 100, "depth"),
    (b"[" + b",".join([b"[]"] * 200) + b"]", "containers"),
    (b"[" + b",".join([b"1"] * 2000) + b"]", "values"),
    (b'{"a":[' + b",".join([b'"x"'] * 2000) + b"]}", "values"),
])
def test_json_shape_bounds(doc, bound):
    shape = jsonshape.Shape(depth=8, containers=100, values=1000)
    with pytest.raises(jsonshape.ShapeError) as e:
        jsonshape.loads(doc, shape)
    assert e.value.bound == bound


def test_json_structure_inside_strings_is_no_structure():
    shape = jsonshape.Shape(depth=3, containers=5, values=10)
    doc = json.dumps({"a": "[[[[{{{{,,,,::::" * 50, "b\\\"[": ["\\\\", "]]]"]}).encode()
    assert jsonshape.loads(doc, shape) == json.loads(doc)


def test_config_index_and_header_past_their_bounds_are_findings(tmp_path, matrix, monkeypatch):
    monkeypatch.setattr(probe, "CONFIG_SHAPE", jsonshape.Shape(depth=64, containers=50, values=1000))
    monkeypatch.setattr(probe, "INDEX_SHAPE", jsonshape.Shape(depth=16, containers=10, values=100))
    monkeypatch.setattr(safetensors, "HEADER_SHAPE", jsonshape.Shape(depth=16, containers=30, values=5000))
    wide = tmp_path / "wide"
    make_model(wide)
    (wide / "config.json").write_text("[" + ",".join(["[]"] * 100) + "]")
    m, found = judge(wide, matrix, verify=False)
    assert [(x.file, x.bound) for x in m.limits] == [("config.json", "json_containers")]
    assert any("config.json holds more JSON objects and arrays than the doctor's bound of 50" in t
               for t in texts(found, "tuning.model_config"))
    assert any("上限 50" in t for t in texts(found, "tuning.model_config", "zh"))
    index = make_model(tmp_path / "index", {f"t{i}": "model.safetensors" for i in range(200)})
    m, found = judge(index, matrix, verify=False)
    assert [x.bound for x in m.limits] == ["json_values"] and m.index_error
    assert any("model.safetensors.index.json holds more JSON values" in t for t in texts(found, "tuning.model_weights"))
    big = make_model(tmp_path / "big", {"model.layers.0.w": "model.safetensors"})
    shard(big / "model.safetensors", [f"model.layers.{i}.w" for i in range(100)])
    m, found = judge(big, matrix, verify=False)
    assert [(x.file, x.bound) for x in m.limits] == [("model.safetensors", "json_containers")]
    assert any("model.safetensors holds more JSON objects" in t for t in texts(found, "tuning.model_weights"))


def test_too_many_distinct_shards_and_the_time_bound(tmp_path, matrix, monkeypatch):
    monkeypatch.setattr(probe, "MAX_SHARDS", 3)
    names = [f"model-{i}.safetensors" for i in range(6)]
    model = make_model(tmp_path / "m", {f"model.layers.{i}.w": n for i, n in enumerate(names)})
    for i, n in enumerate(names):
        shard(model / n, (f"model.layers.{i}.w",))
    m, found = judge(model, matrix, verify=False)
    assert len(m.shards) == 3 and [x.bound for x in m.limits] == ["shards"]
    assert any("more distinct weight files than the doctor's bound of 3" in t for t in texts(found, "tuning.model_weights"))
    monkeypatch.setattr(probe, "MAX_SHARDS", 500)
    monkeypatch.setattr(probe, "READ_SECONDS", 0.0)
    m, found = judge(model, matrix, verify=False)
    assert [x.bound for x in m.limits] == ["seconds"]
    assert WARN in {f.status for f in found if f.id == "tuning.model_weights"}
    monkeypatch.setattr(probe, "READ_SECONDS", 60.0)
    (model / "SHA256SUMS").write_text("".join(f"{hashlib.sha256((model / n).read_bytes()).hexdigest()}  {n}\n"
                                              for n in names))
    monkeypatch.setattr(probe, "VERIFY_SECONDS", 0.0)
    time.sleep(0.01)
    m, found = judge(model, matrix)
    assert [x.bound for x in m.limits] == ["verify_seconds"] and all(c.skipped for c in m.verified)
    assert [f.status for f in found if f.id == "tuning.model_checksums"] == [WARN]


def test_fifo_and_directory_names_do_not_block(tmp_path, matrix):
    model = make_model(tmp_path / "m", {"model.layers.0.w": "model-1.safetensors", "model.layers.1.w": "sub"})
    os.mkfifo(model / "model-1.safetensors")
    (model / "sub").mkdir()
    m, _ = judge(model, matrix)
    assert {(r.name, r.reason) for r in m.refused} == {("model-1.safetensors", "not_regular"), ("sub", "not_regular")}


SCRIPT = r"""
import json, os, struct, sys, time
d = sys.argv[1]
from doctor.probes.model import probe_model
t = time.process_time()  # CPU: what the bound saves, whatever else the machine runs
m = probe_model(d, d, "--model")
print(json.dumps({"seconds": time.process_time() - t, "limits": [x.bound for x in m.limits],
                  "errors": [s.header_error for s in m.shards]}))
"""


@pytest.mark.slow  # ~1 s of CPU or more: a real-size crafted header
def test_a_real_size_crafted_header_is_refused_quickly(tmp_path):
    """~35M empty arrays in a 100 MB header (the format's bound): 2.7 GB and ~17 s a shard before
    the shape bound; six hard links of it took 103 s."""
    model = make_model(tmp_path / "m", {f"model.layers.{i}.w": f"model-{i}.safetensors" for i in range(6)})
    n = (safetensors.MAX_HEADER - 10) // 3
    body = b'{"a":[' + b"[]," * (n - 1) + b"[]]}"
    first = model / "model-0.safetensors"
    first.write_bytes(struct.pack("<Q", len(body)) + body)
    del body
    for i in range(1, 6):
        os.link(first, model / f"model-{i}.safetensors")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(model)], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["limits"] == ["json_values"] * 6 and result["seconds"] < 10
