"""Issue 25's second coverage pass, family by family from the components' own references: CANN's
error-code table (hicann/runtime error_code.json) and HCCL's fault-diagnosis index for the EI/EJ
codes, torch_npu's hccl_types.h for HcclResult, CANN opbase's dtype checks, CANN's package-internal
headers, torch's library loader for torchvision/torchaudio, Mooncake's Ascend transport, vllm-ascend's
option-conflict guards and the install order in users' words. Each line below is the raising code's
own format (not a held-out line); each look-alike is a line of another vendor or a healthy line
that must stay silent for the class it resembles."""
from __future__ import annotations

import pytest

from doctor.explain.answers import primary
from tests.explain_kit import selected


def top(text):
    return primary(selected(text))


@pytest.mark.parametrize("line,want,code", [
    # CANN's error-code table: the code becomes the answer (no signature knows more)
    ("EI0004: [PID: 2231] 2025-06-11-10:02:33.114.502 The ranktable or rank is invalid,Reason:[ranktable path does not exist]. "
     "Please check the configured ranktable. [{}]", "cann_msg.EI0004", "EI0004"),
    ("EI0015: [PID: 3380] 2025-06-11-10:02:33.114.502 Failed to collect cluster information of the communicator based on rootInfo "
     "detection. Reason: timeout.", "cann_msg.EI0015", "EI0015"),
    ("EI0008: [PID: 3380] 2025-06-11 The HCCL versions are inconsistent: tag [t], local_version [8.1.RC1], remote_version [8.0.0]",
     "cann_msg.EI0008", "EI0008"),
    # HCCL's rank-table parser (cann-hccl topoinfo_ranktable*.cc)
    ("[ERROR] HCCL(7,python3):2025-06-11-10:02:33.114.502 [topoinfo_ranktableConcise.cc:443] [7][Get][SingleDeviceIp]errNo"
     "[0x0000000005000001] 'device_ip' is not set correctly", "cann.hccl_ranktable_entry_invalid", None),
    ("[ERROR] HCCL(7,python3):2025-06-11 [topoinfo_exchange_agent.cc:459] [7][Verify][ClusterDeviceIP]rank[3]'s device ip is "
     "repeated with rank[11].", "cann.hccl_ranktable_entry_invalid", None),
    # HcclResult in torch_npu's format
    ("RuntimeError: HCCL function error: HcclCommPrepare(...), error code is 4", "hccl.4", "4"),
    ("RuntimeError: HCCL function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), "
     "error code is 12", "hccl.12", "12"),
    # a signature that explains the line keeps the vendor code the line carries (EI0016 is in the
    # table; the TLS signature knows more about this line)
    ('EI0016: [PID: 94774] 2025-10-27-11:51:32.570.490 Value Disable for config "tls" is invalid. Expected Value:"All ranks '
     'are consistent. Current status : rankList for enabled tls:[10.0.0.7/0]; rankList for disabled tls:[10.0.0.8/0]".',
     "cann.hccl_tls_mismatch", "EI0016"),
    ("Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port. Reason: port 60000 in use",
     "cann.hccl_bind_ip_port", "EJ0003"),
    ("EZ0007: [PID: 12] 2025-07-01-15:17:20.355.304 Input parameter scale of aclnnQuantMatmulV4 has incorrect dtype FLOAT16. "
     "It should be BFLOAT16,FLOAT.", "cann.aclnn_dtype_unsupported", "EZ0007"),
    ("EZ1006: [PID: 12] Operator aclnnGroupedMatmul does not support data type BFLOAT16. The supported data type range is FLOAT16.",
     "cann.aclnn_dtype_unsupported", "EZ1006"),
    # CANN's package-internal headers in a custom-op build (gcc and clang forms)
    ("csrc/kernels/utils.h:4:10: fatal error: toolchain/prof_api.h: No such file or directory", "cann.custom_op_cann_mismatch", None),
    ("/usr/local/Ascend/cann-9.1.0/include/acl/acl_rt.h:12:10: fatal error: 'profiling/prof_api.h' file not found",
     "cann.custom_op_cann_mismatch", None),
    # torch's library loader and the extension modules of torchvision / torchaudio
    ("ImportError: /usr/local/lib/python3.10/site-packages/torchvision/_C.so: undefined symbol: "
     "_ZN3c106detail23torchInternalAssertFailEPKcS2_jS2_RKSs", "torch.torchvision_mismatch", None),
    ("OSError: Could not load this library: /usr/local/lib/python3.11/site-packages/torchaudio/lib/libtorchaudio.so",
     "torch.torchaudio_mismatch", None),
    # Mooncake's Ascend transport
    ("E0612 10:11:12.123456 4242 hccl_transport.cpp:424] HcclTransport: rankInfoParse failed, ret: -1",
     "mooncake.hccn_conf_missing", None),
    # vllm-ascend's option-conflict guards
    ("ValueError: ShortRequestFirst scheduling cannot be enabled with batch_job_sched_config. Please disable one of them.",
     "vllm_ascend.feature_conflict", None),
    ("RuntimeError: MSMONITOR_USE_DAEMON and torch profiler cannot be both enabled at the same time.",
     "vllm_ascend.feature_conflict", None),
    # a plugin written against another vllm-ascend (vllm-omni imports vllm_ascend.utils.enable_sp and other
    # internals: vllm_omni/worker/npu/npu_model_runner.py at vllm-omni be81443)
    ("AttributeError: module 'vllm_ascend.utils' has no attribute 'enable_sp'", "vllm_ascend.api_drift", None),
    # the install order in users' words
    ("When I pip install vllm, torch gets upgraded to 2.8.0 and torch_npu no longer imports", "torch.install_order_prose_en", None),
    ("vllm will replace the torch that vllm-ascend installed", "torch.install_order_prose_en", None),
    ("torch-npu==2.7.1.dev20250724 cannot be found on the Aliyun mirror", "torch_npu.dev_build_needs_mirror_prose", None),
])
def test_family_line_is_explained(line, want, code):
    got = top(line)
    assert got is not None and got.id == want, (got and got.id, [a.id for a in selected(line)])
    if code is not None:
        assert got.code == code, got.code


def test_a_code_on_a_line_no_signature_explains_is_its_own_answer():
    log = ("[ERROR] HCCL(9,python):2025-06-11 [hccl_socket.cc:100] [9][HcclSocket][Listen] socket type[2], listen on ip[10.0.0.1] "
           "and specific port[60000] fail. Please check the port status and whether the port is being used by other process.\n"
           "[ERROR] HCCL(9,python):2025-06-11 [op_base.cc:866] [9][HcclGetRootInfo]call trace: hcclRet -> 19\n"
           "EI0019: [PID: 9] 2025-06-11 Failed to bind the port, socket type[2].")
    got = top(log)
    assert got.id == "cann.hccl_port_in_use"
    assert got.code is None  # the code sits on lines other signatures do not explain: it is its own answer
    ids = [a.id for a in selected(log)]
    assert "cann_msg.EI0019" in ids


def test_the_same_cause_keeps_the_code_its_later_line_carries():
    log = ("[ERROR] HCCL(60570,python):2025-06-11 [hccl_socket.cc:90] host nic listen start failed, port[60000]\n"
           "[ERROR] HCCL(60570,python):2025-06-11 [op_base.cc:866] [60570][HcclGetRootInfo]call trace: hcclRet -> 7")
    got = top(log)
    assert got.id == "cann.hccl_bind_ip_port" and got.line == 1
    assert got.code == "7"


def test_the_rank_table_load_failure_carries_ei0004():
    log = ("[ERROR] HCCL(7,python3):2025-06-11 [topoinfo_ranktableParser.cc:140] [7][Load][File]errNo[0x0000000005000001] "
           "path /data/rank_table.json is not a valid real path\n"
           "EI0004: [PID: 7] 2025-06-11-10:02:33.114.502 The ranktable or rank is invalid,Reason:[The ranktable path configured "
           "in the training can be found in the plogs.]. Please check the configured ranktable. [/data/rank_table.json]")
    got = top(log)
    assert got.id == "cann.hccl_ranktable_load" and got.code == "EI0004"
    # without a load line, EI0004 keeps the table's meaning (no signature claims it)
    assert top(log.splitlines()[1]).id == "cann_msg.EI0004"


def test_benign_retelling_of_the_resolver_note_reports_nothing_real():
    line = "pip says vllm 0.9.1 requires torch==2.7.0 while vllm-ascend 0.9.1rc1 requires torch==2.5.1, which one should I keep?"
    answers = selected(line)
    assert primary(answers) is None
    # the log form and the retelling both read it as the resolver's expected note: said once
    said = [a for a in answers if a.finding == "torch.version"]
    assert len(said) == 1 and said[0].benign, [(a.id, a.benign) for a in said]
    assert said[0].id in ("torch.vllm_requires_torch", "torch.vllm_requires_torch_prose")


@pytest.mark.parametrize("line,not_id", [
    # other vendors' collectives and compilers
    ("misc/socket.cc:448 NCCL WARN Net : Call to bind failed : Address already in use", "cann.hccl"),
    ("hcclCommInitRank failed: synapse status 26 (Habana HCCL)", "cann.hccl_bind_ip_port"),
    ("fatal error: cuda_runtime.h: No such file or directory", "cann.custom_op_cann_mismatch"),
    ("fatal error: runtime/rt.h: No such file or directory", "cann.custom_op_cann_mismatch"),
    ("src/base/logging.h:3:10: fatal error: base/log_types.h: No such file or directory", "cann.custom_op_cann_mismatch"),
    ("ImportError: /usr/lib/python3/dist-packages/cv2/cv2.so: undefined symbol: _ZN2cv3Mat", "torch.torchvision_mismatch"),
    ("OSError: Could not load this library: /opt/venv/lib/python3.11/site-packages/mylib/_C.so", "torch.torchaudio_mismatch"),
    ("NCCL WARN Bootstrap : no socket interface found", "cann.hccl_no_host_interface"),
    ("ncclCommInitRank failed: unhandled system error (run with NCCL_DEBUG=INFO for details)", "cann.atb_hccl_comm_failed"),
    ("[atb] [info] [hccl_runner.cpp:146] HcclRunner HcclCommInitRootInfo success, rank:1, rankSize:4", "cann.atb_hccl_comm_failed"),
    ("Gloo connectFullMesh failed with ... All ports in range are in use", "cann.hccl_port_range_exhausted"),
    # healthy install lines and the neighbours of the install-order prose
    ("Successfully installed torch-2.7.1 torch-npu-2.7.1 torchvision-0.22.1 vllm-0.11.0 vllm-ascend-0.11.0", "torch."),
    ("Attempting uninstall: torch", "torch.install_order_prose_en"),
    ("install vllm-ascend will overwrite existing torch-npu", "torch.install_order_prose_en"),
    ("Successfully installed torch-npu-2.5.1.post1.dev20250619", "torch_npu.dev_build_needs_mirror"),
    ("this version does not exist", "torch_npu.dev_build_needs_mirror"),
    # Mooncake and vllm-ascend healthy lines
    ("I0612 10:11:12.123456 4242 hccl_transport.cpp:380] rankInfoParse Success, hostIp: 10.0.0.1", "mooncake."),
    ("INFO 06-18 10:00:00 [platform.py:120] ShortRequestFirst scheduling enabled", "vllm_ascend.feature_conflict"),
])
def test_look_alike_is_not_that_class(line, not_id):
    assert not any(a.id.startswith(not_id) for a in selected(line) if not a.benign), [a.id for a in selected(line)]
