"""Issue 25's sixth fresh batch (tests/data/explain_mined_fresh6.jsonl), mined blind: real excerpts
from AscendC custom-op builds (hw-native-sys/simpler, sgl-kernel-npu), aclnn dtype checks (Paddle,
candle, sglang, vllm-ascend), triton-ascend, dlinfer, vllm-ascend start-up and a MinerU derivative on
Ascend NPUs, a torch_npu CPU-fallback notice that is harmless, and near misses from other vendors
(Habana Gaudi's HCCL, NVIDIA NCCL / NVML / driver, an HVM CUDA launch, Intel's NPU). The batch was
committed before any signature was written for it (commit "explain: fresh mined batch 6, committed
before its signatures"); no thread in it is in an older set or cited by the matrices in any form.

Inclusion rule, the one of batch 5, fixed before mining. A case is included only if
(1) its thread establishes the cause -- a maintainer's answer, a merged fix, the reporter's confirmed
    resolution, or a message that names its own cause -- quoted in `evidence`; and
(2) the excerpt in `text` is what the user pasted or wrote, copied verbatim from the thread and
    trimmed to the relevant lines, and it itself carries what identifies the cause.
Candidates excluded while mining (counted as they were read, give or take a few): about 95 already in
an older tests/data/explain_*.jsonl set or cited by the matrices (URL or "#N" forms); about 40 with
no cause established in the thread; about 10 whose text does not identify the cause (image-only, an
empty template); about 6 the same bug as a thread already taken or in an older set. The search corpus
is heavily mined by now: fewer than one candidate in six was new and qualified, and the batch falls
short of the 40 the brief asked for (22: 14 Ascend cases, one of them benign, and 8 near misses).

A thread is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; no
held-out line is an example and no signature cites a held-out thread. The blind figures, measured at
the commit of the batch with the catalogue as it was: held out 6 of 13 explained (the four held-out
near misses staying silent, and 2 of the 9 held-out Ascend cases), training 5 of 9 (the four training
near misses and the benign line; 1 of the 5 Ascend cases). Every training miss is listed in
TRAINING_GAPS as a blind gap, to be replaced by a signature (or a reason) in a later commit; the
held-out share is frozen as a floor. The next commit (docs/explain.md, "Batch 6 (issue 25)") explained
all four with three signatures and one description row, written from the training threads and the
components' sources only; the held-out share, measured once at the end, stayed at the blind 6 of 13."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog, badly_sourced, held_out_threads_named_in_any_form
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_fresh6.jsonl"
# At the blind commit (no batch-6 signature): 6 of 13 held-out cases explained -- four other vendors'
# near misses that stay silent and 2 of the 9 Ascend cases.
HELD_OUT_FLOOR = 6 / 13 - 1e-9
# The Ascend-only share at the blind commit (held-out rows that are not near misses), reported only.
ASCEND_HELD_OUT_BLIND = (2, 9)
# Training cases the catalogue misses at the blind commit. A later commit replaces each entry by a
# signature (and deletes it) or by the reason no signature may take it.
TRAINING_GAPS: dict[str, str] = {}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 22
    assert badly_sourced(got, batch=6, with_class=True, gaps=TRAINING_GAPS) == []
    assert any(r.get("benign") for r in got) and any(r.get("near_miss_of") for r in got)
    assert sum(1 for r in got if r["class"] not in ("benign", "near_miss")) >= 13


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
    assert len(held) >= 13
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
    "-- ASCEND include path: /usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/tikcpp/tikcfw",
    "#include \"kernel_operator.h\"",
    "AscendC::PipeBarrier<PIPE_V>();",
    "x = torch.randn(2, 2, dtype=torch.float32).npu()",
    "pip install triton-ascend==3.2.2",
    "export HCCL_CONNECT_TIMEOUT=1200",
    "ncclCommInitRank: comm 0x55d0 rank 0 nranks 8 - Init COMPLETE",
    "[INFO] aclnnMatmul cubeMathType=KEEP_DTYPE self DT_FLOAT16",
    "pipe_barrier(PIPE_ALL);",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


def test_the_rules_of_a_mined_set_catch_a_bad_row():
    good = dict(rows()[0])
    assert badly_sourced([good], batch=6, with_class=True) == []
    flipped = dict(good, split="train" if good["split"] == "heldout" else "heldout")
    for bad, words in ((dict(good, source="https://example.com/x"), "not a GitHub thread"),
                       (dict(good, repo="someone/else"), "say otherwise"), (dict(good, evidence=""), "empty"),
                       (dict(good, **{"class": ""}), "empty"), (flipped, "fixed rule"), (dict(good, batch=5), "batch 5")):
        assert any(words in p for p in badly_sourced([bad], batch=6, with_class=True)), (bad, words)
    assert "2 cases of one thread" in badly_sourced([good, good], batch=6)[0]
    assert badly_sourced([good], gaps=["https://github.com/a/b/issues/1"]) == [
        "https://github.com/a/b/issues/1: a training gap with no training case"]
