"""The signature file itself: schema, sources, ids, layers, finding ids, case references."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from doctor.layers import LAYERS
from doctor.matrix import MatrixError, load_matrix
from doctor.matrix.load import parse_file, shipped_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data"
SIGNATURES_FILE = shipped_dir() / "signatures.toml"

# Finding ids that `ascend-doctor check` emits (the contract between explain and check).
KNOWN_FINDINGS = {
    "driver.installed", "driver.libs", "firmware.compat", "cann.installed", "cann.driver_compat",
    "cann.release_match", "cann.kernels", "cann.nnal", "devices.nodes", "devices.permissions",
    "devices.npu_smi", "devices.health", "devices.hardware_support", "python.version", "python.glibc",
    "torch.version", "torch.build", "torch_npu.version", "torch_npu.cann", "vllm.version",
    "vllm.local_version", "vllm_ascend.installed", "vllm_ascend.plugin", "vllm_ascend.triton",
    "vllm_ascend.numpy", "vllm_ascend.transformers", "vllm_ascend.requirements", "mooncake.installed",
    "mooncake.transport", "mooncake.loader_path", "mooncake.config", "env.cann_env", "env.nnal_env",
    "env.vllm_version_override", "env.cwd_shadow", "env.pip_check",
}

# Signatures whose finding belongs to another layer, and why (also commented in the TOML).
FINDING_LAYER_EXCEPTIONS = {
    "driver.watchdog_timeout": "the driver must change, but cann.driver_compat is the check that "
                               "compares the driver with what CANN needs",
}

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def signatures():
    return parse_file(SIGNATURES_FILE)["signature"]


@pytest.fixture(scope="module")
def raw_rows():
    return tomllib.loads(SIGNATURES_FILE.read_text(encoding="utf-8"))["signature"]


def test_file_header():
    data = tomllib.loads(SIGNATURES_FILE.read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    assert data["description"].strip()


def test_at_least_forty(signatures):
    assert len(signatures) >= 40


def test_ids_unique_and_shaped(raw_rows):
    ids = [row["id"] for row in raw_rows]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})
    for row in raw_rows:
        assert re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", row["id"]), row["id"]
        assert row["id"].split(".")[0] == row["layer"], f"{row['id']}: id prefix must be its layer"


def test_layers_valid(signatures):
    for sig in signatures:
        assert sig.layer in LAYERS, sig.id


def test_regexes_compile(signatures):
    for sig in signatures:
        flags = re.IGNORECASE if sig.ignore_case else 0
        re.compile(sig.pattern, flags)
        if sig.unless:
            re.compile(sig.unless, flags | re.MULTILINE)


def test_every_signature_has_a_source(signatures):
    for sig in signatures:
        assert sig.source.strip(), sig.id
        # an issue/PR URL, a repo file, or a section of the shared fact files / seeds
        assert re.search(r"https?://|facts/|seeds/|matrices/|@[0-9a-f]{7,}", sig.source), sig.id


def test_texts_in_both_languages(signatures):
    for sig in signatures:
        for name in ("cause_en", "fix_en", "cause_zh", "fix_zh"):
            assert getattr(sig, name).strip(), (sig.id, name)
        assert CJK.search(sig.cause_zh) and CJK.search(sig.fix_zh), sig.id
        assert not CJK.search(sig.cause_en + sig.fix_en), sig.id


def test_finding_ids(signatures):
    for sig in signatures:
        if sig.finding is None:
            continue
        assert sig.finding in KNOWN_FINDINGS, f"{sig.id}: unknown finding {sig.finding}"
        finding_layer = sig.finding.split(".")[0]
        if finding_layer != sig.layer:
            assert sig.id in FINDING_LAYER_EXCEPTIONS, (
                f"{sig.id}: finding {sig.finding} is not in layer {sig.layer}; document the exception")
    for sig_id in FINDING_LAYER_EXCEPTIONS:
        assert any(s.id == sig_id for s in signatures), f"stale exception {sig_id}"


def test_case_references_exist(signatures):
    cases = {c["id"] for c in json.loads((DATA / "case_public_cases.json").read_text(encoding="utf-8"))}
    for sig in signatures:
        for case in sig.cases:
            assert case in cases, f"{sig.id}: unknown case {case}"


def test_benign_signatures_are_few_and_explicit(signatures):
    benign = {s.id for s in signatures if s.benign}
    assert benign == {
        "torch.vllm_requires_torch", "vllm.vllm_c_benign",
        "vllm_ascend.no_platform_benign", "vllm_ascend.plugin_activated",
    }


def test_shipped_matrix_exposes_signatures(signatures):
    loaded = {s.id for s in load_matrix(user_overlays=False).signatures}
    assert {s.id for s in signatures} <= loaded


# --- the loader rejects broken signature rows with file and line --------------------------------

GOOD_ROW = """
[[signature]]
id = "env.example"
pattern = 'example'
layer = "env"
cause_en = "c"
cause_zh = "原因"
fix_en = "f"
fix_zh = "修复"
source = "https://example.invalid/issue/1"
"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "sig.toml"
    path.write_text("schema_version = 1\n" + body, encoding="utf-8")
    return path


def test_loader_accepts_good_row(tmp_path):
    assert parse_file(_write(tmp_path, GOOD_ROW))["signature"][0].id == "env.example"


@pytest.mark.parametrize("broken, needle", [
    (GOOD_ROW.replace("pattern = 'example'", "pattern = 'exa(mple'"), "pattern"),
    (GOOD_ROW.replace('layer = "env"', 'layer = "gpu"'), "layer"),
    (GOOD_ROW.replace('source = "https://example.invalid/issue/1"\n', ""), "source"),
    (GOOD_ROW + GOOD_ROW, "duplicate id"),
])
def test_loader_rejects_broken_rows(tmp_path, broken, needle):
    with pytest.raises(MatrixError) as info:
        parse_file(_write(tmp_path, broken))
    assert needle in str(info.value)
    assert info.value.line is not None
