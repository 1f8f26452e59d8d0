"""Issue 25's fourth fresh batch (tests/data/explain_mined_fresh4.jsonl): real excerpts from
vllm-ascend, llama.cpp's CANN backend, transformers, ms-swift, gpustack, verl, sglang and
sgl-kernel-npu, Ray, PaddlePaddle, ONNX Runtime's CANN EP, triton-ascend, the Ascend docs and more
projects on Ascend NPUs, plus near misses from the look-alikes of other vendors (NVIDIA CUDA/NCCL/NVML,
AMD ROCm/HIP, Intel XPU and Level Zero, Apple MPS, Moore Threads MUSA, Cambricon MLU, Triton on
CUDA GPUs) and a few harmless warnings, each with the cause its thread establishes. The batch was
committed before any signature written for it (commit "explain: fresh mined batch 4, committed
before its signatures"), and no thread in it is in an older set or cited by the matrices. A thread
is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; no held-out line is
an example and no signature cites a held-out thread. Every training case must be explained (gaps
listed with their reason); the held-out share is reported and frozen as a floor."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog, badly_sourced, held_out_threads_named_in_any_form
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_fresh4.jsonl"
# At the blind commit (no batch-4 signature) 6 of 19 held-out cases were explained, all six of them
# other vendors' near misses that stay silent (0 of the 13 Ascend failures and benign lines). One
# held-out thread, vllm-ascend PR 4174, was then found cited by vllm.api_mismatch's source in the form
# "(see PR #4174)", which the URL check had missed; it was dropped (a blind miss): 6 of 18, 0 of 12.
HELD_OUT_FLOOR = 6 / 18 - 1e-9
# Training cases no signature may take, each with why (listed, not hidden).
TRAINING_GAPS: dict[str, str] = {
    "https://github.com/vllm-project/vllm-ascend/pull/472":
        "the SetPrecisionMode 500001 line is the same for numpy 2 and for other missing CANN Python "
        "dependencies; the line names neither (acl.500001 answers it)",
    "https://github.com/microsoft/onnxruntime/issues/15677":
        "a generic 507013 from aclrtSynchronizeStream; the RC-mode cause was found by experiment, "
        "not in the line",
    "https://github.com/mindspore-ai/akg/issues/9":
        "'cce runtime error:errno=145 segmentation fault' names no chip; that the 310 was unsupported "
        "came from the maintainer",
    "https://github.com/sgl-project/sglang/pull/26573":
        "one function's torch.compile graph error on the NPU, told in words with no error line",
    "https://github.com/modelscope/ms-swift/issues/2669":
        "no error text in the excerpt; the DDP argument fix came from the reporter's experiment",
    "https://github.com/huggingface/trl/issues/4790":
        "TRL's vllm-serve device handling, told in words; no line to anchor and no general cause",
    "https://github.com/candle-org/candle/pull/110":
        "a bug of candle's own SoC-name parsing; no log line",
    "https://github.com/modelscope/ms-swift/pull/7299":
        "swift-megatron's incomplete PackedSeqParams, told in words; no error line",
    "https://github.com/Ascend/pytorch/issues/47":
        "a C++ compile error of op-plugin; the maintainer's answer (use the recommended build image) "
        "cannot be told from the line",
    "https://github.com/gpustack/gpustack/issues/2274":
        "'stuck at GetDeviceStatus' during MindIE start-up: the old 310P driver was found by upgrading, "
        "the line does not say it",
    "https://github.com/gpustack/gpustack/issues/3148":
        "image requests fail on multi-device MindIE instances, told in words; the memory-fraction "
        "default was the maintainers' finding",
    "https://github.com/gpustack/gpustack/issues/2194":
        "the error lines were not in the excerpt kept; 'Current transformers version' alone is not a cause",
    "https://github.com/vllm-project/vllm-ascend/issues/11238":
        "the excerpt names only an image tag (a documentation error)",
    "https://github.com/verl-project/verl/pull/7488":
        "a verl regression reverted, told in words",
    "https://github.com/RLinf/RLinf/pull/1234":
        "a precision problem (zero success rate), told in words; no line",
    "https://github.com/containers/ramalama/pull/1194":
        "a build regression of a pinned llama.cpp commit, told in words with no build line",
    "https://github.com/huggingface/diffusers/pull/7816":
        "a DeepSpeed checkpoint-saving hang of one training script, told in words",
}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 70
    assert badly_sourced(got, batch=4, with_class=True, gaps=TRAINING_GAPS) == []
    assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)


def test_no_thread_is_counted_twice_across_the_mined_sets():
    assert shared_threads(MINED) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_no_signature_cites_a_held_out_thread():
    assert signatures_citing_held_out(rows()) == []


def test_no_row_of_the_matrices_names_a_held_out_thread_in_any_form():
    """Beyond the exact URL: "owner/name/issues/N", "owner/name/pull/N", or the repository with "#N"
    (vllm-ascend PR 4174 was cited as "see PR #4174"; tests/test_explain_heldout.py holds every set to it)."""
    assert held_out_threads_named_in_any_form(rows()) == []


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


# Healthy lines next to this batch's classes: no real signature answer may come out.
NEAR_MISSES: list[str] = [
    "pip install numpy==1.26.4",
    "export RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1",
    "model = AutoModelForCausalLM.from_pretrained(path, attn_implementation=\"sdpa\")",
    # next to this batch's signatures (phase B)
    "export OMP_NUM_THREADS=8",
    "export FLAGS_npu_jit_compile=0",
    "torch_npu.npu.set_compile_mode(jit_compile=False)",
    "rtDeviceSynchronize execute succeeded",
    "alloc sq cq succeeded, stream 3",
    "from vllm.entrypoints.chat_utils import resolve_hf_chat_template",
    "[vector core] task done",
    "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
    "x = x.to(torch.float32)",
    "INFO 04-21 21:20:24 [config.py:768] Using ascend quantization method",
    "paddle.set_device('npu')",
    "torch.npu.set_device(local_rank)",
    "Successfully installed flash-attn-2.5.8",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# A line of one class must not be taken by the signature of a neighbouring class.
CROSS_CLASS: list[tuple[str, str]] = [
    # a CUDA OOM is not the NPU's
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.", "oom.npu"),
    # an AI-core exception and other vendors' kernel faults are not a vector-core one
    ("EZ9999 The error from device(chipId:0, dieId:0), there is an aicore error exception, core id is 3", "cann.vector_core_exception"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cann.vector_core_exception"),
    # another reason of the same runtime call is not a missing context
    ("EE1001: The argument is invalid.Reason: rtDeviceSynchronize execute failed, reason=[device id invalid]", "cann.runtime_context_null"),
    # rtGetDevMsg fails without a context while it reports an earlier error: that error is the cause
    ("The argument is invalid.Reason: rtGetDevMsg execute failed, reason=[context pointer null]", "cann.runtime_context_null"),
    # 500002 without jit compilation switched off is not this class
    ("ExternalError:  ACL error, the error code is : 500002.", "cann.jit_compile_off_no_binary"),
    # AscendC's own per-device cast assertion is not the build's SoC target
    ("CAST_ODD from half to int4b_t is not supported on current device", "cann.ascendc_int4b_soc_type_build"),
    # a wrapped import from a shadowing directory is env.cwd_shadow's, not vLLM API drift
    ("ImportError: cannot import name 'LLM'\nfrom 'vllm' (unknown location)", "vllm.api_mismatch_wrapped"),
    # another quantization error, torchrun's other warnings, a real float64 op failure
    ("ValueError: Unknown quantization method: ascend. Must be one of ['aqlm', 'awq', 'fp8']", "vllm.quant_not_optimized_benign"),
    ("torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 1234 closing signal SIGTERM", "torch.omp_num_threads_benign"),
    ("RuntimeError: \"mul_out_npu\" not implemented for 'Double'", "torch_npu.double_dtype_cast_benign"),
    ("[W NPUCachingAllocator.cpp:615] Warning: expandable_segments setting failure, now change to `False`.", "torch_npu.expandable_segments_default_benign"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)


# The same for the description rows written for this batch's training misses: words of another
# class, or of another vendor, are not taken (the whole catalogue, log scan then descriptions).
DESCRIBED_CROSS_CLASS: list[tuple[str, str]] = [
    ("ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: "
     "the package flash_attn seems to be not installed.", "python.flash_attn_on_npu"),
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer (flash-attn on the GPU node, NPU node uses sdpa)",
     "python.flash_attn_on_npu"),
    ("Ascend 310P3 does not support bfloat16, use float16", "devices.unsupported_soc_310"),
    ("ray job submit failed: No available node types can fulfill resource request {'GPU': 1.0}",
     "devices.ray_visible_devices_job_entrypoint"),
    ("torch.cuda.set_device(0) is needed in each thread because the CUDA context is per thread",
     "torch_npu.thread_without_set_device"),
    ("sleep level 2 frees the weights on CUDA GPUs; level 1 offloads them", "vllm_ascend.sleep_level_2_unsupported"),
    ("numpy 1.26.4: np.float_ still works there", "vllm_ascend.numpy2_removed_attr"),
    ("the vllm directory name differs from the installed package", "env.cwd_shadow"),
    ("RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES is set and torch.cuda.set_device(5) raises invalid device ordinal",
     "devices.ray_visible_devices_noset"),
]


@pytest.mark.parametrize("text,answer", DESCRIBED_CROSS_CLASS)
def test_described_cross_class_near_misses(text, answer):
    got = {a.id for a in shipped_catalog().explain_text(text)}
    assert answer not in got, (text, got)


def test_the_rules_of_a_mined_set_catch_a_bad_row():
    good = dict(rows()[0])
    assert badly_sourced([good], batch=4, with_class=True) == []
    flipped = dict(good, split="train" if good["split"] == "heldout" else "heldout")
    for bad, words in ((dict(good, source="https://example.com/x"), "not a GitHub thread"),
                       (dict(good, repo="someone/else"), "say otherwise"), (dict(good, evidence=""), "empty"),
                       (dict(good, **{"class": ""}), "empty"), (flipped, "fixed rule"), (dict(good, batch=3), "batch 3")):
        assert any(words in p for p in badly_sourced([bad], batch=4, with_class=True)), (bad, words)
    assert "2 cases of one thread" in badly_sourced([good, good], batch=4)[0]
    assert badly_sourced([good], gaps=["https://github.com/a/b/issues/1"]) == [
        "https://github.com/a/b/issues/1: a training gap with no training case"]
