"""Issue 25's fifth fresh batch (tests/data/explain_mined_fresh5.jsonl), mined blind: real excerpts
from vllm-ascend, vLLM-Omni, sglang, triton-ascend, tilelang, transformers, accelerate, diffusers,
ms-swift, Ray, gpustack/MindIE, HAMi's ascend-device-plugin,
LMCache-Ascend, PaddlePaddle (Paddle, PaddleMIX), MindSpore/mindnlp, Jittor, candle, FlagGems, MinerU,
speculators, ramalama and more projects on Ascend NPUs, plus near misses from other vendors (NVIDIA
CUDA/driver/WSL, AMD ROCm/HIP, Apple MPS, TGI on NVIDIA) and a few harmless warnings. The batch was
committed before any signature was written for it (commit "explain: fresh mined batch 5, committed
before its signatures"); no thread in it is in an older set or cited by the matrices in any form.

Inclusion rule, fixed before mining. A case is included only if
(1) its thread establishes the cause -- a maintainer's answer, a merged fix, or the reporter's
    confirmed resolution, quoted in `evidence`; and
(2) the excerpt in `text` is what the user pasted or wrote, copied verbatim from the thread and
    trimmed to the relevant lines (at most ~25), and it itself carries what identifies the cause: a
    knowledgeable Ascend engineer reading only `text` could name the cause. Descriptions in words
    (English or Chinese) count when the words name the identifying symptom.
Cases whose cause was found only by experiment, or whose text is a story with no identifying
symptom, are excluded. Candidates excluded while mining (counted as they were read, give or take a
few): about 142 already in an older tests/data/explain_*.jsonl set or cited by the matrices (URL,
"#N", "PR N" or "issue N" forms); about 91 with no cause established in the thread (no answer,
closed as stale, an open unmerged PR, or found by experiment); about 26 whose text does not identify
the cause (image-only, a story, or a generic code); about 22 the same bug as a thread already taken
or in an older set. The batch falls short of the planned 6-10 benign lines (3 found that a thread
shows harmless) and holds 45 Ascend failures and 11 near misses.

A thread is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; no
held-out line is an example and no signature cites a held-out thread. The blind figures, measured at
the commit of the batch with the catalogue as it was: held out 6 of 22 explained (the four held-out
near misses staying silent, and 2 of the 18 held-out Ascend failures and benign lines), training
11 of 37. Every training miss is listed in TRAINING_GAPS as a blind gap, to be
replaced by signatures (or a reason) in a later session; the held-out share is frozen as a floor.
The next session (docs/explain.md, "Batch 5 (issue 25): the training gaps") explained all 26: none
is left, and the held-out share stayed at the blind 6 of 22."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog, badly_sourced, held_out_threads_named_in_any_form
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_fresh5.jsonl"
# At the blind commit (no batch-5 signature): 6 of 22 held-out cases explained -- four other vendors'
# near misses that stay silent and 2 of the 18 Ascend cases (Ascend failures and benign lines).
HELD_OUT_FLOOR = 6 / 22 - 1e-9
# The Ascend-only share at the blind commit (held-out rows that are not near misses), reported only.
ASCEND_HELD_OUT_BLIND = (2, 18)
# Training cases the catalogue misses at the blind commit. A later session replaces each entry by a
# signature (and deletes it) or by the reason no signature may take it.
TRAINING_GAPS: dict[str, str] = {}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 59
    assert badly_sourced(got, batch=5, with_class=True, gaps=TRAINING_GAPS) == []
    assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)
    assert sum(1 for r in got if r["class"] not in ("benign", "near_miss")) >= 45


def test_no_thread_is_counted_twice_across_the_mined_sets():
    assert shared_threads(MINED) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_no_signature_cites_a_held_out_thread():
    assert signatures_citing_held_out(rows()) == []


def test_no_row_of_the_matrices_names_a_held_out_thread_in_any_form():
    """Beyond the exact URL: "owner/name/issues/N", "owner/name/pull/N", or the repository with "#N"."""
    assert held_out_threads_named_in_any_form(rows()) == []


def test_every_training_case_is_explained():
    misses, no_longer_gaps = training_misses(rows(), shipped_catalog(), TRAINING_GAPS)
    assert misses == []
    assert no_longer_gaps == []  # a listed gap that gets explained is no gap any more: take it off the list


def test_held_out_share_explained():
    held, misses = held_out_misses(rows(), shipped_catalog())
    assert len(held) >= 22
    share = 1 - len(misses) / len(held)
    ascend = [r for r in held if r["class"] != "near_miss"]
    ascend_missed = sum(1 for r in ascend if any(line.startswith(r["source"] + ":") for line in misses))
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%}); "
          f"Ascend only: {len(ascend) - ascend_missed} of {len(ascend)} "
          f"(blind: {ASCEND_HELD_OUT_BLIND[0]} of {ASCEND_HELD_OUT_BLIND[1]})")
    assert share >= HELD_OUT_FLOOR, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines next to this batch's classes: no real signature answer may come out.
NEAR_MISSES: list[str] = [
    "source /usr/local/Ascend/ascend-toolkit/set_env.sh",
    "export HCCL_CONNECT_TIMEOUT=1200",
    "export HCCL_BUFFSIZE=512",
    "export VLLM_WORKER_MULTIPROC_METHOD=spawn",
    "--page-size 128",
    "pip install torch==2.5.1 torch-npu==2.5.1",
    "export ASCEND_RT_VISIBLE_DEVICES=0,1",
    "docker run --runtime ascend -e ASCEND_VISIBLE_DEVICES=0 image",
    "torch.npu.is_available() == True",
    "paddle.is_compiled_with_custom_device('npu')",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


def test_the_rules_of_a_mined_set_catch_a_bad_row():
    good = dict(rows()[0])
    assert badly_sourced([good], batch=5, with_class=True) == []
    flipped = dict(good, split="train" if good["split"] == "heldout" else "heldout")
    for bad, words in ((dict(good, source="https://example.com/x"), "not a GitHub thread"),
                       (dict(good, repo="someone/else"), "say otherwise"), (dict(good, evidence=""), "empty"),
                       (dict(good, **{"class": ""}), "empty"), (flipped, "fixed rule"), (dict(good, batch=4), "batch 4")):
        assert any(words in p for p in badly_sourced([bad], batch=5, with_class=True)), (bad, words)
    assert "2 cases of one thread" in badly_sourced([good, good], batch=5)[0]
    assert badly_sourced([good], gaps=["https://github.com/a/b/issues/1"]) == [
        "https://github.com/a/b/issues/1: a training gap with no training case"]
