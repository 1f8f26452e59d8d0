"""Issue 25 (h-sweep): framework-specific failures on Ascend NPUs, swept class by class from the
frameworks' own sources (not from threads). Each line is the message as the cited source prints
it; each near miss is the same framework's message for another cause, another backend's
equivalent (CUDA) or a healthy line next to it. Signatures' own examples and near misses are run
by tests/test_signatures.py; these are the extra forms (multi-line reports, older wordings)."""
from __future__ import annotations

import pytest

from doctor.explain.answers import primary
from tests.explain_kit import catalog

EXPLAINED = [
    # Mooncake's Ascend direct transport after the code moved (3b5a594133 transfer_executor_base.cpp:
    # "Register mem ret: " << adxl_ret << ", errmsg: " ...): the line as it is formatted now
    ("E0419 16:59:47.826516 19842 transfer_executor_base.cpp:523] Register mem ret: 207000, errmsg: ",
     "mooncake.ascend_register_mem"),
    # llama.cpp's ACL_CHECK report (ggml_cann_error): the pool's device allocation failed
    ("CANN error: EL0004: [PID: 3188] 2025-06-10-08:20:11.017.551 Failed to allocate memory.\n"
     "  current device: 0, in function alloc at /home/user/llama.cpp/ggml/src/ggml-cann/ggml-cann.cpp:537\n"
     "  aclrtMalloc(&b.ptr, size, ACL_MEM_MALLOC_HUGE_FIRST)", "devices.llamacpp_npu_alloc_failed"),
    ("CANN error: \n"
     "  current device: 1, in function alloc at /src/ggml/src/ggml-cann/ggml-cann.cpp:695\n"
     "  aclrtMallocPhysical(&handle, reserve_size, &prop, 0)", "devices.llamacpp_npu_alloc_failed"),
    # the older name of the graph function, with "error:" (before November 2024)
    ("ggml_backend_cann_graph_compute: error: op not supported node_7 (CONV_TRANSPOSE_1D)", "cann.llamacpp_op_unsupported"),
    ("/llama.cpp/ggml/src/ggml-cann/aclnn_ops.cpp:3673: MUL_MAT_ID only supports Q4_0 and Q8_0", "cann.llamacpp_type_unsupported"),
    ("/llama.cpp/ggml/src/ggml-cann/aclnn_ops.cpp:2233: Only support Q4_0 and Q8_0 MUL_MAT", "cann.llamacpp_type_unsupported"),
    ("/llama.cpp/ggml/src/ggml-cann/aclnn_ops.cpp:2043: Unsupported tensor type for GGML_OP_GET_ROWS", "cann.llamacpp_type_unsupported"),
    # DeepSpeed's op builder printing the missing CANN version, and its older assertion
    ("fused_adam ascend_cann is missing, npu ops cannot be compiled!", "env.ascend_home_path_unset"),
    ("AssertionError: CANN_HOME does not exist, unable to compile NPU op(s)", "env.ascend_home_path_unset"),
    # accelerate before 1.11 on an Ascend host whose NPU it did not see (1.6: the type in quotes)
    ("+ ASCEND_RT_VISIBLE_DEVICES=0 accelerate launch --mixed_precision fp16 train.py\nValueError: fp16 mixed precision requires a GPU (not 'cpu').",
     "torch_npu.accelerate_sees_no_npu"),
    ("ASCEND_RT_VISIBLE_DEVICES=0,1 accelerate launch train.py\nValueError: fp16 mixed precision requires a GPU (not cpu).",
     "torch_npu.accelerate_sees_no_npu"),
    # LLaMA-Factory's pure_bf16 check on an Ascend host
    ("+ ASCEND_RT_VISIBLE_DEVICES=0 llamafactory-cli train qwen_lora.yaml\nValueError: This device does not support `pure_bf16`.",
     "torch_npu.bf16_unsupported_trainer"),
    # verl with an older transformers than the 4.51.3 of the signature's example
    ("ValueError: transformers version >= 4.52.4 is required on ASCEND NPU, current version is 4.48.0.", "python.verl_transformers_npu_pin"),
    # triton-ascend: the other two BiSheng tools, and ASCEND_HOME_PATH read for its launcher
    ("OSError: Couldn't find executable bishengir-opt or TRITON_NPU_COMPILER_PATH", "vllm_ascend.triton_npu_compiler_missing"),
    ("OSError: Couldn't find executable bisheng or TRITON_NPU_COMPILER_PATH", "vllm_ascend.triton_npu_compiler_missing"),
    ("OSError: ASCEND_HOME_PATH is not set, source <ascend-toolkit>/set_env.sh first", "env.ascend_home_path_unset"),
    # triton-ascend's compiler-option probes when only TRITON_NPU_COMPILER_PATH is set (second class sweep, h-p)
    ("ERROR: Invalid bishengir path format: /opt/bishengir/bin/npuc", "vllm_ascend.triton_npu_compiler_missing"),
    # Mooncake 0.3.12.post1 logs the ADXL connect failures from transfer_executor_base.cpp
    ("E20260110 10:22:40.100200  4417 transfer_executor_base.cpp:269] Connect timeout to: 10.0.0.2:20342, errmsg: ",
     "mooncake.ascend_direct_connect"),
    ("E20260110 10:22:40.100200  4417 transfer_executor_base.cpp:274] Failed to connect to target: 10.0.0.2:20342, status: 103900",
     "mooncake.ascend_direct_connect"),
    # transformers before 4.57 added the CUDA hint on every host
    ("+ ASCEND_RT_VISIBLE_DEVICES=0 python train.py --bf16 True\nValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
     "torch_npu.bf16_unsupported_trainer"),
    # second class sweep (h-p): triton-ascend's launcher when the runtime cannot look the address up
    ("RuntimeError: Failed to query pointer attributes at argument 3. Error code: 107000. This may indicate invalid "
     "memory address or NPU device error.", "vllm_ascend.triton_pointer_not_device"),
    # the pointer check inside a vllm-ascend worker's traceback
    ("(EngineCore_DP0 pid=2012) File \"/usr/local/python3.11/site-packages/vllm_ascend/ops/triton/fla/chunk.py\", line 88\n"
     "(EngineCore_DP0 pid=2012) ValueError: Pointer argument (at 4) cannot be accessed from Triton (cpu tensor?)",
     "vllm_ascend.triton_pointer_not_device"),
    # MLIRCompilationError in full: the compiler's stderr and the cache line between the markers
    ("triton.compiler.errors.MLIRCompilationError: \n///------------------[ERROR][Triton][BEG]------------------\n"
     "[ConvertLinalgRToBinary] encounters error:\nerror: failed to legalize operation 'hivm.hir.vreduce'\n\n"
     "[INFO]: The compiled kernel cache is in /root/.triton/cache/3f2a\n\n"
     "///------------------[ERROR][Triton][END]------------------", "vllm_ascend.triton_bishengir_compile_failed"),
    ("///------------------[ERROR][Triton][BEG]------------------\n[ConvertTritonIRToLinalgIR] encounters error:\n"
     "loc(\"/tmp/k.py\":12:8): error: unsupported op", "vllm_ascend.triton_adapter_lowering_failed"),
    # the driver test's red warning above the RuntimeError (the colour codes as a terminal log keeps them)
    ("/usr/local/lib/python3.11/site-packages/triton/backends/ascend/driver.py:162: UserWarning: \x1b[31;20m"
     "[Errno 2] No such file or directory: 'bisheng'\x1b[0m\nRuntimeError: 0 active drivers ([]). There should only be one.",
     "vllm_ascend.triton_npu_driver_inactive"),
    # torch_npu with TORCH_NPU_COMPACT_ERROR_OUTPUT=1: the RuntimeError without its [ERROR] ... ERR00007 line
    ("RuntimeError: torch.npu_rotary_mul is deprecated and will be removed in future version. Use torch_npu.npu_rotary_mul instead.",
     "torch_npu.torch_namespace_npu_op"),
    # operators op-plugin dropped between branches (7.1.0 -> 7.2.0, 26.0.0 -> 26.1.0)
    ("AttributeError: module 'torch_npu' has no attribute 'npu_multi_head_attention_v2'", "torch_npu.npu_op_missing"),
    ("AttributeError: module 'torch_npu' has no attribute 'npu_quant_reduce_scatter'", "torch_npu.npu_op_missing"),
    # the same operator called through torch.ops (torch's _OpNamespace message)
    ("AttributeError: '_OpNamespace' 'npu' object has no attribute 'npu_moe_eplb_update_expert'", "torch_npu.npu_op_missing"),
    # pip 26.3 against PyPI with --python-version 3.13: torch-npu 2.5.1 has no cp313 wheel, so the list starts at 2.7.1.post4
    ("ERROR: Could not find a version that satisfies the requirement torch-npu==2.5.1 (from versions: 2.7.1.post4, 2.7.1.post6, "
     "2.8.0.post4, 2.9.0.post2, 2.10.0, 2.14.0)\nERROR: No matching distribution found for torch-npu==2.5.1", "torch_npu.version_not_published"),
    # only pip's last line pasted
    ("ERROR: No matching distribution found for torch-npu==2.5.1", "torch_npu.version_not_published"),
    # vllm-ascend without a pin
    ("ERROR: Could not find a version that satisfies the requirement vllm-ascend (from versions: none)\n"
     "ERROR: No matching distribution found for vllm-ascend", "python.vllm_ascend_no_distribution"),
    ("ERROR: Could not find a version that satisfies the requirement vllm_ascend>=0.13.0 (from versions: none)",
     "python.vllm_ascend_no_distribution"),
    # pip 26.3 against PyPI with --python-version 3.12: no triton-ascend wheel for it at all
    ("ERROR: Could not find a version that satisfies the requirement triton-ascend==3.2.0 (from versions: none)\n"
     "ERROR: No matching distribution found for triton-ascend==3.2.0", "vllm_ascend.triton_ascend_index"),
    # triton-ascend 3.2.0rc4's launcher on a CANN with the split-package layout, in its RuntimeError
    ("RuntimeError: Failed to compile /tmp/tmpx5kvific/launcher_cxx11abi1.cxx, error: /tmp/tmpx5kvific/launcher_cxx11abi1.cxx:9:10: "
     "fatal error: experiment/runtime/runtime/rt.h: No such file or directory", "vllm_ascend.triton_launcher_rt_header"),
]

BENIGN = [
    # torch_npu.contrib's FutureWarning, and op-plugin's warning for an entry with no replacement
    ("FutureWarning: torch_npu.contrib.npu_iou is deprecated. Please use torch_npu.npu_iou or torch_npu.npu_ptiou for replacement.",
     "torch_npu.npu_op_deprecated_benign"),
    ("UserWarning: torch_npu.npu_nms_rotated is deprecated and will be removed in future version.", "torch_npu.npu_op_deprecated_benign"),
    # vllm-ascend 0.23.0 to 0.25.1rc1 name 3.2.1 only; the process prefix of a vLLM engine core
    ("(EngineCore_DP0 pid=2012) WARNING 06-30 10:01:02 [patch_uva.py:40] triton-ascend 3.2.1 disables the UVA feature.",
     "vllm_ascend.triton_ascend_uva_disabled_benign"),
]

SILENT = [
    # the same statement in the source, not in a failure report
    ("            ACL_CHECK(aclrtMalloc(&b.ptr, size, ACL_MEM_MALLOC_HUGE_FIRST));", "devices.llamacpp_npu_alloc_failed"),
    # CUDA's ggml_cuda_error report of the same shape
    # the same messages on a CUDA host: no Ascend word anywhere
    ("ValueError: This device does not support `pure_bf16`.", "torch_npu.bf16_unsupported_trainer"),
    ("ValueError: fp16 mixed precision requires a GPU (not cpu).", "torch_npu.accelerate_sees_no_npu"),
    ("ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0",
     "torch_npu.bf16_unsupported_trainer"),
    # the CUDA and AMD drivers of triton print the same pointer check and driver count
    ("+ CUDA_VISIBLE_DEVICES=0 python test_add.py\nValueError: Pointer argument (at 1) cannot be accessed from Triton (cpu tensor?)",
     "vllm_ascend.triton_pointer_not_device"),
    ("+ CUDA_VISIBLE_DEVICES=0 python test_add.py\nRuntimeError: 0 active drivers ([]). There should only be one.",
     "vllm_ascend.triton_npu_driver_inactive"),
    # pip's empty list for torch-npu is python.torch_npu_no_wheel's, not a missing version
    ("ERROR: Could not find a version that satisfies the requirement torch-npu==2.5.1 (from versions: none)\n"
     "ERROR: No matching distribution found for torch-npu==2.5.1", "torch_npu.version_not_published"),
    ("CUDA error: out of memory\n  current device: 0, in function alloc at /llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:400\n"
     "  cudaMalloc((void **) &ptr, look_ahead_size)", "devices.llamacpp_npu_alloc_failed"),
]


def _ids(text):
    return {a.id for a in catalog().explain_text(text)}


@pytest.mark.parametrize("text,sid", EXPLAINED)
def test_source_form_is_explained(text, sid):
    got = catalog().explain_text(text)
    assert sid in {a.id for a in got}, text
    top = primary(got)
    # a CANN code printed on the report's first line (EL0004: memory) may answer first: same cause
    assert top is not None and (top.id == sid or top.kind == "code"), (text, top and top.id)


@pytest.mark.parametrize("text,sid", SILENT)
def test_near_form_is_not(text, sid):
    assert sid not in _ids(text), text


@pytest.mark.parametrize("text,sid", BENIGN)
def test_source_notice_is_benign(text, sid):
    got = catalog().explain_text(text)
    assert any(a.id == sid and a.benign for a in got), text
    assert primary(got) is None, text
