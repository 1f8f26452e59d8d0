"""The cases mined for issue 25 (tests/data/explain_mined.jsonl): real excerpts from vllm-ascend,
Ascend/pytorch, Mooncake, sglang, verl, ms-swift, vllm and triton threads, each with the cause
its thread establishes. A thread is held out by a fixed rule on its URL, applied before any
signature was written for these cases (the file's first commit); held-out lines are never a
signature's example. Training cases must all be explained; the held-out share is reported."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.explain_kit import catalog as shipped_catalog
from tests.explain_kit import held_out_by_rule, read_rows
from tests.test_explain_heldout import judge

MINED = Path(__file__).parent / "data" / "explain_mined.jsonl"
HELD_OUT_GOAL = 0.66  # 4 of 6 at the time of writing (the issue aims for 0.90): see docs/explain.md


def rows():
    return read_rows(MINED)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 33  # 34 until vllm-ascend#754 was taken out: torch.npu_pin_mismatch cites it
    for r in got:
        assert r["source"].startswith("https://github.com/"), r
        assert r["cause"] and r["expect"] and r["text"].strip(), r
        assert r["split"] == ("heldout" if held_out_by_rule(r["source"]) else "train"), r["source"]
    threads = {}
    for r in got:
        threads.setdefault(r["source"], set()).add(r["split"])
    assert all(len(s) == 1 for s in threads.values())  # a thread is never on both sides


def test_every_training_case_is_explained():
    cat = shipped_catalog()
    misses = [f"{r['source']}: {r['text'][:90]} (expected {r['expect']})"
              for r in rows() if r["split"] == "train" and not judge(r, cat)]
    assert misses == []


def test_held_out_share_explained():
    cat = shipped_catalog()
    held = [r for r in rows() if r["split"] == "heldout"]
    assert len(held) >= 5
    misses = [f"{r['source']}: {r['text'][:90]} (expected {r['expect']})" for r in held if not judge(r, cat)]
    share = 1 - len(misses) / len(held)
    assert share >= HELD_OUT_GOAL, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Lines that look like an error of one of these classes but are not one: no real answer at all.
NEAR_MISSES = [
    "I20260106 06:43:02.966156  5793 ascend_direct_transport.cpp:820] Connected to target: 172.17.0.16:25482",
    "I0729 06:58:32.392583 23436 transfer_engine.cpp:44] Transfer Engine starting. Server: 10.1.1.23:31479:npu_0",
    "export HCCL_NPU_SOCKET_PORT_RANGE=auto",
    "export HCCL_HOST_SOCKET_PORT_RANGE=60000-60050",
    "Successfully installed torch-2.8.0+cpu torch-npu-2.8.0",
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cpu/",
    "torchvision 0.20.1 loaded with operator torchvision::nms",
    "pip install vllm==0.11.0 --no-deps",
    "Successfully installed vllm-ascend-0.11.0 torch-npu-2.7.1",
    "triton-ascend 3.2.0 is installed",
    "INFO 09-18 10:34:29 [mooncake_connector.py:330] KV Cache sending/receiving thread started on port 30012",
    "INFO 11-26 03:38:24 client.cpp:270] Transfer engine auto discovery is disabled for protocol: tcp",
    "from torch.cuda.memory import _cuda_beginAllocateCurrentThreadToPool  # guarded by is_cuda()",
    "Available KV cache memory: 12.87 GiB",
    "INFO 12-23 12:56:15 [core.py:868] aclnnAddmm workspace size: 161002 bytes",
    "INFO: Started server process [271907]",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    from doctor.explain.answers import select
    from doctor.parse.logscan import scan_text

    cat = shipped_catalog()
    real = [a.id for a in select(cat.answers(scan_text(line, cat.compiled))) if not a.benign]
    assert real == [], (line, real)
