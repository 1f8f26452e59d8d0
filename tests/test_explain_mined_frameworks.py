"""The cases mined for issue 25 from frameworks that run on Ascend NPUs
(tests/data/explain_mined_frameworks.jsonl): real excerpts users pasted in LLaMA-Factory, ms-swift,
verl / verl-omni / OpenRLHF, lmdeploy, gpustack, transformers / accelerate / peft /
sentence-transformers threads (and a few Ascend/pytorch and vllm-ascend threads no other set holds),
each with the cause its thread establishes (a maintainer's answer, a merged fix, the reporter's
confirmation, or a CANN message that names its own cause; said in ``evidence``).

A thread is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; each
batch was committed before any signature was written for it, and no held-out line is a
signature's example. Every training case is explained but the listed gaps; the held-out share is
reported and frozen as the floor (issue 25 aims for 0.90)."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.explain.answers import primary, select
from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, training_misses, catalog as shipped_catalog
from tests.explain_kit import held_out_misses, real_signature_ids, held_out_by_rule, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_frameworks.jsonl"
HELD_OUT_GOAL = 6 / 6 - 1e-9  # 4 of 6 at the time of writing (current signatures before mine-c: 2 of 5), 5 of 6 since the held-out pass (FSDP on another NPU), 6 of 6 since the description pass (libascend_hal.so "can not be found" in words)
# Training cases no signature may take, each with why (listed, not hidden).
TRAINING_GAPS = {
    # Chinese prose only ("设置了ddp_backend为nccl，但是还是会跳到mpi"), no Ascend word in it: a
    # ddp_backend=nccl line is right on a GPU host, and CJK prose needs a scan anchor of its own
    # (the prefilter budget is 7 exact-text passes, all in use).
    "https://github.com/modelscope/ms-swift/issues/901",
    # "Invalid device ID" alone: the same words come from CUDA and plain vllm; the excerpt names
    # neither Ray nor an NPU, so no signature can tell its class (Ray's per-worker visibility).
    "https://github.com/vllm-project/vllm-ascend/issues/322",
}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 18  # 19 until peft PR 892 was taken out: python.accelerate_too_old cites it
    for r in got:
        assert r["source"].startswith("https://github.com/"), r
        owner, name, kind, number = r["source"].split("/")[3:7]
        assert r["repo"] == f"{owner}/{name}" and r["thread"] == f"{kind}/{number}", r
        assert kind in ("issues", "pull") and number.isdigit(), r
        assert r["cause"] and r["evidence"] and r["expect"] and r["text"].strip(), r
        assert isinstance(r["batch"], int) and r["batch"] >= 1, r
        assert r["split"] == ("heldout" if held_out_by_rule(r["source"]) else "train"), r["source"]
    threads: dict = {}
    for r in got:
        threads.setdefault(r["source"], set()).add(r["split"])
    assert all(len(s) == 1 for s in threads.values())  # a thread is never on both sides
    assert TRAINING_GAPS <= {r["source"] for r in got if r["split"] == "train"}


def test_no_thread_is_counted_twice_across_the_mined_sets():
    """Every other explain set keeps its own threads."""
    assert len(list(DATA.glob("explain_*.jsonl"))) > 1 and shared_threads(MINED) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_every_training_case_is_explained():
    misses, no_longer_gaps = training_misses(rows(), shipped_catalog(), TRAINING_GAPS)
    assert misses == []
    assert no_longer_gaps == []  # a listed gap that gets explained is no gap any more: take it off the list


def test_held_out_share_explained():
    held, misses = held_out_misses(rows(), shipped_catalog())
    assert len(held) >= 5
    share = 1 - len(misses) / len(held)
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_GOAL, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines of the new classes and their neighbours: no real answer may come out.
NEAR_MISSES = [
    "from accelerate.utils import is_npu_available, is_xpu_available",
    "Successfully installed accelerate-1.7.0 peft-0.15.2 transformers-4.52.4",
    "Requirement already satisfied: accelerate>=0.21.0 in /usr/local/lib/python3.10/site-packages",
    "import tbe.common.utils",
    "export PYTHONPATH=/usr/local/Ascend/ascend-toolkit/latest/python/site-packages:$PYTHONPATH",
    "with torch_npu.profiler.profile(activities=[torch_npu.profiler.ProfilerActivity.NPU]) as prof:",
    "torch_npu.npu.set_device(0)",
    "Get regInfo success, the binary_info_config.json of socVersion [ascend910b] supports opType [ApplyRotaryPosEmb].",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# Lines of one class must not be taken by the signature of another (cross-class near misses).
CROSS_CLASS = [
    # a Python dependency of CANN, not CANN's own package: cann.python_deps_missing owns it
    ("ModuleNotFoundError: No module named 'decorator'", "env.tbe_python_path"),
    ("ModuleNotFoundError: No module named 'tensorboard'", "env.tbe_python_path"),
    # transformers is the old package here, not accelerate
    ("ImportError: cannot import name 'is_torch_npu_available' from 'transformers'", "python.accelerate_too_old"),
    ("ImportError: cannot import name 'Accelerator' from partially initialized module 'accelerate2'",
     "python.accelerate_too_old"),
    # an operator missing from torch_npu keeps its own signature
    ("AttributeError: module 'torch_npu' has no attribute 'npu_geglu'", "torch_npu.api_missing"),
    ("AttributeError: module 'torch' has no attribute 'npu'", "torch_npu.api_missing"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)


def test_the_cann_python_path_cause_outranks_the_hccl_wrapper_it_triggers():
    """EC0010 printed under a ProcessGroupHCCL failure: the HCCL line is the consequence."""
    cat = shipped_catalog()
    log = ("RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64\n"
           "EC0010: Failed to import Python module [ModuleNotFoundError: No module named 'te_fusion'.].")
    top = primary(select(cat.answers(scan_text(log, cat.compiled))))
    assert top is not None and top.id == "env.tbe_python_path", top
    alone = primary(select(cat.answers(scan_text(log.splitlines()[0], cat.compiled))))
    assert alone is not None and alone.id == "cann.hccl_error_in_pg", alone  # still named when alone
