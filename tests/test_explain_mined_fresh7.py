"""Issue 25's seventh fresh batch (tests/data/explain_mined_fresh7.jsonl), mined blind after the
h-sweep round and the second class sweep: real excerpts from vllm-ascend (HCCL_BUFFSIZE for MC2,
HCCL AIV with MC2 on A3, Xlite graph mode, ACL graph and host sync, MemCache on one TP rank, CANN per
release, a release bug, a shadowed vllm), triton-ascend (tutorials of another release, a
miscompile, vanilla triton over triton-ascend, launch grids of 65536 and more in ms-swift and
sglang), verl on NPU, llama.cpp's CANN backend (Range tiling, an AscendC build without 310B1),
GPUStack on 310P, mmcv without NPU kernels, vllm-omni's CPU fallback that cannot run, a harmless
vLLM warning, and near misses from other vendors (ROCm, NVIDIA NCCL / driver / CUDA OOM / CUDA
grid, Intel Gaudi, Intel and AMD NPUs, VeriSilicon's TFLite delegate). The batch was committed
before any signature was written for it (commit "explain: fresh mined batch 7, committed before
its signatures"); no thread in it is in an older set or cited by the matrices in any form.

Inclusion rule, the one of batches 5 and 6, fixed before mining. A case is included only if
(1) its thread establishes the cause -- a maintainer's answer, a merged fix, the reporter's confirmed
    resolution, or a message that names its own cause -- quoted in `evidence`; and
(2) the excerpt in `text` is what the user pasted or wrote, copied verbatim from the thread and
    trimmed to the relevant lines, and it itself carries what identifies the cause.
Candidates excluded while mining (counted as they were read, give or take a few): about 115 already
in an older tests/data/explain_*.jsonl set or cited by the matrices (URL or "#N" forms); about 70
with no cause established in the thread; about 12 whose text does not identify the cause
(image-only, a bare title, a template); about 7 the same bug as a thread already taken or in an
older set. The search corpus is heavily mined: about one candidate in seven was new and qualified.
The batch has 33 threads: 20 Ascend cases, one benign line and 12 near misses.

A thread is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; no
held-out line is an example and no signature cites a held-out thread. The blind figures, measured at
the commit of the batch with the catalogue as it was: held out 4 of 10 explained (the four held-out
near misses staying silent; none of the 6 held-out Ascend cases, the benign line among them),
training 9 of 23 (the eight training near misses and 1 of the 15 Ascend cases). Every training miss
is listed in TRAINING_GAPS as a blind gap; the held-out share is frozen as a floor. The next commits
(docs/explain.md, "Batch 7 (issue 25)") explained 9 of the 14 with four new signatures, three widened
ones and two corrected training labels, written from the training threads and the components'
sources only; five gaps stay, each with its reason. The held-out share, measured at the end, stayed
at the blind 4 of 10 (Ascend 0 of 6)."""

from __future__ import annotations

from pathlib import Path

from tests.mined_batch import BatchChecks


class TestBatch7(BatchChecks):
    MINED = Path(__file__).parent / "data" / "explain_mined_fresh7.jsonl"
    BATCH = 7
    MIN_ROWS, MIN_REAL, MIN_HELD = 33, 20, 10
    # at the blind commit (no batch-7 signature): 4 of 10 held-out cases explained -- the four other
    # vendors' near misses that stay silent; none of the 6 Ascend cases (the benign line included)
    HELD_OUT_FLOOR = 4 / 10 - 1e-9
    ASCEND_HELD_OUT_BLIND = (0, 6)
    # training cases the catalogue missed at the blind commit (9 of 23 explained: the eight near
    # misses and 1 of the 15 Ascend cases), each to be replaced by a signature or a reason
    TRAINING_GAPS: dict = {
        "https://github.com/triton-lang/triton-ascend/issues/1416":
            "no signature: a miscompile with no message of its own, fixed in a later triton-ascend build; the title says only that reloaded output is corrupted",
        "https://github.com/vllm-project/vllm-ascend/issues/9856":
            "no signature: a note that the v0.18.0 docs name the wrong CANN; which CANN each release ships is check's data, not a log message",
        "https://github.com/gpustack/gpustack/issues/3802":
            "no signature: GPUStack's own catalogue bug (a vLLM version listed for 310P without an image), fixed in one commit; its message names no cause",
        "https://github.com/vllm-project/vllm-ascend/issues/14111":
            "no signature: the reporter's analysis of one save path in prose, no message; a pattern would only match this thread's wording",
        "https://github.com/sgl-project/sglang/pull/19756":
            "no signature: the PR names only a batch size above 65536 (the error is a screenshot), not the launch grid that vllm_ascend.triton_grid_limit reads",
    }
    NEAR_MISSES = [
        "export HCCL_BUFFSIZE=512",
        "export HCCL_OP_EXPANSION_MODE=\"AIV\"",
        "export TRITON_ALL_BLOCKS_PARALLEL=1",
        "--additional-config '{\"xlite_graph_config\": {\"enabled\": true}}' --block-size 128",
        "npu-smi info -t board -i 0",
        "-- CANN: SOC_VERSION auto-detected is:Ascend910B3",
        "pip install triton-ascend==3.2.0",
        "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",
    ]
