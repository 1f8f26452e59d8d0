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

import re
from pathlib import Path

import pytest

from doctor.parse.logscan import scan_text
from shipped import matrix
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog
from tests.explain_kit import held_out_misses, real_signature_ids, held_out_by_rule, read_rows

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
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/PaddlePaddle/PaddleCustomDevice/pull/1799":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/ggml-org/llama.cpp/issues/9303":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/ggml-org/llama.cpp/issues/15330":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/pull/10555":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/microsoft/onnxruntime/issues/15677":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/mindspore-ai/akg/issues/9":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/verl-project/verl/pull/7507":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/ray-project/ray/pull/59163":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/Ascend/docs/issues/22":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/ggml-org/llama.cpp/issues/10517":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/pull/10595":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/flagos-ai/FlagScale/pull/266":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/sgl-project/sglang/pull/26573":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/huggingface/transformers/issues/36618":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/huggingface/transformers/pull/39166":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/modelscope/ms-swift/issues/2669":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/huggingface/trl/issues/4790":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/modelscope/ms-swift/pull/8243":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/candle-org/candle/pull/110":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/modelscope/ms-swift/pull/7299":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/Ascend/pytorch/issues/47":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/gpustack/gpustack/issues/2274":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/gpustack/gpustack/issues/3148":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/gpustack/gpustack/issues/2194":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/issues/11238":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/AUTOMATIC1111/stable-diffusion-webui/pull/14801":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/verl-project/verl/pull/3355":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/verl-project/verl/pull/7488":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/RLinf/RLinf/pull/1234":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/issues/1875":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/containers/ramalama/pull/1194":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/lm-sys/FastChat/pull/2422":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/issues/397":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/InternLM/lmdeploy/issues/2945":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/vllm-project/vllm-ascend/pull/580":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/alibaba/ROLL/pull/333":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/AUTOMATIC1111/stable-diffusion-webui/issues/13263":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/huggingface/diffusers/pull/7816":
        "blind commit: missed before any batch-4 signature was written",
    "https://github.com/PaddlePaddle/Paddle/issues/47007":
        "blind commit: missed before any batch-4 signature was written",
}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 70
    for r in got:
        assert r["source"].startswith("https://github.com/"), r
        owner, name, kind, number = r["source"].split("/")[3:7]
        assert kind in ("issues", "pull") and number.isdigit(), r["source"]
        assert r["repo"] == f"{owner}/{name}" and r["thread"] == f"{kind}/{number}", r
        assert r["cause"] and r["evidence"] and r["expect"] and r["text"].strip() and r["class"], r
        assert r["split"] == ("heldout" if held_out_by_rule(r["source"]) else "train"), r["source"]
        assert r["batch"] == 4
    sources = [r["source"] for r in got]
    assert len(sources) == len(set(sources))  # one case per thread
    assert set(TRAINING_GAPS) <= {r["source"] for r in got if r["split"] == "train"}
    assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)


def test_no_thread_is_counted_twice_across_the_mined_sets():
    assert shared_threads(MINED) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_no_signature_cites_a_held_out_thread():
    assert signatures_citing_held_out(rows()) == []


def test_no_row_of_the_matrices_names_a_held_out_thread_in_any_form():
    """Beyond the exact URL: a source or example_source that names a held-out thread's repository and
    its number ("owner/name/issues/N", "owner/name/pull/N", or the repository with "#N") cites it."""
    m = matrix()
    texts = [(s.id, f"{s.source} {s.example_source or ''}") for s in m.signatures]
    texts += [(d.id, f"{d.source} {d.example_source or ''}") for d in m.descriptions]
    found = []
    for r in rows():
        if r["split"] != "heldout":
            continue
        repo, number = r["repo"], r["thread"].split("/")[-1]
        url_form = re.compile(rf"{re.escape(repo)}/(?:issues|pull)/{number}(?![0-9])", re.I)
        hash_form = re.compile(rf"#{number}(?![0-9])")
        for rid, text in texts:
            if url_form.search(text) or (f"github.com/{repo}/".lower() in text.lower() and hash_form.search(text)):
                found.append((rid, r["source"]))
    assert found == []


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
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# A line of one class must not be taken by the signature of a neighbouring class.
CROSS_CLASS: list[tuple[str, str]] = [
    # a CUDA OOM is not the NPU's
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.", "oom.npu"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)
