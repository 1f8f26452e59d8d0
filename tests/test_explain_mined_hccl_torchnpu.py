"""The cases mined for issue 25 on HCCL communicator / socket / timeout errors, torch_npu and
op-plugin error formats, CANN runtime codes and the descriptions users write instead of logs
(tests/data/explain_mined_hccl_torchnpu.jsonl): real excerpts from lmdeploy, vllm-ascend,
Ascend/pytorch, ms-swift, LlamaFactory, gpustack, sglang, tilelang-ascend, llama.cpp (CANN
backend), DeepSpeed, transformers and PTOAS threads, each with the cause its thread establishes.
A thread is held out when the first 8 hex digits of sha256 of its URL are divisible by 3; each
batch was committed before any signature was written for it, and no held-out line is a
signature's or code's example. Every training case is explained but the listed gaps; the
held-out share is held at its frozen figure (the issue aims for 90%, docs/explain.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.explain.answers import primary, select
from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, training_misses, catalog as shipped_catalog, badly_sourced
from tests.explain_kit import held_out_misses, real_signature_ids, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_hccl_torchnpu.jsonl"
HELD_OUT_GOAL = 5 / 6 - 1e-9  # 3 of 6 at the time of writing, 4 of 6 since the held-out pass (HCCL_E_PARA yields to the EI0015 reason), 5 of 6 since the description pass (Chinese prose of the idle HCCL timeout); issue 25 aims for 0.90 (docs/explain.md)
# Training cases no signature may take, each with why (listed, not hidden).
# (ms-swift#1165, Chinese prose "使用torch-npu结合torch会报无法找到nccl ... 需要指定hccl", was one until
# the description pass: matrices/descriptions.toml describe.nccl_on_npu)
TRAINING_GAPS: set = set()


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 27
    assert badly_sourced(got, batch=None, with_class=False, gaps=TRAINING_GAPS) == []


def test_no_thread_is_counted_twice_across_the_mined_sets():
    """Threads of the other mined sets (and of explain_heldout.jsonl) were skipped."""
    assert shared_threads(MINED) == {}


def test_no_signature_or_code_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_every_training_case_is_explained():
    misses, no_longer_gaps = training_misses(rows(), shipped_catalog(), TRAINING_GAPS)
    assert misses == []
    assert no_longer_gaps == []  # a listed gap that gets explained is no gap any more: take it off the list


def test_held_out_share_explained():
    held, misses = held_out_misses(rows(), shipped_catalog())
    assert len(held) >= 6
    share = 1 - len(misses) / len(held)
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_GOAL, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines of the classes above (and of their neighbours): no real answer may come out.
NEAR_MISSES = [
    "export HCCL_IF_BASE_PORT=60100",
    "export HCCL_EXEC_TIMEOUT=7200",
    "export HCCL_CONNECT_TIMEOUT=1200",
    "INFO: the server has been running for 2 hours without errors",
    "Uvicorn running on http://0.0.0.0:23333 (Press CTRL+C to quit)",
    "LOAD_FUNCTION(HcclCommInitRootInfoConfig)",
    "torch.distributed.init_process_group(backend='hccl')",
    "NCCL version 2.21.5+cuda12.4",
    "HCCL_NPU_SOCKET_PORT_RANGE=auto HCCL_HOST_SOCKET_PORT_RANGE=auto",
    "RANK_TABLE_FILE=/etc/hccl_rootinfo.json",
    "Ascend910B3 supports bfloat16",
    "export ASCEND_LAUNCH_BLOCKING=1",
    "Since the operator is called asynchronously, the stacktrace may be inaccurate.",
    "[INFO] HCCL(1,python):2025-07-23-03:47:57 listen on ip[192.168.20.160] and specific port[60000] success",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# Lines of one class must not be taken by the signature of another (cross-class near misses).
CROSS_CLASS = [
    # the NPU-side port of EI0020 keeps its own answer (HCCL_NPU_SOCKET_PORT_RANGE), not the host side's
    ("Communication_Error_Bind_IP_Port(EI0020): Failed to enable listening for the NPU network adapter socket. "
     "Reason: The IP address 192.10.2.199 and port 1666 have already been bound.", "cann.hccl_port_in_use"),
    # a failed connect is no bind failure
    ("[ERROR] HCCL(1,python):2025-07-23 [hccl_socket_manager.cc:778] [Wait][LinkEstablish]wait socket establish timeout, role[1] rank[12] timeout[120]",
     "cann.hccl_port_in_use"),
    # a hang of a running job is no idle timeout, and a connect timeout is none either
    ("EI0006: Getting socket times out. Reason: Remote Rank did not send the data in time.", "cann.hccl_exec_timeout_idle"),
    ("The training has been running for 3 hours and the loss is stable", "cann.hccl_exec_timeout_idle"),
    # an ACL function missing from torch_npu's own registry is not a CANN too old
    ("RuntimeError: function(aclrtGetDeviceInfo) is not registered.", "torch_npu.cann_function_missing"),
    ("ImportError: libhccl.so: cannot open shared object file: No such file or directory", "torch_npu.cann_function_missing"),
    # torch_npu's own task-queue callbacks missing is no CANN function missing
    ("RuntimeError: Failed to find execution function.", "torch_npu.cann_function_missing"),
    # the NCCL error without an Ascend word (Windows, CPU boxes) has other answers
    ("RuntimeError: Distributed package doesn't have NCCL built in", "torch_npu.nccl_backend_on_npu"),
    # an operator missing for the SoC is not a dtype the operator lacks
    ("RuntimeError: call aclnnCast failed, detail:EZ1001: self not implemented for DT_INT8, should be in dtype support list [DT_FLOAT16,DT_FLOAT,DT_BFLOAT16,DT_INT32,].",
     "cann.op_unsupported_on_soc"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)


def test_stream_sync_timeout_is_a_symptom_of_the_first_error():
    """EE1002 (stream synchronise timeout) is a victim: with it, the 507046 of the first line stays first."""
    cat = shipped_catalog()
    log = ("RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:390 NPU function error: "
           "aclrtSynchronizeDevice, error code is 507046\n"
           "EE1002: 2024-09-26-16:06:40.565.510 Stream synchronize timeout. rtDeviceSynchronize execute failed, reason=[stream sync timeout]")
    answers = select(cat.answers(scan_text(log, cat.compiled)))
    assert primary(answers).id == "acl.507046"
    assert "cann_msg.EE1002" in {a.id for a in answers}


def test_async_inner_error_yields_to_the_error_printed_before_it():
    """torch_npu's 'The process exits for this inner error' only names the operator that failed;
    the device's own error before it is the cause (a victim, never ahead of a real error)."""
    cat = shipped_catalog()
    log = ("RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:506 NPU function error: "
           "AclrtSynchronizeDeviceWithTimeout, error code is 507015\n"
           "RuntimeError: The Inner error is reported as above. The process exits for this inner error, "
           "and the current working operator name is aclnnFlashAttentionVarLenScore.")
    answers = select(cat.answers(scan_text(log, cat.compiled)))
    assert primary(answers).id == "acl.507015"
    assert "torch_npu.async_op_inner_error" in {a.id for a in answers}
