"""The cases mined for issue 25 from the stack under vllm (tests/data/explain_mined_stack.jsonl):
real excerpts from Ascend/pytorch, Mooncake, sglang / sgl-kernel-npu, triton-ascend, LlamaFactory,
MinerU, pytorch/vision and pytorch/audio threads (and a few vllm-ascend threads about torch_npu,
HCCL and triton-ascend), each with the cause its thread establishes. A thread is held out when
the first 8 hex digits of sha256 of its URL are divisible by 3; each batch was committed before any
signature was written for it, and no held-out line is a signature's example. Every training case
must be explained; the held-out share is reported and must reach the issue's 90%."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.parse.logscan import scan_text
from tests.explain_kit import shared_threads, held_out_lines_used_as_examples, training_misses, catalog as shipped_catalog
from tests.explain_kit import held_out_misses, real_signature_ids, held_out_by_rule, read_rows

DATA = Path(__file__).parent / "data"
MINED = DATA / "explain_mined_stack.jsonl"
HELD_OUT_GOAL = 11 / 11 - 1e-9  # 8 of 11 at the time of writing, 9 of 11 since the held-out pass (torchaudio's error wrapped after its name), 11 of 11 since the description pass (/etc/hccn.conf and the torch-npu version "not exist" in words); issue 25 aims for 0.90 (docs/explain.md)


def rows(path: Path = MINED):
    return read_rows(path)


def test_the_split_is_the_fixed_rule_and_every_case_is_sourced():
    got = rows()
    assert len(got) >= 42
    for r in got:
        assert r["source"].startswith("https://github.com/"), r
        owner, name, kind, number = r["source"].split("/")[3:7]
        assert r["repo"] == f"{owner}/{name}" and r["thread"] == f"{kind}/{number}", r
        assert r["cause"] and r["evidence"] and r["expect"] and r["text"].strip(), r
        assert r["split"] == ("heldout" if held_out_by_rule(r["source"]) else "train"), r["source"]
    threads = {}
    for r in got:
        threads.setdefault(r["source"], set()).add(r["split"])
    assert all(len(s) == 1 for s in threads.values())  # a thread is never on both sides


def test_no_thread_is_counted_twice_across_the_mined_sets():
    """The other mined sets (earlier cases, vllm / vllm-ascend cases) keep their own threads."""
    assert shared_threads(MINED, ("explain_mined.jsonl", "explain_heldout.jsonl", "explain_mined_vllm.jsonl")) == {}


def test_no_signature_example_is_a_held_out_line_of_this_set():
    assert held_out_lines_used_as_examples(rows()) == []


def test_every_training_case_is_explained():
    assert training_misses(rows(), shipped_catalog())[0] == []


def test_held_out_share_explained():
    held, misses = held_out_misses(rows(), shipped_catalog())
    assert len(held) >= 11
    share = 1 - len(misses) / len(held)
    print(f"held out: {len(held) - len(misses)} of {len(held)} explained ({share:.0%})")
    assert share >= HELD_OUT_GOAL, f"{share:.0%} explained; misses:\n" + "\n".join(misses)


# Healthy lines of the classes above (and of their neighbours): no real answer may come out.
NEAR_MISSES = [
    "Successfully installed torch-2.5.1 torchvision-0.20.1 torchaudio-2.5.1",
    "-- Found ASC: /usr/local/Ascend/cann-8.5.1/aarch64-linux/lib64/cmake/ASCConfig.cmake (found version 8.5.1)",
    "#include \"acl/acl.h\"",
    "I0625 07:33:59.890619  7082 transfer_task.cpp:380] Submitted 16 transfers for batch 281456655998048",
    "address_0=192.168.1.8",
    "HcclCommPrepare success, cost=42 ms.",
    "Requirement already satisfied: decorator in /usr/local/lib/python3.10/site-packages (5.1.1)",
    "torch.npu.set_device(0)",
    "torch.cuda.is_available(): False",
    "device = torch.device('npu:0')",
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cpu",
    "state_dict = torch.load(path, weights_only=True)",
    "mooncake_master --rpc_port=50051 --enable_http_metadata_server=true",
    "Compiling /tmp/tmpx5kvific/launcher_cxx11abi1.cxx",
    "MindIE python api installed successfully",
    "libgrpc++.so.1 => /usr/lib/x86_64-linux-gnu/libgrpc++.so.1 (0x00007fd2f9671000)",
    "Successfully installed vllm-0.14.0 torch-2.9.1",
]


@pytest.mark.parametrize("line", NEAR_MISSES)
def test_near_miss_lines_explain_nothing_real(line):
    real = real_signature_ids(line)
    assert real == [], (line, real)


# Lines of one new class must not be taken by the signature of another (cross-class near misses).
CROSS_CLASS = [
    ("ImportError: /usr/lib/python3/site-packages/torchvision/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
     "torch.torchaudio_mismatch"),
    ("RuntimeError: operator torchvision::nms does not exist", "torch.torchaudio_mismatch"),
    ("E0625 07:33:59.890619  7082 transfer_task.cpp:380] Failed to submit all transfers, error code is InvalidArgument",
     "mooncake.not_supported_transport"),
    ("Failed to get local rank id, please check rank table.", "mooncake.ascend_self_device"),
    ("HcclCommInitRootInfo failed.", "cann.hccl_comm_prepare"),
    ("ModuleNotFoundError: No module named 'decorator'", "cann.python_deps_missing"),  # no CANN frame above
    ("RuntimeError: NPU function error: c10_npu::SetDevice(device_id_), error code is 507033",
     "torch_npu.thread_without_set_device"),
    ("ERROR: Could not find a version that satisfies the requirement torchvision (from versions: none)",
     "python.torch_no_wheel"),
    ("ERROR: Could not find a version that satisfies the requirement torch-npu==2.1.0rc1 (from versions: none)",
     "python.torch_no_wheel"),
    ("RuntimeError: call aclnnCast failed, detail:EZ1001: self not implemented for DT_INT8, should be in dtype support list [DT_FLOAT16,DT_FLOAT,DT_BFLOAT16,DT_INT32,].",
     "devices.bf16_unsupported"),
    ("RuntimeError: Failed to compile /tmp/x/main.cxx, error: g++: fatal error", "vllm_ascend.triton_launcher_compile"),
    ("bash: mooncake_client: command not found", "mooncake.master_not_found"),
]


@pytest.mark.parametrize("line,signature", CROSS_CLASS)
def test_cross_class_near_misses(line, signature):
    cat = shipped_catalog()
    got = {a.id for a in cat.answers(scan_text(line, cat.compiled))}
    assert signature not in got, (line, got)


def test_thread_without_set_device_yields_to_a_failed_set_device():
    """107002 after a failed set_device is that failure's consequence, not a thread without one."""
    cat = shipped_catalog()
    log = ("RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:152 NPU function error: "
           "c10_npu::SetDevice(device_id_), error code is 507033\n"
           "RuntimeError: allocate:torch_npu/csrc/core/npu/NPUCachingAllocator.cpp:1406 NPU error, error code is 107002")
    got = {a.id for a in cat.answers(scan_text(log, cat.compiled))}
    assert "torch_npu.thread_without_set_device" not in got and "acl.107002" in got, got
