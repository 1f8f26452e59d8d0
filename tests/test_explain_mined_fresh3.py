"""Issue 25's third fresh batch (tests/data/explain_mined_fresh3.jsonl): real excerpts from
vllm-ascend, LlamaFactory, Mooncake-on-vllm-ascend, sglang / sgl-kernel-npu, Paddle-Lite,
PaddleCustomDevice, gpustack, HAMi, DeepSpeedExamples and FlagTree threads, plus near misses from
the look-alikes of other vendors (NVIDIA CUDA/NCCL/nvidia-docker, AMD ROCm/HIP and the Ryzen AI NPU
driver, Habana Gaudi, Horovod/MPI), each with the cause its thread establishes. The batch was
committed before any signature written for it (commit "explain: fresh mined batch 3, committed
before its signatures"), and no thread in it is in an older set or cited by the matrices. It is the
first batch measured with the description pass (matrices/descriptions.toml) in place: its held-out
share at that commit is the honest measure of that pass. A thread is held out when the first 8 hex
digits of sha256 of its URL are divisible by 3; no held-out line is an example and no signature
cites a held-out thread. Every training case must be explained (gaps listed with their reason); the
held-out share is reported and frozen as a floor."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog, badly_sourced
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_fresh3.jsonl"
# At the blind commit (the description pass in place, none of this batch's signatures) 9 of 18
# held-out cases were explained (2 of the 11 that are not another vendor's near miss); the
# signatures written for the training misses left it at 9 of 18, frozen here.
HELD_OUT_FLOOR = 9 / 18 - 1e-9
# Training cases no signature may take, each with why (listed, not hidden).
TRAINING_GAPS: dict[str, str] = {
    "https://github.com/hiyouga/LlamaFactory/issues/6261":
        "'cannot import name ... from 'vllm' (unknown location)' is the same line for a directory named vllm in "
        "the working directory (env.cwd_shadow answers) and for a leftover vllm directory in site-packages "
        "(the thread's cause): the line does not tell them apart",
    "https://github.com/sgl-project/sglang/issues/27351":
        "a title in the reporter's words ('Attempted 5503 GiB'); the absurd-size classifier reads torch_npu's "
        "'Tried to allocate' message, and the description pass answers the plain NPU out of memory",
}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 50
    assert badly_sourced(got, batch=3, with_class=True, gaps=TRAINING_GAPS) == []
    assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)


def test_no_thread_is_counted_twice_across_the_mined_sets():
    assert shared_threads(MINED) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_no_signature_cites_a_held_out_thread():
    assert signatures_citing_held_out(rows()) == []


def test_every_training_case_is_explained():
    misses, no_longer_gaps = training_misses(rows(), shipped_catalog(), TRAINING_GAPS)
    assert misses == []
    assert no_longer_gaps == []  # a listed gap that gets explained is no gap any more: take it off the list


def test_held_out_share_explained():
    held, misses = held_out_misses(rows(), shipped_catalog())
    assert len(held) >= 18
    share = 1 - len(misses) / len(held)
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_FLOOR, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines next to the classes added with this batch: no real signature answer may come out.
NEAR_MISSES: list[str] = [
    "[I  5/ 9 20:23:15.495 ...r/src/driver/huawei_ascend_npu/engine.cc:41 Context] properties:",
    "-- NNADAPTER_HUAWEI_ASCEND_NPU_SDK_VERSION: 8.0.0",
    "WARNING Failed to import vllm_ascend_C: No module named 'vllm_ascend.vllm_ascend_C'. Sleep mode will be disabled.",
    "RuntimeError: ACL stream synchronize failed, error code is : ok",
    "Requirement already satisfied: decorator in /usr/local/lib/python3.10/site-packages (5.1.1)",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# A line of one class must not be taken by the signature of a neighbouring class.
CROSS_CLASS: list[tuple[str, str]] = [
    # another framework's CANN version line is not Paddle-Lite's build mismatch
    ("CANN version mismatch between torch_npu and the toolkit", "cann.paddle_lite_cann_mismatch"),
    # a CMake failure to extract something else is not the CANN version
    ("CMake Error: Failed to extract the archive, please set the correct URL", "cann.cann_version_unreadable"),
    # the optional custom-ops warning is not the sleep-mode assertion
    ("WARNING:root:Warning: Failed to register custom ops, all custom ops will be disabled", "vllm_ascend.custom_kernels_camem"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)
