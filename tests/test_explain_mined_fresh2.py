"""Issue 25's second fresh batch (tests/data/explain_mined_fresh2.jsonl): real excerpts from
vllm-ascend, LlamaFactory, lmdeploy, Mooncake, sglang, LMCache-Ascend, PaddleCustomDevice,
gpustack, ms-swift, RLinf, Trinity-RFT and Liger-Kernel threads, plus near misses from the
look-alikes of other vendors (NVIDIA CUDA/NCCL/NVML, AMD ROCm/RCCL/XDNA, Intel NPU, Habana
Gaudi), each with the cause its thread establishes. The batch was committed before any signature
written for it (commit "explain: fresh mined batch 2, committed before its signatures"), and no
thread in it is in an older set. The signatures added with it were written from the components'
own sources, not from held-out lines. A thread is held out when the first 8 hex digits of sha256
of its URL are divisible by 3; no held-out line is an example and no signature cites a held-out
thread. Every training case must be explained (gaps listed with their reason); the held-out share
is reported and frozen as a floor."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, signatures_citing_held_out, training_misses, catalog as shipped_catalog, badly_sourced
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_fresh2.jsonl"
# Before the signatures of this batch 8 of 13 held-out cases were explained (7 of them near misses
# of other vendors); the figure after is frozen here.
HELD_OUT_FLOOR = 8 / 13 - 1e-9
# Training cases no signature may take, each with why (listed, not hidden).
TRAINING_GAPS: dict[str, str] = {
    "https://github.com/vllm-project/vllm-ascend/issues/6942": "Chinese prose about other containers holding the NPUs; its words (visible devices, other containers) name no cause the catalogue has",
    "https://github.com/vllm-project/vllm-ascend/pull/3660": "a maintainer's sentence about ray's NPU count, no log line",
    "https://github.com/vllm-project/vllm-ascend/pull/1653":
        "the 507000 line is the same for every cause; only the CANN build (an alpha) told this one apart",
    "https://github.com/kvcache-ai/Mooncake/issues/648": "a title and a setup() call; the core dump printed nothing that names the cause",
    "https://github.com/kvcache-ai/Mooncake/issues/3749": "generic words (put_start success, transfer failed); the cause is two unset variables",
    "https://github.com/sgl-project/sglang/issues/11055": "the error is a screenshot; the text is the launch command",
    "https://github.com/LMCache/LMCache-Ascend/issues/92": "a title; the traceback was not pasted",
    "https://github.com/gpustack/gpustack/issues/1432": "prose; the check that tells (docker info | grep Runtime) is not in the excerpt",
    "https://github.com/modelscope/ms-swift/issues/6636": "a title in words no source writes",
}


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 50
    assert badly_sourced(got, batch=2, with_class=False, gaps=TRAINING_GAPS) == []
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
    assert len(held) >= 13
    share = 1 - len(misses) / len(held)
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_FLOOR, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines next to the classes added with this batch: no real signature answer may come out.
NEAR_MISSES: list[str] = [
    "WARNING 07-02 21:58:11 [envs.py:2027] Unknown vLLM environment variable detected: VLLM_BUILD_COMMIT",
    "export VLLM_ASCEND_ENABLE_FLASHCOMM1=1",
    "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3",
    "-e ASCEND_VISIBLE_DEVICES=6,7",
    "INFO load /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libtbe_adapter.so",
    "undefined symbol: _ZN3c108ListType3getE",
    "E0601 12:27:13.738561 12761 transfer_task.cpp:673] Failed to submit all transfers, error code is InvalidArgument",
    "I20260608 14:45:44.404228 342420 ascend_direct_transport.cpp:1119] Connected to segment: 10.2:20033, cost:10016885 us.",
    "| 0     310P3               | OK            | 89.2        39                0    / 0             |",
    "INFO [worker_310p.py:158] Skip warm-up atb ops for 310P device.",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# A line of one class must not be taken by the signature of a neighbouring class.
CROSS_CLASS: list[tuple[str, str]] = [
    # another vendor's near misses must not become Ascend answers
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 5.80 GiB total capacity; 4.36 GiB already "
     "allocated; 6.69 MiB free; 4.63 GiB reserved in total by PyTorch)", "classifier.npu_oom"),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", "env.libhccl_missing"),
    ("Rccl error, unhandled system error", "cann.hccl_error_in_pg"),
    # an unknown VLLM_* variable that is not vllm-ascend's is not the harmless warning
    ("WARNING 04-21 12:32:10 [envs.py:1744] Unknown vLLM environment variable detected: VLLM_USE_V1",
     "vllm.unknown_env_benign"),
    # a CUDA vLLM's undefined symbol is not the harmless Ascend warning, nor ATB's symbol
    ("ImportError: vllm/_C.abi3.so: undefined symbol _ZN3c106ivalue14ConstantString6createENSt7", "vllm.vllm_c_benign"),
    ("ImportError: vllm/_C.abi3.so: undefined symbol _ZN3c106ivalue14ConstantString6createENSt7",
     "cann.tbe_adapter_undefined_symbol_wrapped"),
    # the ACL context of Mooncake's worker is not a set_device failure once Mooncake's submit says so,
    # and a Context status alone (no ACL line) is not it
    ("Failed to submit all transfers, error code is Context", "mooncake.ascend_acl_context"),
    # the correctly spelled variable is not the typo
    ("set ASCEND_RT_VISIBLE_DEVICES:4 error, input data rang[0-2)", "devices.visible_devices_misspelled"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)
