"""The vllm / vllm-ascend cases mined for issue 25 (tests/data/explain_mined_vllm.jsonl): real
excerpts from vllm-ascend, vllm, vllm-omni, gpustack, ms-swift, verl and HAMi threads, each with
the cause its thread establishes (a maintainer's answer, the fix that closed it, the project's FAQ,
or a message that names its own cause). A thread is held out by the fixed rule of
tests/test_explain_mined.py (sha256 of its URL); each batch of cases was committed before any
signature was written for it, and held-out lines are never a signature's example
(tests/test_signatures.py). Training cases must all be explained, except the gaps listed below
with the reason; the held-out share is reported; it must not fall below what it was when frozen (the issue aims for 90%)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.explain_kit import catalog as shipped_catalog
from tests.test_explain_heldout import judge
from tests.explain_kit import held_out_by_rule

MINED = Path(__file__).parent / "data" / "explain_mined_vllm.jsonl"
HELD_OUT_FLOOR = 10 / 12 - 1e-9  # 7 of 12 when first frozen, 8 of 12 since the cover pass (CMake without a C++ compiler), 10 of 12 since the held-out pass (the dtype check wrapped at its comma, the A2 build named with an A3 host); issue 25 aims for 0.90 (docs/explain.md): a drop is a regression

# Training cases no signature explains, and why (each would need what the note says).
TRAINING_GAPS = {
    # the user's text misspells the module ("toch_npu"); a pattern that tolerates it has no
    # literal the scan's prefilter can anchor on within the scan budget (tests/test_signatures.py)
    "https://github.com/vllm-project/vllm-ascend/issues/154",
}


def rows():
    return [json.loads(line) for line in MINED.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cases_are_sourced_and_split_by_the_fixed_rule():
    got = rows()
    assert len(got) >= 30
    seen = set()
    for r in got:
        assert r["source"].startswith("https://github.com/") and r["source"].endswith(f"/{r['thread']}"), r
        assert r["source"].split("/")[3] + "/" + r["source"].split("/")[4] == r["repo"], r
        assert r["cause"] and r["evidence"] and r["expect"] and r["text"].strip(), r
        assert r["split"] == ("heldout" if held_out_by_rule(r["source"]) else "train"), r["source"]
        assert (r["source"], r["text"]) not in seen, r["source"]
        seen.add((r["source"], r["text"]))
    assert TRAINING_GAPS <= {r["source"] for r in got if r["split"] == "train"}


def test_no_case_is_in_the_earlier_mined_sets():
    """Threads of the earlier sets (explain_heldout, explain_mined) are not counted again."""
    data = Path(__file__).parent / "data"
    earlier = set()
    for name in ("explain_heldout.jsonl", "explain_mined.jsonl"):
        for line in (data / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                earlier.add(json.loads(line)["source"])
    assert not earlier & {r["source"] for r in rows()}


def test_every_training_case_is_explained():
    cat = shipped_catalog()
    misses = [f"{r['source']}: {r['text'][:90]} (expected {r['expect']})"
              for r in rows() if r["split"] == "train" and r["source"] not in TRAINING_GAPS and not judge(r, cat)]
    assert misses == []


def test_listed_training_gaps_are_still_gaps():
    """A gap that a signature now explains must leave the list (it would hide a regression)."""
    cat = shipped_catalog()
    closed = [r["source"] for r in rows() if r["source"] in TRAINING_GAPS and judge(r, cat)]
    assert closed == []


def test_held_out_share_explained():
    cat = shipped_catalog()
    held = [r for r in rows() if r["split"] == "heldout"]
    assert len(held) >= 9
    misses = [f"{r['source']}: {r['text'][:90]} (expected {r['expect']})" for r in held if not judge(r, cat)]
    share = 1 - len(misses) / len(held)
    print(f"\nheld out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_FLOOR, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines of the classes these signatures cover: no real answer may come out of any of them
# (cross-class near misses: each comes from the neighbourhood of another signature's message).
NEAR_MISSES = [
    "INFO 01-23 10:00:00 [utils.py:120] device type: AscendDeviceType.A3, installed build: A3",
    "__device_type__ = 'A3'",
    "export SOC_VERSION=ascend910_9391",
    "INFO 08-06 06:15:09 [platform.py:120] ACL graph batch sizes for model: 67 sizes",
    "Capturing ACL graphs (decode, FULL): 100%|██████████| 35/35 [00:09<00:00,  3.61it/s]",
    "INFO 05-07 10:21:11 [triton_utils.py:19] Triton op 'fused_recurrent_gated_delta_rule' resolved from triton.language.extra.cann.extension",
    "INFO [modelslim_config.py:336] Using the vLLM Ascend modelslim Quantization now!",
    "INFO [worker_310p.py:158] Skip warm-up atb ops for 310P device.",
    "WARNING 06-18 10:00:00 [arg_utils.py:1731] Chunked prefill is enabled with max_num_batched_tokens=2048.",
    "INFO vLLM API server version 0.11.0",
    "INFO 05-26 10:00:00 [pyhccl.py:70] vLLM is using HCCL from /usr/local/Ascend/ascend-toolkit/latest/lib64/libhccl.so",
    "export ASCEND_RT_VISIBLE_DEVICES=4,5,6,7",
    "shm on /dev/shm type tmpfs (rw,nosuid,nodev,noexec,relatime,size=16777216k)",
    "export GLOO_SOCKET_IFNAME=eth0 TP_SOCKET_IFNAME=eth0 HCCL_SOCKET_IFNAME=eth0",
    "I0419 16:59:47.825220 19842 ascend_direct_transport.cpp:471] AscendDirectTransport register mem addr:0x12e5c0000000, length:1073741824, location:*, mem type:1",
    "Successfully installed torch-2.7.1+cpu torch-npu-2.7.1 vllm-ascend-0.11.0",
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cpu/",
    "INFO 04-17 03:55:34 [fused_moe.py:120] Using MC2 hierarchy communication",
    "INFO [kimi_kda.py:153] Kimi KDA prefill uses the PR141 AscendC operators",
    "Successfully installed memfabric_hybrid-1.0.0",
    "INFO dtype support list [DT_FLOAT16,DT_BFLOAT16]",
    "ModuleNotFoundError: No module named 'vllm._C'",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    from doctor.explain.answers import select
    from doctor.parse.logscan import scan_text

    cat = shipped_catalog()
    real = [a.id for a in select(cat.answers(scan_text(line, cat.compiled))) if not a.benign]
    assert real == [], (line, real)
