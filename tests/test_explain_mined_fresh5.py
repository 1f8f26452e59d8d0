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

from tests.mined_batch import BatchChecks


class TestBatch5(BatchChecks):
    MINED = Path(__file__).parent / "data" / "explain_mined_fresh5.jsonl"
    BATCH = 5
    MIN_ROWS, MIN_REAL, MIN_HELD = 59, 45, 22
    # at the blind commit (no batch-5 signature): 6 of 22 held-out cases explained -- four other
    # vendors' near misses that stay silent and 2 of the 18 Ascend cases (failures and benign lines)
    HELD_OUT_FLOOR = 6 / 22 - 1e-9
    ASCEND_HELD_OUT_BLIND = (2, 18)
    TRAINING_GAPS: dict = {}  # every blind gap was closed by a later commit
    NEAR_MISSES = [
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
