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

from tests.mined_batch import BatchChecks


class TestBatch6(BatchChecks):
    MINED = Path(__file__).parent / "data" / "explain_mined_fresh6.jsonl"
    BATCH = 6
    MIN_ROWS, MIN_REAL, MIN_HELD = 22, 13, 13
    # at the blind commit (no batch-6 signature): 6 of 13 held-out cases explained -- four other
    # vendors' near misses that stay silent and 2 of the 9 Ascend cases
    HELD_OUT_FLOOR = 6 / 13 - 1e-9
    ASCEND_HELD_OUT_BLIND = (2, 9)
    TRAINING_GAPS: dict = {}  # every blind gap was closed by a later commit
    NEAR_MISSES = [
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
