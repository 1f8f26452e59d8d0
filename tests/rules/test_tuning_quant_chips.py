"""tuning.quantization per chip: from vllm-ascend 0.15.0rc1 a 310P host loads its own ModelSlim
registry (vllm_ascend/_310p/quantization), which lacks most schemes of the shared one (A2 / A3).

The rule tests use plain rows (not the shipped windows), so they judge the rule alone; the last
tests read the shipped matrix for the windows read at the tags and sdists."""
from __future__ import annotations

import copy
from typing import List

import pytest

from doctor.facts import ModelFacts
from doctor.findings import FAIL, INFO, OK, WARN
from doctor.matrix.model import ChipWindow, TuningFact, TuningQuant
from doctor.versions import satisfies

from .test_tuning import DUO, by_id, facts, judge
from shipped import matrix as shipped_matrix

FLAG = "vllm serve /m --quantization ascend"


@pytest.fixture(scope="module")
def shipped():
    return shipped_matrix()


@pytest.fixture(scope="module")
def plain(shipped):
    """The shipped matrix with plain quantization rows: a shared window from 0.10, a 310P window
    that ends at 0.15 (W4A8_DYNAMIC), one with a MoE-only span (W8A8_DYNAMIC), one the 310P has
    throughout (W8A8)."""
    m = copy.copy(shipped)
    m.tuning_quant = [
        TuningQuant(scheme="W8A8", releases=(">=0.8.0",), source="shared:w8a8",
                    chips=(ChipWindow(hardware=("310P",), releases=(">=0.8.0",), source="310p:w8a8"),)),
        TuningQuant(scheme="W4A8_DYNAMIC", releases=(">=0.10.0rc1",), source="shared:w4a8",
                    chips=(ChipWindow(hardware=("310P",), releases=(">=0.10.0rc1,<0.15.0rc1",), source="310p:w4a8"),)),
        TuningQuant(scheme="W8A8_DYNAMIC", releases=(">=0.8.0",), source="shared:w8a8d",
                    chips=(ChipWindow(hardware=("310P",), releases=(">=0.8.0,<0.15.0rc1", ">=0.18.0"),
                                      moe_only=(">=0.15.0rc1,<0.18.0", "==0.18.0rc1"), source="310p:w8a8d"),)),
        TuningQuant(scheme="W4A16_MXFP4", releases=(">=0.23.0rc1",), source="shared:mxfp4",
                    chips=(ChipWindow(hardware=("310P",), releases=(), source="310p:mxfp4"),)),
    ]
    m.tuning_facts = [f for f in shipped.tuning_facts if not f.id.startswith("310p_quant_unsupported")] + [
        TuningFact(id="310p_quant_unsupported.x", releases=(">=0.15.0rc1",), source="310p:error",
                   value="Unsupported quant_type=<quant_type> for layer_type=<layer_type>.")]
    return m


def model(*schemes: str) -> ModelFacts:
    return ModelFacts(path="/m", exists=True, is_dir=True, quant_types=list(schemes))


def quant(m, release: str, chip: str, *schemes: str) -> List:
    if chip == "310P":
        f = facts(serve=FLAG, model=model(*schemes), npu=DUO, davinci=2)
    else:
        f = facts(serve=FLAG, model=model(*schemes))
        if chip == "unknown":
            f.devices.npu_smi_info = None
    return by_id(judge(f, release, m), "tuning.quantization")


def test_a_scheme_outside_the_310p_window_fails_on_the_310p(plain):
    found = quant(plain, "0.18.0", "310P", "W4A8_DYNAMIC")
    assert [f.status for f in found] == [FAIL], found
    en, zh = found[0].title.text("en"), found[0].title.text("zh")
    assert "W4A8_DYNAMIC" in en and "0.18.0" in en and "310P registry" in en
    # what the 310P registry of that release has, and the error it raises
    assert "W8A8, W8A8_DYNAMIC" in en and "Unsupported quant_type=" in en and "W4A16_MXFP4" not in en.split("has ")[-1]
    assert "at no later release read" in en
    assert "W4A8_DYNAMIC" in zh and "310P 专用注册表没有" in zh and "W8A8、W8A8_DYNAMIC" in zh and "Unsupported quant_type=" in zh
    assert "supported by" not in en and found[0].source == "310p:w4a8" and found[0].observed == "W4A8_DYNAMIC on 310P"
    assert "310P" in found[0].hint.text("en") and ">=0.10.0rc1,<0.15.0rc1" in found[0].hint.text("zh")


def test_the_same_scheme_passes_on_the_a2_and_before_the_310p_registry(plain):
    assert [f.status for f in quant(plain, "0.18.0", "A2", "W4A8_DYNAMIC")] == [OK]
    assert [f.status for f in quant(plain, "0.14.0rc1", "310P", "W4A8_DYNAMIC")] == [OK]


def test_the_chip_unknown_is_said_not_judged(plain):
    found = quant(plain, "0.18.0", "unknown", "W4A8_DYNAMIC")
    assert [f.status for f in found] == [INFO], found
    assert "depends on the chip" in found[0].title.text("en") and "310P" in found[0].title.text("en")
    assert "取决于芯片" in found[0].title.text("zh") and "310P" in found[0].title.text("zh")
    # a scheme whose every chip window holds: nothing to say but OK
    assert [f.status for f in quant(plain, "0.18.0", "unknown", "W8A8")] == [OK]


def test_a_scheme_the_310p_registry_has_passes_on_the_310p(plain):
    assert [f.status for f in quant(plain, "0.25.1rc1", "310P", "W8A8")] == [OK]
    assert [f.status for f in quant(plain, "0.18.0", "310P", "W8A8_DYNAMIC")] == [OK]


def test_a_later_release_that_adds_it_is_named(plain):
    # MoE expert layers only at 0.16.0rc1: a warning that names the release adding linear layers
    found = quant(plain, "0.16.0rc1", "310P", "W8A8_DYNAMIC")
    assert [f.status for f in found] == [WARN], found
    en, zh = found[0].title.text("en"), found[0].title.text("zh")
    assert "MoE expert layers only" in en and "W8A8_DYNAMIC from 0.18.0" in en
    assert "MoE 专家层" in zh and "W8A8_DYNAMIC 自 0.18.0 起" in zh
    # a scheme no 310P window holds at all
    never = quant(plain, "0.25.1rc1", "310P", "W4A16_MXFP4")
    assert [f.status for f in never] == [FAIL] and "W4A16_MXFP4: -" in never[0].hint.text("en")


def test_a_scheme_the_release_lacks_everywhere_keeps_the_release_message(plain):
    found = quant(plain, "0.9.0rc2", "310P", "W4A8_DYNAMIC")
    assert [f.status for f in found] == [FAIL] and "does not implement" in found[0].title.text("en")


def test_the_shipped_310p_windows(shipped):
    """What the 310P registry holds at the tags v0.15.0rc1 to v0.25.1rc1 and the sdists to 0.30.0rc2."""
    rows = {q.scheme: q for q in shipped.tuning_quant}
    on = lambda scheme, version: any(satisfies(version, r) for r in  # noqa: E731
                                     (rows[scheme].window("310P") or rows[scheme]).releases)
    for version in ("0.15.0rc1", "0.18.0", "0.25.1rc1", "0.30.0rc2"):
        assert on("W8A8", version)
        for scheme in ("W4A8_DYNAMIC", "W4A16", "W8A8_MIX", "W8A16", "W8A8_MXFP8", "W4A4_DYNAMIC",
                       "W4A4_FLATQUANT_DYNAMIC", "W4A4_MXFP4", "W4A8_MXFP", "W8A8FP8_DYNAMIC", "W4A16_MXFP4"):
            assert not on(scheme, version), (scheme, version)
    # before v0.15.0rc1 a 310P host loaded the shared registry
    assert on("W4A8_DYNAMIC", "0.14.0rc1") and on("W4A16", "0.14.0rc1") and on("W8A8_DYNAMIC", "0.14.0rc1")
    w8a8d = rows["W8A8_DYNAMIC"].window("310P")
    assert w8a8d is not None and not on("W8A8_DYNAMIC", "0.18.0rc1") and on("W8A8_DYNAMIC", "0.18.0")
    assert all(any(satisfies(v, r) for r in w8a8d.moe_only) for v in ("0.15.0rc1", "0.17.0rc1", "0.18.0rc1"))
    # on the A2 the shared window is unchanged
    assert rows["W4A8_DYNAMIC"].window("A2") is None and rows["W4A8_DYNAMIC"].window(None) is None


def test_every_chip_window_names_its_sources(shipped):
    windows = [(q.scheme, c) for q in shipped.tuning_quant for c in q.chips]
    assert len(windows) >= 15
    for scheme, c in windows:
        assert c.hardware == ("310P",), scheme
        assert "https://github.com/vllm-project/vllm-ascend/blob/v0.15.0rc1/vllm_ascend/platform.py" in c.source, scheme
        assert "/v0.15.0rc1/vllm_ascend/_310p/quantization/methods" in c.source, scheme
        assert "vllm_ascend-0.30.0rc2.tar.gz" in c.source, scheme
    errors = [f for f in shipped.tuning_facts if f.id.startswith("310p_quant_unsupported.")]
    assert len(errors) == 3 and all("_310p/quantization/modelslim_config.py" in f.source and f.value for f in errors)
