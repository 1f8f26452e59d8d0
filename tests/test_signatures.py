"""matrices/signatures.toml: every signature explains its real example through the whole
catalog (prefilter included), stays silent on its near misses, cites what a user can open and
confirms with a finding that `check` really reports. Plus the corrections of issue 10/12."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from doctor.parse.logscan import LogScanner, scan_text
from tests.citations import unresolved
from tests.explain_kit import catalog, matrix

DATA = Path(__file__).parent / "data"

# Examples put back together from a source that only shows the message's parts (a template in a
# vendor document, a screenshot transcribed in an issue). Listed here so no other slips in.
RECONSTRUCTED = {
    "driver.libascend_hal_missing", "python.torch_npu_no_wheel", "vllm_ascend.numpy_version_conflict",
    "mooncake.unsupported_transport", "mooncake.cuda_wheel", "mooncake.glibcxx",
    # issue 25 (explain-b): the message as the component's source writes it (no public log of it
    # outside held-out threads)
    "mooncake.not_supported_transport", "mooncake.hccn_conf_missing", "mooncake.ascend_self_device",
    "cann.hccl_comm_prepare",
    # issue 25: vllm-ascend's own messages, put back together from the raise/log call of the tag
    # each signature cites (no user thread shows them in full)
    "cann.too_old_for_feature",
    "devices.soc_version_unknown",
    "devices.visible_devices_empty",
    "driver.aclgraph_old_hdk",
    "env.cuda_attention_backend",
    "env.hccl_library_load",
    "env.vllm_version_invalid",
    "mooncake.adxl_ipv6",
    "mooncake.etcd_storage_plugin",
    "torch_npu.too_old_for_vllm_ascend",
    "vllm_ascend.a5_only_feature",
    "vllm_ascend.aclgraph_sizes_adjusted",
    "vllm_ascend.aclgraph_streams_exhausted",
    "vllm_ascend.build_soc_differs",
    "vllm_ascend.custom_op_schema_missing",
    "vllm_ascend.feature_conflict",
    "vllm_ascend.gpu_param_ignored",
    "vllm_ascend.kv_role_guard",
    "vllm_ascend.launch_blocking_graph",
    "vllm_ascend.lora_unsupported_release",
    "vllm_ascend.modelslim_config_missing",
    "vllm_ascend.optional_package_missing",
    "vllm_ascend.quant_format_unsupported",
    "vllm_ascend.rank_table_env_unset",
    "vllm_ascend.triton_op_unresolved",
    "vllm_ascend.unsupported_on_310p",
    "vllm_ascend.weight_alloc_oom",
    # issue 25 (mine-b): the typical message as triton-ascend's migration guide writes it, with the
    # coreDim of the guide's own example (the user threads that show it are held out)
    "vllm_ascend.triton_grid_limit",
    # issue 25 (cover): the message as the component's source writes it
    "cann.op_needs_newer_cann", "env.build_no_cxx_compiler", "python.transformers_unrecognized_config",
    "torch_npu.expandable_segments_off",
    # issue 25 (cover2): descriptions in a user's words of a cause the cited docs state, and
    # messages put back together from the raising code of the cited commit
    "torch.install_order_prose_en", "torch.vllm_requires_torch_prose",
    "torch_npu.dev_build_needs_mirror_prose", "torch_npu.dev_build_needs_mirror_said",
    "cann.hccl_ranktable_load", "cann.hccl_ranktable_entry_invalid", "cann.hccl_ranktable_device_mismatch",
    "cann.hccl_port_range_exhausted", "cann.hccl_no_host_interface",
    "vllm_ascend.quant_type_unsupported", "vllm_ascend.quantization_override", "env.sglang_npu_ops_unloaded",
    "cann.atb_hccl_comm_failed", "devices.npu_memory_fault", "devices.npu_link_fault", "cann.npu_task_aborted",
    "vllm_ascend.kv_transfer_timeout",
    # issue 25 (heldout): messages put back together from the raising code of the cited commit
    "cann.hccl_ranktable_device_ip", "cann.atb_hccl_runner_failed", "cann.mindie_quant_config",
    "cann.mindie_env_unset", "env.sglang_npu_missing_import", "env.sgl_kernel_npu_transformers",
    "devices.ray_visible_devices",
    # issue 25 (h-sweep): messages as each framework's source formats them (swept class by class
    # from the source, not from threads)
    "devices.llamacpp_cann_init_failed", "devices.llamacpp_npu_alloc_failed", "cann.llamacpp_pool_slots_full",
    "cann.llamacpp_op_unsupported", "cann.llamacpp_type_unsupported", "devices.llamacpp_invalid_device",
    "cann.llamacpp_pinned_fallback", "devices.llamacpp_soc_autodetect_failed", "env.llamacpp_cann_install_dir",
    "cann.llamacpp_acl_graph_310p",
    "torch_npu.deepspeed_no_torch_npu", "env.ascend_home_path_unset", "python.deepspeed_op_no_npu_impl",
    "torch_npu.transformers_npu_fused_adamw", "torch_npu.bf16_unsupported_trainer", "torch_npu.accelerate_sees_no_npu",
    "python.npu_fa2_sparse_mode",
    "python.verl_transformers_npu_pin", "torch_npu.llamafactory_npu_kernel", "python.mindspeed_experts_per_ep",
    "vllm_ascend.lora_fused_experts_swift", "torch_npu.fusion_attention_grad_missing", "python.mindspeed_fp8_unsupported",
    "cann.mindspeed_atb_home_unset", "torch_npu.mindspeed_moe_permute_fusion_off",
    "vllm_ascend.triton_npu_compiler_missing", "vllm_ascend.triton_ascend_arch_invalid", "vllm_ascend.triton_npu_subtarget",
    "env.triton_ascend_no_cxx", "mooncake.ascend_listen_port_exhausted",
    # issue 25 (batch 5): messages as the emitting component formats them (LLVM's option parser for
    # bishengir-compile, torch's flex_attention device check, GCC's missing header)
    "cann.bishengir_too_old_option", "torch_npu.flex_attention_unsupported_on_npu", "env.x86_only_header_on_aarch64",
    # issue 25 (second class sweep, h-p): triton-ascend's launcher, compiler stages and driver test,
    # vllm-ascend's UVA notice, as their sources format them
    "vllm_ascend.triton_pointer_not_device", "vllm_ascend.triton_ascend_uva_disabled_benign",
    "vllm_ascend.triton_bishengir_compile_failed", "vllm_ascend.triton_adapter_lowering_failed",
    "vllm_ascend.triton_npu_driver_inactive",
    # torch_npu's RuntimeError for torch.npu_* and op-plugin's deprecation warning
    "torch_npu.torch_namespace_npu_op", "torch_npu.npu_op_deprecated_benign",
    # pip 26.3's wording, run against PyPI with --python-version
    "python.vllm_ascend_no_distribution", "vllm_ascend.triton_launcher_rt_header",
    # vllm-ascend's own start-up warnings (h-warn): each message as its logger call formats it,
    # read from the source at every tag v0.7.3 to v0.25.1rc1
    "vllm_ascend.compilation_level_forced", "vllm_ascend.cudagraph_mode_fallback", "vllm_ascend.eager_mode_default",
    "vllm_ascend.npu_compilation_pending", "vllm_ascend.aclgraph_enabled", "vllm_ascend.torchair_compilation_enabled",
    "vllm_ascend.ray_aclgraph_eager", "vllm_ascend.prefix_caching_v1_disabled", "vllm_ascend.block_size_forced_128",
    "vllm_ascend.chunked_prefill_off_non_mla", "vllm_ascend.ffts_streams_limited",
    "vllm_ascend.aclgraph_sizes_reduced", "vllm_ascend.capture_size_truncated",
    "vllm_ascend.capture_sizes_overridden", "vllm_ascend.speculative_quant_reset",
    "vllm_ascend.attention_backend_reset", "vllm_ascend.dbo_ignored", "vllm_ascend.custom_kernels_env_off",
    "vllm_ascend.v2_model_runner_fallback", "vllm_ascend.graph_capture_skipped",
    # vllm-ascend's own RuntimeErrors as their raising code formats them (no public log shows them)
    "vllm_ascend.memfabric_te_init", "vllm_ascend.rfork_transfer_engine_init",
}
# A signature's finding belongs to its own layer, except where the thing that must change and the
# check that judges it live in different layers (said in a comment above the signature).
CROSS_LAYER = {"driver.watchdog_timeout", "cann.opapi_symbol_missing"}


def explained(text: str) -> set:
    cat = catalog()
    return {a.id for a in cat.answers(scan_text(text, cat.compiled))}


def known_findings() -> set:
    """Finding ids `check` reports, from their reference (docs/findings.md, one heading each)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "findings.md").read_text(encoding="utf-8")
    return set(re.findall(r"^### `([a-z_]+\.[a-z_0-9]+)`", text, re.M))


SIGS = matrix().signatures
IDS = [s.id for s in SIGS]


def test_at_least_200_signatures_each_with_a_real_example():
    assert len(SIGS) >= 200
    assert len(set(IDS)) == len(IDS)
    assert all(s.example for s in SIGS), [s.id for s in SIGS if not s.example]


@pytest.mark.parametrize("sig", SIGS, ids=IDS)
def test_example_is_explained_by_its_signature(sig):
    assert sig.id in explained(sig.example), sig.example


@pytest.mark.parametrize("sig", SIGS, ids=IDS)
def test_near_misses_are_not(sig):
    assert sig.near_miss, "every signature names a line it must not explain"
    for line in sig.near_miss:
        assert sig.id not in explained(line), line


@pytest.mark.parametrize("sig", SIGS, ids=IDS)
def test_sources_resolve(sig):
    assert not unresolved(sig.source), unresolved(sig.source)
    if sig.example_source and not sig.example_source.startswith("reconstructed:"):
        assert not unresolved(sig.example_source), unresolved(sig.example_source)


def test_only_listed_examples_are_reconstructed():
    got = {s.id for s in SIGS if (s.example_source or "").startswith("reconstructed:")}
    assert got == RECONSTRUCTED


def test_findings_are_check_findings_of_the_same_layer():
    known = known_findings()
    for s in SIGS:
        assert s.id.split(".")[0] == s.layer, s.id
        if s.finding:
            assert s.finding in known, (s.id, s.finding)
            if s.id not in CROSS_LAYER:
                assert s.finding.split(".")[0] == s.layer, (s.id, s.finding)
        for c in s.confirm:
            assert c.finding in known, (s.id, c.finding)


def test_no_example_is_a_held_out_line():
    held = {line.strip() for row in (json.loads(x) for x in (DATA / "explain_heldout.jsonl").read_text().splitlines())
            for line in row["text"].splitlines() if line.strip()}
    held |= {line.strip() for row in (json.loads(x) for x in (DATA / "explain_mined.jsonl").read_text().splitlines()
                                      if x.strip()) if row["split"] == "heldout"
             for line in row["text"].splitlines() if line.strip()}
    held |= {line.strip() for row in (json.loads(x) for x in (DATA / "explain_mined_vllm.jsonl").read_text().splitlines()
                                      if x.strip()) if row["split"] == "heldout"
             for line in row["text"].splitlines() if line.strip()}
    for s in SIGS:
        for line in s.example.splitlines():
            assert line.strip() not in held, s.id


@pytest.mark.slow  # ~0.5 s of CPU or more: the scan over every shipped pattern
def test_shipped_patterns_keep_the_scan_cheap():
    """The prefilter stops at marked bytes and runs one find() per anchor: a pattern made of
    common text only would add an anchor or raise the share of marked bytes (bench: 100 MB)."""
    pf = LogScanner(catalog().matchers).prefilter
    assert len(pf.anchors) <= 7, list(pf.anchors)  # 7th: issue 25's prose signatures (measured: +1 find() pass)
    assert pf.density <= 7000, (pf.density, bytes(sorted(pf.marked)))  # per 100,000 bytes of a serving log


# -- issue 10: corrections, each with the line or text that was wrong ---------------------------


def by_id(sid):
    return next(s for s in SIGS if s.id == sid)


def test_msprof_symbol_says_torch_npu_is_older_than_cann():
    s = by_id("torch_npu.msprof_symbol")
    assert "older than the installed CANN" in s.cause_en and "post4" in s.fix_en
    assert "2.7.1.post4" in s.fix_zh
    assert "triton-ascend/issues/326" in s.source and "triton-ascend/issues/328" in s.source


def test_audited_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md: three cause statements said more than the thread or code they cite."""
    s = by_id("cann.aclnn_561103")  # vllm-ascend#4859: a commenter matched CANN to the device, nothing about a missing package
    assert "ACLNN_ERR_INNER_NULLPTR" in s.cause_en and "missing" not in s.cause_en and "缺少" not in s.cause_zh
    s = by_id("torch_npu.autoload_failed")  # torch chains the real error above its RuntimeError, not only on the line
    assert "chained" in s.cause_en and "same line is the real cause" not in s.cause_en
    s = by_id("torch_npu.fusion_attention_grad_missing")  # ms-swift only checks hasattr; it names no version
    assert "older" not in s.cause_en and "旧" not in s.cause_zh


def test_triton_collision_names_the_pins_of_the_matrix():
    s = by_id("vllm_ascend.triton_collision")
    pins = {r.vllm_ascend: r.triton_ascend for r in matrix().releases if getattr(r, "triton_ascend", None)}
    assert pins["0.23.0"] == "3.2.2" and pins["0.26.0rc1"] == "3.2.2" and pins["0.30.0rc2"] == "3.2.2"
    for version in set(pins.values()):
        assert version in s.fix_en and version in s.fix_zh
    assert "0.26.0rc1" in s.fix_en and "0.30.0rc2" in s.fix_en and "0.23.0" in s.fix_en
    assert "3.2.1 for 0.20+" not in s.fix_en


@pytest.mark.parametrize("line", [
    "Successfully installed nvidia-cublas-13.0.0.19 nvidia-cuda-runtime-13.0.48",
    "Collecting nvidia-cublas==13.0.0.19",
    "  Downloading nvidia_cudnn-9.13.0.50-py3-none-manylinux_2_27_aarch64.whl (1.6 GB)",
    "Successfully installed nvidia-cublas-cu12-12.6.4.1",
])
def test_cuda_wheels_with_and_without_cu_suffix(line):
    assert "torch.cuda_wheels" in explained(line)


# -- issue 12: anchoring ---------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["secret 507033", "token 507033 issued", "pid 507033 started"])
def test_a_number_alone_is_not_a_vendor_code(line):
    assert not any("507033" in i for i in explained(line)), explained(line)


def test_str_module_attribute_error_alone_is_not_the_plugin_branch():
    line = "AttributeError: 'str' object has no attribute '__module__'"
    assert "env.plugin_wrong_vllm_branch" not in explained(line)
    assert "env.plugin_wrong_vllm_branch" not in explained("Traceback (most recent call last):\n" + line)
    log = ("  File \"/usr/local/lib/python3.11/site-packages/vllm/plugins/__init__.py\", line 58, in load_general_plugins\n"
           "    func()\n" + line)
    assert "env.plugin_wrong_vllm_branch" in explained(log)


def test_code_keyed_signature_wins_over_the_table_entry():
    got = explained("RuntimeError: c10_npu::SetDevice(device_id_), error code is 507033")
    assert "cann.runtime_507033" in got and "acl.507033" not in got
    assert "acl.507033" not in explained("error code is 5070331")


def test_second_audit_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, second sample (seed 26): five causes said more than the code or threads they cite."""
    s = by_id("mooncake.rdma_qp_rtr")  # Mooncake troubleshooting: MTU setting, GID validity / index, peer LID and QP, reachability
    assert "do not match" not in s.cause_en and "MC_GID_INDEX" in s.fix_en and "不匹配" not in s.cause_zh
    s = by_id("mooncake.transfer_failed")  # vllm-ascend#2970 is unresolved: no thread established a release-row mismatch
    assert "release row" not in s.cause_en and "发布行" not in s.cause_zh
    assert "8.3.RC1" in s.cause_en and "Mooncake#3749" in s.cause_en
    s = by_id("env.mooncake_cann_headers")  # CMakeLists.txt: message(WARNING ...) and add_library(ascend_transport) after it
    assert "is not built" not in s.cause_en and "only a warning" in s.cause_en and "不会编译" not in s.cause_zh
    assert "common.cmake" in s.source
    s = by_id("cann.opapi_symbol_missing")  # op-plugin GetOpApiFuncAddr: custom operator packages before libopapi.so
    assert "ASCEND_CUSTOM_OPP_PATH" in s.cause_en and "ASCEND_CUSTOM_OPP_PATH" in s.fix_en and "ASCEND_CUSTOM_OPP_PATH" in s.cause_zh
    assert "op-plugin" in s.source
    s = by_id("mooncake.connect_failed")  # 103900 is HIXL's PARAM_INVALID, not an unreachable peer
    assert "103900 invalid parameter" in s.cause_en and "adxl_types.h" in s.source


def test_third_audit_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sample (seed 27): six causes said more than the code or threads they cite."""
    s = by_id("vllm_ascend.no_platform")  # register() only returns the class name (v0.7.3 on); vLLM skips a plugin it cannot load
    assert "unsupported SoC" not in s.cause_en and "Failed to load plugin ascend" in s.cause_en and "0.7.1rc1" in s.cause_en
    assert "芯片不支持" not in s.cause_zh and "vllm/plugins/__init__.py" in s.source
    s = by_id("devices.bf16_unsupported")  # #6490 names no chip; 910A (#9294) and 310P (310p.md) are float16 only
    assert "this chip's kernels" not in s.cause_en and "on other chips" in s.cause_en and "310p.md" in s.source
    assert "其他芯片" in s.cause_zh
    s = by_id("python.mindspore_too_old_for_package")  # MindAct#1693: one case, a newer MindSpore; 2.3.0 lacks the module, 2.3.1 has it
    assert "was written for a newer" not in s.cause_en and "another MindSpore release" in s.cause_en
    assert "first in MindSpore 2.3.1" not in s.cause_en and "另一个" in s.cause_zh
    s = by_id("cann.tbe_adapter_undefined_symbol")  # Ascend/pytorch#99 is open: no cause found, both pairings documented
    assert not s.cause_en.startswith("The NNAL/ATB build does not match") and "no cause found" in s.cause_en
    assert "COMPATIBILITY.en.md" in s.source and "原因未查明" in s.cause_zh
    s = by_id("env.cwd_shadow")  # PEP 420: a regular package found by the path search wins over such a directory
    assert "editable install" in s.cause_en and "regular install" in s.cause_en and "pep-0420" in s.source
    assert "可编辑安装" in s.cause_zh


def test_swept_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, sweep of signature causes after seed 27: causes that said more than
    (or other than) the thread, code or vendor table they cite."""
    s = by_id("driver.watchdog_timeout")  # vllm-ascend#5468: an [INFO] ATRACE line in one thread with driver 24.1
    assert "older than the CANN in the image needs" not in s.cause_en and "[INFO]" in s.cause_en
    assert "常见于" not in s.cause_zh
    s = by_id("cann.runtime_507018")  # pypto#2119: shared CI devices; aclError.md: AI CPU执行异常, nothing about versions
    assert "too old" not in s.cause_en and "过旧" not in s.cause_zh and "ACL_ERROR_RT_AICPU_EXCEPTION" in s.cause_en
    assert "25-01_aclError.md" in s.source and "simpler/pull/890" in s.source
    s = by_id("torch_npu.npu_op_missing")  # the releases needed an unreleased dev build, not a newer one
    assert "older" not in s.cause_en and "旧" not in s.cause_zh and "dev20250218" in s.cause_en
    s = by_id("vllm_ascend.infer_device_type")  # as no_platform: register() imports torch_npu on 0.7.1rc1 only
    assert "unsupported SoC" not in s.cause_en and "0.7.1rc1" in s.cause_en and "芯片不支持" not in s.cause_zh
    s = by_id("vllm_ascend.plugin_load_failed")  # the package import runs no torch_npu/CANN; from 0.21.0rc1 it imports vLLM modules
    assert "often torch_npu/CANN" not in s.cause_en and "vllm_ascend.logger" in s.cause_en
    assert "vllm_ascend.logger" in s.cause_zh
    s = by_id("vllm_ascend.triton_op_unresolved")  # triton_utils.py: neither the cann extension nor tl has the op
    assert "older" not in s.cause_en and "旧" not in s.cause_zh
    s = by_id("cann.runtime_507033_opp")  # E30006 says only 'The OPP is incorrect'; vllm-ascend#4284 is open
    assert "does not fit this NPU driver" not in s.cause_en and "The OPP is incorrect" in s.cause_en
    s = by_id("devices.dcmi_init_8005")  # vllm-ascend#2698: another container / --privileged; no source says reboot
    assert "upgraded without a reboot" not in s.cause_en and "--privileged" in s.cause_en and "--privileged" in s.cause_zh
    s = by_id("vllm_ascend.transformers_arch")  # the message names the checkpoint as well as an old transformers
    assert "is too old for this model type" not in s.cause_en and "config.json" in s.cause_en
    s = by_id("vllm_ascend.numpy_version_conflict")  # vllm-ascend#473: the numpy vLLM installed, not build isolation
    assert "build isolation" not in s.cause_en and "pull/476" in s.source
    s = by_id("torch.npu_pin_mismatch")  # its own example (vllm-ascend#4081) is printed inside a pip build environment
    assert "usually installing or upgrading vllm" not in s.cause_en and "pip-build-env" in s.cause_en
    assert "pip show torch" in s.fix_en and "pip show torch" in s.fix_zh
    s = by_id("vllm_ascend.aclgraph_sizes_adjusted")  # platform.py: cut to 4 sizes on A5 only; no HDK is read
    assert "limits device streams" not in s.cause_en and "A5" in s.cause_en and "→ 4 sizes" in s.example
    s = by_id("mooncake.cannot_make_connection")  # Mooncake guide: incorrect configuration on one side, or unreachable
    assert "mismatch" not in s.cause_en and "matches on both sides" not in s.fix_en
    s = by_id("mooncake.qp_create")  # Mooncake guide item 7: too many QPs; the leak only under sustained peer failures
    assert "often leaked" not in s.cause_en and "MC_ENABLE_DEST_DEVICE_AFFINITY" in s.fix_en
    s = by_id("cann.npu_error_507048")  # ACL_ERROR_RT_FFTS_PLUS_TIMEOUT; HCCL only with EI0002
    assert "almost always" not in s.cause_en and "几乎总是" not in s.cause_zh and "EI0002" in s.cause_en
    s = by_id("mooncake.transfer_engine_init")  # vllm-ascend only raises on the non-zero return
    assert "Most often" not in s.cause_en and "通常" not in s.cause_zh
    s = by_id("cann.tbe_adapter_undefined_symbol_wrapped")  # both threads open, no cause found (as its sibling)
    assert not s.cause_en.startswith("The NNAL/ATB build does not match") and "PaddleCustomDevice/issues/2452" in s.source
    assert "未查明" in s.cause_zh
    s = by_id("devices.lost_heartbeat")  # 507010: the task scheduler lost heartbeat; EL0001 in vllm-ascend#8186
    assert "hung or was reset" not in s.cause_en and "挂死" not in s.cause_zh and "EL0001" in s.cause_en
    s = by_id("env.vllm_version_invalid")  # packaging parses 0.9.1.dev12+g1a2b3c; only a non-version raises
    assert "reports something like" not in s.cause_en and "PEP 440" in s.cause_en
    from packaging.version import InvalidVersion, Version
    value = re.search(r"Invalid vllm version (\S+) found", s.example).group(1)
    with pytest.raises(InvalidVersion):
        Version(value)
    s = by_id("torch_npu.expandable_segments_off")  # NPUAllocatorConfig.cpp: a failed aclrtReserveMemAddress, versions only for pin_memory
    assert "which the installed CANN or driver does not support" not in s.cause_en and "aclrtReserveMemAddress" in s.cause_en
    s = by_id("vllm_ascend.kv_transfer_timeout")  # v0.9.1: every LLMException of pull_blocks is reported as a timeout
    assert "LLMException" in s.cause_en and "failed to start" in s.cause_en and "LLMException" in s.cause_zh
    s = by_id("torch_npu.double_dtype_cast_benign")  # ToKernelNpu.cpp: a requested cast to Double becomes Float
    assert "a float64 (double) tensor was cast" not in s.cause_en and "cast to float64" in s.cause_en
    s = by_id("env.ascend_opp_path_unset")  # registry_manager.py: opp not installed, or set_env.sh not sourced
    assert "opp" in s.cause_en and "set_env.sh" in s.cause_en and "算子包" in s.cause_zh


def test_second_sweep_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, second sweep of signature causes: causes that said more than (or other
    than) the thread, code or vendor table they cite."""
    s = by_id("vllm_ascend.no_quantizer")  # quantizer.py v0.7.1rc1..v0.8.4rc1: raised on `import mindie_turbo` failing
    assert "mindie_turbo" in s.cause_en and "mindie_turbo" in s.cause_zh and "msModelSlim" not in s.fix_en
    assert "quant_model_description.json is missing" not in s.cause_en
    s = by_id("torch_npu.msprof_symbol")  # triton-ascend #326/#328: a mismatch of 2.7.1 with CANN 9.0.0-beta.2, nothing about "no longer"
    assert "no longer defines" not in s.cause_en and "不再提供" not in s.cause_zh and "#328" in s.cause_en
    s = by_id("torch_npu.cann_function_missing")  # HcclCompile.h: a GET_FUNC lookup that failed; no version in the code
    assert "older than" not in s.cause_en and "比该 torch_npu 版本所需的旧" not in s.cause_zh and "GET_FUNC" in s.cause_en
    s = by_id("mooncake.mount_segment_failed")  # the code prints the store's error code; the cases on record follow rpc errors
    assert "usually" not in s.cause_en and "通常" not in s.cause_zh and "RPC_FAIL" in s.cause_en
    s = by_id("mooncake.no_rnic")  # rdma_transport.cpp disables devices that fail to open; #1384 is an open 0.3.8.post1 case
    assert "wrong device names" not in s.cause_en and "#1384" in s.cause_en and "#1384" in s.cause_zh
    s = by_id("mooncake.rdma_retry_exceeded")  # Mooncake #82 is open: cross-node only, no cause found
    assert "mismatch" not in s.cause_en and "不一致" not in s.cause_zh and "#82" in s.cause_en
    assert "align MC_GID_INDEX and MC_MTU" not in s.fix_en
    s = by_id("vllm_ascend.build_soc_differs")  # setup.py maps SOC_VERSION to a family; the runtime check compares families
    assert "only when that family differs" in s.cause_en and "同系列" in s.cause_zh


def test_fourth_audit_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sample (seed 28): causes (and one fix) that said more than the
    guide, code or pins they cite."""
    s = by_id("python.mindie_python")  # msit's guide: MindIE-RT's Python API needs 3.10; nothing about MindIE-Service
    assert "MindIE-Service" not in s.cause_en and "MindIE-Service" not in s.cause_zh
    assert "model conversion is not affected" in s.cause_en and "模型转换不受影响" in s.cause_zh
    s = by_id("mooncake.rdma_port_not_active")  # troubleshooting.md: "usually" cables or driver; the default port, MC_IB_PORT
    assert "switch port" not in s.cause_en and "交换机" not in s.cause_zh and "usually" in s.cause_en
    assert "MC_IB_PORT" in s.cause_en and "MC_IB_PORT" in s.fix_en and "MC_IB_PORT" in s.fix_zh
    assert "config.h" in s.source
    s = by_id("vllm_ascend.numpy2_abi")  # requirements.txt: numpy<2.0.0 to v0.19.1rc1, plain numpy from v0.20.2rc1
    assert "the vllm-ascend rows pin numpy below 2" not in s.fix_en and "各版本都要求" not in s.fix_zh
    assert "0.19.1rc1" in s.fix_en and "0.19.1rc1" in s.fix_zh


def test_third_sweep_part_a_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part A: causes (and one fix) that said
    more than the thread, code or pins they cite."""
    s = by_id("vllm_ascend.custom_kernels_optional")  # #703 is one 0.8.4-era case; v0.21.0rc1 text: "might not be installed or ..."
    assert "is not installed, so" not in s.cause_en and "未安装，因此" not in s.cause_zh
    assert "failed to import" in s.cause_en and "not configured" in s.cause_en and "0.7.3.post1" in s.cause_zh
    s = by_id("vllm_ascend.gpu_param_ignored")  # platform.py also resets ROCm, all2all and calculate_kv_scales options
    assert "only means something on NVIDIA" not in s.cause_en and "只在 NVIDIA GPU 上有意义" not in s.cause_zh
    assert "max_num_partial_prefills" in s.cause_en and "calculate_kv_scales" in s.cause_zh
    s = by_id("vllm_ascend.numpy_too_old")  # requirements.txt: numpy<2.0.0 to v0.19.1rc1, unpinned from v0.20.2rc1
    assert "allows (below 2.0)" not in s.fix_en and "0.20.2rc1" in s.fix_en and "0.20.2rc1" in s.fix_zh
    s = by_id("vllm_ascend.vllm_ascend_module_missing")  # one case on record (ms-swift#4886), newer; no "usually"
    assert "usually" not in s.cause_en and "通常" not in s.cause_zh
    assert "ms-swift#4886" in s.cause_en and "v0.7.3" in s.cause_zh
    s = by_id("vllm_ascend.triton_soc_target_option")  # no source read shows a CANN older than the chip; cases are 310P
    assert "predates the chip variant" not in s.cause_en and "早于该芯片型号" not in s.cause_zh
    assert "often" not in s.cause_en and "Ascend310P3" in s.cause_en and "15235" in s.cause_zh
    s = by_id("torch_npu.cpu_fallback")  # the troubleshooting page: "may have performance implications", its example then fails
    assert "correct results" not in s.cause_en and "结果正确" not in s.cause_zh
    assert "ERR01007" in s.cause_en and "ERR01007" in s.cause_zh


def test_third_sweep_part_b_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part B: causes that said more than the
    guide, thread or code they cite."""
    s = by_id("cann.op_kernel_missing")  # torch_npu's guide: ops package not installed, or no binary matches
    assert "built for another chip" not in s.cause_en and "为其他芯片构建" not in s.cause_zh
    assert "two candidates" in s.cause_en and "两种可能" in s.cause_zh and "integral key" in s.fix_en
    s = by_id("cann.vector_core_exception")  # #2630: no clear root cause; CANN's guide checks hardware first
    assert "most often" not in s.cause_en and "多为" not in s.cause_zh
    assert "#2630" in s.cause_en and "ECC" in s.cause_en and "ECC" in s.cause_zh and "#15330" in s.cause_zh
    s = by_id("cann.aclnn_dtype_unsupported")  # the cited threads show bfloat16 on 310P and 910A only
    assert "quantized" not in s.cause_en and "量化" not in s.cause_zh and "quantized" not in s.fix_en
    assert "#7522" in s.cause_en and "#9294" in s.cause_zh
    s = by_id("cann.npu_error_500001")  # NPUErrorCodes.h gives no cause; the guide's case is at initialisation
    assert "usually" not in s.cause_en and "通常" not in s.cause_zh and "numpy" not in s.fix_en
    assert "AclSetCompileopt" in s.cause_en and "AclSetCompileopt" in s.cause_zh
    assert "initialization_error.md" in s.source
    s = by_id("cann.hccl_root_ranks_missing")  # cluster_info_nego.md: HCCL_SOCKET_IFNAME set right, NICs in lexical order
    assert "the same on every node" not in s.fix_en and "HCCL_SOCKET_IFNAME 一致" not in s.fix_zh
    assert "lexical order" in s.fix_en and "字典序" in s.fix_zh
    s = by_id("cann.hccl_alloc_transports")  # param_link_stage.md: link-setup timeout, its candidates, the tag check
    assert "because links to some peers" not in s.cause_en and "由于与部分对端的链路" not in s.cause_zh
    assert "TLS" in s.cause_en and "TLS" in s.cause_zh and "tag" in s.fix_en
    s = by_id("cann.ge_initialize_failed")  # #302/#564 show the op compiler failing to start, no named cause
    assert "unwritable" not in s.cause_en and "不可写" not in s.cause_zh
    assert "OpCompileProcessor" in s.cause_en and "OpCompileProcessor" in s.cause_zh
    s = by_id("cann.hccl_collective_error")  # the guide's only case is a link-setup timeout
    assert "peer lost" not in s.cause_en and "对端丢失" not in s.cause_zh
    assert "wait socket establish timeout" in s.cause_en and "wait socket establish timeout" in s.cause_zh
    s = by_id("cann.acl_header_missing")  # Atlas_ACL_E2E_Demo#27: variables set, acllib suspected, nothing confirmed
    assert "nnrt" not in s.cause_en and "nnae" not in s.cause_zh and "acllib" in s.cause_en and "acllib" in s.cause_zh
    s = by_id("cann.hccl_comm_prepare")  # comm_entity.cc names no cause; param_link_stage.md gives the candidates
    assert "hccn.conf" not in s.cause_en and "hccn.conf" not in s.cause_zh and "ADXL" not in s.cause_en
    assert "link_retry_count" in s.cause_en and "TLS" in s.cause_zh and "-tls -g" in s.fix_en
    s = by_id("cann.custom_op_cann_mismatch")  # the cited threads name vllm-ascend and kvcache-ops only
    assert "sgl-kernel-npu" not in s.cause_en and "sgl-kernel-npu" not in s.cause_zh
    assert "LMCache-Ascend/issues/255" in s.source


def test_third_sweep_part_c_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part C: causes that said more than (or
    other than) the thread or code they cite."""
    s = by_id("devices.runtime_507033_visible")  # Ascend/pytorch#67: open, no answer; the open failed with 0x7020014
    assert "names a device this process or container does not have" not in s.cause_en
    assert "可见设备设置指向本进程或容器没有的设备" not in s.cause_zh
    assert "#67" in s.cause_en and "#67" in s.cause_zh and "RT_ERROR_DRV_INVALID_HANDLE" in s.cause_en
    s = by_id("env.cuda_attention_backend")  # patch_config.py 0.8.4rc1/rc2: set and not importable; the platform ignores it
    assert "often left over" not in s.cause_en and "常是 GPU 环境遗留" not in s.cause_zh
    assert "0.8.4rc2" in s.cause_en and "0.8.4rc2" in s.cause_zh and "get_attn_backend_cls" in s.cause_en
    s = by_id("torch.plus_cpu_index_prose")  # the torch-npu 2.5.1 x86 wheel needs torch==2.5.1+cpu; #1411 has no outcome
    assert "are CPU builds of torch" not in s.cause_en and "published only on" not in s.cause_en
    assert "2.5.1+cpu" in s.cause_en and "2.5.1+cpu" in s.cause_zh and "#1411" in s.cause_en
    s = by_id("vllm.benchmarks_missing")  # vllm#15812 (a CPU dev build) and vllm-ascend#725 (started under /workspace)
    assert "packaging issue of the 0.8 line" not in s.cause_en and "0.8 系列的打包问题" not in s.cause_zh
    assert "#725" in s.cause_en and "#725" in s.cause_zh and "/workspace" in s.fix_en and "/workspace" in s.fix_zh
    s = by_id("env.vllm_version_override")  # vllm_version_is reads VLLM_VERSION; one case (#10020) on record
    assert "most often" not in s.cause_en and "最常见" not in s.cause_zh
    assert "vllm_version_is" in s.cause_en and "#10020" in s.cause_en and "#10020" in s.cause_zh
    s = by_id("devices.ray_visible_devices")  # _flat_param.py and ray's npu.py: candidates, no case on record
    assert "created the tensor on the default one" not in s.cause_en and "在默认设备（npu:0）上创建了张量" not in s.cause_zh
    assert "No case is on record" in s.cause_en and "没有已记录的案例" in s.cause_zh
    s = by_id("vllm.engine_core_failed")  # wait_for_engine_startup: raised when a core process exited
    assert "often by a worker" not in s.cause_en and "常由 worker" not in s.cause_zh
    assert "wait_for_engine_startup" in s.cause_en and "wait_for_engine_startup" in s.cause_zh
    s = by_id("vllm.compiled_wheel_on_npu")  # the guide's pre-built path installs vllm from PyPI; #1033 ran on
    assert "must be installed without its CUDA extension" not in s.cause_en and "必须以不含 CUDA 扩展" not in s.cause_zh
    assert "#1033" in s.cause_en and "#1033" in s.cause_zh and "#1033" in s.fix_en and "#1033" in s.fix_zh
    s = by_id("env.dist_store_timeout")  # #167 rendezvous (1/8 joined; the #168 workaround since the sixth sweep), #2248 open
    assert not s.cause_en.startswith("torch.distributed's rendezvous timed out") and "MASTER_ADDR" not in s.cause_en
    assert "#2248" in s.cause_en and "#2248" in s.cause_zh and "#168" in s.cause_en
    s = by_id("env.api_port_in_use")  # vllm#7514: nothing on the port; #9737 after a crash; #9556 fixed by #8491
    assert "usually" not in s.cause_en and "通常" not in s.cause_zh
    assert "#9737" in s.cause_en and "#9737" in s.cause_zh and "#7514" in s.cause_en and "#8491" in s.fix_en


def test_fifth_audit_d_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fifth sample (seed 29), facts #16 to #35: a Mooncake threshold and a
    quantization window that did not match the code at the tags concerned."""
    from doctor.matrix.query import threshold
    from doctor.versions import satisfies

    m = matrix()
    # Mooncake v0.3.10.post2 store_py.cpp: setup(..., enable_ssd_offload, ssd_offload_path); none at v0.3.10.post1
    assert threshold(m, "mooncake_ssd_offload") == "0.3.10.post2"
    row = next(t for t in m.thresholds if t.name == "mooncake_ssd_offload")
    assert "e1d6d6f6f49f" in row.source and "v0.3.10.post1" in row.source
    # "FP8" is registered (ds_linear / w4a8_moe) from v0.21.0rc1 to 0.26.0rc1; from 0.27.1rc1 the key is "fp8"
    fp8 = next(q for q in m.tuning_quant if q.scheme == "FP8")
    assert any(satisfies("0.21.0rc1", r) for r in fp8.releases) and any(satisfies("0.26.0rc1", r) for r in fp8.releases)
    assert not any(satisfies(v, r) for v in ("0.20.2rc1", "0.27.1rc1", "0.30.0rc2") for r in fp8.releases)
    assert "0.27.1rc1" in fp8.source
    # #18: the 8.2.RC1 pairing (25.2.0) is the deployer's; the MindIE page only lists it among five
    row = next(r for r in m.cann_driver if r.cann == "8.2.RC1")
    assert row.paired == "25.2.0" and "CANN_8.2.RC1.json" in row.source


def test_fifth_audit_e_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fifth sample (seed 29), facts #36 to #50: an error-code meaning and
    signature causes that said more than the header, code or threads they cite."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("hccl", "14")]  # hccl_types.h: 'roce transfer fail', nothing about a link already set up
    assert "after the link was set up" not in c.meaning_en and "链路建立后" not in c.meaning_zh
    assert "roce transfer fail" in c.meaning_en and "roce transfer fail" in c.meaning_zh
    assert "A peer usually exited" not in c.fix_en and "通常是对端" not in c.fix_zh
    s = by_id("python.mindspore_too_old_for_package")  # MindAct#1693 writes 'mindspore.comm func'; r2.3.0 API docs list comm_func
    assert "which MindSpore 2.3.0 lacks and 2.3.1 has" not in s.cause_en and "2.3.0 没有、2.3.1 有" not in s.cause_zh
    assert "worked after switching to 2.3.1" in s.cause_en and "mindnlp/accelerate/state.py" in s.source
    s = by_id("python.op_compiler_abi")  # te_fusion calls a Python function from C with y#; Python 3.10-3.12 need the macro
    assert "calls a C helper" not in s.cause_en and "C 辅助模块" not in s.cause_zh
    assert "3.10 to 3.12" in s.cause_en and "3.10 至 3.12" in s.cause_zh and "whatsnew/3.10" in s.source
    s = by_id("mooncake.rdma_local_protection")  # ibv_poll_cq(3): no valid MR for the operation; Mooncake: also GPUDirect reach
    assert "(or was freed)" not in s.cause_en and "或已被释放" not in s.cause_zh
    assert "IBV_WC_LOC_PROT_ERR" in s.cause_en and "GPUDirect" in s.cause_zh and "gdr_reachability.h" in s.source
    s = by_id("torch_npu.internal_format_off_benign")  # TensorFactories.cpp only switches to the base format
    assert "results are the same" not in s.cause_en and "计算结果不变" not in s.cause_zh
    assert "npu_sys_ctrl.cpp" in s.source
    c = codes[("cann_msg", "EL0007")]  # error_code.json: resources occupied, or no permission on this API; no device
    assert "API or device" not in c.meaning_en and "接口或设备" not in c.meaning_zh and "on this API" in c.meaning_en


def test_third_sweep_part_a2_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part A (the rest): causes (and fixes)
    that said more than, or other than, the code, guide or threads they cite."""
    s = by_id("vllm_ascend.quant_type_unsupported")  # utils.py / modelslim_config.py: no method; #6481 W4A16 linear
    assert "quantized for another release" not in s.cause_en and "是为其他版本" not in s.cause_zh
    assert "#6481" in s.cause_en and "#6481" in s.cause_zh and "quant_type=" in s.pattern
    s = by_id("vllm_ascend.unsupported_on_310p_prose")  # FAQ: A2 only to v0.9.1; 300I Duo experimental from v0.9.2rc1
    assert "for a limited list of models" not in s.cause_en and "仅限部分模型" not in s.cause_zh
    assert "v0.9.2rc1" in s.cause_en and "v0.9.2rc1" in s.cause_zh and "300V" in s.cause_en
    s = by_id("vllm_ascend.triton_ascend_arch_invalid")  # the code checks a list; nothing says npu-smi prints those names
    assert "npu-smi info" not in s.fix_en and "npu-smi info" not in s.fix_zh and "candidate" in s.fix_en
    s = by_id("vllm_ascend.triton_npu_subtarget")  # _get_kernel_target is imported by compiler.py but never called
    assert "kernel launcher builds only" not in s.cause_en and "内核启动器只为" not in s.cause_zh
    assert "not called" in s.cause_en and "没有被调用" in s.cause_zh and "#1002" in s.cause_en
    s = by_id("torch_npu.overwritten_by_vllm_ascend")  # requirements.txt pins; FAQ v0.11.0rc0..v0.11.0; no doc recommends .postN
    assert "the docs recommend" not in s.cause_en and "文档推荐" not in s.cause_zh
    assert "v0.8.4rc1" in s.cause_en and "#5351" in s.cause_zh
    s = by_id("torch_npu.api_missing")  # Ascend/pytorch#37: import torch_npu itself failed on 2.1.0.post4, fixed by post5
    assert "not a broken install" not in s.cause_en and "而不是安装损坏" not in s.cause_zh
    assert "2.1.0.post5" in s.cause_en and "2.1.0.post5" in s.cause_zh and "v2.0.1" in s.cause_en
    s = by_id("torch_npu.deepspeed_no_torch_npu")  # real_accelerator.py replaces any ImportError; no cause on record
    assert "CANN's libraries not on the path" not in s.cause_en and "CANN 库不在路径上" not in s.cause_zh
    # sixth sweep, part B: Python chains the ImportError into the traceback (no `from None`), so it is
    # not hidden; the cause still says that ImportError, not this message, tells the two apart
    assert "that ImportError says which" in s.cause_en and "由它说明是哪一种" in s.cause_zh
    s = by_id("torch_npu.flex_attention_unsupported_on_npu")  # v2.9.0/v2.10.0 torch_npu replace _validate_device
    assert "torch_npu provides no FlexAttention backend" not in s.cause_en and "没有提供 FlexAttention 后端" not in s.cause_zh
    assert "v2.10.0" in s.cause_en and "v2.10.0" in s.cause_zh and "transfer_to_npu" in s.cause_en
    s = by_id("cann.libatb_missing")  # every vllm-ascend install guide from v0.7.1rc1 has NNAL; #2727 is about the table
    assert "older install guides omitted it" not in s.cause_en and "旧版安装文档遗漏了它" not in s.cause_zh
    assert "#2727" in s.cause_en and "#2727" in s.cause_zh and "v0.7.1rc1" in s.cause_en
    s = by_id("cann.hccl_topo_missing_agents")  # cluster_info_nego.md: connected agents log the list the server sent
    assert not s.cause_en.startswith("The root rank lists") and "根 rank 列出了" not in s.cause_zh
    assert "agents that had connected" in s.cause_en and "EI0015" in s.cause_zh
    assert "Entry-HcclCommInitRootInfoInner" in s.fix_en and "Entry-HcclCommInitRootInfoInner" in s.fix_zh

def test_sixth_audit_g_facts_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sample (seed 30), facts #18 to #35: windows of tuning variables and advice that did
    not match the code at the tags concerned."""
    from doctor.versions import satisfies

    var = {v.name: v for v in matrix().tuning_vars}
    # #28: "VLLM_ASCEND_MLA" is what AscendMLABackend.get_name() returns (mla_v1.py), no release reads such a variable
    mla = var["VLLM_ASCEND_MLA"]
    assert mla.read_by == () and "not an environment variable" in mla.effect_en and "不是环境变量" in mla.effect_zh
    assert "attention/mla_v1.py" in mla.source
    # #29: v0.16.0rc1 and v0.17.0rc1 define VLLM_ASCEND_BALANCE_SCHEDULING in envs.py and read it nowhere
    bal = var["VLLM_ASCEND_BALANCE_SCHEDULING"]
    read = lambda v: any(satisfies(v, r) for r in bal.read_by)  # noqa: E731
    assert all(read(v) for v in ("0.13.0rc1", "0.15.0rc1", "0.18.0rc1", "0.26.0rc1"))
    assert not any(read(v) for v in ("0.12.0rc1", "0.16.0rc1", "0.17.0rc1", "0.27.1rc1"))
    assert "v0.16.0rc1/vllm_ascend/patch/platform/__init__.py" in bal.source
    # #35: at v0.12.0rc1 every DeepSeek tutorial exports OMP_NUM_THREADS=10; the first =1 is at v0.13.0rc1
    omp = next(a for a in matrix().tuning_advice if a.id == "OMP_NUM_THREADS.tutorials_1")
    assert not any(satisfies("0.12.0rc1", r) for r in omp.releases)
    assert all(any(satisfies(v, r) for r in omp.releases) for v in ("0.13.0rc1", "0.25.1rc1", "0.30.0rc2"))
    assert "v0.13.0rc1/docs/source/tutorials/DeepSeek-R1.md" in omp.source

def test_sixth_audit_h_facts_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sample (seed 30), facts #36 to #50: an error-code meaning and
    signature causes that said more than the catalogue, code or threads they cite (and EJ0004's meaning)."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("cann_msg", "EZ3002")]  # error_code.json: specification mismatch; VA#1383: op type not found in the op store
    assert "has this operator type" not in c.meaning_en and "算子信息库中有该算子类型" not in c.meaning_zh
    assert "not found in that op store" in c.meaning_en and "issues/1383" in c.source
    c = codes[("cann_msg", "EJ0004")]  # error_code.json: 'Check ip fail. Reason: %s', cause N/A
    assert "typically HCCL_IF_IP" not in c.meaning_en and "通常是 HCCL_IF_IP" not in c.meaning_zh and "N/A" in c.meaning_en
    s = by_id("cann.hccl_sdma_task")  # ffts_task.cc prints it for any FFTS+ SDMA context; HCCL guide: memory, HCCS, ECC
    assert "inside a collective failed" not in s.cause_en and "集合通信中的 SDMA 拷贝在设备上失败" not in s.cause_zh
    assert "page-table" in s.cause_en and "HCCS/RoCE" not in s.fix_en and "ffts_task.cc" in s.source
    s = by_id("cann.llamacpp_pinned_fallback")  # ggml-cann.cpp: falls back to a CPU buffer; nothing about speed
    assert "slower host-to-NPU copies" not in s.cause_en and "拷贝较慢" not in s.cause_zh
    assert "aclGetRecentErrMsg" in s.cause_en
    s = by_id("mooncake.rpc_port_in_use")  # troubleshooting.md: 'usually'; transfer_engine_impl.cpp: random port unless legacy/P2P
    assert s.cause_en != "Mooncake's rpc_port is already used by another process."
    assert "usually" in s.cause_en and "MC_LEGACY_RPC_PORT_BINDING" in s.cause_zh and "transfer_engine_impl.cpp" in s.source
    s = by_id("vllm_ascend.triton_collision")  # Dockerfile: triton from vllm on x86; PR #7790: shared directory; VA#12954: 310P
    assert "xgrammar" not in s.cause_en and "xgrammar" not in s.cause_zh
    assert "pull/7790" in s.source and "12954" in s.cause_en and "pip uninstall -y triton triton-ascend" in s.fix_en
    s = by_id("cann.ge_initialize_failed")  # VA#564's stored post shows a 910B2 run, not an image
    assert "vllm-ascend images on 910B2" not in s.cause_en and "#564, a run on 910B2" in s.cause_en
    s = by_id("cann.ascendc_cmake_mixed_cann")  # ASCConfig.cmake includes from $ENV{ASCEND_HOME_PATH}; no ASCEND_TOOLKIT_HOME
    assert "ASCEND_TOOLKIT_HOME" not in s.cause_en and "ASCEND_TOOLKIT_HOME" not in s.cause_zh
    assert "ASCEND_HOME_PATH" in s.cause_en and "ASCConfig.cmake" in s.source

def test_third_sweep_part_e_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part E: causes (and fixes) that said
    more than, or other than, the threads, code, wheels or vendor tables they cite."""
    s = by_id("vllm.model_type_mismatch")  # configuration_utils.py: a warning, loading goes on; no source says harmless
    assert "Often harmless" not in s.cause_en and "通常无害" not in s.cause_zh and "first suspect" not in s.cause_en
    assert "loading goes on" in s.cause_en and "加载会继续" in s.cause_zh and "configuration_utils.py" in s.source
    s = by_id("torch.plus_cpu_index")  # #6134: the install stops; the 2.5.1 and 2.8.0 x86_64 wheels need torch==X+cpu
    assert "or installs the CUDA build of torch instead" not in s.cause_en and "或改装了 CUDA 版 torch" not in s.cause_zh
    assert "2.8.0" in s.cause_en and "#6134" in s.cause_zh and "torch==2.8.0+cpu" in s.source
    s = by_id("torch.torchvision_mismatch")  # PR #479 / #477: one case, no "often", no CUDA-build case on record
    assert "often" not in s.cause_en and "常见于" not in s.cause_zh and "#477" in s.cause_en and "#477" in s.cause_zh
    s = by_id("torch.cuda_only_api")  # sglang PR #29100: the name exists from torch 2.8; torch 2.7 lacks it
    assert "CUDA-only torch API on an NPU host" not in s.cause_en and "只有 CUDA 才有的 torch 接口" not in s.cause_zh
    assert "torch 2.8" in s.cause_en and "torch 2.8" in s.cause_zh and "pull/29100" in s.source and "#29100" in s.fix_en
    for sid in ("torch.install_order_prose", "torch.install_order_prose_en"):  # vllm-windows #18: the wheel brought an older torch
        s = by_id(sid)
        assert "(a newer one)" not in s.cause_en and "（更新的）" not in s.cause_zh
        assert "#1188" in s.cause_en and "#5710" in s.cause_zh and "or build vLLM with VLLM_TARGET_DEVICE=empty" not in s.fix_en
    assert "older one (2.6 over 2.7.1)" in by_id("torch.install_order_prose").cause_en
    assert "issues/5710" in by_id("torch.install_order_prose_en").source
    s = by_id("python.torch_no_wheel")  # pytorch #112478: one case, Python 3.12 before its wheels
    assert "has no torch wheel at all" not in s.cause_en and "完全没有" not in s.cause_zh
    assert "#112478" in s.cause_en and "#112478" in s.cause_zh
    s = by_id("python.accelerate_too_old")  # peft PR #892 / #860; nothing about transformers' Trainer
    assert "Trainer" not in s.cause_en and "Trainer" not in s.cause_zh and "is older than the package" not in s.cause_en
    assert "0.20.3" in s.cause_en and "#860" in s.cause_zh
    assert "pull/37785" in by_id("torch.load_needs_torch26").source
    s = by_id("python.transformers_unrecognized_config")  # auto_factory.py: the config class was resolved before the check
    assert "its config is unknown to it" not in s.cause_en and "不认识其配置" not in s.cause_zh
    assert "was recognized" in s.cause_en and "可识别" in s.cause_zh
    s = by_id("env.sglang_npu_ops_unloaded")  # extra_ops_loader.py: the LD_LIBRARY_PATH text is advice on any load exception
    assert "loading it failed because" not in s.cause_en and "或加载失败，因为" not in s.cause_zh
    assert "chained" in s.cause_en and "链接的异常" in s.cause_zh and "chained exception" in s.fix_en
    assert "issues/754" in by_id("torch.vllm_requires_torch_prose").source
    s = by_id("env.paddle_legacy_dygraph_benign")  # Paddle #47007: one reply, "一般不会影响"
    assert "maintainers" not in s.cause_en and "维护者" not in s.cause_zh
    assert "generally" in s.cause_en and "一般" in s.cause_zh
    s = by_id("python.verl_transformers_npu_pin")  # verl __init__.py at every tag: a fixed floor, no reason given
    assert "the release it patches for" not in s.cause_en and "补丁所需的版本" not in s.cause_zh
    assert "0.7.0 no longer checks" in s.cause_en and "v0.7.0/verl/__init__.py" in s.source
    s = by_id("vllm.cuda_only_api_c_op")  # vllm-ascend PR #2560: one op on record
    assert "often because" not in s.cause_en and "常见原因" not in s.cause_zh
    assert "#2560" in s.cause_en and "#2560" in s.cause_zh and "pull/2560" in s.source
    s = by_id("cann.python_deps_missing")  # the guide's running-dependencies table, 8.0.RC2 / 8.5.0 / 9.0.0
    for name in ("cython", "pyyaml", "attrs", "absl-py", "protobuf"):
        assert name in s.fix_en and name in s.fix_zh
    assert "protobuf 3.20.x" in s.fix_en and "<=1.24" in s.fix_en and "'numpy<2'" not in s.fix_en
    assert "cloudpickle, tornado and ml_dtypes are not in that table" in s.cause_en
    assert "canncommercial/850/softwareinst/instg/instg_0045.html" in s.source

def test_third_sweep_part_d_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, third sweep of signature causes, part D: causes (and fixes) that said
    more than (or other than) the thread, code or guide they cite."""
    s = by_id("cann.hccl_bind_ip_port")  # the four threads are processes sharing NPUs; none shows a run that has not exited
    assert "or a previous run that has not exited" not in s.cause_en and "或上一次运行尚未退出" not in s.cause_zh
    assert "no source shows" in s.cause_en and "vllm-ascend#405" in s.cause_zh and "issues/405" in s.source
    s = by_id("cann.op_needs_newer_cann")  # check_aclnn_kernel_available: a symbol lookup, not a version comparison
    assert "this CANN is older than" not in s.cause_en and "该 CANN 比调用此算子" not in s.cause_zh
    assert "check_aclnn_kernel_available" in s.cause_en and "符号查找" in s.cause_zh and "op_api_common.cpp" in s.source
    s = by_id("cann.mindie_env_unset")  # MindIE's FAQ: libboost_thread, source MindIE's set_env.sh; nothing about CANN or ATB
    assert "(and CANN's and ATB's before it)" not in s.cause_en and "以及在它之前的 CANN、ATB" not in s.cause_zh
    assert "libboost_thread.so.1.82.0" in s.cause_en and "libboost_thread.so.1.82.0" in s.cause_zh
    s = by_id("cann.atb_hccl_comm_failed")  # hccl_runner.cpp: ATB logs the failed step; a null comm from the caller has no reason
    assert "because creating it had already failed" not in s.cause_en and "因通信域此前已创建失败" not in s.cause_zh
    assert "10-minute barrier" in s.cause_en and "10 分钟屏障" in s.cause_zh
    s = by_id("cann.npu_task_aborted")  # NPUException.cpp / NPUQueue.cpp: three runtime codes; stop_device sets FORCE STOP
    assert "what a fault-tolerance controller does" not in s.cause_en and "容错控制器在其他 rank 故障后" not in s.cause_zh
    assert "ACL_ERROR_RT_DEVICE_TASK_ABORT" in s.cause_en and "stop_device" in s.cause_zh and "_recovery.py" in s.source
    s = by_id("cann.jit_compile_off_no_binary")  # PaddleCustomDevice#1799 says only: prior_box, 500002, force jit
    assert "has no binary kernel for these inputs" not in s.cause_en and "没有二进制实现" not in s.cause_zh
    assert "prior_box" in s.cause_en and "#1799" in s.cause_zh
    s = by_id("cann.bishengir_too_old_option")  # tilelang-mlir-ascend#116: one case (8.3.RC1.alpha002 rejects, 8.5.2 passes)
    assert "the front end was written for a newer CANN than the one on this host" not in s.cause_en
    assert "前端是为比本机更新的 CANN 编写的" not in s.cause_zh
    assert "8.3.RC1.alpha002" in s.cause_en and "8.5.2" in s.cause_zh and "sglang/issues/14783" in s.source
    s = by_id("cann.bisheng_simd_vf_compiler_changed")  # #171: the one-click build compiled the 950 code; no "unsupported target"
    assert "a chip target the code does not support" not in s.cause_en and "代码不支持的芯片目标" not in s.cause_zh
    assert "Ascend 950" in s.cause_en and "#245" in s.cause_zh and "pull/197" in s.source
    s = by_id("cann.ascendc_kernel_operator_header")  # simpler#2333: tikcpp/tikcfw only; no asc/include, no missing toolkit
    assert "asc/include" not in s.cause_en and "asc/include" not in s.cause_zh and "find_package(ASC)" not in s.fix_en
    assert "simpler#2333" in s.cause_en and "simpler#2333" in s.cause_zh
    s = by_id("mooncake.adxl_ipv6")  # v0.13.0: the address is vLLM's get_ip() (VLLM_HOST_IP), not local_hostname
    assert "local_hostname" not in s.fix_en and "local_hostname" not in s.fix_zh
    assert "VLLM_HOST_IP" in s.cause_en and "VLLM_HOST_IP" in s.fix_zh and "network_utils.py" in s.source
    s = by_id("mooncake.ascend_te_init")  # sglang#22840 is one case; #10748 and Ascend/sglang#783 are others
    assert "usual culprit" not in s.cause_en and "最常见的原因" not in s.cause_zh
    assert "#10748" in s.cause_en and "ra_get_interface_version" in s.cause_zh and "Ascend/sglang/issues/783" in s.source
    s = by_id("mooncake.local_segment_missing")  # the dump line names a peer's segment and is seen in other setups
    assert "when a transfer starts" not in s.cause_en and "传输开始时" not in s.cause_zh
    assert "Mooncake#2177" in s.cause_en and "#397" in s.cause_zh and "transfer_metadata.cpp" in s.source
    s = by_id("mooncake.hixl_channel_segment")  # #3267 is the one 503900 case; #3791 is the maintainers' explanation
    assert "the usual cause" not in s.cause_en and "常见原因" not in s.cause_zh
    assert "HDK 25.2.3" in s.cause_en and "HDK 25.2.3" in s.cause_zh
    s = by_id("devices.dcmi_init_8020")  # the threads: the first container holds the card; #46 unresolved; no all-or-nothing /dev
    assert "all-or-nothing" not in s.cause_en and "全有或全无" not in s.cause_zh
    assert "first container" in s.cause_en and "source ~/.bashrc" in s.cause_zh
    s = by_id("devices.unsupported_soc")  # NpuVariables.cpp: torch_npu's SoC table, per release; nothing about op packages
    assert "CANN op packages" not in s.cause_en and "CANN 算子包" not in s.cause_zh and "Atlas A2/A3" not in s.cause_en
    assert "SetSocVersion" in s.cause_en and "v6.0.RC1.alpha001" in s.cause_zh


def test_master_unreachable_grpc_text_needs_mooncake_context():
    """`failed to connect to all addresses` is any gRPC client's text: mooncake.master_unreachable
    takes it only with Mooncake on the line or above it (docs/facts-audit.md, fifth sample, #49)."""
    other = ("INFO: starting feature-store client\n"
             "E0803 08:24:20.022236  8581 grpc_client.cc:57] Connect to feature-store:9000 failed: "
             "14 UNAVAILABLE: failed to connect to all addresses")
    assert "mooncake.master_unreachable" not in explained(other)
    mooncake = ("I0803 08:24:19.900000  8581 client.cpp:20] Mooncake client connecting to master 10.0.0.2:50051\n"
                "E0803 08:24:20.022236  8581 rpc.cc:57] 14 UNAVAILABLE: failed to connect to all addresses")
    assert "mooncake.master_unreachable" in explained(mooncake)
    assert "mooncake.master_unreachable" in explained(by_id("mooncake.master_unreachable").example)

def test_seventh_audit_o_facts_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sample (seed 31), facts #27 to #50: an error-code meaning and signature causes
    that said more than the code, catalogue or threads they rest on (and E30006's fix)."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("pta", "ERR00008")]  # NPUException.cpp: 'resource not found'; AclInterface.cpp: 'Failed to find function'
    assert "a file or an environment setting" not in c.meaning_en and "文件或环境配置" not in c.meaning_zh
    assert "Failed to find function" in c.meaning_en and "Failed to find function" in c.fix_zh
    assert "Usually the CANN environment was not sourced" not in c.fix_en and "AclInterface.cpp" in c.source
    c = codes[("cann_msg", "E30006")]  # error_code.json: a tampered OPP on the host, or an ECC error on the device
    assert "ECC" in c.fix_en and "ECC" in c.fix_zh and "package_verify.cpp" in c.source
    s = by_id("cann.init_env_failed")  # op_compile_processor.cpp: any failed init; #7: deps; a DeepSpeed note: a daemon process
    assert "its Python dependencies are missing in the interpreter" not in s.cause_en and "daemonic" in s.cause_en
    assert "守护进程" in s.cause_zh and "numpy<2" not in s.fix_en and "numpy<2" not in s.fix_zh and "wangshuai09" in s.source
    s = by_id("mooncake.unsupported_transport")  # multi_transport.cpp: 'ascend' from USE_ASCEND_DIRECT, USE_ASCEND or _HETEROGENEOUS
    assert "USE_ASCEND_HETEROGENEOUS" in s.cause_en and "USE_ASCEND_HETEROGENEOUS" in s.cause_zh
    assert "_build-wheel.yaml" in s.source
    s = by_id("mooncake.ascend_register_mem")  # VA#8420: a maintainer asks about fabric memory; no source for a segment limit
    assert "larger than the device can register" not in s.cause_en and "段大小超出" not in s.cause_zh
    assert "global_segment_size" not in s.fix_en and "207000" in s.cause_en and "ascend_direct_transport.md" in s.source
    s = by_id("vllm_ascend.optional_package_missing")  # model_runner_v1.py: rebuild msprobe; eplb_communicator.py: libcann_hixl.so
    assert "libcann_hixl.so" in s.cause_en and "libcann_hixl.so" in s.cause_zh and "aclgraph_dump" in s.fix_en
    assert "@yuanrong-datasystem/transfer_engine" in s.cause_en and "rfork/transfer_backend.py" in s.source
    s = by_id("devices.memory_held_at_startup")  # worker.py: free < total x utilization; VA#8621: instances side by side
    assert "often a previous server" not in s.cause_en and "常为之前的服务" not in s.cause_zh
    assert "#8621" in s.cause_en and "#8621" in s.cause_zh and "worker/worker.py" in s.source
    s = by_id("env.libhccl_missing")  # torch_npu FAQ; VA#262 (image v0.7.1rc1); no source for an overridden entrypoint
    assert "entrypoint" not in s.cause_en and "entrypoint" not in s.cause_zh and "#262" in s.cause_en
    s = by_id("torch_npu.built_without_torchair")  # dynamo/__init__.py: no torch_npu/dynamo/torchair -> eager 'npu' backend
    assert "torchair graph mode is unavailable" not in s.cause_en and "torchair 图模式不可用" not in s.cause_zh
    assert "torch_npu/dynamo/torchair" in s.cause_en and "(they include torchair)" not in s.fix_en and "dynamo/__init__.py" in s.source
    s = by_id("torch_npu.mindspeed_moe_permute_fusion_off")  # feature doc: faster and less memory, can be slower in some configs
    assert "slower MoE token permutation" not in s.cause_en and "重排较慢" not in s.cause_zh
    assert "moe-token-permute-and-unpermute.md" in s.source


def test_the_bisheng_fix_does_not_send_users_to_a_variable_the_code_reads_otherwise():
    """triton-ascend's utils.py (release/3.2.1, a84b1eb): the "Couldn't find executable" error is
    raised only while TRITON_NPU_COMPILER_PATH is unset, and under it the code runs npuc,
    bishengir-opt and ccec: pointing it at CANN's compiler directory does not help."""
    s = by_id("vllm_ascend.triton_npu_compiler_missing")
    assert "point TRITON_NPU_COMPILER_PATH at" not in s.fix_en and "指向编译器所在目录" not in s.fix_zh
    assert "npuc" in s.fix_en and "ccec" in s.fix_zh and "is not set" in s.cause_en and "未设置" in s.cause_zh


def test_eighth_audit_r_facts_say_what_their_sources_say():
    """docs/facts-audit.md, eighth sample (seed 32), facts #27 to #50: a quantization window and signature
    causes that said more (or less) than the code, the catalogue or the threads they cite."""
    from doctor.versions import satisfies

    # #34: C8 leaves the scheme table at v0.13.0rc1, but modelslim_config.py reads kv_cache_type "C8" again at
    # v0.18.0 and from v0.19.1rc1 (methods/kv_c8.py AscendC8KVCacheAttentionMethod); v0.18.0rc1's kv_c8.py is FAKQuant only
    c8 = next(q for q in matrix().tuning_quant if q.scheme == "C8")
    ok = lambda v: any(satisfies(v, r) for r in c8.releases)  # noqa: E731
    assert all(ok(v) for v in ("0.9.2rc1", "0.12.0rc1", "0.18.0", "0.19.1rc1", "0.25.1rc1", "0.30.0rc2"))
    assert not any(ok(v) for v in ("0.9.1", "0.13.0rc1", "0.17.0rc1", "0.18.0rc1"))
    assert "v0.19.1rc1/vllm_ascend/quantization/modelslim_config.py" in c8.source
    s = by_id("mooncake.jemalloc_missing")  # MC#1338: PR #1114 fixes it, set the device first; VA#5609: jemalloc hides it
    assert "corrupts the glibc heap unless jemalloc is preloaded" not in s.cause_en and "在未预加载 jemalloc 时会破坏" not in s.cause_zh
    assert "#1114" in s.cause_en and "#1114" in s.cause_zh and "torch.npu.set_device" in s.fix_en and "Mooncake/issues/1338" in s.source
    s = by_id("cann.hccl_links_establish_failed")  # HCCL's code prints it for any failed wait; ret 9 is the timeout
    assert "gave up waiting" not in s.cause_en and "which peer timed out" not in s.cause_en and "哪个对端超时" not in s.cause_zh
    assert "HCCL_E_TIMEOUT" in s.cause_en and "其他错误码" in s.cause_zh and "hccl_types.h" in s.source
    s = by_id("env.hf_gated_repo")  # vllm#9255 is one case (vLLM 0.6.2), not a rule for every vLLM
    assert "it still asks the Hub by id" not in s.cause_en and "按 id 指定时仍会访问 Hub" not in s.cause_zh
    assert "#9255" in s.cause_en and "0.6.2" in s.cause_zh
    s = by_id("torch_npu.npu_op_missing_prose")  # v0.7.1rc1 installation.md: the dev build is a tarball on Huawei Cloud OBS
    assert "Ascend pip mirror" not in s.fix_en and "昇腾 pip 镜像" not in s.fix_zh and "2.5.1.dev20250218" in s.fix_zh
    assert "v0.7.1rc1/docs/source/installation.md" in s.source


def test_ninth_audit_w_facts_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sample (seed 33), facts #27 to #50: signature causes that said more than the
    code or the threads they cite, and (found on the way) an advice window, a catalogue fix and a source."""
    from doctor.versions import satisfies

    # #35 (on the way): no tutorial sets TASK_QUEUE_ENABLE=1 at v0.9.2rc1 to v0.11.0; v0.25.1rc1's DeepSeek-R1.md names none
    a = next(x for x in matrix().tuning_advice if x.id == "TASK_QUEUE_ENABLE.tutorials")
    ok = lambda v: any(satisfies(v, r) for r in a.releases)  # noqa: E731
    assert all(ok(v) for v in ("0.9.1rc3", "0.9.1", "0.12.0rc1", "0.25.1rc1", "0.30.0rc2"))
    assert not any(ok(v) for v in ("0.9.1rc2", "0.9.2rc1", "0.10.0rc1", "0.11.0"))
    assert "DeepSeek-R1.md" not in a.source and "TASK_QUEUE_ENABLE.md" in a.source
    # #36 (on the way): the catalogue says ask for support or remove the operator, not "a newer CANN has it"
    c = next(x for x in matrix().codes if x.code == "EZ0501")
    assert "a newer toolkit" not in c.fix_en and "更新的 toolkit" not in c.fix_zh and "gitee.com/ascend" in c.fix_en
    # #42: NOSET leaves the inherited ASCEND_RT_VISIBLE_DEVICES; every NPU only when none was set
    s = by_id("devices.ray_visible_devices")
    assert "keeps the value it inherited" in s.cause_en and "沿用其继承的值" in s.cause_zh
    # #44: the runtime reads /etc/ascend_install.info, then <path>/driver/version.info; a non-empty one is a form not parsed
    s = by_id("driver.version_unreadable")
    assert "a driver this torch_npu does not support" not in s.cause_en and "不支持的驱动版本" not in s.cause_zh
    assert "/etc/ascend_install.info" in s.cause_en and "/etc/ascend_install.info" in s.cause_zh
    assert "/etc/ascend_install.info" in s.fix_en and "aclrt_impl/acl.cpp" in s.source
    # #46: an integer device index; the cases are 2.1.0 and 2.2.0 (2.4.0 trained on card 0), the fix named is 2.5.1
    s = by_id("torch_npu.cuda_path_on_npu")
    assert "older than 2.5.1" not in s.cause_en and "低于 2.5.1" not in s.cause_zh
    assert "`.to(0)`" in s.cause_en and "2.4.0" in s.cause_zh and "transformers/issues/37992" in s.source
    # #47: VLLM_ASCEND_ENABLE_BATCH_MEMCPY is in envs.py but read only by setup.py at build time
    s = by_id("vllm.unknown_env_benign")
    assert "VLLM_ASCEND_ENABLE_BATCH_MEMCPY" in s.cause_en and "VLLM_ASCEND_ENABLE_BATCH_MEMCPY" in s.cause_zh
    assert "v0.25.1rc1/setup.py" in s.source
    # #50: v0.7.1rc1's quantizer.py catches every Exception, the later ones ImportError
    s = by_id("vllm_ascend.no_quantizer")
    assert "`except Exception`" in s.cause_en and "`except Exception`" in s.cause_zh and "v0.7.1rc1/vllm_ascend/quantization" in s.source


def test_fourth_sweep_part_g_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part G: causes (and fixes) that said
    more than (or other than) the thread, guide or code they cite."""
    s = by_id("vllm.api_mismatch_wrapped")  # VA PR #10595: lm-eval 0.4.11 and vLLM v0.22.1's move to vllm.renderers.hf
    assert "split vllm.utils" not in s.cause_en and "拆分为子模块" not in s.cause_zh
    assert "lm-eval 0.4.11" in s.cause_en and "vllm.renderers.hf" in s.cause_zh and "lm-eval 0.4.12" in s.fix_en
    s = by_id("cann.opp_version_mix")  # Ascend/samples #21: open, the 7.0.RC1 toolkit's own OPP; no version mix shown
    assert "come from different CANN versions" not in s.cause_en and "来自不同的 CANN 版本：OPP" not in s.cause_zh
    assert "Ascend/samples #21" in s.cause_en and "LD_LIBRARY_PATH" in s.cause_zh and "LD_LIBRARY_PATH" in s.fix_en
    s = by_id("cann.hccl_roce_cqe_heartbeat")  # HCCL fault guide: no ack in time; peer exit; HCCL_RDMA_TIMEOUT too small
    assert "packet loss or a flapping link" not in s.cause_en and "丢包或链路抖动" not in s.cause_zh
    assert "HCCL_RDMA_RETRY_CNT" in s.cause_en and "对端进程" in s.cause_zh and "-link_stat -g" in s.fix_en
    s = by_id("env.hf_unreachable")  # vllm#1432: name resolution on an offline cluster; no proxy case on record
    assert "blocked proxy" not in s.cause_en and "代理被阻断" not in s.cause_zh
    assert "vllm#1432" in s.cause_en and "name resolution" in s.cause_zh and "issues/8458" in s.source
    s = by_id("env.plugin_wrong_vllm_branch")  # VA#14289 is open: the branch is the code's reading, not the thread's
    assert not s.cause_en.startswith("Plugin registration followed") and "常见于" not in s.cause_zh
    assert "vllm_version_is" in s.cause_en and "#14289" in s.cause_zh and "412cda26" in s.source
    s = by_id("torch_npu.aclrt_peek_symbol")  # dlinfer #183: the case on record; vllm_ascend_C is in no source
    assert "vllm_ascend_C" not in s.cause_en and "vllm_ascend_C" not in s.cause_zh
    assert "dlinfer #183" in s.cause_en and "2.3.1.post2" in s.cause_zh
    s = by_id("mooncake.open_device_gid")  # rdma_context.cpp 0.3.8.post1: the warning before names the check; #1384
    assert "the index has no address" not in s.cause_en and "该端口在此 index 上没有地址" not in s.cause_zh
    assert "has no associated network device" in s.cause_en and "#1384" in s.cause_zh and "5738f807" in s.source
    s = by_id("devices.npu_smi_missing")  # cpu_binding.py: chip_logic_id is raised after npu-smi ran, not when it is absent
    assert "chip_logic_id" in s.cause_en and "Chip Logic ID" in s.cause_zh and "cpu_binding.py" in s.source
    assert "utils.py" not in s.source and "cpu_binding.py" in s.example_source
    s = by_id("devices.visible_devices_range")  # gpustack #3352 is a VM: the container numbering is in no source
    assert "inside a container" not in s.cause_en and "容器内编号" not in s.cause_zh
    assert "gpustack #3352" in s.cause_en and "[0-2)" in s.cause_zh
    s = by_id("devices.memory_apply_failed")  # VA#5557 is open with no cause: neither candidate is established
    assert "the slice is smaller than the model needs" not in s.cause_en and "切片小于模型所需" not in s.cause_zh
    assert "#5557" in s.cause_en and "create-vnpu" in s.cause_zh
    s = by_id("mooncake.handshake_failed")  # troubleshooting.md: ib_send_bw, GID index, MTU; nothing about rpc ports
    assert "rpc ports" not in s.fix_en and "rpc 端口" not in s.fix_zh
    assert "ib_send_bw" in s.fix_en and "MC_MTU" in s.fix_zh and "Cannot make connection for endpoint" in s.cause_en
    s = by_id("env.sgl_kernel_cuda_only")  # sglang PRs #8700, #18173: no official-image or sgl_kernel_npu claim
    assert "official NPU image" not in s.cause_en and "官方 NPU 镜像" not in s.cause_zh
    assert "#18173" in s.cause_en and "#8700" in s.cause_zh
    s = by_id("devices.dcmi_init_failed")  # VA#2698 is a -8005 case; the row's three candidates are in no source read
    assert "driver not loaded" not in s.cause_en and "驱动未加载" not in s.cause_zh
    assert "#2698" in s.cause_en and "--privileged" in s.cause_zh
    s = by_id("torch_npu.llamafactory_npu_kernel")  # registry.py skips NPU kernels off the NPU: the config path says "not found"
    assert "was requested explicitly" not in s.cause_en and "remove the NPU kernels from the kernel config" not in s.fix_en
    assert "Kernel ... not found" in s.cause_en and "Kernel ... not found" in s.cause_zh and "registry.py" in s.source
    s = by_id("mooncake.ascend_listen_port_exhausted")  # utils.cpp: a try also fails on socket()/setsockopt; holders unnamed
    assert "another transfer engine on the same NPU" not in s.cause_en and "同一 NPU 上的另一个传输引擎" not in s.cause_zh
    assert "set its timeout" in s.cause_en and "消息没有说明" in s.cause_zh
    s = by_id("mooncake.ascend_transport_so")  # VA#6949 and VA PR #7242 (CI: an eager import), ldconfig's man page
    assert not s.cause_en.startswith("Mooncake's Ascend transport library was installed") and "#7242" in s.cause_en
    assert "#6949" in s.cause_zh and "ldconfig.8" in s.source and "lib*.so*" in s.fix_en
    s = by_id("vllm.engine_died")  # VA#5699 and vllm#27549 are open with no cause found
    assert "often by the host OOM killer" not in s.cause_en and "常见为主机 OOM killer" not in s.cause_zh
    assert "#5699" in s.cause_en and "#27549" in s.cause_zh
    s = by_id("vllm_ascend.numpy2_removed_attr")  # requirements.txt: numpy<2.0.0 to v0.19.1rc1, plain numpy from v0.20.2rc1
    assert "the vllm-ascend stack need numpy < 2" not in s.cause_en and "vllm-ascend 软件栈需要" not in s.cause_zh
    assert "v0.20.2rc1" in s.cause_en and "v0.20.2rc1" in s.cause_zh and "1.26" in s.cause_en
    s = by_id("vllm_ascend.triton_pointer_not_device")  # getPointer accepts location types 1 and 4 (acl_rt.h)
    assert "unless it is NPU device memory" not in s.cause_en and "不是 NPU 设备内存就拒绝" not in s.cause_zh
    assert "ACL_MEM_LOCATION_TYPE_HOST_NUMA" in s.cause_en and "ACL_MEM_LOCATION_TYPE_HOST_NUMA" in s.cause_zh
    assert "acl_rt.h" in s.source

def test_fourth_sweep_part_i_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part I: causes (and fixes) that said
    more than (or other than) the thread, code or registry listing they cite."""
    s = by_id("vllm_ascend.mla_rope_cos_cached")  # mla_v1.py reads rotary_emb.cos_cached up to v0.13.0rc1 only; PR #5516
    assert "v0.11.0rc1 to main" not in s.cause_en and "v0.11.0rc1 至 main" not in s.cause_zh
    assert "v0.13.0rc1" in s.cause_en and "#5516" in s.cause_en and "#5516" in s.cause_zh and "pull/5516" in s.source
    s = by_id("env.dist_connect_timeout")  # socket.cpp retries on refused/reset/timed out: nobody listening, or unreachable
    assert not s.cause_en.startswith("A worker could not connect") and "不可达（如容器网桥" not in s.cause_zh
    assert "listen" in s.cause_en and "监听" in s.cause_zh and "c10d/socket.cpp" in s.source
    s = by_id("mooncake.rdma_local_length")  # #3299 finds no cause for the length error; PR #3387 traces the loop
    assert "does not fit the local buffer" not in s.cause_en and "超出本地缓冲区" not in s.cause_zh
    assert "#3387" in s.cause_en and "#3387" in s.cause_zh and "restart the affected client" not in s.fix_en
    s = by_id("cann.hccl_comm_init_failed")  # gpustack#2021 names no cause; the reply was to run CANN's HCCL test
    assert "say why" not in s.cause_en and "说明了原因" not in s.cause_zh
    assert "gpustack#2021" in s.cause_en and "hccl_test" in s.fix_en and "hccl_test" in s.fix_zh
    s = by_id("python.vllm_ascend_no_distribution")  # pip lists every release: empty only below 3.9 (or no wheel fits)
    assert "on a Python below that bound" not in s.cause_en and "--only-binary installs outside 0.9.x" not in s.cause_en
    assert "below 3.9" in s.cause_en and "低于 3.9" in s.cause_zh and "0.7.1rc1 to 0.11.0" in s.cause_en
    s = by_id("vllm.engine_dead")  # the EngineCore's traceback can come after the line (gpustack#5594)
    assert "is in the stack trace above" not in s.cause_en and "在上方的堆栈中" not in s.cause_zh
    assert "gpustack#5594" in s.cause_en and "gpustack#5594" in s.cause_zh and "v1/engine/exceptions.py" in s.source
    s = by_id("cann.hccl_ranktable_device_ip")  # HCCP compares the table's IP with the port's; which side is off is not said
    assert "was changed after the table was made" not in s.cause_en and "被修改过" not in s.cause_zh
    assert "EI0014" in s.cause_en and "EI0014" in s.cause_zh
    s = by_id("vllm.no_dist_metadata")  # importlib.metadata.version("vllm"); an out-of-tree plugin is chosen first
    assert "metadata was removed" not in s.cause_en and "元数据被删除" not in s.cause_zh
    assert "PackageNotFoundError" in s.cause_en and "PackageNotFoundError" in s.cause_zh and "platforms/__init__.py" in s.source
    s = by_id("devices.llamacpp_npu_alloc_failed")  # the code prints CANN's message; it names no reason itself
    assert "the NPU has not enough free memory for what was offloaded to it, or" not in s.cause_en
    assert "aclGetRecentErrMsg" in s.cause_en and "aclGetRecentErrMsg" in s.cause_zh and "common.h" in s.source
    s = by_id("python.mindspeed_fp8_unsupported")  # Megatron's --fp8-format sets args.fp8; there is no --fp8 flag there
    assert "--fp8-format / --fp8" not in s.cause_en and "--fp8-format / --fp8" not in s.cause_zh
    assert "args.fp8" in s.cause_en and "args.fp8" in s.cause_zh and "master" in s.cause_en
    s = by_id("env.dev_shm_too_small")  # store_runner.cc: a warning, the store shrunk to 90% of the free /dev/shm
    assert "shared-memory broadcast" not in s.cause_en and "共享内存广播" not in s.cause_zh and "64 MiB" not in s.cause_en
    assert "90%" in s.cause_en and "90%" in s.cause_zh and "store_runner.cc" in s.source
    s = by_id("devices.llamacpp_soc_autodetect_failed")  # the awk of line 7; the code names no reason
    assert "in a docker build" not in s.cause_en and "docker 构建" not in s.cause_zh
    assert "NR==7" in s.cause_en and "NR==7" in s.cause_zh
    s = by_id("mooncake.not_installed")  # ImportError of mooncake.engine / mooncake.store, chained
    assert not s.cause_en.startswith("The Mooncake connector is configured but")
    assert "mooncake.store" in s.cause_en and "mooncake.store" in s.cause_zh and "mooncake_backend.py" in s.source
    s = by_id("vllm_ascend.triton_collision_prose")  # PR #7497 and triton-ascend #277; nothing about "last wins"
    assert "installed last wins" not in s.cause_en and "后装的覆盖前者" not in s.cause_zh
    assert "#7497" in s.cause_en and "#277" in s.cause_zh and "triton-ascend/issues/277" in s.source
    s = by_id("vllm_ascend.triton_adapter_lowering_failed")  # ttadapter follows ttir; the code gives no reason
    assert "own first stage" not in s.cause_en and "第一阶段" not in s.cause_zh and "for a newer triton-ascend" not in s.cause_en
    assert "'ttir'" in s.cause_en and "'ttir'" in s.cause_zh and "backend/compiler.py" in s.source
    s = by_id("env.llamacpp_cann_install_dir")  # the CMake reads two variables; set_var.sh is not said to be an older name
    assert "i.e. CANN's set_env.sh was not sourced" not in s.cause_en and "older name" not in s.fix_en
    assert "ASCEND_TOOLKIT_HOME" in s.cause_en and "echo $ASCEND_TOOLKIT_HOME" in s.fix_zh

def test_fourth_sweep_part_h_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part H: causes (and fixes) that said
    more than the thread, code or vendor page they cite."""
    s = by_id("devices.too_few_visible")  # worker.py guards the check; before PR #4457 it stopped multi-node Ray (#4456)
    assert not s.cause_en.startswith("The serving process sees fewer NPUs") and "#4456" in s.cause_en
    assert "#4456" in s.cause_zh and "pull/4457" in s.source
    s = by_id("vllm_ascend.graph_mode_unsupported")  # two of the messages are warnings; ACL Graph + DeepSeek to v0.10.2rc1
    assert "ACL graph with DeepSeek in 0.9.x" not in s.cause_en and "0.9.x 的 ACL Graph" not in s.cause_zh
    assert "v0.10.2rc1" in s.cause_en and "dflash2" in s.cause_zh and "eager" in s.cause_en
    s = by_id("driver.libdcmi_missing")  # the case is gpustack's detector in a container without the mount
    assert "npu-smi / ascend-dmi cannot talk" not in s.cause_en and "无法与驱动通信" not in s.cause_zh
    assert "gpustack#3284" in s.cause_en and "gpustack#3284" in s.cause_zh
    s = by_id("env.exit_code_127")  # command not found: the bash manual, now cited
    assert "bash/manual" in s.source
    s = by_id("env.docker_invalid_tar_header")  # the FAQ says "often due to system compatibility issues"
    assert "not the image, is at fault" not in s.cause_en and "而非镜像本身" not in s.cause_zh
    assert "often due to system compatibility issues" in s.cause_en and "docker-adsb-ultrafeeder#235" in s.cause_zh
    s = by_id("cann.hccl_port_in_use")  # HCCL's guide: type 2 host port 60000-60031, 0/1 device port 16666
    assert "often a previous run" not in s.cause_en and "常为未退出的上一次运行" not in s.cause_zh
    assert "#1815" in s.cause_en and "60000" in s.cause_zh and "param_link_stage.md" in s.source
    s = by_id("devices.device_count_failed")  # NPUFunctions.cpp: aclrtGetDeviceCount failed, the count is 0
    assert "aclrtGetDeviceCount" in s.cause_en and "aclrtGetDeviceCount" in s.cause_zh
    assert "or the driver is not usable" not in s.cause_en and "NPUFunctions.cpp" in s.source
    s = by_id("env.ascend_home_path_unset")  # both checks test only whether the variable is set
    assert "points at no CANN toolkit" not in s.cause_en and "不指向任何 CANN toolkit" not in s.cause_zh
    assert "neither check looks at the path" in s.cause_en and "都不检查路径本身" in s.cause_zh
    s = by_id("mooncake.no_available_handle")  # types.h: insufficient space; #197: a maintainer's reading
    assert "Puts fail until" not in s.cause_en and "在驱逐释放空间或挂载更多内存之前" not in s.cause_zh
    assert "insufficient space" in s.cause_en and "#197" in s.cause_zh and "types.h" in s.source
    s = by_id("devices.npu_memory_fault")  # NPUException.cpp maps runtime codes; it says nothing of the origin
    assert "not the software stack" not in s.cause_en and "而不是软件栈的问题" not in s.cause_zh
    assert "ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR" in s.cause_en and "aclrtGetMemUceInfo" in s.cause_zh
    s = by_id("torch_npu.npu_device_unknown")  # autoload from torch 2.5: the PyTorch tutorial, now cited
    assert "python_extension_autoload" in s.source
    s = by_id("devices.llamacpp_invalid_device")  # renumbering from 0: CANN's ASCEND_RT_VISIBLE_DEVICES page
    assert "envref_07_0028" in s.source
    s = by_id("env.sglang_operands_benign")  # the notice is in sglang 0.4.3's decode_attention.py, not at 83ea2220
    assert "83ea222010e3f08f11a41d54010a72fb9b6ed6eb" not in s.source and "sglang/0.4.3" in s.source
    s = by_id("env.gloo_loopback")  # the warning's words and #7074's case; connectFullMesh alone names no cause
    assert "does not resolve to the node's IP" not in s.cause_en and "主机名不能解析到本节点 IP" not in s.cause_zh
    assert "#7074" in s.cause_en and "#7074" in s.cause_zh and "DeepSeek-R1.md" in s.source
    s = by_id("cann.hccl_exec_timeout_idle")  # #2482: a maintainer names HCCL_EXEC_TIMEOUT; 1836 s in CANN 8.0's reference
    assert "waited for the next request" not in s.cause_en and "keep the service busy" not in s.fix_en
    assert "1836" in s.cause_en and "1836" in s.cause_zh and "envref_07_0078" in s.source
    s = by_id("vllm_ascend.c_ascend_op_missing")  # #3342: the build can fail while the install succeeds
    assert "says why" not in s.cause_en and "#3342" in s.cause_en and "#3342" in s.cause_zh
    assert "torch.ops._C_ascend.weak_ref_tensor" in s.fix_en and "issues/3342" in s.source

def test_fourth_sweep_part_f_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part F: causes (and fixes) that said
    more than (or other than) the thread, code or guide they cite."""
    s = by_id("vllm_ascend.no_register")  # #3403: a failed editable build, a folder named vllm_ascend in the cwd
    assert "half-removed install" not in s.cause_en and "安装被部分删除" not in s.cause_zh
    assert "#3403" in s.cause_en and "#3403" in s.cause_zh and "_version" in s.cause_en
    s = by_id("driver.aclgraph_old_hdk")  # PR #10555: a string signature of an old stack; no queue limit in the source
    assert "ran out of" not in s.cause_en and "耗尽了设备" not in s.cause_zh and "a limit of old HDK" not in s.cause_en
    assert "#10555" in s.cause_en and "#10555" in s.cause_zh and "fewer capture sizes" not in s.fix_en
    s = by_id("cann.ascendc_int4b_soc_type_build")  # ggml d22c42e7 (llama #10519): the ASCEND_310P macro in lower case
    assert "picked a target without int4 support" not in s.cause_en and "不支持 int4 的目标" not in s.cause_zh
    assert "ASCEND_310p" in s.cause_en and "ASCEND_310p" in s.cause_zh and "#10519" in s.fix_en
    s = by_id("cann.hccl_topo_timeout")  # HCCL guide: server/agent sides, HCCL_CONNECT_TIMEOUT, ranks calling late
    assert "HCCL_CONNECT_TIMEOUT" in s.cause_en and "HCCL_CONNECT_TIMEOUT" in s.cause_zh and "HCCL_CONNECT_TIMEOUT" in s.fix_en
    assert "HCCL_IF_IP" not in s.fix_en and "HCCL_IF_IP" not in s.fix_zh
    s = by_id("mooncake.segment_descriptor_missing")  # transfer_metadata.cpp: any failed get of the key; Mooncake #1150
    assert "has no descriptor for the peer segment: the peer" not in s.cause_en and "#1150" in s.cause_en and "#1150" in s.cause_zh
    assert "curl" in s.cause_en and "curl" in s.cause_zh and "transfer_metadata.cpp" in s.source
    s = by_id("cann.mindie_quant_config")  # atb_llm config.py checks values only; nothing about who wrote the config
    assert "vllm-ascend" not in s.cause_en and "vllm-ascend" not in s.cause_zh and "vllm-ascend" not in s.fix_en
    assert "README" in s.cause_en and "README" in s.cause_zh
    s = by_id("python.torch_npu_no_wheel")  # Ascend/pytorch #38 (Python) and #18 (the index); no architecture case
    assert "no torch-npu wheel at all" not in s.cause_en and "#18" in s.cause_en and "#18" in s.cause_zh
    assert "pip config list" in s.fix_en and "pip config list" in s.fix_zh and "pytorch/issues/18" in s.source
    s = by_id("vllm_ascend.triton_without_ascend_backend")  # FlagGems #5791: torch-npu 2.9.0 asks for extra.ascend
    assert "#5791" in s.cause_en and "#5791" in s.cause_zh and "extra.cann" in s.cause_en and "extra.cann" in s.cause_zh
    assert "2.9.0.post1" in s.fix_en and "2.9.0.post1" in s.fix_zh
    s = by_id("cann.hccl_error_in_pg")  # LlamaFactory #3839: EJ0001 says "Maybe the last training process is running"
    assert "still holds the card" not in s.fix_en and "仍占用该卡" not in s.fix_zh and "Maybe" in s.fix_en
    s = by_id("mooncake.ascend_acl_context")  # #3972: the standalone mooncake_client case; PR #3974 is open
    assert "every Store put/get" not in s.cause_en and "所有 Store" not in s.cause_zh
    assert "#3972" in s.cause_en and "#3972" in s.cause_zh and "Use a Mooncake release that binds" not in s.fix_en
    s = by_id("vllm_ascend.quantization_override")  # utils.py: "If you encounter errors ... consider using"
    assert "come from that choice" not in s.cause_en and "源于这一选择" not in s.cause_zh
    assert "warning" in s.cause_en and "警告" in s.cause_zh
    s = by_id("devices.drv_err_87")  # torch_npu: any non-zero drvGetDevNum; lmdeploy #2585: a container case
    assert "cannot open the NPU device nodes" not in s.cause_en and "无法打开 NPU 设备节点：" not in s.cause_zh
    assert "#2585" in s.cause_en and "#2585" in s.cause_zh and "drvGetDevNum" in s.cause_en
    s = by_id("vllm_ascend.triton_launcher_rt_header")  # 0c4dd405: "after CANN was split into sub-packages"; no release named
    assert "newer CANN than the one its README pairs" not in s.cause_en and "更新的 CANN" not in s.cause_zh
    assert "8.5.0.alpha001" in s.cause_en and "8.5.0.alpha001" in s.cause_zh


def test_fourth_sweep_part_k_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part K: causes (and fixes) that said
    more than (or other than) the thread, code or guide they cite."""
    s = by_id("mooncake.store_rpc_unreachable")  # PR #1787 was closed; the 127.0.0.1 bind went with #1900
    assert "releases before kvcache-ai/Mooncake#1787" not in s.cause_en and "#1787 之前的版本" not in s.cause_zh
    assert "#1900" in s.cause_en and "v0.3.10.post2" in s.cause_en and "v0.3.10.post2" in s.cause_zh
    assert "#2156" in s.cause_en and "pull/1900" in s.source
    s = by_id("mooncake.master_rpc_timeout")  # #1050: the timeout on reading the reply; #1048 not read
    assert "could not reach the master's RPC port" not in s.cause_en and "无法访问 master 的 RPC 端口" not in s.cause_zh
    assert "#1050" in s.cause_en and "#1050" in s.cause_zh and "read rpc head failed" in s.cause_en
    s = by_id("mooncake.rpc_fail")  # RPC_FAIL covers any RPC error but a timeout; #456 gives no cause
    assert "lost its RPC connection" not in s.cause_en and "连接中断" not in s.cause_zh
    assert "#456" in s.cause_en and "#456" in s.cause_zh and "restart clients" not in s.fix_en
    s = by_id("cann.aclnn_fp32_matmul_keep_dtype")  # IsInputSupportFp32: an allow-list of SoCs, no cube-unit reason
    assert "cube unit takes no float32" not in s.cause_en and "Cube 单元不支持" not in s.cause_zh
    assert "IsInputSupportFp32" in s.cause_en and "910_93" in s.cause_en and "910_93" in s.cause_zh
    assert "ALLOW_FP32_DOWN_PRECISION" not in s.fix_en
    s = by_id("devices.visible_devices_misspelled")  # #5568/#5570: a doc typo; the runtime reads only the S form
    assert "sees every NPU" not in s.cause_en and "可以看到所有 NPU" not in s.cause_zh
    assert "#5570" in s.cause_en and "#5570" in s.cause_zh and "mmpa_linux_env.c" in s.source
    s = by_id("vllm_ascend.triton_ub_overflow_prose")  # #2246: the unrolling on A5 only; no general accounting rule
    assert "doubled by the default multi-buffering" not in s.cause_en and "默认多缓冲会翻倍" not in s.cause_zh
    assert "#2246" in s.cause_en and "#2246" in s.cause_zh and "A5" in s.cause_en and "pull/1458" in s.source
    assert "autotune" not in s.fix_en
    s = by_id("torch.omp_num_threads_benign")  # run.py: only when more than one process per node
    assert "printed on every such launch" not in s.cause_en and "每次这样启动都会打印" not in s.cause_zh
    assert "more than one process per node" in s.cause_en and "多于一个进程" in s.cause_zh
    s = by_id("env.sglang_npu_missing_import")  # no source gives a frequency or a warning for the other candidate
    assert "Less often" not in s.cause_en and "较少见" not in s.cause_zh and "a warning above" not in s.fix_en
    assert "#3853" in s.cause_en and "#3853" in s.cause_zh
    s = by_id("env.triton_ascend_no_cxx")  # driver.py: npu_utils and the launchers; nothing about slim images
    assert "slim images" not in s.cause_en and "精简镜像" not in s.cause_zh
    assert "npu_utils" in s.cause_en and "npu_utils" in s.cause_zh
    s = by_id("torch.cuda_wheels")  # the aarch64 torch-npu wheels pin the plain torch; #10265 came with pip install vllm
    assert "The Ascend stack needs the CPU build of torch" not in s.cause_en and "昇腾环境需要 CPU 版 torch" not in s.cause_zh
    assert "aarch64" in s.cause_en and "aarch64" in s.cause_zh and "#10265" in s.cause_en and "(from …)" in s.fix_en
    s = by_id("cann.hccl_connect_detect")  # HCCL's message: three cases, the third a hung or exited dstRank
    assert "that is the cause" not in s.fix_en and "那就是原因" not in s.fix_zh
    assert "exited early" in s.fix_en and "提前退出" in s.fix_zh
    s = by_id("cann.aiv_kill_page_fault")  # the guide: "Device accessed an illegal address", Atlas A2 inference
    assert "memory of the killed process" not in s.cause_en and "已终止进程的内存" not in s.cause_zh
    assert "Atlas A2" in s.cause_en and "Atlas A2" in s.cause_zh and "illegal address" in s.cause_en


def test_fourth_sweep_part_j_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part J: causes that said more than
    (or other than) the guide, thread or code they cite."""
    s = by_id("cann.hccl_heartbeat_event")  # HCCL's guide: STUCK is a stuck process or task, not a network error
    assert "STUCK or ERROR CQE (network errors)" not in s.cause_en and "its first error is the cause" not in s.fix_en
    assert "30 s" in s.cause_en and "30 秒" in s.cause_zh and "device task stuck" in s.cause_en
    s = by_id("cann.opp_kernel_not_installed")  # #573: the 910 kernels package was installed; the chip was unsupported
    assert "is not installed (or not for this CANN version)" not in s.cause_en and "未安装该芯片对应的" not in s.cause_zh
    assert "#573" in s.cause_en and "#573" in s.cause_zh and "issues/573" in s.source and "npu-smi info" in s.fix_en
    s = by_id("torch_npu.accelerate_sees_no_npu")  # state.py: the CPU can also be asked for
    assert "found no NPU on this Ascend host and fell back to the CPU" not in s.cause_en and "退回到 CPU" not in s.cause_zh
    assert "ACCELERATE_USE_CPU" in s.cause_en and "ACCELERATE_USE_CPU" in s.cause_zh and "state.py" in s.source
    s = by_id("torch.install_order_conflict")  # the guide installs vllm with its dependencies, in its own command
    assert "build pin" not in s.cause_en and "构建版本" not in s.cause_zh and "without its dependencies" not in s.fix_en
    assert "#12404" in s.cause_en and "#12404" in s.cause_zh and "installation.md" in s.source
    s = by_id("mooncake.wr_flushed")  # troubleshooting.md: "in most cases"
    assert "repeat the first error" not in s.cause_en and "重复" not in s.cause_zh
    assert "in most cases" in s.cause_en and "多数情况下" in s.cause_zh
    s = by_id("cann.context_null_after_set_device")  # #1558 and PTOAS: 507033; #800: 107002 and 507008
    assert "often 507033" not in s.cause_en and "常为 507033" not in s.cause_zh
    assert "#800" in s.cause_en and "507008" in s.cause_zh and "issues/1558" in s.source
    s = by_id("mooncake.hccn_device_ip")  # #7711: one case, the reporter's reading; HCCL's message names its conditions
    assert "KV transfer between prefill and decode gives wrong output" not in s.cause_en
    assert "#7711" in s.cause_en and "#7711" in s.cause_zh and "HCCL_INTRA_ROCE_ENABLE" in s.cause_en
    s = by_id("torch_npu.torchair_backend_missing")  # Ascend/pytorch #37 gives no mechanism
    assert "incomplete" not in s.cause_en and "不完整" not in s.cause_zh
    assert "#37" in s.cause_en and "#37" in s.cause_zh and "gives no reason" in s.cause_en
    s = by_id("devices.visible_devices_empty")  # neither check compares the ids with the devices present
    assert "lists no device this process has" not in s.cause_en and "没有本进程拥有的设备" not in s.cause_zh
    assert "npu-smi info -m" in s.cause_en and "npu-smi info -m" in s.cause_zh and "cpu_binding.py" in s.source
    s = by_id("vllm_ascend.triton_ascend_uva_disabled_benign")  # v0.23.0 lists 3.2.1 and 3.2.2
    assert "3.2.1 from vllm-ascend 0.23.0" not in s.cause_en and "vllm-ascend 0.23.0 起为 3.2.1" not in s.cause_zh
    assert "0.23.0rc1" in s.cause_en and "0.23.0rc1" in s.cause_zh and "blob/v0.23.0/" in s.source
    s = by_id("env.hccl_library_load")  # ctypes.CDLL of HCCL_SO_PATH or libhccl.so; the message's candidates
    assert "the library is for another architecture" not in s.cause_en and "该库的架构不匹配" not in s.cause_zh
    assert "HCCL_SO_PATH" in s.cause_en and "HCCL_SO_PATH" in s.cause_zh and "corrupted" in s.cause_en
    s = by_id("mooncake.no_rdma_devices")  # topology.cpp: ibv_get_device_list; Ascend transport in no source read
    assert "Expected when the TCP or Ascend transport is used" not in s.cause_en and "属正常" not in s.cause_zh
    assert "ibv_get_device_list" in s.cause_en and "#747" in s.cause_zh and "topology.cpp" in s.source


def test_fourth_sweep_part_l_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part L: causes (and fixes) that said
    more than (or other than) the thread, code or guide they cite."""
    s = by_id("torch_npu.bf16_unsupported_trainer")  # import_utils.py 4.57.1: find_spec, then a bare import
    assert "when torch_npu cannot be imported" not in s.cause_en and "torch_npu 无法导入" not in s.cause_zh
    assert "raises its own ImportError" in s.cause_en and "ImportError" in s.cause_zh
    s = by_id("cann.hccl_link_timeout")  # param_link_stage.md: TLS mismatch, cascades, the peer's log
    assert "or there is no network path" not in s.cause_en and "或没有网络通路" not in s.cause_zh
    assert "TLS" in s.cause_en and "TLS" in s.cause_zh and "cascade" in s.cause_en
    s = by_id("env.build_no_cxx_compiler")  # CMakeDetermineCompiler: find_program over PATH
    assert "slim images" not in s.cause_en and "精简镜像" not in s.cause_zh
    assert "outside PATH" in s.cause_en and "PATH 之外" in s.cause_zh and "CC/CXX" in s.fix_en
    s = by_id("vllm.module_missing")  # verl 121f4d1c catches the ImportError; the guide named those releases
    assert not s.cause_en.endswith("the two come from different releases.")
    assert "falls back to vllm.lora.models" in s.cause_en and "回退到 vllm.lora.models" in s.cause_zh
    assert "last error" in s.fix_en and "pull/4631" in s.source
    s = by_id("mooncake.cuda_wheel")  # #3314, PRs #3119 / #3745; the NPU wheel of the quick start
    assert "no such wheel works on Ascend" not in s.cause_en and "这类 wheel 在昇腾上都不可用" not in s.cause_zh
    assert "readelf -d" in s.cause_en and "readelf -d" in s.cause_zh and "mooncake-transfer-engine-npu" in s.fix_en
    s = by_id("cann.hccl_ranktable_device_mismatch")  # ParserClusterInfo compares physical ids
    assert "written for another node" not in s.cause_en and "为其他节点编写" not in s.cause_zh
    assert "physical id" in s.cause_en and "物理 id" in s.cause_zh
    s = by_id("devices.npu_link_fault")  # CANN's aclError table: 507056; torch_npu names it by the chip
    assert "went down while it ran" not in s.cause_en and "运行期间设备之间的链路中断" not in s.cause_zh
    assert "507056" in s.cause_en and "507056" in s.cause_zh and s.fix_en.startswith("Retry first")
    s = by_id("cann.mte_out_of_range")  # the runtime's words; #2674's settings
    assert "outside its buffer" not in s.cause_en and "缓冲区以外" not in s.cause_zh
    assert "HCCL_BUFFSIZE set to 50" in s.cause_en and "HCCL_BUFFSIZE 设为 50" in s.cause_zh
    s = by_id("vllm.kv_preemption")  # V0 scheduler: RECOMPUTE or SWAP; SWAP aborts without swap space
    assert "it is recomputed later" not in s.cause_en and "该请求稍后会重新计算" not in s.cause_zh
    assert "SWAP" in s.cause_en and "SWAP" in s.cause_zh and "lack of CPU swap space" in s.cause_en
    s = by_id("mooncake.sync_transfer_timeout")  # transfer_engine_py.cpp: a deadline; #7846 is open
    assert "is down or stalled, or the peer stopped serving." not in s.cause_en
    assert "MC_TRANSFER_TIMEOUT" in s.cause_en and "MC_TRANSFER_TIMEOUT" in s.cause_zh and "#7846" in s.cause_en
    s = by_id("vllm_ascend.custom_kernels_missing")  # #1114 gives no cause; rpath $ORIGIN:$ORIGIN/lib
    assert "without the CANN environment" not in s.cause_en and "没有 CANN 环境" not in s.cause_zh
    assert "$ORIGIN:$ORIGIN/lib" in s.cause_en and "$ORIGIN:$ORIGIN/lib" in s.cause_zh and "#1114" in s.cause_en
    s = by_id("cann.paddle_lite_cann_mismatch")  # utility.cc a4c44957: labels swapped, first call leaves 0.0.0
    assert "0.0.0 means the build found no version" not in s.cause_en and "0.0.0 表示构建时没有识别到版本" not in s.cause_zh
    assert "labels are swapped" in s.cause_en and "标签是颠倒的" in s.cause_zh and "issues/10675" in s.source
    s = by_id("cann.fia_block_size_unaligned")  # #25169 ran --page-size 1; PR #29815 names 128 the default
    assert "1 by default" not in s.cause_en and "默认为 1" not in s.cause_zh
    assert "#29815" in s.cause_en and "#29815" in s.cause_zh and "vllm-ascend uses 128" not in s.fix_en
    s = by_id("cann.hccl_error_cqe")  # task_exec_stage.md EI0013: three checks
    assert "(network fault or the peer exited)" not in s.cause_en and "（网络故障或对端退出）" not in s.cause_zh
    assert "HCCL_RDMA_RETRY_CNT" in s.cause_en and "HCCL_RDMA_RETRY_CNT" in s.cause_zh
    s = by_id("mooncake.ephemeral_ports")  # troubleshooting.md: sustained high-concurrency TCP traffic
    assert not s.cause_en.startswith("The TCP transport ran out of ephemeral ports")
    assert "high-concurrency" in s.cause_en and "高并发" in s.cause_zh and "MC_TCP_ENABLE_CONNECTION_POOL=1" in s.fix_en

def test_fourth_sweep_part_o_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part O: causes (and fixes) that said
    more than (or other than) the thread, guide or code they cite."""
    s = by_id("cann.ascendc_cmake_missing")  # bitsandbytes CMakeLists.txt: fixed places under $ASCEND_HOME_PATH; #1523: <arch>-linux
    assert "moved between CANN releases" not in s.cause_en and "各 CANN 版本间移动过" not in s.cause_zh
    assert "compiler/tikcpp" in s.cause_en and "compiler/tikcpp" in s.cause_zh and "#1523" in s.cause_en
    s = by_id("torch_npu.npu_op_deprecated_benign")  # deprecated.yaml: entries without `replace` print no replacement
    assert "the warning names the replacement (" not in s.cause_en and "警告中给出了替代接口（" not in s.cause_zh
    assert "npu_nms_rotated" in s.cause_en and "npu_nms_rotated" in s.cause_zh and "names none" in s.fix_en
    s = by_id("vllm_ascend.custom_kernels_needed")  # setup.py: 0.7.3 builds only with COMPILE_CUSTOM_KERNELS set; v0.9.1 defaults to 1
    assert "a build without the CANN environment later" not in s.cause_en and "构建时没有 CANN 环境" not in s.cause_zh
    assert "v0.9.1" in s.cause_en and "v0.9.1" in s.cause_zh and "#3998" in s.cause_en and "envs.py" in s.source
    s = by_id("vllm.kv_cache_negative")  # worker.py: requested_memory - (weights + peak activation + non-torch)
    assert "non-torch" in s.cause_en and "非 torch" in s.cause_zh and "#9372" in s.cause_en and "worker.py" in s.source
    s = by_id("cann.hccl_agent_connect_server")  # HCCL fault guide: network path, or ranks further apart than HCCL_CONNECT_TIMEOUT
    assert "HCCL_CONNECT_TIMEOUT" in s.cause_en and "HCCL_CONNECT_TIMEOUT" in s.cause_zh and "HCCL_CONNECT_TIMEOUT" in s.fix_en
    assert "lexicographic" in s.cause_en and "字典序" in s.cause_zh
    s = by_id("vllm.api_mismatch")  # PR #4174: vLLM main after v0.11.0; no release number for the split
    assert "vLLM 0.11.1 split" not in s.cause_en and "vLLM 0.11.1 将" not in s.cause_zh
    assert "#4174" in s.cause_en and "#4863" in s.cause_en and "#4863" in s.cause_zh and "pull/4174" in s.source
    s = by_id("env.ge_debug_dir")  # #2748: a Ray multi-node run, nothing on the cwd; GE guide: current dir, ASCEND_WORK_PATH
    assert "started from /usr/bin" not in s.cause_en and "在 /usr/bin 下启动" not in s.cause_zh
    assert "ASCEND_WORK_PATH" in s.cause_en and "ASCEND_WORK_PATH" in s.cause_zh and "ASCEND_WORK_PATH" in s.fix_en
    assert "hiascend.com" in s.source
    s = by_id("torch_npu.torch_namespace_npu_op")  # the stub raises from v5.0.rc2-pytorch2.0.1; torch 1.x builds only warn
    assert "Since torch_npu 5.0.rc3" not in s.cause_en and "自 torch_npu 5.0.rc3" not in s.cause_zh
    assert "v5.0.rc2-pytorch2.0.1" in s.cause_en and "v5.0.rc2-pytorch2.0.1" in s.cause_zh and "v6.0.rc1" in s.cause_en
    assert "1.11.0" in s.cause_en and "1.11.0" in s.cause_zh and "v5.0.rc2-pytorch2.0.1" in s.source
    s = by_id("env.master_port_in_use")  # the torch_npu guide: leftover processes of an interrupted run, or another process
    assert "29500 by default" not in s.cause_en and "默认 29500" not in s.cause_zh
    assert "left over" in s.cause_en and "残留进程" in s.cause_zh
    s = by_id("cann.libhccl_compiler_package")  # module_loader.py: only ASCEND_OPP_PATH set and libhccl.so not loadable
    assert "the toolkit is partial or broken, or" not in s.cause_en and "toolkit 安装不完整或已损坏，或" not in s.cause_zh
    assert "LD_LIBRARY_PATH" in s.cause_en and "LD_LIBRARY_PATH" in s.cause_zh and "LD_LIBRARY_PATH" in s.fix_en
    s = by_id("env.sgl_kernel_npu_transformers")  # sglang #25130: the patch is sglang's; sgl-kernel-npu is not involved
    assert "sgl-kernel-npu" not in s.cause_en and "sgl-kernel-npu" not in s.cause_zh
    assert "Qwen2VLImageProcessorFast" in s.cause_en and "Qwen2VLImageProcessorFast" in s.cause_zh
    s = by_id("vllm_ascend.triton_autotune_axes")  # a84b1eb (the newest stored) still has six names; no longer list on record
    assert "to a release with a longer axis list" not in s.fix_en and "轴名列表更长的版本" not in s.fix_zh
    assert "valid_axis_names" in s.cause_en and "valid_axis_names" in s.cause_zh and "utils.py" in s.source

def test_fourth_sweep_part_m_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part M: causes (and fixes) that said
    more than (or other than) the code, release notes, threads or index listings they cite."""
    s = by_id("vllm_ascend.feature_conflict")  # v0.23.0rc1+: fused MC2 + multistream is a warning, the option is turned off
    assert "for example fused MC2 with multistream shared experts" not in s.cause_en
    assert "Setting multistream_overlap_shared_expert to False" in s.cause_en and "v0.23.0rc1" in s.cause_zh
    assert "change nothing" in s.fix_en and "无需改动" in s.fix_zh
    s = by_id("mooncake.slice_failed")  # troubleshooting.md: "In most cases" the later errors are flushed ones
    assert "so the following errors are consequences" not in s.cause_en and "in most cases" in s.cause_en
    assert "work request flushed error" in s.cause_zh and "ibv_wc_status_str" in s.cause_en
    s = by_id("vllm_ascend.no_platform_benign")  # v0.7.1rc1 release notes: known issue, fixed by vLLM PR #12432
    assert "probed before plugins" not in s.cause_en and "内置平台先于插件" not in s.cause_zh
    assert "#12432" in s.cause_en and "#12432" in s.cause_zh and "#130" in s.cause_en
    s = by_id("vllm_ascend.custom_op_schema_missing")  # enable_custom_op(): off with VLLM_BATCH_INVARIANT or on A5
    assert "a source build without the CANN environment" not in s.cause_en
    assert "VLLM_BATCH_INVARIANT" in s.cause_en and "VLLM_BATCH_INVARIANT" in s.cause_zh
    assert "Failed to register custom ops" in s.cause_en and "Ascend 950" in s.cause_zh
    s = by_id("cann.npu_error_507035")  # NPUErrorCodes.h: rectify based on the ascend log; no release named
    assert "newer vllm-ascend image" not in s.fix_en and "plog" in s.fix_en and "plog" in s.fix_zh
    s = by_id("torch_npu.version_not_published")  # PyPI lists plain 2.3.1 and 2.5.1; it has no 2.3.0, 2.5.0, 2.7.0
    assert "such as 2.3.1.post2 and 2.5.1.post1 rather than every plain version" not in s.cause_en
    assert "2.3.0, 2.5.0 or 2.7.0" in s.cause_en and "2.3.0、2.5.0 或 2.7.0" in s.cause_zh
    assert "pip config list" in s.fix_en and "pip config list" in s.fix_zh
    s = by_id("env.dataloader_shm_bus_error")  # the handler says "might be caused by"; no docker default in the code
    assert "docker's default is 64 MiB" not in s.cause_en and "64 MiB" not in s.cause_zh
    assert "SIGBUS" in s.cause_en and "SIGBUS" in s.cause_zh and "df -h /dev/shm" in s.cause_en
    s = by_id("cann.op_not_in_store")  # #1383, #811: TransData on 310P3; no missing package shown
    assert "the ops/kernels package for this SoC is missing" not in s.cause_en and "算子/kernels 包缺失" not in s.cause_zh
    assert "op information library" in s.cause_en and "#1383" in s.cause_zh
    s = by_id("cann.hccl_no_host_interface")  # topoinfo_detect.cc: four lines, nothing about containers
    assert "without host networking" not in s.cause_en and "--network=host" not in s.fix_en
    assert "there is no host if" in s.cause_en and "there is no host if" in s.cause_zh
    s = by_id("mooncake.init_failed")  # mooncake_backend.py: raised on setup() != 0, no reason named
    assert "master unreachable" not in s.cause_en and "metrics_port" not in s.fix_en
    assert "setup()" in s.cause_en and "setup()" in s.cause_zh and "ret" in s.fix_en
    s = by_id("env.tbe_python_path")  # Ascend/pytorch #29 is open and unanswered
    assert "was not sourced in this shell" not in s.cause_en and "未 source" not in s.cause_zh and "#29" in s.cause_en and "#29" in s.cause_zh
    s = by_id("cann.op_unsupported_on_soc")  # #1813 (310I, MoeGatingTopKSoftmax); llama.cpp #18133 open, on a 910B
    assert "or the kernels package is for another chip" not in s.cause_en and "MoE models on Atlas A2/A3" not in s.fix_en
    assert "#18133" in s.cause_en and "#18133" in s.cause_zh and "#1813" in s.cause_en
    s = by_id("env.hf_offline_lookup")  # #3719: the URL named another repo; PR #29706: the --tokenizer case
    assert "but the model was named by its Hub id" not in s.cause_en and "vLLM 依然尝试" not in s.cause_zh
    assert "#29706" in s.cause_en and "#29706" in s.cause_zh and "--tokenizer" in s.fix_en

def test_fourth_sweep_part_n_causes_claim_no_more_than_their_sources():
    """docs/facts-audit.md, fourth sweep of signature causes, part N: causes (and fixes) that said
    more than (or other than) the thread, code or guide they cite."""
    s = by_id("mooncake.memory_registration_failed")  # the code states no CANN floor; Mooncake logs 'Register mem ret'
    assert "CANN 8.3.RC1" not in s.fix_en and "CANN 8.3.RC1" not in s.fix_zh
    assert "register_memory returned non-zero" in s.cause_en and "register_memory 返回非零" in s.cause_zh
    s = by_id("cann.atb_hccl_runner_failed")  # common_utils.cpp: HCCL_E_PARA -> 1, E_MEMORY/E_OOM -> 26, else 25
    assert "its creation failed earlier" not in s.cause_en and "之前创建失败" not in s.cause_zh
    assert "HCCL_E_PARA" in s.cause_en and "HCCL_E_PARA" in s.cause_zh and "common_utils.cpp" in s.source
    s = by_id("cann.hccl_host_ip_ifname")  # EI0001 guide: the lines list the interfaces present; no HCCL_IF_IP
    assert "HCCL_IF_IP" not in s.fix_en and "HCCL_IF_IP" not in s.fix_zh
    assert "not the one asked for" in s.cause_en and "而不是所指定的网卡" in s.cause_zh
    s = by_id("vllm_ascend.triton_bishengir_compile_failed")  # compiler.py: stderr if any, else str(e); own bin first
    assert "from the installed CANN toolkit" not in s.cause_en and "来自已安装的 CANN toolkit" not in s.cause_zh
    assert "force_simt_only" in s.cause_en and "force_simt_only" in s.cause_zh and "not a cause on record" in s.cause_en
    s = by_id("python.deepspeed_op_no_npu_impl")  # 0.19.5 onebit/adam.py has an 'hccl' comm backend
    assert "Lamb or 1-bit Adam" not in s.fix_en and "1-bit Adam 等仅支持 CUDA" not in s.fix_zh
    assert "'hccl'" in s.fix_en and "'hccl'" in s.fix_zh and "onebit/adam.py" in s.source
    s = by_id("cann.mindie_listen_failed")  # the bridge/namespace cases rest on a thread not read here
    assert "another network namespace" not in s.cause_en and "其他网络命名空间" not in s.cause_zh
    assert "MIES_CONTAINER_IP" in s.cause_en and "MIES_CONTAINER_IP" in s.cause_zh
    s = by_id("devices.npu_error_207004")  # NPUErrorCodes.h: "Check whether the device is running properly."
    assert "ASCEND_RT_VISIBLE_DEVICES" not in s.fix_en and "ASCEND_RT_VISIBLE_DEVICES" not in s.fix_zh
    assert "running properly" in s.cause_en and "running properly" in s.cause_zh
    s = by_id("torch_npu.not_installed")  # #166 and #185: the project's own images; PR #201 installs torch-npu
    assert "pip installed it elsewhere" not in s.cause_en and "pip 装到了别处" not in s.cause_zh
    assert "#201" in s.cause_en and "#201" in s.cause_zh and "pull/201" in s.source
    s = by_id("vllm.vllm_c_benign")  # release notes v0.7.1rc1; nothing read says a CUDA vllm drags CUDA torch
    assert "drags CUDA torch" not in s.fix_en and "连带 CUDA 版 torch" not in s.fix_zh
    assert "v0.7.1rc1" in s.cause_en and "v0.7.1rc1" in s.cause_zh
    s = by_id("vllm_ascend.dev_build_version")  # #16559: 5cb98caaa is the v0.23.0 tag commit itself
    assert "not the release you checked out" not in s.cause_en and "并不是你检出的那个发布版本" not in s.cause_zh
    assert "#16559" in s.cause_en and "#16559" in s.cause_zh and "--untracked-files=no" in s.fix_en
    s = by_id("vllm_ascend.triton_npu_compiler_missing")  # utils.py finds compilers by name; bisheng on PATH only
    assert "of a release this triton-ascend supports" not in s.cause_en and "支持版本的毕昇编译器" not in s.cause_zh
    assert "no version is checked" in s.cause_en and "不检查版本" in s.cause_zh
    s = by_id("driver.libascend_hal_missing")  # the row's own fix covers a third case: not on LD_LIBRARY_PATH
    assert "LD_LIBRARY_PATH" in s.cause_en and "LD_LIBRARY_PATH" in s.cause_zh and "Candidates" in s.cause_en
    s = by_id("vllm_ascend.custom_kernels_camem")  # the assert exists v0.7.3..v0.9.1; ImportError can be a load failure
    assert "this install has none" not in s.cause_en and "而当前安装中没有" not in s.cause_zh
    assert "v0.9.1" in s.cause_en and "v0.9.1" in s.cause_zh and "failed to load" in s.cause_en
    s = by_id("mooncake.rdma_register")  # troubleshooting.md: [5] max_mr_size, [11] MKEY exhaustion; no peer-memory case
    assert "peer-memory" not in s.cause_en and "peer-memory" not in s.cause_zh and "register host buffers only" not in s.fix_en
    assert "CREATE_MKEY" in s.cause_en and "CREATE_MKEY" in s.cause_zh and "max_mr_size" in s.fix_en
    s = by_id("devices.device_permission_caps_dropped")  # ascend-device-plugin #139 shows uid/gid 1000, not a name
    assert "HwHiAiUser" not in s.cause_en and "HwHiAiUser" not in s.cause_zh and "fsGroup" not in s.fix_en
    assert "#139" in s.cause_en and "#139" in s.cause_zh and "-8005" in s.cause_en
    s = by_id("cann.hccl_transport_init")  # param_link_stage.md: [hostIp/deviceId]; tls and ping, no -link/-net_health
    assert "-net_health" not in s.fix_en and "-net_health" not in s.fix_zh
    assert "HCCL_CONNECT_TIMEOUT" in s.cause_en and "HCCL_CONNECT_TIMEOUT" in s.cause_zh and "-tls -g" in s.fix_en


def test_tenth_audit_y_facts_say_what_their_sources_say():
    """docs/facts-audit.md, tenth sample (seed 35), facts #27 to #40: EI0014's meaning said every such error is a
    consistency check that "does not fit"; Huawei's catalogue reads it as a rank-table check that failed (a value
    invalid, possibly an inconsistency with the devices), the cases on record named as cases."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("cann_msg", "EI0014")]  # error_code.json: 'The ranktable information check failed'; HCCL guides: cases
    assert "consistency check of the cluster information" not in c.meaning_en and "一致性校验失败" not in c.meaning_zh
    assert "The ranktable information check failed" in c.meaning_en and "Cases on record" in c.meaning_en
    assert "已记录的案例" in c.meaning_zh and "device_ip" in c.meaning_zh
    assert "error_code.json" in c.source and "rank_table_load_fail.md" in c.source


def test_the_operator_codes_fix_says_what_the_catalogue_says():
    """docs/facts-audit.md, tenth sample, found on the way: EZ0001-EZ0003, EZ0005 and EZ0006 shared a fix that said the
    model is outside what the operator supports on this CANN and to try a newer CANN; Huawei's error_code.json gives
    no cause ("Possible Cause": "N/A") and, per code, what to check."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    check = {"EZ0001": "shape", "EZ0002": "value of the attribute", "EZ0003": "size of the attribute",
             "EZ0005": "dimensions", "EZ0006": "input format"}
    for code, what in check.items():
        c = codes[("cann_msg", code)]
        assert "newer CANN" not in c.fix_en and "较新 CANN" not in c.fix_zh, code
        assert "gives no cause" in c.fix_en and "未给出原因" in c.fix_zh and what in c.fix_en, code

def test_tenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, tenth sample (seed 35), facts #41 to #50: signature causes that said more than the
    code, wheels or threads they rest on (and one that named a switch later releases no longer read)."""
    s = by_id("vllm_ascend.feature_conflict")  # ascend_config.py: enable_fused_mc2 key or the variable; 0.27.1rc1+: key only
    assert "with VLLM_ASCEND_ENABLE_FUSED_MC2 on" not in s.cause_en and "开启 VLLM_ASCEND_ENABLE_FUSED_MC2 时" not in s.cause_zh
    assert "enable_fused_mc2" in s.cause_en and "0.27.1rc1" in s.cause_zh and "vllm_ascend-0.27.1rc1.tar.gz" in s.source
    s = by_id("vllm_ascend.triton_soc_target_option")  # PRs #15235 and #8181 are open: proposals, in no release
    assert "PR #15235 makes the 310P sampler fall back" not in s.cause_en and "让 310P 采样器回退）" not in s.cause_zh
    assert s.cause_en.count("open") >= 2 and "尚未合入" in s.cause_zh
    s = by_id("torch_npu.autoload_failed")  # torch/__init__.py: raise RuntimeError(...) from err, never on the same line
    assert "same line" not in s.cause_en and "同一行" not in s.cause_zh
    assert "from err" in s.cause_en and "from err" in s.cause_zh and "pytorch/blob/v2.13.0/torch/__init__.py" in s.source
    s = by_id("vllm_ascend.wheel_device_type")  # wheels 0.13.0 / 0.19.1rc1 are A2; from 0.26.0rc1 sdists built for the host
    assert "the wheel on PyPI is the Atlas A2 build" not in s.cause_en and "0.26.0rc1" in s.cause_en
    assert "0.26.0rc1" in s.cause_zh and "npu-smi" in s.cause_zh and "setup.py" in s.source
    s = by_id("torch_npu.async_op_inner_error")  # NPUQueue.cpp ReadQueue: the queued call returned an error, any kind
    assert "failed on the device;" not in s.cause_en and "在设备上执行失败" not in s.cause_zh
    assert "manager().Call" in s.cause_en and "manager().Call" in s.cause_zh and "9e73e708ab93" in s.source
    s = by_id("torch_npu.llamafactory_npu_kernel")  # registry.py: the same test at import; the decorated name is None
    assert "comes from applying the kernel class itself" not in s.cause_en and "此消息来自直接应用该内核类" not in s.cause_zh
    assert "None" in s.cause_en and "None" in s.cause_zh and "do not apply the NPU kernel classes directly" not in s.fix_en
    assert "不要直接应用 NPU 内核类" not in s.fix_zh


def test_eleventh_audit_found_on_the_way_torch_npu_2_3_1rc1_has_its_cann():
    """docs/facts-audit.md, eleventh sample (seed 36), found on the way: the torch-npu 2.3.1rc1 row said its CANN was
    unknown; the README at its tag pairs it with CANN 8.0.RC2.alpha002 (extension 2.3.1rc1, branch v2.3.1)."""
    row = next(t for t in matrix().torch_npu if str(t.version) == "2.3.1rc1")
    assert str(row.cann) == "8.0.RC2.alpha002"
    assert "unknown" not in row.notes
    assert "v6.0.rc2.alpha002-pytorch2.3.1/README.md" in row.source

def test_eleventh_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, eleventh sample (seed 36), facts #41 to #50: signature causes that said more than the
    code or threads they rest on."""
    s = by_id("env.ascend_home_path_unset")  # DeepSpeed builder.py: the KeyError comes first; 'ascend_cann is missing' needs it set
    assert not s.cause_en.startswith("A program needs CANN's ASCEND_HOME_PATH and it is not set in this process")
    assert "printed only when the variable is set" in s.cause_en and "只在变量已设置" in s.cause_zh
    assert "npu_utils" in s.cause_en and "install.info" in s.fix_en and "install.info" in s.fix_zh
    assert "triton-ascend/blob/a84b1eb52b6215e2c171632f2df0892f1003cfc8/third_party/ascend/backend/driver.py" in s.source
    s = by_id("torch_npu.api_missing")  # torch_npu.npu.profile: in the v2.1.0-5.0.x branches (to 2.1.0.post4), gone from 6.0.rc1
    assert "which the v2.0.1 branches have and v2.1.0 does not" not in s.cause_en
    assert "v2.1.0 中没有" not in s.cause_zh and "2.1.0.post4" in s.cause_en and "v2.1.0-6.0.rc1" in s.cause_zh
    assert "v2.1.0-5.0.0/torch_npu/npu/npu_config.py" in s.source
    s = by_id("env.mindspore_cann_env_not_set")  # ms_context.cc: the list names the plugins that loaded, not always CPU only
    assert "so only the CPU backend is left" not in s.cause_en and "因此只剩 CPU 后端" not in s.cause_zh
    assert "whose plugin did load" in s.cause_en and "插件加载成功" in s.cause_zh and "ms_context.cc" in s.source

def test_eleventh_audit_y_facts_say_what_their_sources_say():
    """docs/facts-audit.md, eleventh sample (seed 36), facts #27 to #40: a tuning fact whose window started after
    the first release whose docs state it, an error-code meaning that said more than the catalogue, and (found on
    the way) an advice window wider than its sources and an HCCL fix that assumed a shortage of device memory."""
    from doctor.versions import satisfies

    facts = {f.id: f for f in matrix().tuning_facts}
    # #31: v0.23.0rc1's Qwen3.5-27B tutorial and v0.23.0's quick start already say Atlas inference products lack it
    f = facts["310p_no_npugraph_ex"]
    held = lambda v: any(satisfies(v, r) for r in f.releases)  # noqa: E731
    assert all(held(v) for v in ("0.23.0rc1", "0.23.0", "0.24.0rc1", "0.25.1rc1", "0.30.0rc2"))
    assert not held("0.22.1rc1")
    assert "v0.23.0rc1/docs/source/tutorials/models/Qwen3.5-27B-Qwen3.6-27B.md" in f.source
    # found on the way (#35's row): no vllm-ascend doc exports OMP_NUM_THREADS=10 before v0.9.1rc3 or at v0.9.2rc1 to
    # v0.10.1rc1; msprechecker's vllm presets expect '10' and name vllm-ascend v0.9.1-dev; Mooncake PD tutorials from v0.11.0rc1
    omp = next(a for a in matrix().tuning_advice if a.id == "OMP_NUM_THREADS.tutorials_10")
    says = lambda v: any(satisfies(v, r) for r in omp.releases)  # noqa: E731
    assert all(says(v) for v in ("0.9.1rc2", "0.9.1", "0.11.0rc1", "0.25.1rc1", "0.30.0rc2"))
    # v0.9.1rc1 was tagged on main, not on the v0.9.1-dev branch msprechecker names (the tuning-windows audit)
    assert not any(says(v) for v in ("0.8.5rc1", "0.9.0rc2", "0.9.1rc1", "0.9.2rc1", "0.10.1rc1"))
    assert "v0.11.0rc1/docs/source/tutorials/multi_node_pd_disaggregation_mooncake.md" in omp.source
    assert "msprechecker" in omp.source
    codes = {(c.family, c.code): c for c in matrix().codes}
    # #36: error_code.json gives EL0005 three possible causes ("The resources have been occupied" ...), not who holds them
    c = codes[("cann_msg", "EL0005")]
    assert "another process" not in c.meaning_en and "被其他进程占用" not in c.meaning_zh
    assert "already occupied" in c.meaning_en and "已被占用" in c.meaning_zh and "close applications not in use" in c.meaning_en
    # found on the way (#38's row): hicann/hccl returns HCCL_E_MEMORY after a failed new or strncpy_s, not a shortage only
    c = codes[("hccl", "3")]
    assert "strncpy_s" in c.fix_en and "strncpy_s" in c.fix_zh and "op_common.cc" in c.source
    assert not c.fix_en.startswith("Check the device memory left")


def test_fifth_sweep_part_q_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part Q: windows
    narrower than the tags show, and cases stated beyond their thread."""
    s = by_id("vllm_ascend.graph_mode_unsupported")  # worker_v1.py warns from v0.7.3rc2; dflash2 check 0.28.0rc1 to 0.30.0rc2
    assert "(v0.7.3 to v0.8.4rc1)" not in s.cause_en and "（v0.7.3 至 v0.8.4rc1）" not in s.cause_zh
    assert "v0.7.3rc2 to v0.8.4rc1" in s.cause_en and "v0.7.3rc2 至 v0.8.4rc1" in s.cause_zh
    assert "0.30.0rc2" in s.cause_en and "0.30.0rc2" in s.cause_zh and "v0.7.3rc2/vllm_ascend/worker" in s.source
    s = by_id("env.hccl_library_load")  # pyhccl_wrapper.py logs error=%s from v0.21.0rc1 (PR #10086)
    assert "From v0.25.1rc1" not in s.cause_en and "自 v0.25.1rc1 起" not in s.cause_zh
    assert "v0.25.1rc1 and later" not in s.fix_en and "v0.25.1rc1 及以后" not in s.fix_zh
    assert "v0.21.0rc1" in s.cause_en and "v0.21.0rc1" in s.cause_zh and "#10086" in s.cause_en
    assert "v0.21.0rc1" in s.fix_en and "v0.21.0rc1" in s.fix_zh and "d8c7fe580c" in s.source
    s = by_id("vllm_ascend.triton_launcher_compile")  # #7782 names no failing build; main pinned 3.2.1 when called fixed
    assert "older than 3.2.0.dev20260322" not in s.cause_en and "早于 3.2.0.dev20260322" not in s.cause_zh
    assert "does not name" in s.cause_en and "没有给出" in s.cause_zh and "3.2.1" in s.cause_en and "3.2.1" in s.cause_zh
    s = by_id("python.deepspeed_op_no_npu_impl")  # op_builder/npu: PinMemoryBuilder first in v0.19.5; v0.12.0-v0.12.3 FusedAdam only
    assert "v0.19.5" in s.cause_en and "v0.19.5" in s.cause_zh and "v0.12.3" in s.cause_en and "v0.12.3" in s.cause_zh
    assert "v0.19.4/op_builder/npu" in s.source
    s = by_id("torch_npu.aclrt_peek_symbol")  # dlinfer #183 establishes neither build; the maintainer only suspected the post builds
    assert "the extension was built against another torch_npu build than the one installed" not in s.cause_en
    assert "该扩展编译时使用的 torch_npu 与当前安装的不同。" not in s.cause_zh
    assert "nm -D" in s.cause_en and "nm -D" in s.cause_zh and "nm -D" in s.fix_en and "nm -D" in s.fix_zh
    s = by_id("vllm_ascend.custom_op_schema_missing")  # batch invariant from v0.16.0rc1; A5 from v0.17.0rc1, by profile from 0.27.1rc1
    assert "in v0.25.1rc1 and 0.26.0rc1" not in s.cause_en and "v0.25.1rc1 与 0.26.0rc1 在" not in s.cause_zh
    assert "v0.16.0rc1" in s.cause_en and "v0.17.0rc1" in s.cause_zh and "0.27.1rc1" in s.cause_en
    assert "0.27.1rc1" in s.cause_zh and "v0.17.0rc1" in s.fix_en and "v0.17.0rc1" in s.fix_zh
    s = by_id("cann.aclnn_561103")  # #4859: the commenter advised checking CANN against the device, no fix reported
    assert "fixed it by making" not in s.cause_en and "匹配而解决" not in s.cause_zh
    assert "CANN version needs to match device version" in s.cause_en and "没有说这样解决了问题" in s.cause_zh
    assert "v0.14.0rc1/docs/source/installation.md" in s.source
    s = by_id("mooncake.ascend_direct_connect")  # #5635 open: a maintainer's checklist, "newer than 8.3RC1"
    assert "The usual causes" not in s.cause_en and "常见原因" not in s.cause_zh
    assert "older than 8.3.RC1" not in s.cause_en and "低于 8.3.RC1" not in s.cause_zh
    assert "newer than 8.3.RC1" in s.cause_en and "高于 8.3.RC1" in s.cause_zh and "newer than 8.3.RC1" in s.fix_en
    s = by_id("vllm_ascend.triton_pointer_not_device")  # the check is on release/3.2.x too (1816790f, 27 Feb 2026)
    assert "(release/3.2.1 and later)" not in s.cause_en and "（release/3.2.1 及以后）" not in s.cause_zh
    assert "release/3.2.x" in s.cause_en and "release/3.2.x" in s.cause_zh and "1816790f37c8" in s.source


def test_torch_npu_release_candidates_have_the_cann_their_tags_readme_names():
    """docs/facts-audit.md, after the eleventh sample: three more torch-npu rows said their CANN was unknown where the
    README at their tag pairs them (2.4.0rc1: CANN 8.0.RC3.alpha001; 2.8.0rc1: 8.3.RC1.alpha001; 2.1.0.post3:
    8.0.RC1), and two of them left out that their x86_64 wheels require torch==X+cpu (their wheels' METADATA)."""
    rows = {str(t.version): t for t in matrix().torch_npu}
    expected = {"2.4.0rc1": ("8.0.RC3.alpha001", "2.4.0+cpu", "v6.0.rc3.alpha001-pytorch2.4.0/README.md"),
                "2.8.0rc1": ("8.3.RC1.alpha001", "2.8.0+cpu", "v7.2.RC1.alpha001-pytorch2.8.0/README.md"),
                "2.1.0.post3": ("8.0.RC1", "2.1.0+cpu", "v2.1.0-6.0.rc1/README.md")}
    for version, (cann, x86, readme) in expected.items():
        row = rows[version]
        assert str(row.cann) == cann and str(row.torch_x86_64) == x86, version
        assert "unknown" not in row.notes and readme in row.source, version


def test_fifth_sweep_part_v_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part V: version windows and
    releases that said more than (or other than) the code, index listings or threads they rest on."""
    s = by_id("vllm_ascend.build_soc_version")  # setup.py: npu-smi from v0.12.0rc1; v0.8.4rc1-v0.11.0 default ASCEND910B1
    assert "setup.py asks npu-smi, which is missing" not in s.cause_en
    assert "setup.py 会调用 npu-smi，而在" not in s.cause_zh
    assert "v0.12.0rc1" in s.cause_en and "v0.12.0rc1" in s.cause_zh and "v0.7.3rc2" in s.cause_en
    assert "ASCEND910B1" in s.cause_en and "ASCEND910B1" in s.cause_zh and "envs.py" in s.source
    s = by_id("torch_npu.npu_op_missing_prose")  # #143: torch-npu 2.4.0, then 2.5.1rc1, with vllm-ascend 0.7.1rc1
    assert "a different release candidate or post build" not in s.cause_en and "别的 rc 或 post 版本" not in s.cause_zh
    assert "2.4.0" in s.cause_en and "2.5.1rc1" in s.cause_zh and "v0.8.4rc1" in s.fix_en
    s = by_id("mooncake.connect_failed")  # #5635: advice, and a user for whom it did not help
    assert "Causes the threads established" not in s.cause_en and "相关讨论确认过的原因" not in s.cause_zh
    assert "does not settle the cause" in s.cause_en and "并未确定原因" in s.cause_zh
    assert "v0.3.10.post1" in s.source
    s = by_id("torch_npu.expandable_segments_off")  # NPU_CHECK_ERROR: only FEATURE_NOT_SUPPORT warns and continues
    assert "when a test reservation of virtual address space (aclrtReserveMemAddress) fails" not in s.cause_en
    assert "（aclrtReserveMemAddress）失败时关闭" not in s.cause_zh
    assert "not supported" in s.cause_en and "特性不支持" in s.cause_zh and "NPUException.h" in s.source
    s = by_id("torch_npu.too_old_for_fla_npu")  # setup.py: per-family minimums; v26.1.0-beta.1-pytorch2.10.0 is 2.10.0.post1
    assert "it comes from an Ascend PyTorch release before v26.1.0-beta.1" not in s.cause_en
    assert "它来自 v26.1.0-beta.1 之前的 Ascend PyTorch 版本" not in s.cause_zh
    assert "2.10.0.post1" in s.cause_en and "2.10.0.post1" in s.cause_zh and "2.13.0" in s.cause_zh
    assert "TORCH_NPU_GDN_FIX_MINIMUMS" in s.source
    s = by_id("vllm_ascend.triton_npu_compiler_missing")  # release/3.2.1 has no bishengir-opt; release/3.2.x never raises
    assert "(utils.py at release/3.2.1 and a84b1eb)" not in s.fix_en
    assert "（release/3.2.1 与 a84b1eb 的 utils.py）" not in s.fix_zh
    assert "release/3.2.x" in s.cause_en and "release/3.2.x" in s.cause_zh and "release/3.2.x" in s.fix_en
    assert "ebf849866d937fba70b0518602abd5d1aef3ee25" in s.source
    s = by_id("python.torch_npu_no_wheel")  # pip's listing: Python 3.11 from 2.1.0.post8, with gaps
    assert "3.10 and 3.11 throughout" not in s.fix_en and "3.10 与 3.11 全部版本" not in s.fix_zh
    assert "2.1.0.post8" in s.fix_en and "2.1.0.post8" in s.fix_zh
    assert "the reply \"torch-npu" not in s.cause_en and "reporter's own" in s.cause_en and "报告者自己" in s.cause_zh
    s = by_id("vllm_ascend.no_register")  # #3403: vLLM lists the entry point, so vllm-ascend's metadata was installed
    assert "no vllm-ascend was installed" not in s.cause_en and "中并未安装 vllm-ascend" not in s.cause_zh
    assert "metadata" in s.cause_en and "元数据" in s.cause_zh


def test_fifth_sweep_part_u_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part U: windows and
    version relations that were wider or narrower than the code, images or threads they rest on."""
    s = by_id("vllm_ascend.mla_rope_cos_cached")  # v0.9.1rc1 / v0.9.2rc1 builders do not read cos_cached
    assert "in the tags read from v0.9.1 to v0.13.0rc1" not in s.cause_en
    assert "在所读的 v0.9.1 至 v0.13.0rc1 各标签中" not in s.cause_zh
    assert "v0.9.2rc1" in s.cause_en and "v0.9.2rc1" in s.cause_zh and "#5516" in s.cause_en
    assert "v0.9.2rc1/vllm_ascend/attention/mla_v1.py" in s.source
    s = by_id("torch_npu.torch_namespace_npu_op")  # the 1.11.0 builds only warn up to v6.0.rc2.1
    assert "1.11.0 (v5.0.rc2 to v6.0.rc1)" not in s.cause_en and "（v5.0.rc2 至 v6.0.rc1）" not in s.cause_zh
    assert "v6.0.rc2.1" in s.cause_en and "v6.0.rc2.1" in s.cause_zh and "v6.0.rc2.1-pytorch1.11.0" in s.source
    s = by_id("vllm.api_mismatch")  # #4863's openEuler image builds vLLM v0.11.2; the others build v0.11.0
    assert "the v0.11.0rc3 image's" not in s.cause_en and "v0.11.0rc3 镜像的" not in s.cause_zh
    assert "v0.11.0rc3-openeuler" in s.cause_en and "v0.11.0rc3-openeuler" in s.cause_zh
    assert "v0.11.2" in s.cause_en and "v0.11.2" in s.cause_zh and "Dockerfile.openEuler" in s.source
    s = by_id("vllm_ascend.plugin_load_failed")  # logger.py imports vllm.envs from 0.22.1rc1, not 0.21.0rc1
    assert "(vllm.envs, vllm.logging_utils)" not in s.cause_en and "（vllm.envs、vllm.logging_utils）" not in s.cause_zh
    assert "0.22.1rc1" in s.cause_en and "0.22.1rc1" in s.cause_zh and "v0.22.1rc1/vllm_ascend/logger.py" in s.source
    s = by_id("driver.watchdog_timeout")  # #5468: the plog is a commenter's; CANN 8.3 vs 24.1 is the reporter's view
    assert "a CANN the thread found does not support" not in s.cause_en and "该 issue 确认" not in s.cause_zh
    assert "commenter" in s.cause_en and "评论者" in s.cause_zh and "reporter concluded" in s.cause_en
    assert "cann-container-image/issues/58" in s.source
    s = by_id("torch_npu.npu_device_unknown")  # autoload: torch >= 2.5 and a torch_npu with the entry point
    assert "(torch before 2.5 does not load it by itself)" not in s.cause_en and "（2.5 之前的 torch 不会自动加载）" not in s.cause_zh
    assert "v7.0.RC1.alpha001-pytorch2.5.1" in s.cause_en and "v7.0.RC1.alpha001-pytorch2.5.1" in s.cause_zh
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in s.cause_en and "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in s.cause_zh
    assert "v7.0.RC1.alpha001-pytorch2.5.1/setup.py" in s.source


def test_fifth_sweep_part_r_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part R: version,
    release and window relations checked against the tags, wheels, sdists and threads."""
    s = by_id("mooncake.master_not_found")  # the 0.3.0b1 wheel has no script (seventeenth sample: the cp310 wheels from 0.3.0b3 on have it)
    assert "0.3.0b3 or later" not in s.fix_en and "0.3.0b3 及以后" not in s.fix_zh
    assert "early 0.3.0 betas" not in s.cause_en and "早期 0.3.0 测试版" not in s.cause_zh
    assert "0.3.0b1" in s.cause_en and "0.3.0b1" in s.cause_zh and "from 0.3.0b3 on" in s.fix_en
    assert "从 0.3.0b3 起" in s.fix_zh and "0.3.1/#files" in s.source
    s = by_id("mooncake.transfer_failed")  # #5635: a maintainer's advice on an open thread, CANN newer than 8.3.RC1
    assert "Causes the threads established" not in s.cause_en and "相关讨论确认过的原因" not in s.cause_zh
    assert "older than 8.3.RC1" not in s.cause_en and "低于 8.3.RC1" not in s.cause_zh
    assert "newer than 8.3.RC1" in s.cause_en and "高于 8.3.RC1" in s.cause_zh and "advice" in s.cause_en
    s = by_id("cann.custom_op_cann_mismatch")  # #804: a pre-release 8.2.RC1 build renamed a half kernel, not intrinsics
    assert "AscendC kernel intrinsics in 8.2" not in s.cause_en and "8.2 的 AscendC 内核接口" not in s.cause_zh
    assert "8.2.RC1.B020" in s.cause_en and "8.2.RC1.B020" in s.cause_zh and "#255" in s.cause_en
    assert "#180" in s.cause_zh and "#17059" in s.cause_en
    s = by_id("torch_npu.msprof_symbol")  # #326/#328 suggest post4; post8 is paired with CANN 9.1.0
    assert "as the fix" not in s.cause_en and "作为解决办法" not in s.cause_zh
    assert "2.7.1.post4 or newer" not in s.fix_en and "2.7.1.post4 或更新" not in s.fix_zh
    assert "suggest" in s.cause_en and "建议" in s.cause_zh and "2.7.1.post8" in s.fix_en and "9.1.0" in s.fix_zh
    s = by_id("torch_npu.version_not_published")  # pip's listing: Python 3.11 from 2.1.0.post8, no 2.3.1
    assert "3.10 and 3.11 throughout" not in s.cause_en and "3.10 与 3.11 全部版本" not in s.cause_zh
    assert "is not PyPI's list" not in s.cause_en
    assert "3.11 from 2.1.0.post8" in s.cause_en and "3.11 自 2.1.0.post8 起" in s.cause_zh
    assert "PyPI's own list for Python 3.11" in s.cause_en and "Python 3.11 的列表" in s.cause_zh
    s = by_id("vllm_ascend.custom_kernels_needed")  # envs.py: COMPILE_CUSTOM_KERNELS defaults to "1" from v0.8.4rc1
    assert "from v0.9.1 setup.py builds it" not in s.cause_en and "自 v0.9.1 起 setup.py 默认构建" not in s.cause_zh
    assert "v0.8.4rc1" in s.cause_en and "v0.8.4rc1" in s.cause_zh and "#3342" in s.cause_en and "#3342" in s.cause_zh
    assert "v0.8.4rc1/vllm_ascend/envs.py" in s.source
    s = by_id("torch_npu.torchair_backend_missing")  # COMPATIBILITY.en.md: later .postN are paired with later CANN
    assert "Install the latest .postN" not in s.fix_en and "的最新 .postN（" not in s.fix_zh
    assert "2.1.0.post5" in s.fix_en and "2.1.0.post5" in s.fix_zh and "8.0.RC1" in s.fix_en
    assert "COMPATIBILITY.en.md" in s.source


def test_fifth_sweep_part_s_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part S: the version
    windows, releases and "from X" relations that the code at the tags, PyPI or the vendor's
    references did not bear out."""
    s = by_id("vllm_ascend.unsupported_on_310p_prose")  # FAQ v0.9.2rc1 lists 300I; [Experimental] only from v0.10.0rc1
    assert "FAQ lists the Atlas 300I inference series (Atlas 300I Duo) as experimental" not in s.cause_en
    assert "FAQ 将 Atlas 300I 推理系列（Atlas 300I Duo）列为实验性支持" not in s.cause_zh
    assert "v0.10.0rc1" in s.cause_en and "v0.11.0rc1" in s.cause_en and "v0.11.0rc1" in s.cause_zh
    assert "[Experimental]" in s.cause_en and "[Experimental]" in s.cause_zh and "single_node_300i.md" in s.source
    s = by_id("vllm_ascend.rank_table_env_unset")  # the check is not in v0.9.2rc1; examples dir renamed in v0.10.0rc1
    assert "0.9.1rc2 to 0.11.0)" not in s.cause_en and "0.9.1rc2 至 0.11.0）" not in s.cause_zh
    assert "0.9.2rc1" in s.cause_en and "0.9.2rc1" in s.cause_zh and "0.12.0rc1" in s.cause_en
    assert "disaggregated_prefill_v1" in s.fix_en and "disaggregated_prefill_v1" in s.fix_zh
    s = by_id("cann.hccl_exec_timeout_idle")  # 1836 s from the 8.0.RC2 reference; 6.0.RC1 said 600 s, 6.0.1 1800 s
    assert "1800 s in older releases" not in s.cause_en and "旧版本及 EI0002 文本中为 1800 秒" not in s.cause_zh
    assert "8.0.RC2" in s.cause_en and "8.0.RC2" in s.cause_zh and "600" in s.cause_en and "600" in s.cause_zh
    assert "only on Atlas A2/A3" not in s.fix_en and "Atlas 350" in s.fix_en and "Atlas 350" in s.fix_zh
    s = by_id("vllm_ascend.triton_ascend_index_uv")  # PyPI: 3.2.0rc2, 3.2.0rc4, 3.2.0; "only on Huawei's mirror" unshown
    assert "published only on Huawei" not in s.cause_en and "只发布在华为" not in s.cause_zh
    assert "3.2.0rc4" in s.cause_en and "3.2.0rc4" in s.cause_zh and "#16732" in s.cause_en and "#16732" in s.cause_zh
    s = by_id("env.dlinfer_missing")  # PyPI: aarch64 wheels only; cp311 from 0.2.3.post2, cp38/cp39 up to 0.2.2
    assert "cover Python 3.8 to 3.10" not in s.fix_en and "覆盖 Python 3.8 到 3.10" not in s.fix_zh
    assert "3.11" in s.fix_en and "3.11" in s.fix_zh and "0.2.3.post2" in s.fix_en and "aarch64" in s.fix_zh
    assert "pypi.org/project/dlinfer-ascend" in s.source
    s = by_id("vllm_ascend.wheel_device_type")  # 0.26.0rc1 still has (A2) wheels on PyPI; sdists only from 0.27.1rc1
    assert "From 0.26.0rc1 PyPI has sdists only" not in s.cause_en and "自 0.26.0rc1 起 PyPI 只有 sdist" not in s.cause_zh
    assert "from 0.27.1rc1 PyPI has sdists only" in s.cause_en and "自 0.27.1rc1 起 PyPI 只有 sdist" in s.cause_zh
    assert "vllm-ascend/0.26.0rc1/#files" in s.source


def test_fifth_sweep_part_t_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part T: version relations
    that were wrong or wider than the code, tags, wheels or threads they rest on."""
    s = by_id("torch_npu.flex_attention_unsupported_on_npu")  # torch 2.7.1 wheel: cuda and cpu only
    assert "at torch v2.7.1 it accepts only cuda, cpu, xpu, hpu or mps" not in s.cause_en
    assert "torch v2.7.1 中只接受 cuda、cpu、xpu、hpu 或 mps" not in s.cause_zh
    assert "only cuda and cpu at torch 2.7.1" in s.cause_en and "torch 2.7.1 只接受 cuda 与 cpu" in s.cause_zh
    assert "2.10.0.post7" in s.cause_en and "2.10.0.post7" in s.cause_zh and "2.12.0.post3" in s.cause_en
    assert "not established here" not in s.cause_en.split("torch_npu replaces")[-1]
    assert "13 August" in s.cause_en and "8 月 13 日" in s.cause_zh and "6e7c1dcf" in s.source
    s = by_id("torch.plus_cpu_index")  # index metadata: +cpu up to 2.11.0.post3, plain torch from 2.12.0
    assert not s.cause_en.startswith("torch-npu's x86_64 wheels require")
    assert "2.11.0.post3" in s.cause_en and "2.11.0.post3" in s.cause_zh
    assert "2.12.0" in s.cause_en and "2.12.0" in s.cause_zh and "2.12.0" in s.fix_en and "2.12.0" in s.fix_zh
    assert "torch==2.13.0.*" in s.source
    s = by_id("vllm_ascend.transformers_arch")  # PR #5250: >=4.57.3 from v0.13.0rc1, not on record as #3819's fix
    assert "fixed by pinning in PR #5250" not in s.source
    assert "v0.13.0rc1" in s.cause_en and "v0.13.0rc1" in s.cause_zh and "<=4.57.1" in s.cause_en
    s = by_id("mooncake.ascend_acl_context")  # PR #3998 (merged) sets the context on the DummyClient copy RPCs
    assert "#3998" in s.cause_en and "#3998" in s.cause_zh and "#3998" in s.fix_en and "#3998" in s.fix_zh
    assert "pull/3998" in s.source and "#3974" in s.fix_en

def test_tuning_windows_the_script_does_not_check_say_what_the_releases_say():
    """docs/facts-audit.md, "Tuning windows the script does not check": advice and fact windows that
    bench/tuning_windows.py --facts does not probe, each end read at every release from v0.7.1rc1 to 0.30.0rc2."""
    from doctor.versions import satisfies

    advice = {a.id: a for a in matrix().tuning_advice}
    facts = {f.id: f for f in matrix().tuning_facts}

    def within(row):
        return lambda v: any(satisfies(v, r) for r in row.releases)

    # the FAQ's OOM entry is at v0.7.3 and v0.7.3.post1 and again from v0.9.0rc1; v0.8.4rc1 to v0.8.5rc1 have
    # neither it nor a tuning guide; from v0.14.0rc1 the release sets expandable_segments itself
    a = advice["PYTORCH_NPU_ALLOC_CONF.faq"]
    says = within(a)
    assert all(says(v) for v in ("0.7.3", "0.7.3.post1", "0.9.0rc1", "0.9.1rc1", "0.13.0"))
    assert not any(says(v) for v in ("0.7.3rc2", "0.8.4rc1", "0.8.4rc2", "0.8.5rc1", "0.14.0rc1"))
    assert "v0.7.3/docs/source/faqs.md" in a.source and "v0.8.5rc1/docs/source/faqs.md" in a.source
    # the tuning guide says HCCL_OP_EXPANSION_MODE=AIV at every release it exists in (not at v0.9.2rc1, which has none)
    a = advice["HCCL_OP_EXPANSION_MODE.tuning_guide"]
    says = within(a)
    assert all(says(v) for v in ("0.9.1rc2", "0.9.1", "0.10.0rc1", "0.10.1rc1", "0.13.0", "0.20.2rc1", "0.30.0rc2"))
    assert not any(says(v) for v in ("0.9.1rc1", "0.9.2rc1"))
    assert "v0.9.1rc2/docs/source/developer_guide/performance/optimization_and_tuning.md" in a.source
    # OMP_NUM_THREADS=1 is the DeepSeek-R1 tutorial's alone: the V3.1, V3.2 and V4 tutorials export 10
    a = advice["OMP_NUM_THREADS.tutorials_1"]
    assert a.who_en == "vllm-ascend's DeepSeek-R1 tutorial" and a.who_zh == "vllm-ascend DeepSeek-R1 教程"
    assert "DeepSeek tutorials export" not in a.source
    # v0.9.1rc1 is not on msprechecker's v0.9.1-dev branch and none of its docs or examples sets OMP_NUM_THREADS=10
    a = advice["OMP_NUM_THREADS.tutorials_10"]
    assert not within(a)("0.9.1rc1") and within(a)("0.9.1rc2")
    assert "tree/v0.9.1-dev" in a.source
    # v0.9.1rc2 to v0.9.1 have no 300I tutorial (their FAQ lists 300I Duo / Pro as not supported yet)
    f = facts["310p_dtype"]
    held = within(f)
    assert all(held(v) for v in ("0.9.1rc1", "0.9.2rc1", "0.18.0", "0.30.0rc2"))
    assert not any(held(v) for v in ("0.9.0rc2", "0.9.1rc2", "0.9.1rc3", "0.9.1"))
    assert "v0.9.1/docs/source/faqs.md" in f.source
    # the 310P tutorial warns against automatic max-model-len from v0.16.0rc1 (the Qwen3-30B-A3B tutorial from v0.23.0)
    f = facts["310p_max_model_len"]
    held = within(f)
    assert all(held(v) for v in ("0.16.0rc1", "0.17.0rc1", "0.18.0rc1", "0.18.0", "0.23.0", "0.30.0rc2"))
    assert not held("0.15.0rc1")
    assert "v0.16.0rc1/docs/source/tutorials/hardwares/310p.md" in f.source and "Qwen3-30B-A3B.md" in f.source
    # the >=0 facts whose notes said more than the page they cited: the code and docs that say the rest
    f = facts["mooncake_hugepage"]
    assert "mooncake-store/include/utils.h" in f.source and "hicache-quick-start.md" in f.source
    f = facts["mooncake_memlock"]
    assert "troubleshooting/troubleshooting.md" in f.source and "getting_started/build.md" in f.source
    f = facts["kv_cache_estimate"]
    assert "vllm/config/model.py" in f.source and "replicate the KV heads" in f.source


def test_fifth_sweep_part_p_version_claims_say_what_the_code_says():
    """docs/facts-audit.md, fifth sweep of signature causes (version claims), part P: release,
    branch and wheel windows that were wider, narrower or other than the code, PRs and index show."""
    s = by_id("vllm_ascend.no_platform")  # v0.7.3rc1 to v0.7.3.post1: register() imports patch_module first
    assert "register() only returns the platform's name" not in s.cause_en
    assert "register() 只返回平台类名" not in s.cause_zh
    assert "patch_module" in s.cause_en and "patch_module" in s.cause_zh and "v0.7.3/vllm_ascend/patch_module.py" in s.source
    s = by_id("mooncake.hixl_channel_segment")  # Mooncake#3791: host page-table granularity, 2 MB huge pages if available
    assert "HDK 25.5.0 and later use 2 MB." not in s.cause_en and "HDK 25.5.0 及之后使用 2 MB。" not in s.cause_zh
    assert "huge pages if available" in s.cause_en and "有大页时为 2 MB" in s.cause_zh
    assert "which uses 2 MB host page tables" not in s.fix_en and "其使用 2 MB 主机页表" not in s.fix_zh
    s = by_id("mooncake.memory_registration_failed")  # 'Error is: {e}' in v0.11.0rc1 to v0.11.0
    assert "in v0.11.0's KV-pool engine" not in s.cause_en and "；v0.11.0 的 KV pool 引擎中" not in s.cause_zh
    assert "v0.11.0rc1 to v0.11.0" in s.cause_en and "v0.11.0rc1 到 v0.11.0" in s.cause_zh
    s = by_id("mooncake.glibcxx")  # PyPI: mooncake-transfer-engine 0.3.12+ manylinux_2_28; the -npu package 2_35
    assert "(wheels are manylinux_2_35, built with GCC 12)" not in s.cause_en
    assert "（wheel 为 manylinux_2_35，用 GCC 12 编译）" not in s.cause_zh
    assert "manylinux_2_28" in s.cause_en and "manylinux_2_28" in s.cause_zh and "manylinux_2_28" in s.fix_en
    assert "mooncake-transfer-engine-npu" in s.cause_en and "mooncake-transfer-engine-npu" in s.cause_zh
    assert "pull/2605" in s.source
    s = by_id("cann.bisheng_simd_vf_compiler_changed")  # sdists: 0.4.0 keeps a non-static MulsMaskSimpleSoftmax, 0.4.1 none
    assert "a flash_attn_npu release that has the static __simd_vf__ fixes" not in s.fix_en
    assert "已包含 __simd_vf__ 静态化修复" not in s.fix_zh
    assert "0.4.1" in s.fix_en and "0.4.1" in s.fix_zh and "#258" in s.cause_en and "#258" in s.cause_zh
    s = by_id("python.vllm_ascend_no_distribution")  # PyPI: wheels for 0.9.0rc1 to 0.26.0rc1 (seventh sweep, part H)
    assert "publishes wheels only for 0.9.0rc1 to 0.9.2rc1" not in s.cause_en
    assert "只为 0.9.0rc1 至 0.9.2rc1 发布了 wheel" not in s.cause_zh
    assert "0.26.0rc1" in s.cause_en and "0.26.0rc1" in s.cause_zh and "manylinux_2_24" in s.cause_en
    assert "(3.12, for one)" not in s.cause_en and "（例如 3.12）" not in s.cause_zh
    s = by_id("vllm.api_mismatch_wrapped")  # PR #10595: CI moved v0.21.0 -> v0.22.1; lm-eval: moved since vllm#30200
    assert "which vLLM v0.22.1 moved to vllm.renderers.hf" not in s.cause_en
    assert "而 vLLM v0.22.1 已将其移到" not in s.cause_zh
    assert "#30200" in s.cause_en and "#30200" in s.cause_zh and "v0.21.0" in s.cause_en and "v0.21.0" in s.cause_zh
    s = by_id("python.mindspeed_fp8_unsupported")  # removed by 1a38359e; absent from 26.0.0_core_r0.12.1 on
    assert "The check is in the release branches read (core_r0.10.0, 2.3.0_core_r0.12.1)" not in s.cause_en
    assert "所读的发布分支（core_r0.10.0、2.3.0_core_r0.12.1）中有此检查" not in s.cause_zh
    assert "26.0.0_core_r0.12.1" in s.cause_en and "26.0.0_core_r0.12.1" in s.cause_zh and "1a38359e" in s.source
    s = by_id("torch_npu.not_installed")  # #201 is the v0.7.3-dev branch's fix; main's Dockerfile got it in #209
    assert "until PR #201" not in s.cause_en and "在 PR #201 之前没有安装" not in s.cause_zh
    assert "#209" in s.cause_en and "#209" in s.cause_zh and "pull/209" in s.source

def test_error_code_sweep_part_eb_meanings_say_what_the_catalogues_say():
    """docs/facts-audit.md, error-code sweep part B: meanings and fixes that said more than (or other than) Huawei's
    tables, catalogue, headers and torch_npu's code; each now says what those establish, cases named as cases."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("acl", "107020")]  # aclError table: check the task orchestration or set a reasonable timeout
    assert not c.fix_en.startswith("Usually") and not c.fix_zh.startswith("通常")
    assert "task orchestration" in c.fix_en and "业务编排" in c.fix_zh
    for code, text in (("507015", "AI Core执行异常"), ("507035", "vector core执行异常")):
        c = codes[("acl", code)]  # the table says only that; no "kernel fault"
        assert "kernel fault" not in c.meaning_en and "算子故障" not in c.meaning_zh, code
        assert text in c.meaning_en and text in c.meaning_zh, code
    assert "often fixed" not in codes[("acl", "507035")].fix_en
    c = codes[("acl", "507033")]  # E30006: the AI CPU OPP tampered with or a device ECC error, not an OPP/driver misfit
    assert "does not fit the driver" not in c.fix_en and "与驱动不匹配" not in c.fix_zh
    assert "tampered" in c.fix_en and "ECC" in c.fix_en and "篡改" in c.fix_zh and "error_code.json" in c.source
    assert "bad visible-device setting" not in c.fix_en and "invalid argument" in c.fix_en
    c = codes[("acl", "507046")]  # the table: collect the logs for technical support
    assert not c.fix_en.startswith("Usually") and "technical support" in c.fix_en and "技术支持" in c.fix_zh
    c = codes[("acl", "507048")]  # torch_npu's guide: one case with EI0002
    assert "Almost always" not in c.fix_en and "几乎总是" not in c.fix_zh
    assert "In the case in torch_npu's troubleshooting guide" in c.fix_en and "EI0002" in c.fix_zh
    c = codes[("acl", "161002")]  # aclnn return codes: '参数校验错误', a dtype example; no shape or format
    assert "dtype, shape or format" not in c.meaning_en and "形状或格式" not in c.meaning_zh
    assert "参数校验错误" in c.meaning_en and "类型推导" in c.meaning_zh
    c = codes[("hccl", "6")]  # EI0006: 'Getting socket times out', the catalogue's three checks
    assert "another rank is missing or stuck" not in c.fix_en and "有 rank 缺失或卡住" not in c.fix_zh
    assert "Getting socket times out" in c.fix_en and "HCCL_CONNECT_TIMEOUT" in c.fix_zh and "EI0006" in c.source
    c = codes[("hccl", "7")]  # EJ0001: 'Maybe the last training process is running'
    assert "still holds the device network" not in c.fix_en and "仍占用设备网络" not in c.fix_zh
    assert "Maybe the last training process is running" in c.fix_en and "10 秒" in c.fix_zh
    c = codes[("hccl", "9")]  # a timeout: a failed, slow or unreachable peer, not only one that never answered
    assert "A peer never answered" not in c.fix_en and "对端始终没有响应" not in c.fix_zh
    assert "too slow" in c.fix_en and "HCCL_EXEC_TIMEOUT" in c.fix_zh and "EI0002" in c.source
    c = codes[("hccl", "12")]  # 'roce connect fail': no NIC named
    assert "between device NICs" not in c.meaning_en and "device 网卡之间" not in c.meaning_zh
    assert "roce connect fail" in c.meaning_en and "roce connect fail" in c.meaning_zh
    c = codes[("hccl", "13")]  # 'tcp transfer fail'; no "usually"
    assert "after the connection was made" not in c.meaning_en and "A peer usually exited" not in c.fix_en
    assert "tcp transfer fail" in c.meaning_en and "tcp transfer fail" in c.meaning_zh and "通常是" not in c.fix_zh
    c = codes[("hccl", "23")]  # 'retry constraint'; HCCL_OP_RETRY_ENABLE off by default
    assert "failed or was not allowed" not in c.meaning_en and "persists" not in c.fix_en
    assert "retry constraint" in c.meaning_en and "默认关闭" in c.meaning_zh and "HCCL_OP_RETRY_ENABLE.md" in c.source
    c = codes[("dcmi", "-8010")]  # 'Message sending failed.': no device named
    assert "to the device" not in c.meaning_en and "向设备" not in c.meaning_zh and "does not answer" not in c.fix_en
    assert "Message sending failed." in c.meaning_en and "Message sending failed." in c.meaning_zh
    c = codes[("adxl", "103902")]  # 'Failed to get channel'; a disconnecting channel returns it too
    assert not c.fix_en.startswith("An earlier connect failed") and "Failed to get channel" in c.fix_en
    assert "断开" in c.fix_zh and "adxl_inner_engine.cc" in c.source
    c = codes[("pta", "ERR01002")]  # the guide: check device, dtype and such attributes
    assert "dtype" in c.fix_en and "dtype" in c.fix_zh and "move the tensors to the NPU" not in c.fix_en
    c = codes[("pta", "ERR99999")]  # printed at exit only when the uncaught exception carries no ERRnnnnn
    assert "after any uncaught error" not in c.fix_en and "任何未捕获的错误之后" not in c.fix_zh
    assert "not an NPU error" not in c.meaning_en and "ERRnnnnn" in c.meaning_en and "ERRnnnnn" in c.meaning_zh
    assert "_error_code.py" in c.source
    c = codes[("pta", "ERR02005")]  # DIST_ERROR(ErrCode::INTERNAL): also LCCL, SHMEM set-up, the module loader
    assert "among others" in c.meaning_en and "SHMEM" in c.meaning_en and "SHMEM" in c.meaning_zh
    assert "NPUSHMEMExtension.cpp" in c.source and "ProcessGroupLCCL.cpp" in c.source

def test_error_code_sweep_part_ea_meanings_say_what_the_catalogues_say():
    """docs/facts-audit.md, error-code sweep, part A: meanings and fixes that said more than (or other than)
    Huawei's error_code.json, HCCL's fault-diagnosis guide, the runtime, opbase or torch_npu code and the cases
    on record; they now give the catalogue's causes and solutions, cases named as cases."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("cann_msg", "EH9999")]  # Ascend/pytorch #7: one case, put down to Python dependencies
    assert "means CANN's Python dependencies" not in c.fix_en and "表示 CANN 的 Python 依赖" not in c.fix_zh
    assert "Ascend/pytorch #7" in c.fix_en and "Ascend/pytorch #7" in c.fix_zh and "pytorch/issues/7" in c.source
    c = codes[("cann_msg", "EI0002")]  # error_code.json: four possible causes, the slow NPU and HCCL_EXEC_TIMEOUT among them
    assert not c.fix_en.startswith("Another rank failed first, ranks issued different collectives")
    assert "HCCL_EXEC_TIMEOUT" in c.fix_en and "HCCL_EXEC_TIMEOUT" in c.fix_zh and "error cqe" in c.fix_zh
    c = codes[("cann_msg", "EI0003")]  # error_code.json: no cause; "Try again with a valid argument."
    assert "usually comes from the model's parallel configuration" not in c.fix_en and "通常来自模型的并行配置" not in c.fix_zh
    assert "gives no cause" in c.fix_en and "未给出原因" in c.fix_zh
    c = codes[("cann_msg", "EI0004")]  # 'The ranktable or rank is invalid'; the guide: path, permissions, format or configuration
    assert "or this rank is not in it" not in c.meaning_en and "或本 rank 不在其中" not in c.meaning_zh
    assert "The ranktable or rank is invalid" in c.meaning_en and "super_device_id" in c.meaning_zh
    assert "rank_table_load_fail.md" in c.source
    c = codes[("cann_msg", "EI0007")]  # error_code.json: resource insufficiency, not "the device's resources"
    assert "the device's resources are exhausted" not in c.meaning_en and "设备资源已耗尽" not in c.meaning_zh
    assert "Notify register" in c.meaning_en and "Notify 寄存器" in c.meaning_zh
    c = codes[("cann_msg", "EI0015")]  # no cause in the catalogue; the guide's cases include creation calls too far apart
    assert "some rank never called the communicator-creation API, or cannot reach" not in c.meaning_en
    assert "有 rank 未调用通信域创建接口，或无法连到 root" not in c.meaning_zh
    assert "HCCL_CONNECT_TIMEOUT" in c.meaning_en and "120 秒" in c.meaning_zh and "HCCL_CONNECT_TIMEOUT" in c.fix_en
    assert "cluster_info_nego.md" in c.source
    c = codes[("cann_msg", "EI0019")]  # the host port is 'already bound'; 'another process' is the device-port case
    assert "; another process holds it" not in c.meaning_en and "；该端口已被其他进程占用" not in c.meaning_zh
    assert "60000 to 60031" in c.meaning_en and "16666" in c.meaning_zh and "cluster_info_nego.md" in c.source
    c = codes[("cann_msg", "EL0002")]  # error_code.json: 'The device ID is invalid.', no cause
    assert "no visible NPU has that index" not in c.meaning_en and "可见的 NPU 中没有该序号" not in c.meaning_zh
    assert "gives no cause" in c.meaning_en and "未给出原因" in c.meaning_zh
    c = codes[("cann_msg", "EL0007")]  # error_code.json: 'The resources have been occupied', not by whom
    assert "held by another process" not in c.meaning_en and "被其他进程持有" not in c.meaning_zh
    assert "have been occupied" in c.meaning_en and "on this API" in c.meaning_en and "资源已被占用" in c.meaning_zh
    c = codes[("cann_msg", "EZ3003")]  # vllm-ascend #4454: TransData exists; each ops kernel rejected its groups
    assert not c.meaning_en.startswith("No operator information library has this operator")
    assert "所有算子信息库中都没有该算子" not in c.meaning_zh and "a newer CANN may implement" not in c.fix_en
    assert "#4454" in c.meaning_en and "groups" in c.meaning_zh and "issues/4454" in c.source
    c = codes[("cann_msg", "EZ0501")]  # error_code.json: 'IR for the operator type is not registered', not 'this CANN lacks it'
    assert "the model uses an operator this CANN does not have" not in c.meaning_en and "当前 CANN 没有的算子" not in c.meaning_zh
    assert "IR for the operator type is not registered" in c.meaning_en and "gitee.com/ascend" in c.fix_en
    c = codes[("cann_msg", "EE1002")]  # error_code.json: 'The timeout interval may be improperly set'; #5551 a case
    assert not c.fix_en.startswith("A symptom:") and not c.fix_zh.startswith("这是表象")
    assert "improperly set" in c.fix_en and "#5551" in c.fix_zh and "error_code.json" in c.source
    c = codes[("cann_msg", "EI0011")]  # the guide's QP case is one; hcomm's hrtMalloc reports it too; not HCCL_BUFFSIZE
    assert "(for RoCE queue pairs)" not in c.meaning_en and "（用于 RoCE 队列对）" not in c.meaning_zh
    assert "or reduce HCCL_BUFFSIZE" not in c.fix_en and "QP" in c.meaning_en and "QP" in c.meaning_zh
    assert "adapter_rts.cc" in c.source and "error_code.json" in c.source
    c = codes[("cann_msg", "EI0012")]  # no source names a multi-bit ECC error; the memory cause was left out
    assert "ECC" not in c.fix_en and "ECC" not in c.fix_zh
    assert "freed before the operator finished" in c.fix_en and "页表转换失败" in c.fix_zh and "error_code.json" in c.source
    c = codes[("cann_msg", "EL0004")]  # error_code.json: 'Available memory is insufficient', no component named
    assert not c.fix_en.startswith("The NPU is out of memory") and not c.fix_zh.startswith("NPU 内存不足")
    assert "OutOfMemoryError" in c.fix_en and "OutOfMemoryError" in c.fix_zh and "NPUException.cpp" in c.source
    c = codes[("cann_msg", "E69999")]  # CANN's pages: an internal code of module 6, which their module list does not name
    assert "reported by an operator implementation" not in c.meaning_en and "算子实现报告" not in c.meaning_zh
    assert "9000 to 9999" in c.meaning_en and "#1736" in c.meaning_zh and "atlaserrorcode_15_0314" in c.source
    c = codes[("rt_internal", "0x7020009")]  # errcode_manage.cc: 'open tsd error'; the sources do not expand TSD
    assert "task scheduler daemon" not in c.meaning_en and "任务调度守护进程" not in c.meaning_zh
    assert "does not verify on this driver" not in c.fix_en and "在此驱动上校验失败" not in c.fix_zh
    assert "open tsd error" in c.meaning_en and "507000" in c.meaning_zh and "errcode_manage.cc" in c.source
    c = codes[("rt_internal", "0x7020010")]  # EJ0001's reason: 'Maybe the last training process is running'
    assert "a previous process still holds the device" not in c.fix_en and "则之前的进程仍占用设备" not in c.fix_zh
    assert "Maybe the last training process is running" in c.fix_en and "Maybe the last training process" in c.fix_zh
    c = codes[("cann_msg", "EZ1001")]  # op_log.h: errors beginning with 1; vllm-ascend #237: a missing opp_kernel package
    assert "before any kernel ran" not in c.meaning_en and "尚未执行任何 kernel" not in c.meaning_zh
    assert "161001" in c.meaning_en and "opp_kernel" in c.meaning_zh and "opp_kernel" in c.fix_en
    assert "op_log.h" in c.source and "issues/237" in c.source
    c = codes[("cann_msg", "EI0009")]  # the vendor page: check the NPUs without errors or the peer NPU; hccn_tool is ours
    assert "The vendor asks to check the NPUs that report no error and the peer NPU: their logs" not in c.fix_en
    assert "厂商建议检查未报错的 NPU 以及对端 NPU：查看它们的日志" not in c.fix_zh
    assert "gives no cause" in c.fix_en and "未给出原因" in c.fix_zh and "hccn_tool" in c.fix_en

def test_sixth_sweep_part_s6d_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part D: components, mechanisms and
    candidates the cited threads and code do not establish."""
    s = by_id("mooncake.config_path_unset")  # mooncake_backend.py: the KV pool's Mooncake backend reads it, no connector else
    assert "The Mooncake connector needs" not in s.cause_en and "Mooncake connector 需要通过" not in s.cause_zh
    assert "AscendStoreConnector" in s.cause_en and "AscendStoreConnector" in s.cause_zh and "kv_pool.md" in s.source
    s = by_id("python.transformers_unrecognized_config")  # the message's list does not tell the two candidates apart
    assert "tells them apart" not in s.cause_en and "可区分这两种情况" not in s.cause_zh
    assert "model card" in s.cause_en and "模型卡" in s.cause_zh
    s = by_id("env.dev_shm_too_small")  # store_runner.cc at 008e3c78: the footprint limit is set before the clamp
    assert "shrinks the object store" not in s.cause_en and "把 object store 缩小" not in s.cause_zh
    assert "store_runner.cc:83" in s.cause_en and "footprint" in s.cause_en and "分配器的上限" in s.cause_zh
    assert "as Ray's message suggests" not in s.fix_en and "按 Ray 消息的建议" not in s.fix_zh and "alibabacloud.com" in s.source
    s = by_id("vllm_ascend.triton_ub_overflow_prose")  # #2246: the reporter's reading ("appears"); A3 "is reported"
    assert "which is fully unrolled and keeps a tile" not in s.cause_en and "会被完全展开、每次迭代" not in s.cause_zh
    assert "appears to keep" in s.cause_en and "reported to compile on A3" in s.cause_en and "似乎" in s.cause_zh
    s = by_id("devices.memory_apply_failed")  # VA#2629, #12113: the same line with stream resources (Alloc sq cq fail)
    assert "An allocation of NPU device memory failed" not in s.cause_en and "一次 NPU 设备内存分配失败" not in s.cause_zh
    assert "Alloc sq cq fail" in s.cause_en and "Alloc sq cq fail" in s.cause_zh and "#2629" in s.fix_en
    assert "issues/2629" in s.source and "issues/12113" in s.source and "#5557" in s.cause_en
    s = by_id("vllm_ascend.triton_soc_target")  # no source ties a missing target to an older CANN
    assert "predates the chip variant" not in s.cause_en and "早于该芯片型号" not in s.cause_zh
    assert "#1002" in s.cause_en and "#1002" in s.cause_zh and "--help-hidden" in s.fix_en and "issues/8186" in s.source
    s = by_id("cann.init_env_failed")  # Ascend/pytorch#7: the reply's author is not shown to be a maintainer
    assert "the maintainer's answer" not in s.cause_en and "维护者的答复" not in s.cause_zh
    assert "op_compile_processor.cpp" in s.source
    import re  # the runtime's own log line brackets the list; the EE1001 line does not (patterns widened, causes right)
    plog = "set ASCEND_RT_VISIBLE_DEVICES:[0,2,1] error, it must be configured in ascending order."
    assert re.search(by_id("devices.visible_devices_order").pattern, plog)
    split = "[Error]: Failed to apply for memory.\n(EngineCore pid=386) ERROR [core.py:1136]   Check the remaining storage space in the hardware environment."
    assert re.search(by_id("devices.memory_apply_failed").pattern, split)

def test_sixth_sweep_part_s6c_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part C: causes and fixes that said more
    than (or, once, against) the thread, code or vendor guide they rest on."""
    s = by_id("cann.jit_compile_off_no_binary")  # PR #1799 names the solution, not a per-op scope
    assert "forcing jit compilation for that op" not in s.cause_en and "对该算子强制" not in s.cause_zh
    assert "for prior_box)" not in s.fix_en and "对 prior_box 强制" not in s.fix_zh
    assert "Dynamically set jit compile opt in op runner" in s.cause_en and "Dynamically set" in s.cause_zh
    s = by_id("vllm_ascend.a5_only_feature")  # the base adaptor raises; no W8A8/W4A8 advice in the code
    assert "exists only on Ascend 950" not in s.cause_en and "仅存在于昇腾 950" not in s.cause_zh
    assert "W8A8" not in s.fix_en and "W8A8" not in s.fix_zh
    assert "BaseDeviceAdaptor" in s.cause_en and "BaseDeviceAdaptor" in s.cause_zh
    assert "0.30.0rc2" in s.cause_en and "0.30.0rc2" in s.cause_zh and "0.30.0rc2" in s.source
    s = by_id("cann.hccl_error_cqe")  # the guide names -link_stat -g only
    assert "-net_health" not in s.fix_en and "-net_health" not in s.fix_zh
    assert "-link_stat -g" in s.fix_en and "-link_stat -g" in s.fix_zh
    s = by_id("mooncake.not_supported_transport")  # the code has more paths; the case on record is #1088
    assert not s.cause_en.startswith("The Mooncake transfer engine has no transport installed")
    assert "not installed" in s.cause_en and "not installed" in s.cause_zh
    assert "#1088" in s.cause_en and "#1088" in s.cause_zh and "issues/1088" in s.source
    assert "READ" in s.cause_en and "READ" in s.cause_zh
    s = by_id("cann.atb_hccl_comm_failed")  # ATB reads no RANK_TABLE_FILE and names no ports
    assert "RANK_TABLE_FILE" not in s.fix_en and "RANK_TABLE_FILE" not in s.fix_zh
    assert "HCCL ports" not in s.fix_en and "HCCL 端口" not in s.fix_zh
    assert "barrier fail, check all ready timeout" in s.fix_en and "barrier fail, check all ready timeout" in s.fix_zh
    s = by_id("env.triton_ascend_no_cxx")  # every launcher looks the compiler up for its cache key
    assert not s.cause_en.startswith("triton-ascend builds C++ extensions with the host compiler when they are not in its cache")
    assert "在缓存中没有所需的 C++ 扩展时" not in s.cause_zh
    assert "_precompile_npu_hash" in s.cause_en and "_precompile_npu_hash" in s.cause_zh
    assert "already cached" in s.cause_en and "已缓存" in s.cause_zh
    s = by_id("cann.npu_error_507033")  # the cases on record are E30006 and EL0003
    assert "EL0004" not in s.fix_en and "EE1001" not in s.fix_en and "EE1001" not in s.fix_zh
    assert "npu-smi" not in s.fix_en
    assert "E30006" in s.cause_en and "EL0003" in s.cause_en and "E30006" in s.cause_zh and "EL0003" in s.cause_zh
    assert "ACL_ERROR_RT_DEV_SETUP_ERROR" in s.cause_en and "issues/4284" in s.source
    s = by_id("mooncake.config_invalid")  # the size may come from the environment; SSD checks need the switch
    assert "a required field is empty" not in s.cause_en and "必填字段为空" not in s.cause_zh
    assert "MOONCAKE_GLOBAL_SEGMENT_SIZE" in s.cause_en and "MOONCAKE_GLOBAL_SEGMENT_SIZE" in s.cause_zh
    assert "enable_ssd_offload is true" in s.cause_en and "enable_ssd_offload 为 true" in s.cause_zh
    s = by_id("vllm.engine_core_failed")  # the DP coordinator is watched too
    assert "DP coordinator" in s.cause_en and "DP coordinator" in s.cause_zh
    s = by_id("cann.hccl_watchdog_timeout")  # the code gives no reason; tear-down is the default mode
    assert "Another rank failed, hung or ran a different collective first" not in s.cause_en
    assert "其他 rank 先出错、卡住或执行了不同的集合通信" not in s.cause_zh
    assert "first-request compilation" not in s.fix_en and "首次请求编译" not in s.fix_zh
    assert "TORCH_HCCL_ASYNC_ERROR_HANDLING" in s.cause_en and "TORCH_HCCL_ASYNC_ERROR_HANDLING" in s.cause_zh
    assert "does not say why" in s.cause_en and "OptionsManager.cpp" in s.source

def test_sixth_sweep_part_s6b_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part B: one cause where the code shows
    two, a behaviour the code does not have, windows the tags do not bear out, and patterns that
    missed a form the code prints."""
    s = by_id("torch_npu.deepspeed_no_torch_npu")  # raise ValueError inside except ImportError, no `from None`
    assert "get_accelerator() replaces that ImportError" not in s.cause_en and "用这条消息替换了该 ImportError" not in s.cause_zh
    assert "During handling of the above exception" in s.cause_en and "During handling of the above exception" in s.cause_zh
    assert "DeepSpeed hides" not in s.fix_en and "被 DeepSpeed 隐藏" not in s.fix_zh
    s = by_id("cann.mindie_quant_config")  # the group_size message has no README sentence; the check accepts 256
    assert "and says each model supports its own subset" not in s.cause_en and "并说明各模型支持的子集不同" not in s.cause_zh
    assert "256" in s.cause_en and "256" in s.cause_zh and "group_size message does not" in s.cause_en
    s = by_id("devices.llamacpp_invalid_device")  # ggml_cann_init: a failed aclrtGetDeviceCount leaves the count 0
    assert "failed to initialize CANN" in s.cause_en and "failed to initialize CANN" in s.cause_zh
    assert "failed to initialize CANN" in s.fix_en and "failed to initialize CANN" in s.fix_zh
    s = by_id("vllm.quant_not_optimized_benign")  # v0.8.4 _verify_quantization: a fixed list, any method outside it
    assert "the engine starts normally" not in s.cause_en and "引擎会正常启动" not in s.cause_zh
    assert "optimized_quantization_methods" in s.cause_en and "optimized_quantization_methods" in s.cause_zh
    s = by_id("cann.npu_error_507011")  # NPUErrorCodes.h: rectify from the Ascend log; #6018's plog
    assert "the device error lines after it name the fault" not in s.cause_en and "其后的设备错误行指出了故障" not in s.cause_zh
    assert "#6018" in s.cause_en and "#6018" in s.cause_zh and "vllm-ascend/issues/6018" in s.source
    s = by_id("mooncake.etcd_plugin_missing")  # parseConnectionString: no "scheme://" means etcd
    assert s.cause_en != "This Mooncake build has no etcd support, but metadata_server points at etcd."
    assert "no \"scheme://\"" in s.cause_en and "scheme://" in s.cause_zh and "#476" in s.cause_en
    assert "no scheme" in s.fix_en and "协议前缀" in s.fix_zh
    s = by_id("vllm_ascend.triton_op_unresolved")  # except ImportError swallowed; the code names no triton build
    assert "the `triton` imported is mainline triton, or" not in s.cause_en and "导入的 `triton` 是主线 triton" not in s.cause_zh
    assert "swallows silently" in s.cause_en and "静默吞掉" in s.cause_zh
    assert "import triton.language.extra.cann.extension" in s.fix_en and "import triton.language.extra.cann.extension" in s.fix_zh
    s = by_id("cann.hccl_links_establish_failed")  # param_link_stage.md: the peer's logs, TLS status
    assert "and EI0006 just before it" not in s.cause_en and "和 EI0006" not in s.cause_zh
    assert "TLS" in s.cause_en and "TLS" in s.cause_zh and "TLS" in s.fix_en and "TLS" in s.fix_zh
    s = by_id("vllm_ascend.triton_ub_overflow")  # the compiler's note: block too large, or multi-buffer / extra buffers
    assert "for the block size it was compiled with" not in s.cause_en and "在当前编译的 block 大小下" not in s.cause_zh
    assert "multi-buffer" in s.cause_en and "multi-buffer" in s.cause_zh and "BLOCK_SIZE_SUB" in s.fix_en
    assert "programming_guide.md" in s.source
    s = by_id("mooncake.te_port_in_use")  # rpc_port + 1 to v0.3.4.post2 (#601, #604 in v0.3.5); #830 in v0.3.6.post1
    assert "the TCP transport binds rpc_port + 1 and" not in s.cause_en and "TCP 传输绑定 rpc_port + 1，" not in s.cause_zh
    assert "v0.3.4.post2" in s.cause_en and "v0.3.4.post2" in s.cause_zh and "v0.3.6.post1" in s.cause_en
    assert "v0.3.5" in s.fix_en and "v0.3.5" in s.fix_zh and "pull/604" in s.source
    s = by_id("driver.device_open_failed")  # hicann/runtime v9.1.0 prints "Call driver api halDeviceOpen failed, ..."
    assert re.search(s.pattern, "Call driver api halDeviceOpen failed, drvRetCode=7, drvDevId=1.")
    assert re.search(s.pattern, "[drv api] halDeviceOpen failed. device_id=1, drvRetCode=7.")
    assert not re.search(s.pattern, "halDeviceOpen success. device_id=1") and "v9.1.0" in s.source
    s = by_id("cann.aclnn_fp32_matmul_keep_dtype")  # ops-nn 1adbf097: "... are not supported under keep type mode."
    assert re.search(s.pattern, "Self dtype DT_FLOAT or mat2 dtype DT_FLOAT are not supported under keep type mode.")
    assert re.search(s.pattern, "Self dtype DT_FLOAT or mat2 dtype DT_FLOAT not support under keep type mode.")
    assert "1adbf0972adc" in s.source


def test_sixth_sweep_part_s6f_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part F: causes and fixes
    narrowed to what their threads and guides establish."""
    s = by_id("mooncake.hccn_device_ip")  # #7711: "did not mount hccl.conf correctly"; hccn_tool not said unmounted
    assert "(nor hccn_tool) mounted" not in s.cause_en and "也未挂载 hccn_tool" not in s.cause_zh
    assert "not set correctly" in s.cause_en and "未正确设置" in s.cause_zh and "hccl.conf" in s.cause_zh
    assert "grep ipaddr" in s.fix_en and "grep ipaddr" in s.fix_zh and "installation.md" in s.source
    s = by_id("mooncake.mkey_exhausted")  # guide: "typically happens when", three conditions
    assert "registrations leaked by processes that were killed" not in s.cause_en
    assert "被强制终止、未释放注册的进程泄漏" not in s.cause_zh
    assert "typically" in s.cause_en and "large registered regions" in s.cause_en and "没有说明是哪一种" in s.cause_zh
    assert "modprobe" in s.fix_en and "modprobe" in s.fix_zh
    s = by_id("mooncake.ephemeral_ports")  # the guide's solutions name no other transport
    assert "RDMA/ascend transport" not in s.fix_en and "RDMA/ascend 传输" not in s.fix_zh
    assert "outbound connections only" in s.fix_en and "只影响出站连接" in s.fix_zh
    s = by_id("cann.hccl_ranktable_field")  # guide's case: A3, version 1.2, super_device_id empty
    assert "missing or invalid" not in s.cause_en and "缺失或无效" not in s.cause_zh
    assert "super_device_id" in s.cause_en and "1.2" in s.cause_zh and "super_device_id" in s.fix_zh
    s = by_id("env.torch_npu_source_tree")  # #24 open: replies suggested it, reporter never confirmed
    assert not s.cause_en.startswith("Python imported torch_npu from a source checkout")
    assert "而不是已安装的 wheel" not in s.cause_zh
    assert "did not confirm" in s.cause_en and "没有确认" in s.cause_zh and "/data/package/pytorch" in s.cause_en
    s = by_id("mooncake.address_not_registered")  # code checks the slice's local address; #1993 gives no fix
    assert "every source and destination buffer" not in s.cause_en and "源和目的缓冲区都先注册" not in s.cause_zh
    assert "turn zero-copy off" not in s.fix_en and "关闭零拷贝" not in s.fix_zh
    assert "AddressNotRegistered" in s.cause_en and "本地地址" in s.cause_zh and "rdma_transport.cpp" in s.source

def test_sixth_sweep_part_s6a_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part A: one cause where the threads show
    candidates, a condition the code contradicts, and fixes that named what no source names."""
    s = by_id("mooncake.rnic_inactive")  # worker_pool.cpp: > 32 failures, no success; #8324 open, #21395 retry exceeded
    assert "remote access error" not in s.cause_en and "remote access error" not in s.cause_zh
    assert "32" in s.cause_en and "32" in s.cause_zh and "#21395" in s.cause_en and "#21395" in s.cause_zh
    assert "nixl" in s.fix_en and "nixl" in s.fix_zh and "rdma_transport/worker_pool.cpp" in s.source
    s = by_id("cann.hccl_link_timeout")  # param_link_stage.md checks -ping -g address and -tls -g, never -link -g
    assert "-link -g" not in s.fix_en and "-link -g" not in s.fix_zh
    assert "-ping -g address" in s.fix_en and "-ping -g address" in s.fix_zh and "-tls -g" in s.fix_en
    s = by_id("cann.hccl_task_run_failed")  # task_exec_stage.md: Notify or SDMA; compare tags within one group
    assert "Ranks that show different tags issued different collectives" not in s.cause_en
    assert "若各 rank 的 tag 不同，说明它们下发了不同的集合通信" not in s.cause_zh
    assert "SDMA" in s.cause_en and "SDMA" in s.cause_zh and "HCCL_EXEC_TIMEOUT" in s.cause_en
    assert "group" in s.cause_zh and "HCCL_EXEC_TIMEOUT" in s.fix_zh
    s = by_id("torch.cuda_wheels")  # #10265's reply: not needed, --no-deps; vllm-ascend installs what it needs
    assert "installing vllm installs the torch vllm needs" not in s.cause_en
    assert "安装 vllm 时会安装 vllm 所需的 torch" not in s.cause_zh
    assert "installing vllm-ascend installs" in s.cause_en and "安装 vllm-ascend 时会安装" in s.cause_zh
    assert "missing" in s.fix_en and "缺失" in s.fix_zh
    for sid in ("torch_npu.dev_build_needs_mirror_prose", "torch_npu.dev_build_needs_mirror_said"):
        s = by_id(sid)  # PyPI has no .dev torch-npu; the guide and #3883 point to the Ascend mirror: not "only"
        assert "published only on the Ascend pip mirror" not in s.cause_en and "只发布在昇腾 pip 镜像上" not in s.cause_zh
        assert "pip index versions torch-npu --pre" in s.cause_en and "#3883" in s.cause_zh
        assert "pypi.org/project/torch-npu" in s.source
    s = by_id("torch.torchaudio_mismatch")  # audio#99 for torch's symbols; audio#1461: another library's symbol
    assert not s.cause_en.startswith("torchaudio's compiled extension was built for another torch")
    assert not s.cause_zh.startswith("torchaudio 的编译扩展是为另一个 torch 版本构建的")
    assert "WavpackGetMode" in s.cause_en and "WavpackGetMode" in s.cause_zh and "audio/issues/1461" in s.source
    assert "another library" in s.fix_en and "其他库" in s.fix_zh
    s = by_id("mooncake.rpc_port_in_use")  # transfer_engine_impl.cpp: P2P handshake picks a free port; the plugin's bind
    assert "only with MC_LEGACY_RPC_PORT_BINDING set or P2P handshake metadata" not in s.cause_en
    assert "since Mooncake PR #226" not in s.cause_en and "Mooncake PR #226 起" not in s.cause_zh
    assert "other than P2PHANDSHAKE" in s.cause_en and "不是 P2PHANDSHAKE" in s.cause_zh
    assert "SocketHandShakePlugin: bind (port N)" in s.cause_en and "transfer_metadata_plugin.cpp" in s.source
    assert re.search(s.pattern, "E1207 SocketHandShakePlugin: bind (port 12001): Address already in use [98]")
    assert re.search(s.pattern, "Failed to bind address, rpc port: 12001: Address already in use [98]")
    assert not re.search(s.pattern, "misc/socket.cc:448 NCCL WARN Net : Call to bind failed : Address already in use")
    s = by_id("vllm.max_len_exceeds_kv")  # the message and Qwen3#295 name max_model_len and gpu_memory_utilization only
    assert "--tensor-parallel-size" not in s.fix_en and "--tensor-parallel-size" not in s.fix_zh
    assert "Qwen3#295" in s.cause_en and "Qwen3#295" in s.cause_zh and "Qwen3#295" in s.fix_zh
    s = by_id("cann.context_null_after_set_device")  # the cases on record: 507033 (#1558), 107002 and 507008 (#800)
    assert "OPP verification" not in s.fix_en and "OPP 校验" not in s.fix_zh
    assert "507033" in s.fix_en and "507008" in s.fix_zh and "#800" in s.fix_en


def test_twelfth_audit_y_facts_say_what_their_sources_say():
    """docs/facts-audit.md, twelfth sample (seed 37), facts #27 to #40: a case on record read as the cause its
    message suggests, where the threads record a device the engine did not support."""
    codes = {(c.family, c.code): c for c in matrix().codes}
    # #40: vllm-ascend #237 and #573 (Ascend 910: 910ProB, 910B): the maintainers answered the device was unsupported
    c = codes[("cann_msg", "EZ1001")]
    assert "a missing operator kernel package" not in c.meaning_en and "缺少算子 kernel 包" not in c.meaning_zh
    assert "#573" in c.meaning_en and "#573" in c.meaning_zh and "910ProB" in c.meaning_en and "910ProB" in c.meaning_zh
    assert "is unsupported yet" in c.meaning_en and "SoC" in c.meaning_zh
    assert "supports the device" in c.fix_en and "支持该设备" in c.fix_zh and "opp_kernel" in c.fix_en
    assert "issues/573" in c.source and "indv_collecter.cpp" in c.source and "issues/237" in c.source


def test_the_cann_9_1_wording_of_the_missing_kernel_binaries_is_explained():
    """The twelfth sample, found on the way: from opbase v9.1.0.pre (CANN 9.1.0) the check that found no
    binary_info_config.json prints EZ1004 "Failed to parse file binary_info_config.json. Reason: 1.The operator package
    is not installed. ..." (OP_LOGE_FOR_FILE_OPERATION_ERROR_PARSE), a wording the signature did not match."""
    line = ("EZ1004: [PID: 9] 2026-09-01-10:00:00.000.000 Failed to parse file binary_info_config.json. Reason: "
            "1.The operator package is not installed. 2.The operator package is damaged. 3.The binary_info_config.json "
            "file is damaged or does not exist. 4.The user does not have sufficient permissions and the "
            "binary_info_config.json file in the operator package fails to be read.")
    assert "cann.opp_kernel_not_installed" in {a.id for a in catalog().explain_text(line)}
    s = by_id("cann.opp_kernel_not_installed")
    assert "EZ1004" in s.cause_en and "too few permissions" in s.cause_en and "权限不足" in s.cause_zh


def test_sixth_sweep_part_s6h_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part H: fixes for variables or commands the
    source does not name, one definite cause where the thread records only the runtime's own candidate,
    a cause stretched over a case it does not fit, and a file location no source gives."""
    s = by_id("cann.hccl_ifname_missing")  # EI0001 guide: only HCCL_SOCKET_IFNAME; the lines after it list the NICs found
    assert "GLOO_SOCKET_IFNAME" not in s.fix_en and "GLOO_SOCKET_IFNAME" not in s.fix_zh
    assert "in a container" in s.cause_en and "容器" in s.cause_zh and "get host ip fail" in s.cause_en
    s = by_id("cann.mindspeed_atb_home_unset")  # MindSpeed docs: install CANN-NNAL, source atb/set_env.sh
    assert "same version as the toolkit" not in s.fix_en and "同版本" not in s.fix_zh
    assert "ATB_HOME_PATH" in s.fix_en and "ATB_HOME_PATH" in s.fix_zh and "docs/mindspore/readme.md" in s.source
    s = by_id("devices.runtime_507033_memory")  # PTOAS #341: EL0004 says only "available memory is insufficient"
    assert "the NPU's memory is held by another process or container." not in s.cause_en
    assert "该 NPU 的内存被其他进程或容器占用。" not in s.cause_zh
    assert "one candidate" in s.cause_en and "候选" in s.cause_zh and "names no process" in s.cause_en
    s = by_id("devices.llamacpp_soc_autodetect_failed")  # a non-empty wrong third field does not stop CMake here
    assert "or its seventh line has no chip name in the third field" not in s.cause_en
    assert "第 3 个字段不是芯片名。" not in s.cause_zh and "不是芯片名，同样" not in s.fix_zh
    assert "fewer than three fields" in s.cause_en and "不足 3 个字段" in s.cause_zh and "has no third field" in s.fix_en
    s = by_id("cann.hccl_port_range_exhausted")  # "auto" is in HCCL's env docs
    assert "HCCL_NPU_SOCKET_PORT_RANGE.md" in s.source and "HCCL_HOST_SOCKET_PORT_RANGE.md" in s.source
    s = by_id("torch_npu.autoload_failed")  # no source for "usually"
    assert "usually" not in s.fix_en and "通常" not in s.fix_zh
    assert "direct cause" in s.fix_en and "direct cause" in s.fix_zh
    s = by_id("cann.op_unsupported_on_soc")  # llama.cpp#18133 fails in buffer-type code, not in an operator
    assert not s.cause_en.startswith("The CANN kernels for this SoC have no implementation of the operator.")
    assert not s.cause_zh.startswith("该 SoC 的 CANN 算子库中没有该算子的实现。")
    assert "buffer-type code" in s.cause_en and "buffer-type" in s.cause_zh and "EZ9903" in s.cause_zh
    s = by_id("env.tbe_python_path")  # no source gives the directory; EC0010's solution and #5638 are the evidence
    assert "python/site-packages" not in s.cause_en and "python/site-packages" not in s.cause_zh
    assert "#5638" in s.cause_en and "#5638" in s.cause_zh and "EC0010" in s.cause_en and "EC0010" in s.cause_zh
    s = by_id("cann.runtime_context_null")  # llama.cpp PR #9424 fixes #9303
    assert "llama.cpp/pull/9424" in s.source


def test_sixth_sweep_part_s6g_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part G: causes and fixes that said more
    than (or, once, the reverse of) the thread, code or vendor guide they rest on."""
    s = by_id("env.libgomp_static_tls")  # #7: a mamba env, fixed by recreating it; no 'loaded too late' in any source
    assert "loaded too late" not in s.cause_en and "加载过晚" not in s.cause_zh
    assert "or use the system libgomp" not in s.fix_en and "使用系统的 libgomp" not in s.fix_zh
    assert "Ascend/pytorch#7" in s.cause_en and "Ascend/pytorch#7" in s.cause_zh and "sdktips_0063" in s.source
    s = by_id("cann.aclnn_dtype_unsupported")  # VA#9294 has no log; LF#8511 shows the cast on a '910B'
    assert "910A, which supports float16 but not bfloat16 (vllm-ascend#9294)" not in s.cause_en
    assert "#8511" in s.cause_en and "#8511" in s.cause_zh and "issues/8511" in s.source
    assert "no log" in s.cause_en and "没有日志" in s.cause_zh and "issues/4165" not in s.source
    s = by_id("vllm_ascend.kv_port_in_use")  # the RuntimeError fires for any dead thread; 'most often' is unsourced
    assert "most often" not in s.cause_en and "最常见" not in s.cause_zh
    assert "no longer alive" in s.cause_en and "不再存活" in s.cause_zh
    assert "#8938" in s.cause_en and "#8938" in s.cause_zh and "ASCEND_BASE_PORT" in s.fix_en and "issues/8938" in s.source
    s = by_id("vllm_ascend.modelslim_config_missing")  # the code's own 'usually'; no download or format case
    assert "download is incomplete" not in s.cause_en and "下载不完整" not in s.cause_zh
    assert "usually" in s.cause_en and "通常" in s.cause_zh and "Hugging Face" in s.cause_en
    s = by_id("mooncake.ascend_no_device")  # #3451: the reporter's suspicion and the maintainer's reply, no more
    assert not s.cause_en.startswith("Mooncake's Ascend transport (AscendDirectTransport / HIXL) was used in a process")
    assert "standalone mooncake_store process, start it from" not in s.fix_en and "独立运行的" not in s.fix_zh
    assert "suspected" in s.cause_en and "怀疑" in s.cause_zh and "#2557" in s.cause_en and "pull/2557" in s.source
    s = by_id("torch.omp_num_threads_benign")  # MMDetection's setup_env.py prints the same text
    assert not s.cause_en.startswith("torchrun's (torch.distributed.run's) notice")
    assert "MMDetection" in s.cause_en and "MMDetection" in s.cause_zh and "setup_env.py" in s.source
    s = by_id("torch_npu.owner_mismatch_benign")  # the check also runs on the profiler's directories
    assert "the CANN directory it reads belongs to another user" not in s.cause_en
    assert "profiler" in s.cause_en and "profiler" in s.cause_zh and "profiler" in s.fix_en
    s = by_id("cann.hccl_ranktable_entry_invalid")  # the code names checks, not how the entry got there
    assert "copied without changing it" not in s.cause_en and "复制节点配置后未修改" not in s.cause_zh
    assert "the host IP for server_id" not in s.fix_en and "server_id 用主机 IP" not in s.fix_zh
    assert "does not say how" in s.cause_en and "并未说明" in s.cause_zh
    s = by_id("env.libhccl_cann_env")  # module_loader.py asks for set_env.sh of CANN, nothing of nnal/atb
    assert "nnal/atb" not in s.fix_en and "nnal/atb" not in s.fix_zh
    assert "set_env.sh" in s.fix_en and "set_env.sh" in s.fix_zh
    s = by_id("cann.ge_initialize_failed")  # #692 has another first error; #302's chip is not shown
    assert "the vllm-ascend image on 910B2" not in s.cause_en and "910B2 上的 vllm-ascend 镜像" not in s.cause_zh
    assert "#692" in s.cause_en and "#692" in s.cause_zh and "issues/692" in s.source
    s = by_id("env.sgl_kernel_npu_transformers")  # #23656: the patch required 'interpolation', not the reverse
    assert "transformers calls _preprocess with arguments the patch does not take" not in s.cause_en
    assert "传入了补丁不接受的参数" not in s.cause_zh
    assert "#23656" in s.cause_en and "#23656" in s.cause_zh and "interpolation" in s.cause_en

def test_sixth_sweep_part_s6e_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part E: a workaround on record that the
    row denied, one cause where the code or the guide shows two, and "usually" beyond one case."""
    s = by_id("env.dist_store_timeout")  # #168: RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1 worked for #167
    assert "Neither thread records a cause" not in s.cause_en and "两帖均未记录原因" not in s.cause_zh
    assert "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1" in s.cause_en
    assert "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1" in s.cause_zh and "#168" in s.cause_zh
    assert "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1" in s.fix_en and "issues/168" in s.source
    s = by_id("cann.llamacpp_pool_slots_full")  # the abort is in alloc (256 slots used) and in free (not in the pool)
    assert not s.cause_en.startswith("llama.cpp's CANN backend ran out of slots")
    assert "用尽了旧式缓冲池" not in s.cause_zh
    assert "in free" in s.cause_en and "free 中" in s.cause_zh and "::free" in s.cause_en and "::free" in s.cause_zh
    s = by_id("mooncake.cannot_make_connection")  # worker_pool.cpp (RDMA) and ub_context.cpp (Kunpeng UB)
    assert not s.cause_en.startswith("The two sides could not set up a reliable RDMA connection")
    assert "双方无法建立可靠的 RDMA 连接。" not in s.cause_zh
    assert "ub_context.cpp" in s.cause_en and "ub_context.cpp" in s.cause_zh
    s = by_id("vllm_ascend.npu_error_207008")  # FAQ 17: the sizes' resources vs the HDK/CANN stack; stream count
    assert "too many captured sizes" not in s.cause_en and "捕获的尺寸过多" not in s.cause_zh
    assert "HDK/CANN" in s.cause_en and "HDK/CANN" in s.cause_zh and "PIECEWISE" in s.cause_en
    assert "acl.rt.create_stream" in s.cause_zh and "HDK/CANN" in s.fix_en and "faqs.md" in s.source
    s = by_id("mooncake.store_api_missing")  # LMCache#1514 is the one case; "usually the latest" had no source
    assert "come from different releases" not in s.cause_en and "来自不同版本" not in s.cause_zh
    assert "usually" not in s.fix_en and "通常" not in s.fix_zh
    assert "#1514" in s.cause_en and "#1514" in s.cause_zh and "save_chunk_meta" in s.cause_en

def test_sixth_sweep_part_s6i_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part I: fixes for a traceback assumed to
    exist, a file, a cause or a fix option no source names, a catch the code does not make, and an
    environment variable the release that prints the message does not read."""
    s = by_id("vllm.workerproc_init_failed")  # vLLM wait_for_ready: a closed ready pipe raises it too
    assert "the worker's own traceback (above, prefixed with its pid) holds the cause" not in s.cause_en
    assert "原因在上方该 worker 自己的 traceback 中（以其 pid 为前缀）" not in s.cause_zh
    assert "EOF" in s.cause_en and "EOF" in s.cause_zh and "no such traceback" in s.cause_en
    assert "WorkerProc failed to start." in s.fix_en and "multiproc_executor.py" in s.source
    s = by_id("cann.hccl_ip_family")  # EI0001 guide: hccn_tool queries, HCCL_SOCKET_FAMILY, no hccn.conf
    assert "hccn.conf" not in s.fix_en and "hccn.conf" not in s.fix_zh
    assert "-ip -inet6 -g" in s.fix_en and "-ip -inet6 -g" in s.fix_zh and "HCCL_SOCKET_FAMILY" in s.fix_zh
    assert "10 is IPv6" in s.cause_en and "10 为 IPv6" in s.cause_zh
    s = by_id("vllm.no_dist_metadata")  # the CUDA check re-raises; the resolver swallows it
    assert "which catch the error" not in s.cause_en and "这些检查会捕获该错误" not in s.cause_zh
    assert "In the vLLM code read" not in s.cause_en and "在所读的" not in s.cause_zh
    assert "raises it again" in s.cause_en and "重新抛出" in s.cause_zh and "UnspecifiedPlatform" in s.cause_zh
    assert "pascal-pkgs-ci/issues/51" in s.source
    s = by_id("cann.mindie_unsupported_model")  # no source says vllm-ascend serves these architectures
    assert "or serve the model with vllm-ascend" not in s.fix_en and "或改用 vllm-ascend 部署" not in s.fix_zh
    assert "model list has it" in s.fix_en and "模型支持列表中包含该架构" in s.fix_zh
    s = by_id("mooncake.put_transfer_fail")  # VA#7401 and #7792 show link / connect failures only
    assert "unregistered memory" not in s.fix_en and "未注册内存" not in s.fix_zh
    assert "103902" in s.fix_en and "103902" in s.fix_zh and "issues/7792" in s.source
    s = by_id("cann.hccl_super_device_dup")  # EI0014: hardware configuration or HCCL_LOGIC_SUPERPOD_ID
    assert "rank table" not in s.fix_en and "rank table" not in s.fix_zh
    assert "HCCL_LOGIC_SUPERPOD_ID" in s.cause_en and "HCCL_LOGIC_SUPERPOD_ID" in s.cause_zh
    assert "spod-info" in s.fix_en and "spod-info" in s.fix_zh
    s = by_id("cann.too_old_for_feature")  # only the MC2-hierarchy message says "too old"
    assert "needs a newer CANN" not in s.cause_en and "需要比已安装或已加载的更新的 CANN" not in s.cause_zh
    assert "npu_moe_distribute_dispatch_v2" in s.cause_en and "npu_moe_distribute_dispatch_v2" in s.cause_zh
    assert "compatible cann_ops_transformer" in s.cause_en and "兼容的 cann_ops_transformer" in s.cause_zh
    assert "enable_fused_mc2 / VLLM_ASCEND_ENABLE_FUSED_MC2 to 0" not in s.fix_en
    assert "enable_mc2_hierarchy_comm" in s.fix_en and "hixl Python package" in s.fix_en
    assert "v0.25.1rc1 also reads" in s.fix_en and "v0.25.1rc1 也读取" in s.fix_zh
    s = by_id("env.sglang_npu_ops_unloaded")  # the loader names LD_LIBRARY_PATH and OPP, no set_env.bash
    assert "set_env.bash" not in s.fix_en and "set_env.bash" not in s.fix_zh
    assert "LD_LIBRARY_PATH" in s.fix_en and "LD_LIBRARY_PATH" in s.fix_zh
    s = by_id("vllm.engine_dead")  # newer vLLM logs another wording when the engine core dies
    assert "look for vLLM's 'Engine core proc … died unexpectedly' line" not in s.fix_en
    assert "查找 vLLM 的 'Engine core proc … died unexpectedly' 一行" not in s.fix_zh
    assert "engine core exited unexpectedly" in s.fix_en and "engine core exited unexpectedly" in s.fix_zh
    assert "core_client.py" in s.source
    s = by_id("vllm.kv_preemption")  # vLLM's guide: max_num_seqs or max_num_batched_tokens, not max_model_len
    assert "--max-model-len" not in s.fix_en and "--max-model-len" not in s.fix_zh
    assert "--max-num-batched-tokens" in s.fix_en and "--pipeline-parallel-size" in s.fix_zh
    s = by_id("cann.hccl_aiv_mc2_hang")  # the AIV gloss
    assert "vllm-ascend/issues/3881" in s.source

def test_sixth_sweep_part_s6j_causes_say_what_their_sources_say():
    """docs/facts-audit.md, sixth sweep of signature causes, part J: one search list short of the code,
    definite causes where the threads show a case or a commenter's word, and a fix without a source."""
    s = by_id("cann.ascendc_cmake_missing")  # bitsandbytes#1523: the reporter wrote "might be installed in"
    assert "the directory was under <arch>-linux" not in s.cause_en and "该目录位于 <架构>-linux" not in s.cause_zh
    assert "might be installed" in s.cause_en and "可能安装在" in s.cause_zh
    assert "made for this CANN" not in s.fix_en and "适配此 CANN 的扩展版本" not in s.fix_zh
    assert "CMakeLists.txt" in s.fix_en and "CMakeLists.txt" in s.fix_zh
    s = by_id("mooncake.transfer_engine_init")  # multi_transport.cpp: 'ascend' from three build flags
    assert "(HCCN)" not in s.cause_en and "（HCCN）" not in s.cause_zh and "hccn_tool" not in s.fix_en
    assert "USE_ASCEND_HETEROGENEOUS" in s.cause_en and "USE_ASCEND_HETEROGENEOUS" in s.cause_zh
    assert "Failed to install Ascend transport" in s.cause_en and "Failed to install Ascend transport" in s.cause_zh
    assert "3b5a594133958449a1feaf1c9e0fc1b553e34a28/mooncake-transfer-engine/src/multi_transport.cpp" in s.source
    s = by_id("cann.atb_undefined_symbol")  # #117 shows the error only
    assert "was built against a different NNAL/ATB than the one installed" not in s.cause_en
    assert "编译时使用的 NNAL/ATB 与已安装的不同" not in s.cause_zh
    assert "2.5.1.dev20250218" in s.cause_en and "2.5.1.dev20250218" in s.cause_zh
    s = by_id("cann.opapi_symbol_missing")  # op_api_common.cpp GetOpApiFuncAddr: libopapi_*.so and the aclnn libraries too
    assert "libopapi_*.so" in s.cause_en and "libopapi_*.so" in s.cause_zh
    assert "libaclnn_ops_infer.so" in s.cause_en and "libaclnn_ops_infer.so" in s.cause_zh
    s = by_id("devices.bf16_unsupported")  # #9294: a commenter's answer; no source says every bf16 model fails
    assert "any bf16 model hits this" not in s.cause_en and "任何 bf16 模型都会遇到" not in s.cause_zh
    assert "maintainers in vllm-ascend #9294" not in s.cause_en and "维护者：仅支持 float16" not in s.cause_zh
    assert "a commenter in vllm-ascend#9294" in s.cause_en and "一位评论者" in s.cause_zh
    s = by_id("torch_npu.thread_without_set_device")  # LlamaFactory#2385: a commenter on stream_chat; nothing on fork or spawn
    assert "forked process" not in s.cause_en and "fork" not in s.cause_zh
    assert "spawn" not in s.fix_en and "spawn" not in s.fix_zh
    assert "stream_chat" in s.cause_en and "stream_chat" in s.cause_zh and "ACL_ERROR_RT_CONTEXT_NULL" in s.cause_en
    s = by_id("vllm_ascend.c_ascend_op_missing")  # #3342 by yiz-liu, closed by PR #3791; #3090 shows the error only
    assert "vllm-ascend's maintainer (#3342)" not in s.cause_en and "vllm-ascend 维护者（#3342）" not in s.cause_zh
    assert "(the case of #3090)" not in s.cause_en and "（#3090 的案例）" not in s.cause_zh
    assert "#3791" in s.cause_en and "#3791" in s.cause_zh and "vllm-ascend/pull/3791" in s.source

def test_twelfth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, twelfth sample (seed 37), facts #41 to #50: mooncake.mr_size_exceeded said older
    Mooncake shrank the region silently (the line is its warning) and did not date the split or the error form."""
    s = by_id("mooncake.mr_size_exceeded")  # rdma_context.cpp to v0.3.12.post1: shrink warning; PR #647 v0.3.5; #2644 untagged
    assert "silently" not in s.cause_en and "静默" not in s.cause_zh
    assert "v0.3.12.post1" in s.cause_en and "v0.3.5" in s.cause_en and "PR #2644" in s.cause_zh
    assert "v0.3.5" in s.fix_en and "local_buffer_size" in s.fix_zh and "pull/2644" in s.source


def test_twelfth_audit_z3_facts_say_what_their_sources_say():
    """docs/facts-audit.md, twelfth sample (seed 37), facts #48 to #50: devices.soc_version_unknown left its third
    message and the run-time 'Undefined soc_version' unexplained; devices.dcmi_init_8005 gave the reporter a
    --privileged fix that the thread gives to another user's question."""
    s = by_id("devices.soc_version_unknown")  # hardware.py/device_config.py 0.27.1rc1 to 0.30.0rc2; setup.py from v0.12.0rc1
    assert "does not know this chip" not in s.cause_en and "不认识此芯片" not in s.cause_zh
    assert "Unsupported built-in device type" in s.cause_en and "Unsupported built-in device type" in s.cause_zh
    assert "240 to 243" in s.cause_en and "240 至 243" in s.cause_zh and "0.12.0rc1" in s.cause_en
    assert "_910_95" in s.cause_en and "_910_95" in s.cause_zh
    assert "Unsupported built-in device type" in s.fix_en and "Unsupported built-in device type" in s.fix_zh
    assert "NpuVariables.h" in s.source and "vllm_ascend-0.27.1rc1.tar.gz" in s.source
    s = by_id("devices.dcmi_init_8005")  # vllm-ascend#2698: Yikun asks malnafei, not the reporter, about --privileged
    assert "the reporter's container worked" not in s.cause_en and "提问者的容器加上 --privileged" not in s.cause_zh
    assert "another user" in s.cause_en and "另一位用户" in s.cause_zh
    assert "no cause found" not in s.cause_en and "原因未查明" not in s.cause_zh
    assert "a device node or mount is missing" not in s.fix_en and "缺少某个设备节点或挂载" not in s.fix_zh
    assert "return-codes.md" in s.source

def test_twelfth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, twelfth sample (seed 37), facts #44 to #47: the HCCL link-setup cause turned the guide's
    'may not have issued' into a certainty, and the GPU-parameter cause named options whose warnings it never matches."""
    s = by_id("cann.hccl_links_establish_failed")  # param_link_stage.md 排查点1: 对端可能没有同步下发; detect result: hung or exited
    assert "no error there means the peer did not issue" not in s.cause_en and "对端无报错说明对端未及时下发" not in s.cause_zh
    assert "may not have issued" in s.cause_en and "可能没有同步下发" in s.cause_zh
    assert "exited early" in s.cause_en and "提前退出" in s.cause_zh and "exit early" in s.fix_en and "提前退出" in s.fix_zh
    s = by_id("vllm_ascend.gpu_param_ignored")  # platform.py at every tag and the 0.26.0rc1 to 0.30.0rc2 sdists
    assert "NVIDIA tools (cascade attention" not in s.cause_en and "NVIDIA 工具专用的（cascade" not in s.cause_zh
    assert "which this does not match" in s.cause_en and "本条不匹配" in s.cause_zh
    for name in ("mm_encoder_attn_backend", "v0.13.0rc2", "v0.21.0rc1", "v0.23.0rc1", "use_inductor_graph_partition"):
        assert name in s.cause_en and name in s.cause_zh
    assert "/v0.13.0/vllm_ascend/platform.py" in s.source and "vllm-ascend/0.30.0rc2" in s.source
    # the warnings for nsight, NIXL and NCCL settings (v0.20.2rc1, v0.22.1rc1 wordings) are not matched by the pattern
    for line in ("'--ray-workers-use-nsight' requires NVIDIA Nsight which is not available on Ascend NPU. Resetting to False.",
                 "Parameter is tied to incompatible backend. parameter=enable_permute_local_kv, action: resetting to False.",
                 "Parameter is optimized for incompatible backend. parameter=kv_buffer_size, value=2e9, action: resetting"):
        assert not re.search(s.pattern, line)


def test_thirteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, thirteenth sample (seed 38), facts #41 to #45: the RDMA queue-pair line was pinned on the
    master alone, while the same coro_rpc server code runs RDMA in the transfer engine's RPC communicator too."""
    s = by_id("mooncake.rpc_rdma_qp")  # coro_connection.hpp: accept failed, close(); init_ibv: master.cpp v0.3.6, rpc_communicator.cpp v0.3.8
    assert not s.cause_en.startswith("The master's RPC over RDMA") and not s.cause_zh.startswith("master 通过 RDMA")
    assert "v0.3.6" in s.cause_en and "v0.3.8" in s.cause_en and "rpc_communicator.cpp" in s.cause_en
    assert "v0.3.6" in s.cause_zh and "v0.3.8" in s.cause_zh and "rpc_communicator.cpp" in s.cause_zh
    assert "End of file" in s.cause_en and "End of file" in s.cause_zh
    assert "same MC_RPC_PROTOCOL" in s.fix_en and "相同的 MC_RPC_PROTOCOL" in s.fix_zh
    assert "coro_connection.hpp" in s.source and "v0.3.8/mooncake-transfer-engine" in s.source

def test_thirteenth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, thirteenth sample (seed 38), facts #46 to #50: the TransferEngine cause spoke of Mooncake
    only while the pattern also matches the MemFabric engine's message, and the contiguity cause named HCCL only and
    made the guide's 'the script may have a problem' a certainty."""
    # The MemFabric form has had its own row since the thirteenth sample's items found on the way.
    s = by_id("vllm_ascend.memfabric_te_init")  # memfabric_transfer_engine.py _build_engine, sdists 0.26.0rc1 to 0.30.0rc2
    assert "0.26.0rc1 to 0.30.0rc2" in s.cause_en and "0.26.0rc1 至 0.30.0rc2" in s.cause_zh
    assert "numeric IPv4" in s.fix_en and "数字 IPv4" in s.fix_zh
    assert "memfabric_transfer_engine.py" in s.source and "vllm-ascend/0.30.0rc2" in s.source
    line = ("RuntimeError: MemFabric TransferEngine initialization failed with ret_value=-1; hostname='node-a' must be "
            "a numeric IPv4 address reachable by the peer")
    assert re.search(s.pattern, line)
    s = by_id("torch_npu.tensors_not_contiguous")  # ProcessGroupHCCL.cpp and LCCLUtils.cpp raise it; the case: 代码脚本可能存在问题
    assert "passed to an HCCL collective" not in s.cause_en and "向 HCCL 集合通信" not in s.cause_zh
    assert "is at fault" not in s.cause_en and "问题在调用代码" not in s.cause_zh
    assert "LCCL" in s.cause_en and "LCCL" in s.cause_zh
    assert "ProcessGroupHCCL.cpp" in s.source and "LCCLUtils.cpp" in s.source

def test_thirteenth_audit_x_facts_say_what_their_sources_say():
    """docs/facts-audit.md, thirteenth sample (seed 38), facts #1 to #26: the ASCEND_BUFFER_POOL threshold said the docs
    drop it for good from 0.23.0, but 0.24.0rc1's KV-pool guide (cut from main) still recommends it."""
    from doctor.matrix.query import threshold

    m = matrix()
    assert threshold(m, "mooncake_buffer_pool_undocumented") == "0.23.0"  # v0.23.0rc1's guide still has the export
    row = next(t for t in m.thresholds if t.name == "mooncake_buffer_pool_undocumented")
    assert "no longer describe ASCEND_BUFFER_POOL from this release" not in row.meaning
    assert "has been removed" in row.meaning and "0.24.0rc1" in row.meaning and "ASCEND_BUFFER_POOL=4:8" in row.meaning
    assert "#13856" in row.meaning and "getenv" in row.meaning
    assert "5cb98caaadeff42b5b62b996e34bb2aaa29d20fd/docs/source/user_guide/feature_guide/kv_pool.md" in row.source
    assert "transfer_executor_base.cpp" in row.source and "pull/13834" in row.source


def test_fourteenth_audit_x_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fourteenth sample (seed 39), facts #1 to #26: torch-npu 2.8.0.post1 is the
    v7.2.0.1-pytorch2.8.0 tag of branch v2.8.0-7.2.0 (CANN 8.3.RC1), not a CANN 8.5.0 build."""
    from doctor.matrix.query import torch_npu_row

    m = matrix()
    row = torch_npu_row(m, "2.8.0.post1")
    assert row is not None and row.cann == "8.3.RC1"  # the v2.8.0-7.2.0 branch; vllm-ascend 0.13.0rc2 runs it on 8.5.0
    assert "v7.2.0.1-pytorch2.8.0" in row.notes and "8.5.0" in row.notes
    assert "v7.2.0.1-pytorch2.8.0/version.txt" in row.source and "v7.2.0.1-pytorch2.8.0/README.zh.md" in row.source

def test_fourteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fourteenth sample (seed 39), facts #41 to #45: a 507033 cause that named a rejected
    ASCEND_RT_VISIBLE_DEVICES setting as a second way to 507033 (the runtime returns 107001 or 207004 for that), and a
    memory-fault cause that had NPUException.h look for the reason strings it only defines."""
    s = by_id("devices.runtime_507033_visible")  # hicann/runtime 681ef761 api_error.cc SetDevice, errcode_manage.cc
    assert "or the runtime rejected the ASCEND_RT_VISIBLE_DEVICES setting" not in s.cause_en
    assert "或运行时拒绝了 ASCEND_RT_VISIBLE_DEVICES 设置" not in s.cause_zh
    assert "107001" in s.cause_en and "207004" in s.cause_en and "107001" in s.cause_zh and "207004" in s.cause_zh
    assert "RT_ERROR_DEVICE_RETAIN" in s.cause_en and "RT_ERROR_DEVICE_RETAIN" in s.cause_zh
    assert "#67" in s.cause_en and "#67" in s.cause_zh and "RT_ERROR_DRV_INVALID_HANDLE" in s.cause_en
    assert "errcode_manage.cc" in s.source and "api_error.cc" in s.source and "gpustack/issues/3352" in s.source
    s = by_id("devices.npu_memory_fault")  # NPUException.h defines the reason strings; NPUQueue.cpp matches them
    assert "those NPUException.h looks for" not in s.cause_en and "NPUException.h 在 runtime 报错信息中查找" not in s.cause_zh
    assert "CheckDeviceError" in s.cause_en and "CheckDeviceError" in s.cause_zh
    assert "NPUQueue.cpp" in s.source and "OpParamMaker.cpp" in s.source


def test_fifteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fifteenth sample (seed 40), facts #41 to #45: a 507033 cause that had every
    'Failed to start the device.' line come from setting the device, when the runtime returns 507033 from other
    calls too (RT_ERROR_DEVICE_NULL, the operator-timeout calls before a device is set)."""
    s = by_id("cann.npu_error_507033")  # hicann/runtime 681ef761 errcode_manage.cc, api_impl.cc
    assert not s.cause_en.startswith("Setting the device failed") and not s.cause_zh.startswith("设置设备时")
    assert "RT_ERROR_DEVICE_NULL" in s.cause_en and "RT_ERROR_DEVICE_NULL" in s.cause_zh
    assert "RT_ERROR_DEVICE_RETAIN" in s.cause_en and "RT_ERROR_DEVICE_RETAIN" in s.cause_zh
    assert "c10_npu::SetDevice" in s.cause_en and "c10_npu::SetDevice" in s.cause_zh
    assert "#4284" in s.cause_en and "#67" in s.cause_en and "#4284" in s.cause_zh and "#67" in s.cause_zh
    assert "errcode_manage.cc" in s.source and "api_impl.cc" in s.source

def test_fifteenth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fifteenth sample (seed 40), facts #46 to #50: a no-RNIC cause that put every disabled NIC
    down to a failed open (Mooncake disables a NIC whenever RdmaContext::construct fails, at the open or after it)."""
    s = by_id("mooncake.no_rnic")  # Mooncake 3b5a5941 rdma_transport.cpp initializeRdmaResources, rdma_context.cpp
    assert "because none could be opened" not in s.cause_en and "都无法打开，因而全部被禁用" not in s.cause_zh
    assert "protection domain" in s.cause_en and "保护域" in s.cause_zh
    assert "no 'Disable device' line" in s.cause_en and "没有任何 'Disable device' 行" in s.cause_zh
    assert "checkpoint-engine #1" in s.cause_en and "#879" in s.cause_zh and "#1384" in s.cause_en
    assert "just before each 'Disable device'" in s.fix_en and "紧邻的错误行" in s.fix_zh
    assert "rdma_transport.cpp" in s.source and "rdma_context.cpp" in s.source and "issues/1384" in s.source

def test_fourteenth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fourteenth sample (seed 39), facts #46 to #50: an install-order cause that gave the
    guide at 182b75ea as a case of vLLM and vllm-ascend pinning the same torch (vLLM 0.27.1's wheel pins 2.13.0,
    vllm-ascend 0.27.1rc1 2.10.0), and (found on the way) a HCCL_BUFFSIZE fix that read a byte count as MB."""
    s = by_id("torch.install_order_prose_en")  # PyPI vllm 0.27.1 / 0.30.0 METADATA: Requires-Dist torch==2.13.0
    assert "(the guide at 182b75ea: torch 2.10.0 for vLLM and torch-npu) nothing changes" not in s.cause_en
    assert "（182b75ea 的安装指南：vLLM 与 torch-npu 均为 torch 2.10.0）则不受影响" not in s.cause_zh
    assert "torch==2.13.0" in s.cause_en and "torch==2.13.0" in s.cause_zh
    assert "v0.27.1" in s.cause_en and "0.27.1rc1" in s.cause_en and "v0.27.1" in s.cause_zh
    assert "pypi.org/project/vllm/0.27.1/" in s.source and "182b75ea84ff13ece27b57391331ef8935410aea/Dockerfile" in s.source
    s = by_id("cann.hccl_buffsize_small")  # notify_dispatch_tiling.cpp prints actualSize in bytes
    assert "the value the message computes" not in s.fix_en and "报错中计算出的值" not in s.fix_zh
    assert "bytes" in s.fix_en and "1048576" in s.fix_en and "字节" in s.fix_zh and "1048576" in s.fix_zh
    assert "notify_dispatch_tiling.cpp" in s.source

def test_thirteenth_audit_found_on_the_way_items_say_what_their_sources_say():
    """docs/facts-audit.md, "Thirteenth sample: the items found on the way": the MemFabric engine's message has a row
    of its own and the Mooncake pattern no longer matches it; the rfork loader's YuanRong TransferEngine message,
    which no row covered, has one; hccl 19's fix rests on HCCL's fault guide and names the device-RDMA case; acl 507899's fix
    no longer calls vllm-ascend#13399's setup an unsupported combination (the maintainer: not a known issue)."""
    # 1. memfabric_transfer_engine.py raises 'ret_value={ret}'; mooncake_transfer_engine.py 'ret_value: {ret_value}'
    mooncake = by_id("mooncake.transfer_engine_init")
    memfabric = by_id("vllm_ascend.memfabric_te_init")
    assert "MemFabric" not in mooncake.cause_en and "MemFabric" not in mooncake.fix_en and "MemFabric" not in mooncake.cause_zh
    assert "memfabric_transfer_engine.py" not in mooncake.source
    assert not re.search(mooncake.pattern, memfabric.example) and not re.search(memfabric.pattern, mooncake.example)
    assert memfabric.layer == "vllm_ascend" and memfabric.finding is None  # no check looks at MemFabric
    assert "SfaRemoteD2HConnector" in memfabric.cause_en and "SfaRemoteD2HConnector" in memfabric.cause_zh
    assert "get_ip()" in memfabric.cause_en and "memfabric_transfer_protocol" in memfabric.fix_en
    assert "0.28.0rc1" in memfabric.fix_en and "0.28.0rc1" in memfabric.fix_zh
    assert "vllm-ascend/0.28.0rc1" in memfabric.source and "vllm-ascend/0.26.0rc1" in memfabric.source
    got = explained(memfabric.example)
    assert "vllm_ascend.memfabric_te_init" in got and "mooncake.transfer_engine_init" not in got, got
    got = explained(mooncake.example)
    assert "mooncake.transfer_engine_init" in got and "vllm_ascend.memfabric_te_init" not in got, got
    # 2. rfork transfer_backend.py: yr.datasystem's TransferEngine.initialize(...) -> status, from v0.18.0rc1
    rfork = by_id("vllm_ascend.rfork_transfer_engine_init")
    assert rfork.layer == "vllm_ascend" and rfork.finding is None
    assert "yr.datasystem" in rfork.cause_en and "yr.datasystem" in rfork.cause_zh and "v0.18.0rc1" in rfork.cause_en
    assert "--load-format rfork" in rfork.fix_en and "--load-format rfork" in rfork.fix_zh
    assert "rfork/transfer_backend.py" in rfork.source and "v0.18.0rc1/vllm_ascend/model_loader/rfork" in rfork.source
    v18 = "RuntimeError: TransferEngine initialization failed: initialize(192.168.0.10:40123, ascendnpu:0) -> <status>"
    v29 = "RuntimeError: YuanRong TransferEngine initialize('192.168.0.10:0', 'ascend', 'npu:0') failed: <status>"
    assert "0.29.0rc1" in rfork.cause_en and "0.29.0rc1" in rfork.cause_zh and "vllm-ascend/0.29.0rc1" in rfork.source
    for line in (rfork.example, v18, v29):  # v0.18.0rc1, later releases to 0.28.0rc1, the 0.29.0rc1 sdist on
        got = explained(line)
        assert "vllm_ascend.rfork_transfer_engine_init" in got and "mooncake.transfer_engine_init" not in got, got
        assert "vllm_ascend.memfabric_te_init" not in got, got
    assert "vllm_ascend.rfork_transfer_engine_init" not in explained(mooncake.example)
    codes = {(c.family, c.code): c for c in matrix().codes}
    c = codes[("hccl", "19")]  # param_link_stage.md EI0019: socket type 0/1, port 16666; vllm-ascend#1815: rdma init first
    assert "means the port is taken" not in c.fix_en and "表示端口被占用" not in c.fix_zh
    assert "HCCL_NPU_SOCKET_PORT_RANGE=auto" in c.fix_en and "HCCL_NPU_SOCKET_PORT_RANGE=auto" in c.fix_zh
    assert "ra rdma init failed" in c.fix_en and "ra rdma init failed" in c.fix_zh and "EJ0002" in c.fix_zh
    assert "fault_diagnosis/param_link_stage.md" in c.source and "vllm-ascend/issues/1815" in c.source
    c = codes[("acl", "507899")]  # vllm-ascend#13399: open; "This is not a known issue", logs asked for
    assert "unsupported combination" not in c.fix_en and "组合不受支持" not in c.fix_zh
    assert "not a known issue" in c.fix_en and "不是已知问题" in c.fix_zh and "rtGetDeviceCount" in c.fix_en
    assert "vllm-ascend/issues/13399" in c.source

def test_fourteenth_audit_found_on_the_way_items_say_what_their_sources_say():
    """docs/facts-audit.md, "Fourteenth sample: the items found on the way": VLLM_LLMDD_RPC_PORT (read by v0.9.1rc2 to
    v0.10.0rc1, renamed VLLM_ASCEND_LLMDD_RPC_PORT in v0.10.1rc1); a 507033 signature that a rejected
    ASCEND_RT_VISIBLE_DEVICES line set off (the runtime gives 107001 or 207004 for that, before any open); and a
    model-type warning whose cause quoted only transformers' older wording."""
    from doctor.versions import satisfies
    tuning = {v.name: v for v in matrix().tuning_vars}
    old, new = tuning["VLLM_LLMDD_RPC_PORT"], tuning["VLLM_ASCEND_LLMDD_RPC_PORT"]
    read = lambda row, version: any(satisfies(version, r) for r in row.read_by)  # noqa: E731
    assert [read(old, v) for v in ("0.9.1rc1", "0.9.1rc2", "0.9.1rc3", "0.9.1", "0.9.2rc1", "0.10.0rc1", "0.10.1rc1")] == \
        [False, True, True, True, False, True, False]
    assert not any(read(new, v) for v in ("0.9.1", "0.10.0rc1")) and read(new, "0.10.1rc1")
    assert old.replaced_by == "VLLM_ASCEND_LLMDD_RPC_PORT" and old.default == "5557"
    assert "v0.10.0rc1/vllm_ascend/envs.py" in old.source and "v0.10.1rc1/vllm_ascend/envs.py" in old.source
    from tests.rules.test_tuning import facts, judge  # check's env_ignored names the name the release reads
    ignored = lambda name, version: [f for f in judge(facts(env={name: "6000"}), version, matrix())  # noqa: E731
                                     if f.id == "tuning.env_ignored"]
    assert "reads the older name VLLM_LLMDD_RPC_PORT" in ignored("VLLM_ASCEND_LLMDD_RPC_PORT", "0.10.0rc1")[0].hint.text()
    assert "VLLM_ASCEND_LLMDD_RPC_PORT" in ignored("VLLM_LLMDD_RPC_PORT", "0.10.1rc1")[0].hint.text()
    assert "VLLM_ASCEND_LLMDD_RPC_PORT" not in ignored("VLLM_LLMDD_RPC_PORT", "0.9.1rc1")[0].hint.text()
    # hicann/runtime 681ef761: a rejected setting fails in ChgUserDevIdToDeviceId (107001) or GetDeviceCount (207004)
    # before any device is opened; 507033 (RT_ERROR_DEVICE_RETAIN) is SetDevice failing to bring the device up
    s = by_id("devices.runtime_507033_visible")
    assert "Set visible device failed" not in s.requires and "ASCEND_RT_VISIBLE_DEVICES" not in s.requires
    e507 = ("RuntimeError: Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:146 NPU function error: "
            "c10_npu::SetDevice(device_id_), error code is 507033")
    opened = "        Failed to open device, retCode=0x7020014, deviceId=0.[FUNC:InitRawDriver][FILE:raw_device.cc][LINE:126]"
    invalid = ("(RayWorkerWrapper pid=118835) ERROR 02-26 09:45:37 worker_base.py:572]         The argument is invalid."
               "Reason: Set visible device failed, invalid device=3, input visible devices:1")
    e107 = ("(RayWorkerWrapper pid=118835) ERROR 02-26 09:45:37 worker_base.py:572]         open device 3 failed, "
            "runtime result = 107001.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]")
    order = by_id("devices.visible_devices_order").example
    rng = by_id("devices.visible_devices_range").example
    assert "devices.runtime_507033_visible" in explained(e507 + "\n" + opened)
    assert "devices.runtime_507033_visible" not in explained(invalid + "\n" + e107)
    # both in one log: the rejection cannot be what gave the 507033 (it fails before the open), so the 507033 is
    # not put down to it; the generic 507033 entry answers for the code, the order / range signatures for their lines
    both = explained(e507 + "\n" + invalid)
    assert "devices.runtime_507033_visible" not in both and "cann.runtime_507033" in both
    for line, sid in ((order, "devices.visible_devices_order"), (rng, "devices.visible_devices_range")):
        got = explained(e507 + "\n" + line)
        assert sid in got and "devices.runtime_507033_visible" not in got and "cann.runtime_507033" in got, got
        assert {sid, "devices.runtime_507033_visible"} <= explained(e507 + "\n" + line + "\n" + opened)
    # transformers 4.46.0 / 5.0.0 wheels: the older wording; 5.25.0: "This may be expected if ..."
    s = by_id("vllm.model_type_mismatch")
    assert "not supported for all configurations" in s.cause_en and "may be expected" in s.cause_en
    assert "shares a subset of the architecture" in s.cause_en and "may be expected" in s.cause_zh
    assert "transformers/5.25.0" in s.source and "transformers/5.0.0" in s.source
    older = ("(APIServer pid=677) You are using a model of type deepseekv2 to instantiate a model of type deepseek_v3. "
             "This is not supported for all configurations of models and can yield errors.")
    newer = ("[transformers] You are using a model of type `deepseek_v4` to instantiate a model of type `deepseek_v3`. "
             "This may be expected if you are loading a checkpoint that shares a subset of the architecture (e.g., "
             "loading a `sam2_video` checkpoint into `Sam2Model`), but is otherwise not supported and can yield errors. "
             "Please verify that the checkpoint is compatible with the model you are instantiating.")
    assert "vllm.model_type_mismatch" in explained(older) and "vllm.model_type_mismatch" in explained(newer)

def test_fifteenth_audit_y_facts_say_what_their_sources_say():
    """docs/facts-audit.md, fifteenth sample (seed 40), facts #27 to #40: the sleep-mode assertion that reads
    PYTORCH_NPU_ALLOC_CONF only at v0.9.1rc1 and from v0.9.2rc1 (before, and on the v0.9.1 branch, camem.py reads
    PYTORCH_CUDA_ALLOC_CONF); an EI0005 meaning that added CANN versions (HCCL lists a version mismatch as EI0008);
    an HCCL 10 meaning that HCCL's own code contradicts (it also returns 10 for kernel load and launch failures)."""
    from doctor.versions import satisfies

    fact = next(f for f in matrix().tuning_facts if f.id == "sleep_mode_rejects_expandable")
    held = lambda v: any(satisfies(v, r) for r in fact.releases)  # noqa: E731
    assert all(held(v) for v in ("0.9.1rc1", "0.9.2rc1", "0.14.0rc1", "0.30.0rc2"))
    assert not any(held(v) for v in ("0.7.3", "0.8.5rc1", "0.9.0rc2", "0.9.1rc2", "0.9.1"))
    assert "PYTORCH_NPU_ALLOC_CONF" in fact.note and "reads PYTORCH_CUDA_ALLOC_CONF" in fact.source
    assert "v0.7.3/vllm_ascend/device_allocator/camem.py" in fact.source
    assert "v0.9.2rc1/vllm_ascend/device_allocator/camem.py" in fact.source
    codes = {(c.family, c.code): c for c in matrix().codes}
    # #37: HCCL's list and the catalogue give a different HCCL version its own code (EI0008), not EI0005
    c = codes[("cann_msg", "EI0005")]
    assert "or their CANN versions do" not in c.meaning_en and "或 CANN 版本" not in c.meaning_zh
    assert "EI0008" in c.meaning_en and "EI0008" in c.meaning_zh and "CANN version" not in c.fix_en
    assert "debug_thinking.md" in c.source and "inconsistent_check.cc" in c.source
    # #40: HCCL's operator code also returns 10 when loading a kernel binary or launching a custom kernel fails
    c = codes[("hccl", "10")]
    assert c.meaning_en != "HCCL could not open a file." and "launch kernel failed" in c.meaning_en
    assert "launch kernel failed" in c.meaning_zh and "/etc/hccn.conf" not in c.fix_en
    assert "adapter_acl.cc" in c.source and "op_common.cc" in c.source

def test_sixteenth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, sixteenth sample (seed 41), facts #46 to #50: an etcd cause that put every failed request
    down to an unreachable address (the code logs any failed get / put / delete, and only before v0.2.0), a MindIE
    FAQ case named the 'Motor CPP' service (the FAQ: 'MindIE Motor服务'), and a libhccl hint placed in
    module_loader.py at every torch_npu release (torch_npu/__init__.py up to the 26.0 releases)."""
    s = by_id("mooncake.etcd_client_error")  # Mooncake 348afd75 transfer_metadata.cpp; 64ddda46 (#51); v0.2.0
    assert s.cause_en != "Mooncake's metadata server (etcd) is not reachable at the address given."
    assert s.cause_zh != "无法通过给定地址访问 Mooncake 的元数据服务器（etcd）。"
    assert "get, put or delete" in s.cause_en and "get、put 或 delete" in s.cause_zh
    assert "before v0.2.0" in s.cause_en and "v0.2.0 之前" in s.cause_zh and "EtcdStoragePlugin" in s.cause_en
    assert "HTTP proxies" in s.cause_en and "HTTP 代理" in s.cause_zh
    assert "unset http_proxy https_proxy" in s.fix_en and "unset http_proxy https_proxy" in s.fix_zh
    assert "transfer_metadata.cpp" in s.source and "64ddda46d44d6255ccc13e2c9afa1802b4bdec42" in s.source
    s = by_id("cann.mindie_env_unset")  # MindIE-LLM 8b4871ad error_libboost_thread_motor_started.md
    assert "Motor CPP" not in s.cause_en and "Motor CPP" not in s.cause_zh
    assert "MindIE Motor service" in s.cause_en and "MindIE Motor 服务" in s.cause_zh
    s = by_id("cann.libhccl_compiler_package")  # Ascend/pytorch v26.0.1 __init__.py, v26.1.0-beta.1 module_loader.py
    assert "torch_npu's module_loader.py adds" not in s.cause_en and "torch_npu 的 module_loader.py 会附加" not in s.cause_zh
    assert "torch_npu/__init__.py" in s.cause_en and "torch_npu/__init__.py" in s.cause_zh
    assert "26.1.0-beta.1" in s.cause_en and "26.1.0-beta.1" in s.cause_zh
    assert "v26.0.1-pytorch2.10.0/torch_npu/__init__.py" in s.source

def test_sixteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, sixteenth sample (seed 41), facts #41 to #45: a Triton-op cause that called the missing
    op a vllm-ascend kernel, when triton_utils.py looks up three Triton language ops (insert_slice, extract_slice,
    get_element) at import, and only under `if HAS_TRITON:`."""
    s = by_id("vllm_ascend.triton_op_unresolved")  # VA 9bf964cb4b triton_utils.py; the 0.26.0rc1-0.30.0rc2 sdists
    assert "A vllm-ascend kernel written in Triton" not in s.cause_en and "vllm-ascend 算子，但无法解析" not in s.cause_zh
    for op in ("insert_slice", "extract_slice", "get_element"):
        assert op in s.cause_en and op in s.cause_zh
    assert "only when HAS_TRITON is True" in s.cause_en and "只在 HAS_TRITON 为 True 时" in s.cause_zh
    assert "fused_recurrent_gated_delta_rule" not in s.example and "'insert_slice'" in s.example
    assert "vllm_ascend.triton_op_unresolved" in explained(s.example)
    assert "700423156f" in s.source and "vllm-ascend/0.30.0rc2" in s.source


def test_fifteenth_audit_found_on_the_way_items_say_what_their_sources_say():
    """docs/facts-audit.md, "Fifteenth sample: the items found on the way": each item read again from its
    primary source (hicann/runtime, kvcache-ai/Mooncake, hicann/hccl, vllm-ascend) before the row changed."""
    cat = catalog()

    def said(text):  # what explain says: id -> cause_en of each answer
        return {a.id: a.cause.en for a in cat.answers(scan_text(text, cat.compiled))}

    # 1. cann.runtime_507033 answers a 507033 that none of the three keyed rows takes; hicann/runtime 681ef761 fails a
    # rejected visible-device setting with 107001 / 207004 before any open, so such a line may sit beside it
    s = by_id("cann.runtime_507033")
    assert "None of those lines is in this log" not in s.cause_en and "本日志中没有上述任何一行" not in s.cause_zh
    assert "EE1001" not in s.cause_en and "none of the E30006, EL0004 or failed-open lines" in s.cause_en
    assert "107001" in s.cause_zh and "207004" in s.cause_zh and "api_error.cc" in s.source
    e507 = "Initialize:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:152 NPU function error: c10_npu::SetDevice(device_id_), error code is 507033"
    invalid = ("(RayWorkerWrapper pid=118835) ERROR 02-26 09:45:37 worker_base.py:572]         The argument is invalid."
               "Reason: Set visible device failed, invalid device=3, input visible devices:1")
    opened = "        Failed to open device, retCode=0x7020014, deviceId=0.[FUNC:InitRawDriver][FILE:raw_device.cc][LINE:126]"
    alone = said(e507)
    assert "cann.runtime_507033" in alone and "devices.runtime_507033_visible" not in alone
    with_invalid = said(e507 + "\n" + invalid)
    assert "cann.runtime_507033" in with_invalid and "devices.runtime_507033_visible" not in with_invalid
    assert "if this log has one, is not what returned this 507033" in with_invalid["cann.runtime_507033"]
    with_open = said(e507 + "\n" + opened)
    assert "devices.runtime_507033_visible" in with_open and "cann.runtime_507033" not in with_open
    assert "0x7020014" in with_open["devices.runtime_507033_visible"]
    # 2. Mooncake 6041a609 (v0.3.12.post1) and 3b5a5941 utils.cpp FindAdxlListenPort: the range is base + physical id
    # x 100 to base + (physical id + 1) x 100, both ends drawn; the message prints the logical id
    s = by_id("mooncake.ascend_listen_port_exhausted")
    assert "100 x NPUs" not in s.fix_en and "x NPU 数" not in s.fix_zh
    assert "physical device id" in s.fix_en and "logical device id" in s.fix_en and "Find available between" in s.fix_en
    assert "物理设备号" in s.fix_zh and "逻辑设备号" in s.fix_zh and "both ends included" in s.fix_en
    # 3. hicann/hccl 09300b70 HCCL_HOST_SOCKET_PORT_RANGE.md / HCCL_NPU_SOCKET_PORT_RANGE.md: both ranges "不小于单个NPU上的
    # HCCL进程数"; PreemptPortManager::PreemptPortInRange: one port per process per listening IP
    s = by_id("cann.hccl_port_range_exhausted")
    assert "on this host or device" not in s.cause_en and "on the host / device" not in s.fix_en
    assert "HCCL processes on one NPU" in s.cause_en and "HCCL processes on one NPU" in s.fix_en
    assert "per IP address" in s.cause_en and "same host IP" in s.fix_en
    assert "单个 NPU 上的 HCCL 进程数" in s.cause_zh and "单个 NPU 上的 HCCL 进程数" in s.fix_zh and "同一 Host IP" in s.fix_zh
    # 4. detect_connect_anomalies.cc BuildGroupedDetectMessage (read in a copy the index does not name, so the row
    # words it as a condition): one line per source device and destination server, the dstRank device IDs joined by ","
    s = by_id("cann.hccl_connect_detect")
    assert "the two ends of a link" not in s.cause_en and "device ID or IDs" in s.cause_en and "each device" in s.fix_en
    assert "多个设备 ID" in s.cause_zh and "所列每个设备" in s.fix_zh
    several = ("[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.966 [detect_connect_anomalies.cc:132] [18744]This node "
               "(server 192.168.200.100, device ID 1) detects that srcRank (server 192.168.200.100, device ID 1) fails to "
               "connect to dstRank (server 192.168.200.101, device ID 0,2,3). Continue to analyze the fault based on the "
               "logs of srcRank and dstRank.")
    assert "cann.hccl_connect_detect" in explained(several) and "cann.hccl_connect_detect" in explained(s.example)
    # 5. Mooncake v0.3.12.post1 allocation_strategy.h: Allocate returns NO_AVAILABLE_HANDLE when getNames() is empty
    # (segment.cpp: MountSegment adds the allocator and the capacity metric, UnmountSegment removes both)
    s = by_id("mooncake.no_available_handle")
    assert "no segment is mounted at all" in s.cause_en and "没有挂载任何 segment" in s.cause_zh
    assert "any segment is mounted" in s.fix_en and "Failed to mount segment" in s.fix_en
    assert "是否挂载了任何 segment" in s.fix_zh and "segment.cpp" in s.source
    # 6. Mooncake 3b5a5941: topology.cpp isIbDeviceAvailable `PLOG(WARNING) << "Failed to open device " << device_name`
    # (glog adds ": <strerror> [errno]") vs rdma_context.cpp's "Failed to open device … on port … with GID …"
    s = by_id("mooncake.no_rnic")
    assert "Skipping unavailable device" in s.cause_en and "Skipping unavailable device" in s.cause_zh
    assert "src/topology.cpp" in s.source
    transport = "E0115 05:20:19.945159   309 rdma_context.cpp:81] Failed to open device mlx5_8 on port  with GID 0"
    topology = "W0115 05:20:19.901120   309 topology.cpp:111] Failed to open device mlx5_8: No such device [19]"
    assert explained(transport) == {"mooncake.open_device_gid"}
    assert explained(topology) == set()
    assert "devices.runtime_507033_visible" not in explained(e507 + "\n" + topology)
    assert explained(topology + "\nW0115 05:20:19.901200   309 topology.cpp:224] Skipping unavailable device: mlx5_8") == set()
    # 7. vllm-ascend 182b75ea k2q_csr_tiling_arch35.h: "A5/arch35 tiling helpers", "ascend950 构建时 ARCH_DIRECTORY 含 arch35"
    s = by_id("cann.ascendc_pipe_barrier_pipe_v_a5")
    assert "arch35" in s.cause_en and "sgl-kernel-npu/pull/632" in s.source
    assert "vllm-ascend/blob/182b75ea84ff13ece27b57391331ef8935410aea/csrc/attention/k2q_csr/k2q_csr_common/op_host/arch35/" \
        "k2q_csr_tiling_arch35.h" in s.source


def test_seventeenth_audit_z2_facts_say_what_their_sources_say():
    """docs/facts-audit.md, seventeenth sample (seed 42), facts #46 to #50: a NumPy cause that put every matched line
    down to a NumPy-1.x module under NumPy 2.x (the 1.x headers' import_array also prints 'numpy.core.multiarray
    failed to import' when numpy itself cannot be imported), and a thread's reporter given a gender it does not state."""
    s = by_id("vllm_ascend.numpy2_abi")  # numpy 2.4.6 core/_multiarray_umath.py; the 1.25.2 and 1.26.4 wheels' headers
    assert s.cause_en != "A compiled module built for NumPy 1.x is loaded under NumPy 2.x (binary incompatible)."
    assert s.cause_zh != "为 NumPy 1.x 编译的二进制模块在 NumPy 2.x 下加载（二进制不兼容）。"
    assert "numpy itself cannot be imported" in s.cause_en and "numpy 本身无法导入" in s.cause_zh
    assert "NumPy 1.25 and earlier" in s.cause_en and "NumPy 1.25 及更早" in s.cause_zh
    assert s.fix_en.startswith("If NumPy's 'compiled using NumPy 1.x' message is in the log")
    assert "otherwise fix the import error" in s.fix_en and "否则先解决" in s.fix_zh
    assert "numpy/1.26.4" in s.source and "_multiarray_umath.py" in s.source
    s = by_id("torch.install_order_conflict")  # vllm-ascend #12404: the reporter's gender is not in the thread
    assert "wrote that he " not in s.cause_en and "wrote that they followed" in s.cause_en

def test_seventh_sweep_part_s7c_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part C: five rows said more than the
    code, tags or threads they cite."""
    # vllm-ascend v0.12.0rc1 patch_weight_loader.py: torch.empty of an unquantized linear weight, "may be caused by
    # insufficient memory", and a logger.error with the allocator's error just before
    s = by_id("vllm_ascend.weight_alloc_oom")
    assert "Allocating a layer's weights on the NPU failed" not in s.cause_en
    assert "the model does not fit the cards at this parallel size, or memory is held" not in s.cause_en
    assert "在 NPU 上分配某层权重失败" not in s.cause_zh
    assert "unquantized linear layer" in s.cause_en and "may be caused by insufficient memory" in s.cause_en
    assert "未量化线性层" in s.cause_zh and "都没有说明" in s.cause_zh
    assert "Failed to create unquantized linear weights: " in s.fix_en and "v0.13.0rc2" in s.source
    # vllm-ascend v0.9.0rc1: compilation/ holds piecewise_backend.py only; platform.py names NPUPiecewiseBackend
    s = by_id("vllm_ascend.compilation_init_missing")
    assert "the caller was written for a newer vllm-ascend" not in s.cause_en
    assert "调用方是为更新的 vllm-ascend 编写的" not in s.cause_zh
    assert "NPUPiecewiseBackend" in s.cause_en and "NPUPiecewiseBackend" in s.cause_zh
    assert "the sources do not show" in s.cause_en and "v0.9.0rc1/vllm_ascend/platform.py" in s.source
    # Mooncake v0.3.6 to v0.3.9 ascend_direct_transport.cpp: 'Transfer slice failed'; timeout lines from v0.3.8
    s = by_id("mooncake.connect_failed")
    assert "cannot be reached over the device network" not in s.cause_en
    assert "对端 NPU 地址在设备网络上不可达时" not in s.cause_zh
    assert "v0.3.7.post2" in s.cause_en and "v0.3.7.post2" in s.cause_zh
    assert "only in v0.3.6 to v0.3.9" in s.cause_en and "v0.3.6 至 v0.3.9" in s.cause_zh
    assert "v0.3.9/mooncake-transfer-engine" in s.source and "v0.3.7.post2/mooncake-transfer-engine" in s.source
    # vllm-ascend PR #6806 (kv_pool.md): ASCEND_BUFFER_POOL=4:8 for A2; Mooncake PR #1697: HCCS vs RoCE
    s = by_id("mooncake.transfer_failed")
    assert "the thread records no result" not in s.cause_en and "讨论中没有结果记录" not in s.cause_zh
    assert "PR #1697" in s.cause_en and "PR #1697" in s.cause_zh
    assert "recommends for A2" in s.fix_en and "为 A2 推荐" in s.fix_zh and "vllm-ascend/pull/6806" in s.source
    # Ascend/samples #21: one open thread, no reply, no package list; the symbol is only unresolved
    s = by_id("cann.opp_version_mix")
    assert "so the OPP and that GE are not from the same CANN build" not in s.cause_en
    assert "说明 OPP 与该 GE 不是同一 CANN 构建" not in s.cause_zh
    assert "no cause is established" in s.cause_en and "原因并未确定" in s.cause_zh
    assert "ldd -r" in s.cause_en and "ldd -r" in s.fix_en and "ldd -r" in s.fix_zh

def test_seventeenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, seventeenth sample (seed 42), facts #41 to #45: a Mooncake RPC timeout whose candidates
    included a master that is not running or not reachable (yalantinglibs 0.5.5 client_pool.hpp: a failed connect
    gives no client, and master_client.cpp logs 'Client not available', not 'RPC call failed'), and, found on the
    way, a mooncake_master fix that sent users to 0.3.1 and called 0.3.0b3 an sdist only (PyPI's 0.3.0b3 and 0.3.0
    manylinux_2_35_x86_64 wheels declare `mooncake_master = mooncake.cli:main`)."""
    s = by_id("mooncake.master_rpc_timeout")  # Mooncake 723474f7 master_client.cpp; yalantinglibs 0.5.5; a7cfa40f (#2423)
    assert "the master not running or not reachable at master_server_address" not in s.cause_en
    assert "master 未运行或在 master_server_address 上不可达" not in s.cause_zh
    assert "'Client not available', not this line" in s.cause_en and "“Client not available”，而不是这一行" in s.cause_zh
    assert "30 s by default" in s.cause_en and "默认 30 秒" in s.cause_zh
    assert "v0.3.6 to v0.3.11.post1" in s.cause_en and "v0.3.6 至 v0.3.11.post1" in s.cause_zh
    assert "'RPC call timed out: …'" in s.cause_en and "“RPC call timed out: …”" in s.cause_zh
    assert not s.fix_en.startswith("Check that mooncake_master runs") and not s.fix_zh.startswith("确认 mooncake_master 正在运行")
    assert "MC_RPC_TIMEOUT_MS" in s.fix_en and "MC_RPC_TIMEOUT_MS" in s.fix_zh
    assert "yalantinglibs/blob/0.5.5/include/ylt/coro_io/client_pool.hpp" in s.source
    assert "a7cfa40f8e4433b0e561348d4e78fa9337e86c14" in s.source and "723474f74c65428c226af8240f1f1ad8b16a49bc" in s.source
    assert "mooncake.master_rpc_timeout" in explained(s.example)
    s = by_id("mooncake.master_not_found")  # PyPI wheels 0.3.0a0 / b0 / b1 (no entry points), 0.3.0b3 to 0.3.1 (entry point)
    assert "0.3.1 or later" not in s.fix_en and "0.3.1 及以后" not in s.fix_zh
    assert "only as an sdist" not in s.fix_en and "只有 sdist" not in s.fix_zh
    assert "from 0.3.0b3 on" in s.fix_en and "从 0.3.0b3 起" in s.fix_zh
    assert "0.3.0a0, 0.3.0b0 and 0.3.0b1" in s.fix_en and "0.3.0a0、0.3.0b0 和 0.3.0b1" in s.fix_zh
    assert "from 0.3.3.post1" in s.fix_en and "从 0.3.3.post1 起" in s.fix_zh
    assert "0.3.0b3/#files (cp310 manylinux_2_35_x86_64 wheel" in s.source and "sdist only" not in s.source

def test_seventh_sweep_part_s7a_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part A: twelve rows said more than (or not what)
    their sources say; each now states the cases on record and the candidates with how to tell them apart, and
    two patterns now match the form their cited code prints."""
    s = by_id("driver.libdcmi_missing")  # gpustack-runtime pydcmi tries the loader path, the driver dir and /usr/local/dcmi
    assert "in a container started without -v /usr/local/dcmi" not in s.cause_en and "`ls /usr/local/dcmi` on" not in s.cause_en
    assert "/usr/local/Ascend/driver/lib64/driver/libdcmi.so" in s.cause_en and "DCMIError_LibraryNotFound" in s.cause_zh
    assert "npu-driver_" not in s.fix_en and "npu-driver_" not in s.fix_zh and "gpustack/runtime/blob/" in s.source
    s = by_id("driver.aclgraph_old_hdk")  # hicann/runtime: stream.cc prints it; the EE1023 FAQ ties it to too many streams
    assert "EE1023" in s.cause_en and "0x7020023" in s.cause_en and "EE1023" in s.cause_zh and "0x7020023" in s.cause_zh
    assert "in both cases" in s.cause_en and "两种情况下" in s.cause_zh and "EE1023" in s.fix_en and "EE1023" in s.fix_zh
    assert "hicann/runtime/blob/681ef7610df1/docs/zh/FAQ/EE1023" in s.source
    failed = "[ERROR] RUNTIME(11803,rtstest_host):2026 [stream.cc:728]11803 Setup:Alloc sq cq failed, stream_id=2047."
    assert "driver.aclgraph_old_hdk" in explained(failed) and explained("alloc sq cq succeeded, stream 3") == set()
    s = by_id("devices.unsupported_soc")  # NpuVariables.cpp: AT_ERROR("Unsupported soc version: ", ...), lower-case soc
    assert "devices.unsupported_soc" in explained("RuntimeError: Unsupported soc version: Ascend310B4")
    assert "devices.unsupported_soc" in explained(s.example) and explained("soc_version: Ascend910B1 (supported)") == set()
    s = by_id("devices.dcmi_init_8005")  # simpler#2043 runs npu-smi through the host's privileged queue; no group, no reboot
    assert "usermod" not in s.fix_en and "usermod" not in s.fix_zh and "reboot" not in s.fix_en and "重启" not in s.fix_zh
    assert "#2043" in s.fix_en and "#2043" in s.fix_zh
    s = by_id("devices.dcmi_init_failed")  # VA#2698: the maintainer asked about --privileged; simpler#2043: root-only DCMI
    assert "a user found `--privileged` to be the key option" not in s.cause_en and "一位用户发现关键在于" not in s.cause_zh
    assert "asked another user" in s.cause_en and "#2043" in s.cause_en and "#2043" in s.cause_zh
    assert "The case read" not in s.cause_en and "所读案例" not in s.cause_zh
    s = by_id("devices.soc_version_unknown")  # NpuVariables.h: 100 to 104 are Ascend910PremiumA ... Ascend910B
    assert "910A/910 Pro (100 to 104)" not in s.cause_en and "910A/910 Pro（100 至 104）" not in s.cause_zh
    assert "Ascend910PremiumA" in s.cause_en and "Ascend910PremiumA" in s.cause_zh and "device/hardware.py" in s.source
    s = by_id("cann.tbe_adapter_undefined_symbol")  # Ascend/pytorch#99: no cause found; the NNAL mix is a candidate only
    assert "so its files and those libraries are not from one build" not in s.cause_en and "不是同一次构建" not in s.cause_zh
    assert "is the first thing to rule out" not in s.cause_en and "应首先排除" not in s.cause_zh
    assert "ldd -r" in s.cause_en and "ldd -r" in s.cause_zh and "ldd -r" in s.fix_en and "ldd -r" in s.fix_zh
    s = by_id("cann.aclnn_561103")  # the work-around comment is not the reporter's; opbase's return-code table
    assert "the reporter later worked around it" not in s.cause_en and "报告者后来自行绕过" not in s.cause_zh
    assert "hicann/opbase" in s.cause_en and "hicann/opbase" in s.cause_zh and "aclnn_return_codes.md" in s.source
    s = by_id("env.cuda_attention_backend")  # vllm 0.8.4 config.py ModelConfig.__init__ raises the same ValueError
    assert "vllm-ascend 0.8.4rc1 and 0.8.4rc2 raise this" not in s.cause_en and "会因此报错" not in s.cause_zh
    assert "vLLM's own" in s.cause_en and "vLLM 自身" in s.cause_zh and "pypi.org/project/vllm/0.8.4/" in s.source
    s = by_id("torch.npu_pin_mismatch")  # #1188, #5710: both installed; maintainers give the guide's order
    assert "installing vLLM from the index after vllm-ascend" not in s.cause_en and "在 vllm-ascend 之后从索引安装" not in s.cause_zh
    assert "vLLM first and vllm-ascend after it" in s.cause_en and "先装 vLLM、再装 vllm-ascend" in s.cause_zh
    assert "pip install vllm-ascend" in s.fix_en and "pip install vllm-ascend" in s.fix_zh
    s = by_id("torch.plus_cpu_index_prose")  # the guide uses `pip config set global.extra-index-url`; the export is #1411's
    assert "as the installation guide says" not in s.fix_en and "或按安装指南导出" not in s.fix_zh
    assert "pip config set global.extra-index-url" in s.fix_en and "pip config set global.extra-index-url" in s.fix_zh
    s = by_id("vllm.vllm_c_benign")  # the release note covers the ModuleNotFoundError form only
    assert "Expected on Ascend" not in s.cause_en and "昇腾上的预期提示" not in s.cause_zh
    assert "speak only of the first form" in s.cause_en and "只谈到第一种形式" in s.cause_zh and "#1305" in s.cause_en


def test_seventh_sweep_part_s7e_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part E: versions, attributions and
    candidates the cited threads, PRs and tags do not establish."""
    s = by_id("torch.cuda_only_api")  # sglang#29100: 2.7 spelled _cuda_endAllocateToPool differently, not this name
    assert "torch 2.7 names it differently" not in s.cause_en and "torch 2.7 中名称不同" not in s.cause_zh
    assert "_cuda_endAllocateCurrentStreamToPool" in s.cause_en and "_cuda_endAllocateCurrentStreamToPool" in s.cause_zh
    s = by_id("torch_npu.overwritten_by_vllm_ascend")  # verl#5351 was closed unmerged
    assert "verl PR #5351 reinstalls" not in s.cause_en and "verl PR #5351 在 vllm-ascend 之后重新安装" not in s.cause_zh
    assert "closed, not merged" in s.cause_en and "未合入" in s.cause_zh and "#1898" in s.cause_en
    s = by_id("torch_npu.npu_device_unknown")  # v7.2.0 / v7.3.0 have no pytorch2.5.1 tag
    assert "the later ones (v7.1.0, v7.2.0, v7.3.0)" not in s.cause_en and "及之后的版本（v7.1.0、v7.2.0、v7.3.0）" not in s.cause_zh
    assert "v7.2.0 and v7.3.0 have no 2.5.1 build" in s.cause_en and "没有 2.5.1 版本" in s.cause_zh
    assert "v7.3.0-pytorch2.6.0/setup.py" in s.source
    s = by_id("torch.load_needs_torch26")  # PR #37785: any torch.load without weights_only=False; only torch-npu < 2.6
    assert "so a newer transformers hits this" not in s.cause_en and "因此较新的 transformers 会触发" not in s.cause_zh
    assert "weights_only=False" in s.cause_en and "older than 2.6" in s.cause_en and "低于 2.6" in s.cause_zh
    assert "MinerU/issues/2537" in s.source and "#3166" in s.cause_zh
    s = by_id("vllm_ascend.triton_launcher_compile")  # the maintainer wrote "I think this is fixed by"
    assert "a maintainer later called it fixed" not in s.cause_en and "已修复此问题" not in s.cause_zh
    assert "I think this is fixed by" in s.cause_en and "I think this is fixed by" in s.cause_zh
    assert "pull/7764" in s.source and "#7764" in s.cause_en
    s = by_id("cann.hccl_exec_timeout_idle")  # the lmdeploy#2482 reply is not shown to be a maintainer's
    assert "lmdeploy's maintainer" not in s.cause_en and "lmdeploy 维护者" not in s.cause_zh
    assert "a reply in the thread" in s.cause_en and "帖中一条回复" in s.cause_zh
    s = by_id("mooncake.host_not_found")  # AI_ADDRCONFIG is PR #2918's analysis, and #2918 was closed unmerged
    assert "mooncake_master resolves its 0.0.0.0 listen address with AI_ADDRCONFIG" not in s.cause_en
    assert "mooncake_master 用 AI_ADDRCONFIG 解析" not in s.cause_zh
    assert "PR #2918" in s.cause_en and "yalantinglibs" in s.cause_en and "PR #2918" in s.cause_zh
    s = by_id("cann.custom_op_cann_mismatch")  # #17059: the right CANN, shadowed by torch_npu's older header copy
    assert "is being compiled against the headers and build scripts of another CANN" not in s.cause_en
    assert "正在按另一版本 CANN 的头文件" not in s.cause_zh
    assert "shadows it" in s.cause_en and "遮蔽" in s.cause_zh and "pip show -f torch_npu" in s.fix_en
    assert "pip show -f torch_npu" in s.fix_zh
    s = by_id("mooncake.jemalloc_missing")  # Mooncake#1338: the reply's author is not shown to be a maintainer
    assert "a Mooncake maintainer says" not in s.cause_en and "Mooncake 维护者称" not in s.cause_zh
    assert "ascend-direct-dev" in s.cause_en and "ascend-direct-dev" in s.cause_zh

def test_sixteenth_audit_found_on_the_way_items_say_what_their_sources_say():
    """docs/facts-audit.md, "Sixteenth sample: the items found on the way": each item read again from its
    primary source; this fails if any of the changes is reverted."""
    m = matrix()
    # 1. vllm-ascend v0.16.0rc1 on: W8A8S / W8A8SC are registered only in vllm_ascend/_310p/quantization, which
    # platform.py imports only if is_310p() (the rule's own test: tests/rules/test_tuning.py)
    quant = {q.scheme: q for q in m.tuning_quant}
    for scheme in ("W8A8S", "W8A8SC"):
        assert quant[scheme].hardware == ("310P",), scheme
        assert f"_310p/quantization/methods/{scheme.lower()}.py" in quant[scheme].source
    # 2. Mooncake 3b5a5941 transfer_metadata_plugin.cpp / etcd_wrapper.go: "EtcdStoragePlugin: unable to connect
    # <uri>: …", "unable to get / set / remove <key> in <uri>: …" (USE_ETCD), "… get / set / delete <key> from <uri>: …"
    # (USE_ETCD_LEGACY, and v0.2.0 to v0.3.0-alpha); transfer_metadata.cpp before v0.2.0: "Error from etcd client"
    s = by_id("mooncake.etcd_storage_plugin")
    assert s.example_source.startswith("reconstructed:") and "etcd client not initialized" in s.example
    for form in ("unable to connect", "etcd client not initialized", "USE_ETCD_LEGACY", "v0.3.0-beta",
                 "no valid endpoints provided", "5-second timeout", "prints no such line"):
        assert form in s.cause_en + s.fix_en, form
    assert "etcd client not initialized" in s.cause_zh and "USE_ETCD_LEGACY" in s.cause_zh and "5 秒超时" in s.cause_zh
    assert "etcd_wrapper.go" in s.source and "troubleshooting.md" in s.source
    glog = "E1207 10:15:02.123456  4021 transfer_metadata_plugin.cpp:{}] EtcdStoragePlugin: {}"
    for line, msg in ((454, "unable to connect 10.0.0.1:2379: no valid endpoints provided"),
                      (468, "unable to get mooncake/ram/10.0.0.2:12345 in 10.0.0.1:2379: context deadline exceeded"),
                      (496, "unable to set mooncake/rpc_meta/node1 in 10.0.0.1:2379: etcd client not initialized"),
                      (509, "unable to remove mooncake/ram/10.0.0.2:12345 in 10.0.0.1:2379: etcd client not initialized"),
                      (408, "unable to get mooncake/ram/10.0.0.2:12345 from 10.0.0.1:2379: Key not found"),
                      (427, "unable to set mooncake/ram/10.0.0.2:12345 from 10.0.0.1:2379: etcdserver: request timed out"),
                      (437, "unable to delete mooncake/ram/10.0.0.2:12345 from 10.0.0.1:2379: etcdserver: request timed out")):
        assert explained(glog.format(line, msg)) == {"mooncake.etcd_storage_plugin"}, msg
    assert explained("E1207 10:15:02.123456  4021 transfer_metadata.cpp:88] Error from etcd client") == \
        {"mooncake.etcd_client_error"}
    assert explained("EtcdStoragePlugin: JSON parse error: * Line 1, Column 1") == set()
    # 3. torch_npu 9e73e708 module_loader.py: the hint is added to any ImportError naming libhccl.so; the cause is the
    # not-found form only, so the pattern is too
    s = by_id("cann.libhccl_compiler_package")
    assert "No such file or directory" in s.pattern and "No such file or directory" in s.cause_en + s.cause_zh
    hint = ". Please check that the compiler package is installed. Please run 'source set_env.sh' in the CANN installation path."
    assert "cann.libhccl_compiler_package" in explained(
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory" + hint)
    for other in ("libhccl.so: cannot open shared object file: Permission denied",
                  "/usr/local/Ascend/ascend-toolkit/latest/lib64/libhccl.so: wrong ELF class: ELFCLASS32"):
        assert "cann.libhccl_compiler_package" not in explained("ImportError: " + other + hint), other
    # 4. hicann/runtime 681ef761 api_impl.cc: SetDevice `NULL_PTR_RETURN(context, RT_ERROR_DEVICE_RETAIN)`,
    # GetOpTimeOutInterval / SetOpExecuteTimeOutV2 `(timeoutCfg.isInit == false), RT_ERROR_DEVICE_RETAIN, EE1018`;
    # api_impl_v100_xpu.cc SetXpuDevice; runtime.cc PreparePrimaryContext (DeviceRetain)
    c = {(x.family, x.code): x for x in m.codes}[("rt_internal", "0x7010006")]
    assert "three cases" in c.meaning_en and "EE1018" in c.meaning_en and "XPU" in c.meaning_en
    assert "Device is not initialized" in c.meaning_en and "operator-timeout" in c.meaning_en
    assert "三种情况" in c.meaning_zh and "EE1018" in c.meaning_zh and "XPU" in c.meaning_zh
    assert "EE1018" in c.fix_en and "set the device first" in c.fix_en and "EE1018" in c.fix_zh and "先设置设备" in c.fix_zh
    assert "api_impl.cc" in c.source and "api_impl_v100_xpu.cc" in c.source
    # 5. vllm-ascend v0.13.0rc1 to v0.25.1rc1 (and the 0.30.0rc2 sdist) DeepSeek-V3.1.md: `export OMP_NUM_THREADS=1` twice
    # (multi-node / "5.2 Multi-Node Data Parallel Deployment"), 10 in the PD deployment; V3.2 and V4: only 10
    a = next(x for x in m.tuning_advice if x.id == "OMP_NUM_THREADS.tutorials_1")
    assert "DeepSeek-V3.1 and V3.2 tutorials of that tag and later ones, and the DeepSeek-V4 ones, export 10" not in a.source
    assert "as the DeepSeek-V3.1 tutorial of that tag and later ones does too, twice" in a.source
    assert "Multi-Node Data Parallel Deployment" in a.source and "DeepSeek-V4 ones export only 10" in a.source
    # 6. the vllm 0.7.1 wheel, vllm/platforms/__init__.py resolve_current_platform_cls_qualname: `func()` under
    # `except Exception: pass` (plugin.load() failures alone are logged, "Failed to load plugin %s")
    s = by_id("vllm_ascend.no_platform")
    assert "except Exception: pass" in s.fix_en and "0.7.1rc1" in s.fix_en and "vllm_ascend.register()" in s.fix_en
    assert "except Exception: pass" in s.fix_zh and "0.7.1rc1" in s.fix_zh and "vllm_ascend.register()" in s.fix_zh
    assert "vllm/blob/v0.7.1/vllm/platforms/__init__.py" in s.source

def test_seventh_sweep_part_s7b_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part B: five causes or fixes that said
    more than the code or thread they cite."""
    s = by_id("vllm.benchmarks_missing")  # #725: pip install -e under /workspace (PR #661), "wrong path", PR #726
    assert "is imported instead of the installed package" not in s.cause_en
    assert "导入的是该目录下的 vllm 源码树而非已安装的包" not in s.cause_zh
    assert "PR #661" in s.cause_en and "PR #661" in s.cause_zh and "PR #726" in s.cause_en and "PR #726" in s.cause_zh
    assert "/pull/661" in s.source and "/pull/726" in s.source
    s = by_id("vllm_ascend.infer_device_type")  # 0.7.3rc1 to 0.7.3.post1 register() imports vllm_ascend.patch_module
    assert "register() only returns the platform's name" not in s.cause_en and "register() 只返回平台类名" not in s.cause_zh
    assert "patch_module" in s.cause_en and "patch_module" in s.cause_zh and "#262" in s.cause_en and "#262" in s.cause_zh
    assert "v0.7.3/vllm_ascend/__init__.py" in s.source
    s = by_id("vllm_ascend.plugin_load_failed")  # 0.27.1rc1 and 0.30.0rc2 import triton when vllm_ascend is loaded
    assert "No release imports torch_npu or CANN at this step." not in s.cause_en
    assert "没有任何版本在这一步导入 torch_npu 或 CANN。" not in s.cause_zh
    assert "triton.experimental.gluon" in s.cause_en and "triton.experimental.gluon" in s.cause_zh
    assert "0.27.1rc1" in s.cause_en and "0.27.1rc1" in s.cause_zh and "0.30.0rc2" in s.source
    s = by_id("vllm_ascend.launch_blocking_graph")  # the message: plogs give "more information about runtime errors"
    assert "name the failing operator" not in s.fix_en and "给出出错的算子" not in s.fix_zh
    assert "synchronous operator launch" not in s.cause_en and "同步下发算子" not in s.cause_zh
    assert "runtime errors" in s.fix_en and "运行时错误" in s.fix_zh and "cudagraph_mode" in s.cause_en
    assert "cudagraph_mode" in s.cause_zh and "0.30.0rc2" in s.cause_en and "0.30.0rc2" in s.cause_zh
    assert "about runtime errors" in s.example and "log/debug/plog" not in s.example
    s = by_id("vllm_ascend.aclgraph_sizes_adjusted")  # prune_capture_sizes_for_950 keeps 4 sizes; nothing about eager runs
    assert "batch sizes without a graph run eagerly" not in s.cause_en and "以 eager 方式执行" not in s.cause_zh
    assert "more than 4 sizes" in s.cause_en and "多于 4 个" in s.cause_zh and "piecewise" in s.cause_en
    assert "piecewise" in s.cause_zh
    s = by_id("vllm_ascend.custom_op_schema_missing")  # kimi_kda.py prints qualified names, not a list repr
    assert "['npu_chunk_kda_fwd']" not in s.example and "torch.ops._C_ascend.chunk_kda_fwd" in s.example


def test_seventh_sweep_part_s7d_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part D: a serve choice given no version boundary,
    a retry log line said to tell causes apart, a fix that assumed an unsupported Python, two check lists given
    as complete, an absent metadata key said to log nothing, and a fix naming two nodes for a one-machine case."""
    s = by_id("vllm_ascend.quant_choice")  # PR #877 (00e02435, first in v0.9.0rc1) adds ascend to the serve choices
    assert "predates `--quantization ascend` (0.8.5 lacks it)" not in s.cause_en and "（0.8.5 不支持）" not in s.cause_zh
    assert "v0.9.0rc1" in s.cause_en and "PR #877" in s.cause_en and "#2819" in s.cause_en
    assert "v0.9.0rc1" in s.cause_zh and "PR #877" in s.cause_zh and "v0.9.0rc1" in s.fix_en and "v0.9.0rc1" in s.fix_zh
    assert "00e0243561720ad3ba66ba43e84031dd0e91814b" in s.source and "issues/2819" in s.source
    s = by_id("env.dist_connect_timeout")  # socket.cpp 056b6f38: the INFO line is printed for every retry; gai errors retry
    assert "'No socket on ... is listening yet' lines)" not in s.cause_en and "'No socket on ... is listening yet' 行）" not in s.cause_zh
    assert "does not tell them apart" in s.cause_en and "gai error" in s.cause_en and "does not resolve" in s.cause_en
    assert "不能据此区分" in s.cause_zh and "gai error" in s.cause_zh and "gai error" in s.fix_en and "getent hosts" in s.fix_zh
    s = by_id("python.op_compiler_abi")  # Ascend/pytorch #61 (open) names no CANN version or fix
    assert not s.fix_en.startswith("Use a Python version that CANN release supports")
    assert not s.fix_zh.startswith("改用该 CANN 版本支持的 Python 版本")
    assert "3.8 and 3.9 only warn" in s.cause_en and "names neither the CANN version nor a fix" in s.cause_en
    assert "3.8 与 3.9 只给出警告" in s.cause_zh and "python -V" in s.fix_en and "python/cpython/pull/20784" in s.source
    s = by_id("mooncake.no_rnic")  # rdma_context.cpp 3b5a5941: zero CQs/channels and no completion vectors fail too
    assert "Invalid RDMA completion configuration" in s.cause_en and "Invalid RDMA completion configuration" in s.cause_zh
    assert "no completion vectors" in s.cause_en and "没有完成向量" in s.cause_zh
    assert "Skipping unavailable device" in s.cause_en and "src/topology.cpp" in s.source
    s = by_id("mooncake.open_device_gid")  # openRdmaDevice v0.3.8.post1 logs more checks than the six
    assert "`ibv_get_device_list failed`" in s.cause_en and "`ibv_open_device(<name>) failed`" in s.cause_zh
    assert "Failed to query port attributes" in s.cause_en and "DMA BUF" in s.cause_zh and "/dev/infiniband" in s.fix_en
    assert "has no associated network device" in s.cause_en and "#1384" in s.cause_zh
    s = by_id("mooncake.segment_descriptor_missing")  # HTTP servers answer 404, Redis logs a nil reply, etcd is silent
    assert "the plugin logs its own ERROR line just before for the last cases" not in s.cause_en
    assert "后几种情况插件会先打印自己的 ERROR 行" not in s.cause_zh and "without one, the key is missing" not in s.fix_en
    assert "metadata not found" in s.cause_en and "metadata not found" in s.cause_zh and "http=404" in s.fix_en
    assert "etcd" in s.fix_zh and "curl" in s.cause_en and "#1150" in s.cause_zh and "etcd_wrapper.go" in s.source
    s = by_id("mooncake.ascend_direct_connect")  # vllm-ascend #5635 ran 1P1D on one machine
    assert "of both nodes" not in s.fix_en and "检查两端的设备网络" not in s.fix_zh and "-i 0 " not in s.fix_en
    assert "hccn_tool -i <device id> -ip -g" in s.fix_en and "<设备号>" in s.fix_zh and "newer than 8.3.RC1" in s.fix_en

def test_eighteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md, eighteenth sample (seed 43), facts #41 to #50: a FLASHINFER check that the cause gave
    to vllm-ascend 0.8.4rc1 and 0.8.4rc2 alone, while it is vLLM's own ModelConfig check (vllm/config.py in vLLM
    0.8.4, vllm/config/model.py in 0.11.0 and 0.12.0), which vllm-ascend 0.8.4rc1/rc2 copy in patch_config.py."""
    s = by_id("env.cuda_attention_backend")  # vLLM 0.8.4 to 0.12.0 ModelConfig; vllm-ascend 0.8.4rc2 patch_config.py
    assert "The check is vLLM's own" in s.cause_en and "该检查是 vLLM 自身" in s.cause_zh
    assert "also carry a copy of it" in s.cause_en and "也带有一份同样的检查" in s.cause_zh
    assert "0.7.3 has not" in s.cause_en and "0.7.3 中没有" in s.cause_zh
    assert "vllm-project/vllm/blob/v0.8.4/vllm/config.py" in s.source
    assert "vllm-project/vllm/blob/v0.12.0/vllm/config/model.py" in s.source


def test_seventh_sweep_part_s7h_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part H: a wheel window PyPI contradicts,
    and a header search path, compiler and launcher the triton-ascend code at those releases shows
    otherwise."""
    s = by_id("python.vllm_ascend_no_distribution")  # PyPI: wheels up to 0.26.0rc1, manylinux_2_34 from 0.23.0rc1
    assert "0.23.0rc1 and later are source distributions only" not in s.cause_en
    assert "0.23.0rc1 及之后只有源码包" not in s.cause_zh
    assert "wheels for 0.9.0rc1 to 0.22.1rc1" not in s.cause_en and "fails later" not in s.cause_en
    assert "0.26.0rc1" in s.cause_en and "0.26.0rc1" in s.cause_zh
    assert "0.27.1rc1 to 0.30.0rc2" in s.cause_en and "0.27.1rc1 至 0.30.0rc2" in s.cause_zh
    assert "manylinux_2_34" in s.cause_en and "manylinux_2_34" in s.cause_zh and "manylinux1" in s.cause_en
    assert "3.12 as well from 0.21.0rc1" in s.cause_en and "pypa/manylinux" in s.source
    s = by_id("vllm_ascend.triton_launcher_rt_header")  # -I include too; clang++ first; npu_utils.cpp as well
    assert "search include/experiment and pkg_inc" not in s.cause_en and "with the header in neither place" not in s.cause_en
    assert "在这两处都没有该头文件" not in s.cause_zh
    assert "include/runtime/runtime/rt.h" in s.cause_en and "include/runtime/runtime/rt.h" in s.cause_zh
    assert "clang++" in s.cause_en and "clang++" in s.cause_zh and "npu_utils.cpp" in s.cause_en
    assert "npu_utils.cpp" in s.cause_zh and "main.cxx" not in s.example
    assert "rm -rf ~/.triton/cache" not in s.fix_en and "pkg_inc/runtime/runtime/rt.h" in s.fix_en
    assert "pkg_inc/runtime/runtime/rt.h" in s.fix_zh and "hicann/runtime/blob/v8.5.0" in s.source
    p = re.compile(s.pattern)
    assert p.search("launcher_cxx11abi1.cxx:10:10: fatal error: 'experiment/runtime/runtime/rt.h' file not found")
    assert p.search("npu_utils.cpp:34:10: fatal error: runtime/runtime/rt.h: No such file or directory")
    assert not p.search("fatal error: 'runtime/rt.h' file not found")


def test_seventh_sweep_part_s7f_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part F: causes (and fixes) that were
    wrong or said more than the thread, code or package they cite."""
    s = by_id("vllm_ascend.triton_ascend_index_uv")  # the line is uv's; PyPI's feed also lists 3.2.0rc3
    assert "uv (or pip)" not in s.cause_en and "uv（或 pip）" not in s.cause_zh
    assert "3.2.0rc3" in s.cause_en and "3.2.0rc3" in s.cause_zh and "releases.xml" in s.source
    s = by_id("mooncake.local_segment_missing")  # worker_pool.cpp: printed after the peer's descriptor was reloaded
    assert "whose descriptor it could not get" not in s.cause_en and "指出无法获取其描述的段" not in s.cause_zh
    assert "despite its wording" in s.cause_en and "虽然字面如此" in s.cause_zh and "worker_pool.cpp" in s.source
    s = by_id("vllm_ascend.triton_soc_target_option")  # sglang#16360 and triton-ascend#2115 are not 310P
    assert "The cases on record are 310P" not in s.cause_en and "已记录的案例都在 310P 上" not in s.cause_zh
    assert "Ascend910B4-1" in s.cause_en and "Ascend910B4-1" in s.cause_zh and "triton-ascend/issues/2115" in s.source
    s = by_id("torch_npu.api_missing")  # #37: post4 (v2.1.0-5.0.0, CANN 7.0.0) on CANN 8.0.RC1; post5 is another release
    assert "another build of the same release" not in s.fix_en and "同一版本的其他构建" not in s.fix_zh
    assert "CANN 8.0.RC1" in s.cause_en and "CANN 8.0.RC1" in s.cause_zh and "CANN 8.0.RC1" in s.fix_en
    assert "v2.1.0-6.0.rc1/README.md" in s.source
    s = by_id("cann.op_needs_newer_cann")  # GroupedMatmulFinalizeRouting only warns (tuning_config) and runs on
    assert "and stopped with the message" not in s.cause_en and "于是报出要求升级 CANN 的信息" not in s.cause_zh
    assert "tuning_config" in s.cause_en and "tuning_config" in s.cause_zh
    assert "GroupedMatmulFinalizeRoutingKernelNpuOpApi.cpp" in s.source
    s = by_id("vllm_ascend.kv_transfer_timeout")  # v0.25.1rc1: readiness is the ZMQ handshake bind, not the engine
    assert "its transfer engine or metadata server did not come up" not in s.cause_en
    assert "其传输引擎或元数据服务没有起来" not in s.cause_zh
    assert "ZMQ" in s.cause_en and "ZMQ" in s.cause_zh and "KVCacheSendingThread" in s.fix_en
    s = by_id("vllm.unknown_env_benign")  # vLLM v0.18.0 validate_environ: ValueError with --fail-on-environ-validation
    assert "--fail-on-environ-validation" in s.cause_en and "--fail-on-environ-validation" in s.cause_zh
    assert not re.search(s.pattern, "ValueError: Unknown vLLM environment variable detected: VLLM_ASCEND_ENABLE_FLASHCOMM1")
    assert re.search(s.pattern, "WARNING [envs.py:1717] Unknown vLLM environment variable detected: VLLM_ASCEND_X")
    assert "arg_utils.py" in s.source
    s = by_id("cann.paddle_lite_cann_mismatch")  # PR #9885 (v2.13-rc): any part differs, reads the install info file
    assert "In the cited code the two labels are swapped" not in s.cause_en and "在所引用的代码中" not in s.cause_zh
    assert "#9885" in s.cause_en and "#9885" in s.cause_zh and "any of the three differs" in s.cause_en
    assert "labels are swapped" in s.cause_en and "标签是颠倒的" in s.cause_zh and "pull/9885" in s.source
    s = by_id("cann.cann_version_unreadable")  # from v2.13-rc the build reads the install info file, not the path
    assert "the root given resolves to a path without a version number" not in s.cause_en
    assert "所给路径解析后不含版本号" not in s.cause_zh
    assert "ascend_toolkit_install.info" in s.cause_en and "ascend_toolkit_install.info" in s.cause_zh
    assert "v2.13-rc" in s.fix_en and "v2.13-rc" in s.fix_zh and "pull/9885" in s.source


def test_eighth_sweep_part_s8c_causes_say_what_their_sources_say():
    """docs/facts-audit.md, eighth sweep of signature causes, part C: six rows said more than the guides,
    code or threads they cite."""
    # hicann/hccl cluster_info_verify_fail.md: the rule (IPv4 first, IPv6 fallback; HCCL_SOCKET_FAMILY), not which rank
    s = by_id("cann.hccl_ip_family")
    assert "so a rank whose device has no IPv4 address configured ends up on IPv6" not in s.cause_en
    assert "因此某个 rank 的设备未配置 IPv4 地址时会走 IPv6" not in s.cause_zh
    assert "HCCL_SOCKET_FAMILY set differently between ranks" in s.cause_en and "HCCL_SOCKET_FAMILY 设置不同" in s.cause_zh
    # hicann/hccl cluster_info_nego.md: one case, a host port already bound (EI0019, default 60000-60031)
    s = by_id("cann.hccl_root_network_failed")
    assert "the line before names the port that could not be bound." not in s.cause_en
    assert "前一行给出了无法绑定的端口。" not in s.cause_zh
    assert "EI0019" in s.cause_en and "60000-60031" in s.cause_en and "60000-60031" in s.cause_zh
    assert "HCCL_HOST_SOCKET_PORT_RANGE" in s.fix_en and "HCCL_HOST_SOCKET_PORT_RANGE" in s.fix_zh
    # vllm-ascend v0.11.0 mooncake/config_data.py (MooncakeConnectorStoreV1); AscendStoreConnector from v0.12.0rc1
    s = by_id("mooncake.config_path_unset")
    assert "At the commit read" not in s.cause_en and "所读的提交" not in s.cause_zh
    assert "MooncakeConnectorStoreV1" in s.cause_en and "MooncakeConnectorStoreV1" in s.cause_zh
    assert "v0.12.0rc1" in s.cause_en and "v0.11.0/vllm_ascend/distributed/mooncake/config_data.py" in s.source
    # bash manual and the Stack Overflow thread: a program may also exit with 127 itself
    s = by_id("env.exit_code_127")
    assert "the shell could not find the command, or the loader could not start the binary." not in s.cause_en
    assert "shell 找不到命令，或加载器无法启动该程序。" not in s.cause_zh
    assert "of its own accord" in s.cause_en and "自行以 127 退出" in s.cause_zh and "status 127 itself" in s.fix_en
    # Mooncake worker_pool.cpp (3adc6362): failed_nr_polls also counts failed endpoint connections
    s = by_id("mooncake.rnic_inactive")
    assert "more than 32 failed work completions with no successful one" not in s.cause_en
    assert "出现 32 次以上失败的完成事件且没有一次成功时" not in s.cause_zh
    assert "Cannot make connection for endpoint" in s.cause_en and "端点建连失败" in s.cause_zh
    assert "Cannot make connection for endpoint" in s.fix_en
    # Mooncake troubleshooting.md: a limit on the memory registered (64 GB on some machines), no memlock advice
    s = by_id("mooncake.rdma_register")
    assert "the device's limit on one registration" not in s.cause_en and "单次注册大小的上限" not in s.cause_zh
    assert "memlock unlimited in the container" not in s.fix_en and "memlock 设为 unlimited" not in s.fix_zh
    assert "at most 64 GB" in s.cause_en and "最多只能注册 64 GB" in s.cause_zh
    assert "split large regions" in s.fix_en and "拆成不超过 max_mr_size 的小块" in s.fix_zh


def test_eighth_sweep_part_s8b_causes_say_what_their_sources_say():
    """docs/facts-audit.md, eighth sweep of signature causes, part B: causes and fixes that said more
    than (or, in a detail, not what) the thread, code or vendor guide they rest on."""
    s = by_id("cann.ascendc_int4b_soc_type_build")  # #10517 names two cases and shows one line
    assert "is a build with SOC_TYPE given by hand" not in s.cause_en and "是手动指定 SOC_TYPE 的构建" not in s.cause_zh
    assert "does not say which of them gave the line" in s.cause_en and "没有说明这一行出自哪种情况" in s.cause_zh
    assert "only the int4b_t Cast calls of get_row_q4_0 were guarded" in s.cause_en and "Cast 调用" in s.cause_zh
    assert "still compiled" in s.fix_en and "仍会被编译" in s.fix_zh
    s = by_id("torch_npu.expandable_segments_default_benign")  # the probe names driver and firmware, not CANN
    assert "when the driver and CANN support it" not in s.fix_en
    assert "driver and firmware packages do not match" in s.fix_en and "驱动与固件包可能不匹配" in s.fix_zh
    assert "v6.0.rc2-pytorch2.1.0" in s.cause_en and "无条件打印一次" in s.cause_zh
    assert "NPUCachingAllocator.cpp" in s.source
    s = by_id("cann.ascendc_cmake_missing")  # the build checks the cache variable ASCEND_CANN_PACKAGE_PATH
    assert "checks $ASCEND_HOME_PATH/compiler" not in s.cause_en
    assert "ASCEND_CANN_PACKAGE_PATH is a CMake cache variable" in s.cause_en and "缓存变量" in s.cause_zh
    assert "-DASCEND_CANN_PACKAGE_PATH=$ASCEND_HOME_PATH" in s.fix_en and "CMakeCache.txt" in s.fix_zh
    s = by_id("cann.runtime_context_null")  # no source says a context of another thread gives this; #16628 is open
    assert "the context belongs to another thread" not in s.cause_en and "该上下文属于另一个线程" not in s.cause_zh
    assert "#16628" in s.cause_en and "#16628" in s.cause_zh and "no fix is on record" in s.fix_en
    assert "llama.cpp/issues/16628" in s.source and "llama.cpp/pull/9424" in s.source
    s = by_id("cann.hccl_links_establish_failed")  # the guide has more checks for timeouts on both ends
    assert "HCCL_LOGIC_SUPERPOD_ID" in s.cause_en and "HCCL_LOGIC_SUPERPOD_ID" in s.cause_zh
    assert "towards a third rank" in s.cause_en and "第三个 rank" in s.cause_zh
    assert "hccn_tool -i <dev> -ping" in s.fix_en and "HCCL_CONNECT_TIMEOUT" in s.fix_zh
    s = by_id("mooncake.rpc_port_in_use")  # 348afd7 is the first commit with the transfer engine, not the first
    assert "the first public commit logged" not in s.cause_en and "最早的公开提交" not in s.cause_zh
    assert "348afd7" in s.cause_en and "348afd7" in s.cause_zh


def test_eighth_sweep_part_s8a_causes_say_what_their_sources_say():
    """docs/facts-audit.md, eighth sweep of signature causes, part A: six rows that said more than
    (or, for rpc_fail, explained another release than) the code, guide or thread they cite."""
    s = by_id("mooncake.hccn_conf_missing")  # hccl_transport.cpp 3b5a5941: -1 also for invalid host/device IPs
    assert "this host or container has none (the container was started without" not in s.cause_en
    assert "（启动容器时未挂载宿主机的 /etc/hccn.conf）" not in s.cause_zh
    assert "Invalid Device IP format" in s.cause_en and "Invalid Device IP format" in s.cause_zh
    assert "another program" in s.cause_en and "其他程序" in s.cause_zh and "hccl_transport.cpp" in s.cause_en
    assert "Invalid ... IP format" in s.fix_en and "Invalid ... IP format" in s.fix_zh
    s = by_id("cann.hccl_rank_count_mismatch")  # VerifyClusterInfo checks !=, the guide shows the partial-connect case
    assert "fewer ranks than the communicator expects" not in s.cause_en and "少于通信域应有的数量" not in s.cause_zh
    assert "VerifyClusterInfo" in s.cause_en and "VerifyClusterInfo" in s.cause_zh
    assert "Failed to connect agent" in s.cause_en and "Failed to connect agent" in s.fix_zh
    assert "topoinfo_exchange_agent.cc" in s.source
    s = by_id("devices.npu_link_fault")  # NPUQueue.cpp deviceErrorMap: HCCS_LINK_EXIT is 'HCCS LINK ERROR' on any chip
    assert "torch_npu names it HCCS LINK ERROR, or UB LINK ERROR on Ascend 950 and later, by the chip alone" not in s.cause_en
    assert "task queue" in s.cause_en and "任务队列" in s.cause_zh and "reason=[link error]" in s.cause_en
    assert "NPUException.h" in s.source
    s = by_id("cann.llamacpp_type_unsupported")  # ggml v0.21.0: supports_op already rejects the types the kernels abort on
    assert "supports_op" in s.cause_en and "supports_op" in s.cause_zh
    assert "do not show by which path" in s.cause_en and "没有说明" in s.cause_zh
    assert "ggml-backend.cpp" in s.source
    s = by_id("mooncake.cannot_make_connection")  # worker_pool.cpp 3b5a5941: ambiguous handshake failure, retry suffix
    assert "check the GID each side prints at start-up (all zeros: choose the GID index with MC_GID_INDEX), the MTU" not in s.cause_en
    assert "ambiguous" in s.cause_en and "含义不明" in s.cause_zh and "Failed to modify QP to RTR" in s.cause_en
    assert "Failed to modify QP to RTR" in s.fix_en and "Failed to modify QP to RTR" in s.fix_zh
    assert "worker_pool.cpp" in s.source and "ub_context.cpp" in s.source
    s = by_id("mooncake.rpc_fail")  # the line exists in v0.3.0 ... v0.3.6 only; there RPC_FAIL includes timeouts
    assert "other than a timeout" not in s.cause_en and "超时除外" not in s.cause_zh
    assert "v0.3.0 … v0.3.6" in s.cause_en and "v0.3.0 … v0.3.6" in s.cause_zh and "timeouts included" in s.cause_en
    assert "for key=" in s.cause_en and "包括超时" in s.cause_zh
    assert "v0.3.6/mooncake-store/src/client.cpp" in s.source and "v0.3.4/mooncake-store/src/master_client.cpp" in s.source


def test_seventh_sweep_part_s7g_causes_say_what_their_sources_say():
    """docs/facts-audit.md, seventh sweep of signature causes, part G: two rows wrong (a cached check,
    families the check rejects), five that said more than their sources."""
    s = by_id("python.verl_npu_smi_board_id")  # v0.8.0 retries only with ASCEND_VISIBLE_DEVICES set, else re-raises
    assert not s.fix_en.startswith("Upgrade verl to v0.8.0 or later. On an older verl")
    assert "retries only if ASCEND_VISIBLE_DEVICES is set" in s.cause_en and "才重试" in s.cause_zh
    assert "without it v0.8.0 raises the same error" in s.fix_en and "v0.8.0 仍抛出同样的错误" in s.fix_zh
    assert "issues/6751" in s.source and "v0.9.0/verl/utils/device.py" in s.source
    s = by_id("torch_npu.llamafactory_npu_kernel")  # get_current_accelerator is lru_cached: the answer cannot change
    assert "no longer is when the kernel is applied" not in s.cause_en
    assert "应用内核时已不是时才会出现此消息" not in s.cause_zh
    assert "lru_cache" in s.cause_en and "lru_cache" in s.cause_zh and "#10641" in s.cause_zh
    assert "accelerator/helper.py" in s.source and "both when LLaMA-Factory imports" not in s.fix_en
    s = by_id("mooncake.ascend_listen_port_exhausted")  # socket() failing on every try is a second candidate
    assert "so the range is mostly or wholly taken; which processes" not in s.cause_en
    assert "因此该段端口大部分或全部被占用；是哪些进程" not in s.cause_zh
    assert "open-file limit" in s.cause_en and "打开文件数上限" in s.cause_zh
    assert "ulimit -n" in s.fix_en and "ulimit -n" in s.fix_zh
    s = by_id("torch_npu.too_old_for_fla_npu")  # unlisted families below 2.13.0 and 2.13.0 pre-releases are rejected
    assert "other families are not checked" not in s.cause_en and "其他系列不检查" not in s.cause_zh
    assert "2.13.0rc1" in s.cause_en and "2.13.0rc1" in s.cause_zh and "2.6.0" in s.cause_en
    assert "pre-release" in s.fix_en and "预发布版" in s.fix_zh and "scripts/check_npu_env.py (v26.6.0" in s.source
    s = by_id("vllm.cuda_only_api_c_op")  # torch_npu sets is_cuda = is_npu only under its sanitizer or transfer_to_npu
    assert "which torch_npu tensors report as True" not in s.cause_en
    assert "而 torch_npu 张量的 is_cuda 为 True" not in s.cause_zh
    assert "TORCH_NPU_SANITIZER" in s.cause_en and "TORCH_NPU_SANITIZER" in s.cause_zh
    assert "transfer_to_npu" in s.fix_en and "transfer_to_npu" in s.fix_zh and "_stream_check.py" in s.source
    s = by_id("vllm_ascend.triton_bishengir_compile_failed")  # nothing shows the compiler always names a pass
    assert "names the pass or kernel construct it rejects" not in s.cause_en
    assert "指出它拒绝的 pass 或内核写法" not in s.cause_zh
    assert "#14783" in s.cause_en and "#14783" in s.cause_zh and "sglang/issues/14783" in s.source
    s = by_id("vllm_ascend.triton_npu_driver_inactive")  # no NPU backend installed: no bisheng test, no warning
    assert "So: CANN's set_env.sh not sourced" not in s.cause_en and "因此：本进程未 source" not in s.cause_zh
    assert "stock triton" in s.cause_en and "原版 triton" in s.cause_zh and "#3279" in s.cause_zh
    assert "from triton.backends import backends" in s.fix_en and "from triton.backends import backends" in s.fix_zh


def test_ninth_sweep_part_s9F_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part F: causes (and one pattern) that said
    more than, or other than, the code and guide they cite."""
    # ATB ddcc8b62: four runners return ERROR_INTERNAL_ERROR (3) for a null communicator, not 28
    s = by_id("cann.atb_hccl_runner_failed")
    assert "28 ERROR_COMM_EMPTY when the runner's HCCL communicator is null" not in s.cause_en
    assert "28 为 ERROR_COMM_EMPTY，即 runner 的 HCCL 通信域为空" not in s.cause_zh
    assert "3 ERROR_INTERNAL_ERROR in the ReduceScatter" in s.cause_en and "返回 3 ERROR_INTERNAL_ERROR" in s.cause_zh
    assert "ReduceScatter hccl Execute failed, ret:" in s.cause_en and "ReduceScatter hccl Execute failed, ret:" in s.cause_zh
    assert "st 3 in the runners named above" in s.fix_en and "上述 runner 中的 st 3" in s.fix_zh
    assert "reduce_scatter_hccl_runner.cpp" in s.source and "9a08634a" not in s.source
    assert "ddcc8b6225b8b7d4703c69c319244bdea0f0c9a1/src/atb/utils/common_utils.cpp" in s.source
    # Mooncake v0.3.12 and later: the context is 'Transfer N failed' with no code in front
    s = by_id("mooncake.put_transfer_fail")
    new_line = ("E20260822 10:00:00.000000 1 client_service.cpp:3085] Operation for key k1 failed: TRANSFER_FAIL "
                "(Transfer 0 failed)")
    assert re.search(s.pattern, new_line) and re.search(s.pattern, s.example)
    assert "could not write an object to a replica: the transfer to the node holding it failed" not in s.cause_en
    assert "无法将对象写入副本：向持有副本的节点传输失败" not in s.cause_zh
    assert "v0.3.12" in s.cause_en and "v0.3.12" in s.cause_zh and "v0.3.11.post1" in s.cause_en
    assert "v0.3.12/mooncake-store/src/client_service.cpp" in s.source and "v0.3.5/mooncake-store/src/client.cpp" in s.source
    # hicann/hccl param_link_stage.md: DETECT EVENT LIST first, then five checks on the peer
    s = by_id("cann.hccl_alloc_transports")
    assert "the guide's candidates for that are a peer that did not issue" not in s.cause_en
    assert "指南列出的可能原因为：对端未在超时内下发同一通信算子" not in s.cause_zh
    assert "DETECT EVENT LIST" in s.cause_en and "DETECT EVENT LIST" in s.cause_zh and "DETECT EVENT LIST" in s.fix_en
    assert "HCCL_LOGIC_SUPERPOD_ID" in s.cause_en and "HCCL_LOGIC_SUPERPOD_ID" in s.cause_zh
    assert "HCCL_CONNECT_TIMEOUT" in s.cause_en and "第三个 rank" in s.cause_zh and "DETECT EVENT LIST" in s.fix_zh
    # sglang extra_ops_loader.py: raise ... from exc, so Python prints the cause above the RuntimeError
    s = by_id("env.sglang_npu_ops_unloaded")
    assert "chained below it" not in s.cause_en and "其下链接的异常" not in s.cause_zh and "其下链接" not in s.fix_zh
    assert "direct cause of the following exception" in s.cause_en and "direct cause of the following exception" in s.cause_zh
    assert "points to a missing file" in s.cause_en and "points to a missing file" in s.cause_zh
    assert "chained exception printed above it" in s.fix_en and "打印在其上方的链接异常" in s.fix_zh
    # cann-hccl topoinfo_ranktableConcise.cc: the two 'device_ip' lines, and the host-IP condition
    s = by_id("cann.hccl_ranktable_entry_invalid")
    assert "device_ip is missing where it must be set" not in s.cause_en
    assert "在必须设置 device_ip 的场景（多于一台服务器，或 HCCL_INTRA_ROCE_ENABLE=1）缺少 device_ip" not in s.cause_zh
    assert "valid host IP" in s.cause_en and "有效的 host IP" in s.cause_zh
    assert "single-server table" in s.cause_en and "单服务器" in s.cause_zh and "topoinfo_ranktableConcise.cc" in s.source


def test_numpy_c_api_in_both_directions_is_told_apart():
    """NumPy 2 headers say 'numpy._core.multiarray failed to import' (a module built for NumPy 2 that
    cannot take the installed NumPy's C API); NumPy 1.x headers say 'numpy.core...'. Each has its row."""
    from doctor.explain.answers import primary

    newer = ("RuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the running NumPy "
             "has C-API version 0x10. Check the section C-API incompatibility at the Troubleshooting ImportError section\n"
             "ImportError: numpy._core.multiarray failed to import\n")
    top = primary(catalog().explain_text(newer))
    assert top is not None and top.id == "vllm_ascend.numpy_c_api_newer_than_installed"
    s = by_id(top.id)
    assert "older than the one the module was built for" in s.cause_en and "比该模块构建时所用的旧" in s.cause_zh
    older = "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.2 as it may crash.\n"
    assert primary(catalog().explain_text(older)).id == "vllm_ascend.numpy2_abi"
    assert primary(catalog().explain_text("ImportError: numpy.core.multiarray failed to import")).id == \
        "vllm_ascend.numpy2_abi"


def test_ninth_sweep_part_s9A_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part A: one pattern that took another
    Triton build's line (wrong), two fixes that said more than their sources."""
    s = by_id("env.gloo_loopback")  # the host-name advice rests on torch's createDefaultDevice, now cited
    assert "and make the host name resolve to that IP." not in s.fix_en
    assert "并使主机名解析到该 IP。" not in s.fix_zh
    assert "falls back to loopback otherwise" in s.fix_en and "否则回退到回环地址" in s.fix_zh
    assert "/etc/hosts" in s.fix_en and "/etc/hosts" in s.fix_zh
    assert "c10d/ProcessGroupGloo.cpp" in s.source
    s = by_id("mooncake.ascend_self_device")  # Ascend Direct takes the current device; npu_N and tcp had no source
    assert "npu_N" not in s.fix_en and "npu_N" not in s.fix_zh
    assert "(tcp)" not in s.fix_en and "（tcp）" not in s.fix_zh
    assert "aclrtGetDevice" in s.fix_en and "aclrtGetDevice" in s.fix_zh
    assert "TransferEngine.initialize()" in s.fix_en and "TransferEngine.initialize()" in s.fix_zh
    assert "ascend_direct_transport.md" in s.source and "ascend_direct_transport.cpp" in s.source
    s = by_id("env.triton_ascend_no_cxx")  # other Triton builds print the same words, then name CXX
    assert s.pattern != r"RuntimeError: Failed to find C\+\+ compiler"
    assert re.search(s.pattern, "RuntimeError: Failed to find C++ compiler")
    assert not re.search(s.pattern, "RuntimeError: Failed to find C++ compiler. Please specify via CXX environment variable.")
    assert "Please specify via CXX environment variable" in s.cause_en
    assert "Please specify via CXX environment variable" in s.cause_zh and "不属于本条" in s.cause_zh
    assert "intel-xpu-backend-for-triton" in s.source and "runtime/build.py" in s.source


def test_ninth_sweep_part_s9E_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part E: one row wrong (its pattern took
    op-plugin's fallback warning for the error), five that said more than the code, guide or thread they cite."""
    s = by_id("cann.opapi_symbol_missing")  # op_api_common.h DO_COMPATIBILITY: the same words + ". Will call" is a warning
    err = "RuntimeError: aclnnX or aclnnXGetWorkspaceSize not in libopapi.so, or libopapi.so not found."
    warn = "aclnnX or aclnnXGetWorkspaceSize not in libopapi.so, or libopapi.so not found. Will call acl_op::npu_x(self)"
    assert re.search(s.pattern, err) and not re.search(s.pattern, warn)
    assert "Will call" in s.cause_en and "Will call" in s.cause_zh
    assert "Current device only support aclnn operators" in s.cause_en and "Current device only support aclnn operators" in s.cause_zh
    assert "op_api_common.h" in s.source
    s = by_id("mooncake.rdma_retry_exceeded")  # worker_pool.cpp 3b5a5941: retried on another rail; #82 names no fix
    assert "check the route between their RDMA subnets" not in s.fix_en and "两个 RDMA 子网之间的路由" not in s.fix_zh
    assert "max_retry_cnt" in s.cause_en and "max_retry_cnt" in s.cause_zh and "RoCEv2" in s.cause_zh
    assert "local_nic" in s.fix_en and "local_nic" in s.fix_zh
    assert "worker_pool.cpp" in s.source and "rail_monitor.cpp" in s.source and "troubleshooting.md" in s.source
    s = by_id("devices.device_count_failed")  # no cited source lists candidates; NPUException.h raises some codes instead
    assert "device nodes or driver libraries missing" not in s.cause_en and "缺少设备节点或驱动库" not in s.cause_zh
    assert "raises that instead" in s.cause_en and "直接抛出" in s.cause_zh
    assert "PeekLastErr" in s.fix_en and "PeekLastErr" in s.fix_zh
    assert "NPUException.h" in s.source
    s = by_id("env.hccl_env_invalid")  # the guide says adjust to the printed range; RDMA_SL must match the NIC's PFC priority
    assert "unset it to get HCCL's default" not in s.fix_en and "取消设置以使用 HCCL 默认值" not in s.fix_zh
    assert "PFC" in s.fix_en and "PFC" in s.fix_zh and "HCCL_RDMA_SL.md" in s.source and "hccl_env/README.md" in s.source
    s = by_id("env.sgl_kernel_npu_transformers")  # #23656: fine on transformers 5.3.0; nobody cites the pinned version
    assert "the sglang release pins" not in s.fix_en and "锁定的 transformers" not in s.fix_zh
    assert "5.5.4" in s.cause_en and "5.5.4" in s.cause_zh and "5.3.0" in s.fix_en and "5.3.0" in s.fix_zh
    assert "sgl-kernel-npu/issues/468" not in s.source  # a held-out thread
    s = by_id("cann.init_env_failed")  # op_compile_processor.cpp: seven entry points log it, not only compiling
    assert "so compiling an operator stops with this line" not in s.cause_en and "因此编译算子时报出此行" not in s.cause_zh
    assert "compile option" in s.cause_en and "编译选项" in s.cause_zh and "ACL_ERROR_FAILURE" in s.cause_zh
    assert "SetJitCompileFlag" in s.source


def test_ninth_sweep_part_s9C_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part C: three rows wrong (a warning put on
    the wrong copy of the check, two patterns that missed the line the code prints), two that said more
    than their sources."""
    s = by_id("mooncake.wr_flushed")  # libibverbs prints 'Work Request Flushed Error'; Mooncake only with TRACE
    assert s.pattern != "work request flushed error"
    assert "MC_LOG_LEVEL=TRACE" in s.cause_en and "MC_LOG_LEVEL=TRACE" in s.cause_zh
    assert "v0.3.11" in s.cause_en and "v0.3.11" in s.cause_zh and "enum_strs.c" in s.source
    line = ("E0914 10:21:07.000001 12 worker_pool.cpp:271] Worker: Process failed for slice (opcode: 0, "
            "source_addr: 0x7f, length: 65536, dest_addr: 0x7e, local_nic: mlx5_0, peer_nic: 10.0.0.2@mlx5_0, "
            "dest_rkey: 1, retry_cnt: 0, max_retry_cnt: 8): Work Request Flushed Error")
    assert "mooncake.wr_flushed" in explained(line) and "mooncake.wr_flushed" in explained(s.example)
    assert "mooncake.wr_flushed" not in explained(line.replace("Work Request Flushed Error", "transport retry counter exceeded"))
    s = by_id("mooncake.segment_not_found")  # only the guide has this wording; no Mooncake code prints it
    assert "it must match exactly the local_hostname the other node registered with" not in s.cause_en
    assert "必须与对端注册时使用的 local_hostname 完全一致" not in s.cause_zh
    assert "as printed in its startup log" not in s.fix_en and "见其启动日志" not in s.fix_zh
    assert "no Mooncake code" in s.cause_en and "没有任何代码" in s.cause_zh
    assert "Failed to retrieve segment descriptor" in s.cause_en and "Failed to retrieve segment descriptor" in s.cause_zh
    assert "memory read/write" in s.fix_en and "内存读写" in s.fix_zh and "transfer_metadata.cpp" in s.source
    s = by_id("mooncake.store_api_missing")  # #1514's reply and the Mooncake code: batch_get_buffer from v0.3.6
    assert "LMCache, sglang HiCache, vllm-ascend" not in s.cause_en and "an LMCache maintainer" not in s.cause_en
    assert "LMCache 维护者" not in s.cause_zh and "sglang HiCache" not in s.cause_zh
    assert "release notes" not in s.fix_en and "发布说明" not in s.fix_zh
    assert "v0.3.6" in s.cause_en and "v0.3.6" in s.cause_zh and "#671" in s.cause_en and "#671" in s.cause_zh
    assert "v0.3.6" in s.fix_en and "v0.3.6" in s.fix_zh
    assert "1980ca64a7b588e101282d6d03853d6945bfacc6" in s.source and "v0.3.6/mooncake-integration/store/store_py.cpp" in s.source
    s = by_id("torch_npu.owner_mismatch_benign")  # 'current owner' is collect_env.py's own copy of the check
    assert not s.cause_en.startswith("torch_npu's path check (PathManager.check_path_owner_consistent) found")
    assert not s.cause_zh.startswith("torch_npu 的路径检查（PathManager.check_path_owner_consistent）发现")
    assert "collect_env.py's own check_path_owner_consistent" in s.cause_en and "collect_env.py 自带的" in s.cause_zh
    assert "install.info" in s.cause_en and "install.info" in s.cause_zh
    assert "file_manager.py" in s.source and "4ecd50b2988f5e781f167f87f77c70f81a742c8e/torch_npu/utils/collect_env.py" in s.source
    s = by_id("cann.hccl_sdma_task")  # hicann/runtime a8e3a4db (v9.1.0): 'FftsPlus task execution failed'
    assert s.pattern != r"fftsplus task execute failed.*\[fftsplus sdma error\]"
    assert "FftsPlus task execution failed" in s.cause_en and "FftsPlus task execution failed" in s.cause_zh
    assert "v9.1.0" in s.cause_en and "v9.1.0" in s.cause_zh and "a8e3a4db" in s.source and "v9.0.1" in s.source
    new = ("[ERROR] RUNTIME(1024,python3):2026-05-12-20:55:44.705.025 [ffts_task.cc:782]1030 "
           "PrintSdmaErrorInfoForFftsPlusTask:FftsPlus task execution failed, dev_id=0, stream_id=50, task_id=21, "
           "context_id=18, thread_id=0, err_type=4[fftsplus sdma error], error_code=507035.")
    assert "cann.hccl_sdma_task" in explained(new) and "cann.hccl_sdma_task" in explained(s.example)
    assert "cann.hccl_sdma_task" not in explained(new.replace("err_type=4[fftsplus sdma error]", "err_type=1[fftsplus aicore error]"))


def test_ninth_sweep_part_s9B_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part B: one row wrong (the triton-ascend
    multi-buffer default), eight that said more than the code, table, guide or thread they cite."""
    s = by_id("mooncake.init_failed")  # real_client.cpp 3b5a5941: an ERROR before most setup failure returns
    assert "mooncake_master runs" not in s.fix_en and "mooncake_master 正在运行" not in s.fix_zh
    assert "port retries" in s.cause_en and "多次尝试端口" in s.cause_zh
    assert "Check the Mooncake config and network".lower() in s.cause_en.lower() and "配置与网络" in s.cause_zh
    assert "protocol, device_name" in s.fix_en and "protocol、device_name" in s.fix_zh
    assert "3b5a594133958449a1feaf1c9e0fc1b553e34a28/mooncake-store/src/real_client.cpp" in s.source
    s = by_id("devices.lost_heartbeat")  # aclError.md 507010: collect logs, contact support; no npu-smi/dmesg advice
    assert "dmesg" not in s.fix_en and "dmesg" not in s.fix_zh
    assert "contact Huawei technical support" in s.fix_en and "联系华为技术支持" in s.fix_zh
    assert "EL0001" in s.fix_en and "EL0001" in s.fix_zh
    assert "NPUErrorCodes.h" in s.source
    s = by_id("env.sglang_npu_missing_import")  # a candidate 'in no source read' is gone
    assert "in no source read" not in s.cause_en and "已读来源中没有记录" not in s.cause_zh
    assert "python3 -c 'import torch_npu'" not in s.fix_en and "python3 -c 'import torch_npu'" not in s.fix_zh
    assert "PR #87" in s.fix_en and "PR #87" in s.fix_zh
    s = by_id("vllm_ascend.triton_ub_overflow_prose")  # compiler.py a84b1eb5: multibuffer = not is_compile_on_910_95
    assert "Multi-buffering, on by default" not in s.cause_en and "默认开启的多缓冲" not in s.cause_zh
    assert "except when compiling for Ascend 950" in s.cause_en and "为 Ascend 950 编译时默认关闭" in s.cause_zh
    assert "debug_guide/ub_overflow.md" not in s.fix_en and "debug_guide/ub_overflow.md" not in s.fix_zh
    assert "multibuffer=False" in s.fix_en and "multibuffer=False" in s.fix_zh
    assert "a84b1eb52b6215e2c171632f2df0892f1003cfc8/third_party/ascend/backend/compiler.py" in s.source
    s = by_id("cann.npu_error_507011")  # NPUErrorCodes.h / aclError.md: model execution failed, read the log
    assert "a task running on the device failed" not in s.cause_en and "设备上运行的某个任务失败了" not in s.cause_zh
    assert "ASCEND_LAUNCH_BLOCKING" not in s.fix_en and "ASCEND_LAUNCH_BLOCKING" not in s.fix_zh
    assert "ACL_ERROR_RT_MODEL_EXECUTE" in s.cause_en and "ACL_ERROR_RT_MODEL_EXECUTE" in s.cause_zh
    assert "contacting Huawei technical support" in s.fix_en and "联系华为技术支持" in s.fix_zh
    assert "hicann/runtime/blob/681ef7610df1/docs/zh/api_ref/25-01_aclError.md" in s.source
    s = by_id("cann.op_unsupported_on_soc")  # EZ9903's own solution: collect the plog; #18133 gives no cause
    assert "npu-smi info" not in s.fix_en and "npu-smi info" not in s.fix_zh
    assert "collect the plog" in s.fix_en and "收集 plog" in s.fix_zh
    s = by_id("vllm.audio_extra")  # faqs.md 182b75ea: librosa, qwen-omni-utils; no soundfile
    assert "soundfile" not in s.fix_en and "soundfile" not in s.fix_zh
    assert "librosa and friends" not in s.cause_en and "librosa 等" not in s.cause_zh
    assert "some multi-modal models require librosa" in s.cause_en and "部分多模态模型需要 librosa" in s.cause_zh
    assert "qwen-omni-utils" in s.fix_en and "qwen-omni-utils" in s.fix_zh
    s = by_id("cann.mindie_quant_config")  # config.py 8b4871ad: the messages point at the model README only
    assert "msModelSlim" not in s.fix_en and "msModelSlim" not in s.fix_zh
    assert "not one this loader accepts" in s.fix_en and "本加载器不接受" in s.fix_zh
    s = by_id("driver.libascend_hal_missing")  # the Docker guide's -e LD_LIBRARY_PATH has four directories
    assert "Host: install the driver, then `export LD_LIBRARY_PATH" not in s.fix_en
    assert "宿主机：先安装驱动，再执行" not in s.fix_zh
    assert "/usr/local/Ascend/driver/lib64/base" in s.fix_en and "/usr/local/Ascend/driver/lib64/base" in s.fix_zh
    assert "lib64/base, lib64/common, lib64/driver" in s.source


def test_ninth_sweep_part_s9D_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part D: causes and fixes that said more
    than the guide, code or threads they cite."""
    s = by_id("mooncake.mr_size_limit")  # troubleshooting.md: "usually" a device limit; ulimit -a and ibv_devinfo -v
    assert not s.cause_en.startswith("The RDMA device cannot register more memory")
    assert not s.cause_zh.startswith("RDMA 设备无法注册超过其 max_mr_size 的内存")
    assert "smaller global segment or buffer" not in s.fix_en and "更小的 global segment 或 buffer" not in s.fix_zh
    assert "usually caused by a device limit" in s.cause_en and "通常是设备限制所致" in s.cause_zh
    assert "ulimit -a" in s.fix_en and "ulimit -a" in s.fix_zh and "troubleshooting.md" in s.source
    s = by_id("cann.hccl_bind_ip_port")  # no cited thread sets HCCL_IF_BASE_PORT per job; CANN's env-var pages do
    assert "export HCCL_IF_BASE_PORT=<base> per job" not in s.fix_en
    assert "每个任务 export HCCL_IF_BASE_PORT=<起始端口>" not in s.fix_zh
    assert "auto" in s.fix_en and "auto" in s.fix_zh and "60000 to 60015" in s.fix_en and "60000 至 60015" in s.fix_zh
    assert "envref_07_0143.html" in s.source and "envref_07_0074.html" in s.source
    s = by_id("vllm.kv_cache_no_memory")  # the check precedes max_model_len; vllm-ascend v0.13.0 counts other processes
    assert "lower --max-model-len, or add NPUs" not in s.fix_en and "降低 --max-model-len，或增加 NPU" not in s.fix_zh
    assert "check_enough_kv_cache_memory" in s.cause_en and "check_enough_kv_cache_memory" in s.cause_zh
    assert "does not clear this error" in s.fix_en and "并不能消除此错误" in s.fix_zh
    assert "v1/core/kv_cache_utils.py" in s.source and "v0.13.0/vllm_ascend/worker/worker.py" in s.source
    s = by_id("vllm.engine_died")  # core_client.py: any multiprocess client, the offline LLM's too (vllm#32468)
    assert "exited while the API server was running" not in s.cause_en
    assert "API 服务器运行时引擎核心进程退出" not in s.cause_zh
    assert "offline LLM class" in s.cause_en and "离线 LLM 类" in s.cause_zh and "#32468" in s.cause_zh
    assert "v1/engine/core_client.py" in s.source and "issues/32468" in s.source
    s = by_id("cann.llamacpp_op_unsupported")  # supports_op already keeps unlisted ops off CANN; the path is not shown
    assert "this llama.cpp's CANN backend lacks that operator" not in s.cause_en
    assert "该版本 llama.cpp 的 CANN 后端缺少这个算子" not in s.cause_zh
    assert "gains operators from release to release" not in s.fix_en and "算子支持随版本增加" not in s.fix_zh
    assert "supports_op" in s.cause_en and "supports_op" in s.cause_zh and "[CANN]" in s.fix_zh
    assert "the sources do not show which" in s.cause_en and "来源未说明是哪一种" in s.cause_zh
    assert "src/ggml-backend.cpp" in s.source


def test_a_backend_other_than_torch_npu_failing_to_load_is_not_torch_npus_failure():
    """torch names the torch.backends entry point that failed; only torch_npu's is torch_npu's."""
    from doctor.explain.answers import primary

    tail = ". You can disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0."
    assert primary(catalog().explain_text("RuntimeError: Failed to load the backend extension: torch_npu" + tail)).id == \
        "torch_npu.autoload_failed"
    other = catalog().explain_text("RuntimeError: Failed to load the backend extension: torch_mlu" + tail)
    assert primary(other).id == "env.backend_autoload_failed_other"
    assert "torch_npu.autoload_failed" not in {a.id for a in other}
    # the message wrapped after the name: its second line alone is still read as torch_npu's
    wrapped = catalog().explain_text("RuntimeError: Failed to load the backend extension: torch_npu.\n"
                                     "You can disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0\n")
    assert primary(wrapped).id == "torch_npu.autoload_failed"
    s = by_id("env.backend_autoload_failed_other")
    assert "torch.backends" in s.cause_en and "torch.backends" in s.cause_zh and "_import_device_backends" in s.source


def test_mooncake_v0312_rpc_timeout_line_is_the_master_rpc_timeout():
    """From v0.3.12 invoke_rpc logs a timed-out call as 'RPC call timed out: ' (RPC_TIMEOUT), no
    longer as 'RPC call failed: Connection timed out'; both are the same row."""
    from doctor.explain.answers import primary

    for line in ("E20260101 11:16:11.129794 58058 master_client.cpp:350] RPC call timed out: Timer expired",
                 "E1111 08:02:15.854331   924 master_client.cpp:146] RPC call failed: Connection timed out"):
        assert primary(catalog().explain_text(line)).id == "mooncake.master_rpc_timeout"
    assert "v0.3.12/mooncake-store/src/master_client.cpp" in by_id("mooncake.master_rpc_timeout").source


def test_ninth_sweep_part_s9H_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part H: a dump pattern that missed the lines newer
    CANN prints, and fixes that gave advice (or a platform list) no cited source gives."""
    # hicann/runtime 681ef761 device_error_core_proc.cc: 'the error is <type> error' and 'there is an error of <type>'
    s = by_id("cann.aicore_exception_dump")
    for line in ("An error occurs on the device(chipId:0, dieId:0), the serial number is 7, the error is aivec error, "
                 "core id is 3, error code = 0x800000, dump info: pc start: 0x1240001e3298",
                 "The error from device(0), serial number is 2, there is an error of aicore, core id is 5, "
                 "error code = 0, dump info: pc start: 0x12c0c131862c",
                 "The error from device(chipId:5, dieId:1), serial number is 7, there is an exception of fftsplus "
                 "aivector error, core id is 14, error code = 0"):
        assert re.search(s.pattern, line) and s.id in explained(line), line
    assert re.search(s.pattern, s.example)
    assert not re.search(s.pattern, "there is an aivec error exception, core id is 4")  # cann.vector_core_exception's
    assert "check for a newer vllm-ascend/CANN release" not in s.fix_en and "较新 vllm-ascend/CANN 版本" not in s.fix_zh
    assert "to find the op" not in s.fix_en and "以定位算子" not in s.fix_zh
    assert "fault kernel_name" in s.cause_en and "fault kernel_name" in s.cause_zh
    assert "not why" in s.cause_en and "不说明原因" in s.cause_zh
    assert "stack trace" in s.fix_en and "调用栈" in s.fix_zh and "errorStr" in s.fix_zh
    assert "vllm-ascend/issues/2976" in s.source and "device_error_core_proc.cc" in s.source
    # Atlas_ACL_E2E_Demo#27: the author's advice is the project's acllib step, then re-flashing the card
    s = by_id("cann.acl_header_missing")
    assert "of the same version as the runtime" not in s.fix_en and "与运行时同版本" not in s.fix_zh
    assert "re-flashing the card" in s.fix_en and "重新制卡" in s.fix_zh
    # VeOmni#147 shows one build's platforms (torchaudio 2.6.0+cpu); the fix is PR #148, then #312 and #832
    s = by_id("torch.cpu_index_no_aarch64_wheel")
    assert "that build has wheels for x86_64 and Windows only" not in s.cause_en
    assert "该构建只有 x86_64 与 Windows 的 wheel" not in s.cause_zh
    assert "torchaudio 2.6.0+cpu" in s.cause_en and "torchaudio 2.6.0+cpu" in s.cause_zh
    assert "the hint lists the platforms" in s.cause_en and "提示中列出了它已有的平台" in s.cause_zh
    assert "npu_aarch64" in s.fix_en and "npu_aarch64" in s.fix_zh and "platform_machine" not in s.fix_en
    assert "VeOmni/pull/312" in s.source and "VeOmni/pull/832" in s.source


def test_ninth_sweep_part_s9G_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part G: two causes the code they cite
    contradicts (the SoCs of the keep-dtype check, the ModelSlim config fetch) and two fixes that
    gave advice their sources do not give (UB overflow, MLA heads)."""
    # ops-nn b888c64f matmul_util.cpp: IsInputSupportFp32 tests DAV_2201 or DAV_3510 (Ascend 950)
    s = by_id("cann.aclnn_fp32_matmul_keep_dtype")
    assert "true only for Ascend 910B and 910_93 (and 910_95 in other copies of the check)" not in s.cause_en
    assert "而它只对 Ascend 910B 和 910_93（另一些版本的检查中还有 910_95）为真" not in s.cause_zh
    assert "DAV_3510 (Ascend 950)" in s.cause_en and "DAV_3510（Ascend 950）" in s.cause_zh
    assert "DAV_2201" in s.cause_en and "DAV_2201" in s.cause_zh and "910_93" in s.cause_zh
    assert "b888c64fe11473cb457752db9ad2aac2f33409ea/matmul/common/op_host/op_api/matmul_util.cpp" in s.source
    assert re.search(s.pattern, "Self dtype DT_FLOAT or mat2 dtype DT_FLOAT are not supported under keep type mode.")
    # vllm-ascend get_model_file: a repo id is fetched from the hub; any failure ends in the same error
    s = by_id("vllm_ascend.modelslim_config_missing")
    assert "looked up through their cache" not in s.cause_en and "通过缓存查找" not in s.cause_zh
    assert "Could not download" in s.cause_en and "Could not download" in s.cause_zh
    assert "failed fetch" in s.cause_en and "下载失败" in s.cause_zh and "VLLM_USE_MODELSCOPE" in s.cause_zh
    assert "Could not download" in s.fix_en and "Could not download" in s.fix_zh
    assert "e18643f8a4d5bd9990727654318ad069ea0b56e2/vllm_ascend/quantization/utils.py" in s.source
    # vllm-ascend FAQ: no --enforce-eager; graph mode off for V2-Lite, TP size for V3 / R1
    s = by_id("vllm_ascend.mla_heads")
    assert "--enforce-eager" not in s.fix_en and "--enforce-eager" not in s.fix_zh
    assert "later update" in s.cause_en and "后续更新" in s.cause_zh
    assert "without NPU graph mode" in s.fix_en and "不开启 NPU 图模式" in s.fix_zh
    assert "DeepSeek-V3 or R1" in s.fix_en and "DeepSeek-V3 或 R1" in s.fix_zh
    # triton-ascend: multibuffer is a per-config option; autotune does not "pick a configuration that fits"
    s = by_id("vllm_ascend.triton_ub_overflow")
    assert "autotune can pick a configuration that fits" not in s.fix_en and "autotune 可以选出能放下的配置" not in s.fix_zh
    assert "'multibuffer'" not in s.fix_en and "multibuffer is a compile option, on by default" in s.fix_en
    assert "默认开启的编译选项" in s.fix_zh and "triton.Config" in s.fix_zh and "BLOCK_SIZE_SUB" in s.fix_zh
    assert "docs/en/migration_guide/architecture_difference.md" in s.source
    assert '(the message wrapped after "bits")' in s.source


def test_ninth_sweep_part_s9I_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part I: one row wrong (ATB's own communicator
    helpers do log why a communicator is null), five that said more than the code, guide or thread they cite."""
    s = by_id("cann.atb_hccl_comm_failed")  # comm.cpp ddcc8b62: atb::Comm logs device count, rank range, rank table checks
    assert "means the caller passed ATB a null communicator, and ATB's code does not say why" not in s.cause_en
    assert "表示调用方传给 ATB 的通信域为空，ATB 的代码并未说明原因" not in s.cause_zh
    assert "started with the same rankSize" not in s.fix_en and "以相同的 rankSize 启动" not in s.fix_zh
    assert "atb::Comm" in s.cause_en and "atb::Comm" in s.cause_zh and "atb::Comm" in s.fix_zh
    assert "Failed to get device count" in s.cause_en and "Failed to get device count" in s.cause_zh
    assert "HcclCommInitClusterInfoConfig failed" in s.cause_zh and "include/atb/comm.h" in s.source
    s = by_id("mooncake.sync_transfer_timeout")  # transfer_engine_py.cpp 3b5a5941: time only; PR #32758 names size
    assert "hccn_tool" not in s.fix_en and "hccn_tool" not in s.fix_zh
    assert "a link between the two nodes that is down or stalled" not in s.cause_en and "链路中断或停滞" not in s.cause_zh
    assert "transport contexts" in s.cause_en and "传输上下文数" in s.cause_zh
    assert "no cited source names a cause" in s.fix_en and "引用的来源都没有给出原因" in s.fix_zh
    assert "#32758" in s.fix_en and "#32758" in s.fix_zh
    s = by_id("devices.drv_err_87")  # no cited source names the HwHiAiUser or missing-library candidates
    assert "device nodes the user cannot open" not in s.cause_en and "用户无法打开设备节点" not in s.cause_zh
    assert "HwHiAiUser" not in s.fix_en and "HwHiAiUser" not in s.fix_zh
    assert "No cited source names another cause" in s.cause_en and "引用的来源没有给出其他原因" in s.cause_zh
    assert "llama.cpp" in s.fix_en and "llama.cpp" in s.fix_zh and "docs/backend/CANN.md" in s.source
    s = by_id("devices.memory_apply_failed")  # #5557 is open: the slice / utilization advice is in no source
    assert "give the job a larger slice or a whole NPU" not in s.fix_en and "更大的切片或整张 NPU" not in s.fix_zh
    assert "smaller than what the server asks for" not in s.cause_en and "切片小于服务所申请的量" not in s.cause_zh
    assert "no cited source names the cause" in s.fix_en and "引用的来源都没有给出原因" in s.fix_zh
    s = by_id("cann.hccl_npu_socket_port_range")  # HCCL_*_SOCKET_PORT_RANGE.md: root-info comms, A2/A3/950, enough ports
    assert "Give each service its own range" not in s.fix_en and "为每个服务设置独立的端口范围" not in s.fix_zh
    assert "60000-60031" in s.cause_en and "60000-60031" in s.cause_zh and "16666" in s.cause_zh
    assert "socket type" in s.cause_en and "socket type" in s.cause_zh
    assert "root info" in s.fix_en and "root 节点信息" in s.fix_zh and "HCCL_IF_BASE_PORT" in s.fix_zh
    assert "HCCL_NPU_SOCKET_PORT_RANGE.md" in s.source and "HCCL_HOST_SOCKET_PORT_RANGE.md" in s.source
    assert "cluster_info_nego.md" in s.source
    s = by_id("env.libgomp_static_tls")  # Ascend/pytorch#7 names no architecture; only the Rec SDK case is on Arm
    assert "Cases on record are on Arm (aarch64)" not in s.cause_en and "已记录的案例都在 Arm（aarch64）上" not in s.cause_zh
    assert "does not name the CPU architecture" in s.cause_en and "未说明 CPU 架构" in s.cause_zh


def test_ninth_sweep_part_s9J_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part J: one pattern that missed the PP+MTP
    P-node guard its cited vllm-ascend release prints (wrong), four fixes that said more than their sources."""
    s = by_id("vllm_ascend.kv_role_guard")  # platform.py v0.22.1rc1: "PP+MTP is only supported on PD-disaggregated P nodes"
    ppmtp = "ValueError: PP+MTP is only supported on PD-disaggregated P nodes (kv_role='kv_producer'). D nodes must use"
    assert re.search(s.pattern, ppmtp)
    assert re.search(s.pattern, "additional_config.layer_sharding is only supported on P nodes (kv_role='kv_producer')")
    assert not re.search(s.pattern, "recompute_scheduler_enable is ignored on PD-disaggregated P nodes (kv_role='kv_producer')")
    assert "A scheduling or sharding option was given" not in s.cause_en and "某个调度或切分选项" not in s.cause_zh
    assert "PP+MTP" in s.cause_en and "PP+MTP" in s.cause_zh and "v0.23.0rc1" in s.cause_en and "v0.23.0rc1" in s.cause_zh
    assert "pipeline_parallel_size=1" in s.cause_en and "pipeline_parallel_size=1" in s.cause_zh
    assert "f4a08bddd0cc65a0bd8c3d377b158ae5ca7527db" in s.source and "e18643f8a4d5bd9990727654318ad069ea0b56e2" in s.source
    s = by_id("torch_npu.nccl_backend_on_npu")  # DeepSpeed#7312: npu accelerator detected, backend still nccl
    assert "let its NPU accelerator pick the backend" not in s.fix_en and "由其 NPU accelerator 选择后端" not in s.fix_zh
    assert "#7312" in s.cause_en and "#7312" in s.cause_zh and "#7312" in s.fix_en and "#7312" in s.fix_zh
    assert "Initializing TorchBackend in DeepSpeed with backend nccl" in s.fix_en
    assert "Initializing TorchBackend in DeepSpeed with backend nccl" in s.fix_zh
    assert "DeepSpeed/issues/7312" in s.source and "_init/registry/distributed.py" in s.source
    s = by_id("driver.device_open_failed")  # ascend_hal_error.h: drvRetCode is a drvError_t; no source gives the checks
    assert "the driver version against CANN" not in s.fix_en and "对比驱动与 CANN 版本" not in s.fix_zh
    assert "The driver refused to open the device" not in s.cause_en and "驱动拒绝打开该设备" not in s.cause_zh
    assert "drvError_t" in s.cause_en and "drvError_t" in s.cause_zh and "ascend_hal_error.h" in s.fix_en
    assert "ascend_hal_error.h" in s.fix_zh and "include/driver/ascend_hal_error.h" in s.source
    s = by_id("cann.npu_error_500001")  # NPUErrorCodes.h and the guide name neither EH/EZ lines nor an incomplete CANN
    assert "EH/EZ" not in s.fix_en and "EH/EZ" not in s.fix_zh
    assert "whether the CANN environment is complete" not in s.fix_en and "CANN 环境是否完整" not in s.fix_zh
    assert "NPU function error" in s.fix_en and "NPU function error" in s.fix_zh
    assert "process-interruption" in s.fix_en and "进程中断问题定位思路" in s.fix_zh
    assert "initialization_error.md" in s.source and "NPUErrorCodes.h" in s.source
    s = by_id("mooncake.no_rdma_devices")  # Mooncake#105 (ibv_devices) and build.md's docker run give the checks
    assert "ibv_devinfo" not in s.fix_en and "ibv_devinfo" not in s.fix_zh
    assert "set the protocol to the transport you use" not in s.fix_en and "将协议设置为实际使用的 transport" not in s.fix_zh
    assert "ibv_devices" in s.fix_en and "ibv_devices" in s.fix_zh and "rdma_cm" in s.fix_en and "rdma_cm" in s.fix_zh
    assert "Mooncake/issues/105" in s.source and "getting_started/build.md" in s.source


def test_ninth_sweep_part_s9K_causes_say_what_their_sources_say():
    """docs/facts-audit.md, ninth sweep of signature causes, part K: two rows wrong (a 310P pattern for a line
    no release prints, a benign line said to fail only as NPU OOM though the host allocator prints it too),
    three that said more than the guide, catalogue or code they cite."""
    s = by_id("vllm_ascend.unsupported_on_310p")  # v0.9.0rc1..v0.11.0 assert "... not supported in NPU.", not 310P
    assert "shared by multiple layers" not in s.pattern
    assert not re.search(s.pattern, "KV cache tensor shared by multiple layers is not supported in NPU.")
    assert re.search(s.pattern, "AscendAttentionState: AscendAttentionState.X is not supported for 310P currently.")
    assert "shared KV cache tensors" not in s.cause_en and "共享 KV cache 张量" not in s.cause_zh
    assert "310P tutorial" not in s.fix_en and "310P 教程" not in s.fix_zh
    assert "speculative decoding" in s.cause_en and "投机解码" in s.cause_zh and "Triton" in s.cause_zh
    assert "AscendAttentionState" in s.source and "v0.11.0/vllm_ascend/worker/model_runner_v1.py" in s.source
    s = by_id("torch_npu.allocator_retry_benign")  # CachingHostAllocator.cpp 9e73e708 prints the same line
    assert "only an 'NPU out of memory' after it is a failure" not in s.cause_en
    assert "只有其后出现 'NPU out of memory' 才是失败" not in s.cause_zh
    for text in (s.cause_en, s.cause_zh, s.fix_en, s.fix_zh):
        assert "Malloc pin memory failed, host out of memory" in text
    assert "CachingHostAllocator.cpp" in s.source
    s = by_id("cann.runtime_507033_opp")  # runtime error_code.json: tampered OPP on the host, or device ECC error
    assert "one for another chip" not in s.cause_en and "算子包属于其他芯片" not in s.cause_zh
    assert "driver/firmware" not in s.fix_en and "驱动/固件" not in s.fix_zh
    assert "tampered" in s.cause_en and "篡改" in s.cause_zh and "ECC" in s.cause_zh and "ECC" in s.fix_zh
    assert "error_code.json" in s.source and "tsd_process_controller.cpp" in s.source
    s = by_id("mooncake.address_not_registered")  # selectDevice: no buffer holds it, or no active device in retries
    assert "Mooncake's RDMA transport found no registered buffer" not in s.cause_en
    assert "check the registration call returned 0" not in s.fix_en and "确认注册调用返回 0" not in s.fix_zh
    assert "Barex" in s.cause_en and "Barex" in s.cause_zh and "EFA" in s.cause_zh
    assert "active" in s.fix_en and "活动状态" in s.fix_zh
    assert "transfer_task.cpp" in s.source and "barex_transport.cpp" in s.source
    s = by_id("cann.hccl_link_timeout")  # param_link_stage.md check 5: TLS, ping, and the A3 logical super-node
    assert "(network connectivity between the two ends, or their TLS switches differ)" not in s.cause_en
    assert "（两端之间的网络连通性问题，或两端 TLS 开关不一致）" not in s.cause_zh
    for text in (s.cause_en, s.cause_zh, s.fix_en, s.fix_zh):
        assert "HCCL_LOGIC_SUPERPOD_ID" in text
    assert "phySuperPodId" in s.fix_en and "phySuperPodId" in s.fix_zh
    assert "param_link_stage.md" in s.source


def test_nineteenth_audit_y_facts_say_what_their_sources_say():
    """docs/facts-audit.md, "Nineteenth sample (seed 44), facts #27 to #40": #32, the 5-CPU binding minimum
    (MIN_CPUS_PER_NPU) is A2's, A3's and 310P's; from v0.22.1rc1 Ascend 950 (A5) reserves no IRQ CPUs (3 per
    NPU, then its own CPU-cluster allocation), and the message the note quotes is worded so only from v0.22.1rc1."""
    import tomllib

    from doctor.versions import satisfies

    rows = tomllib.loads((Path(__file__).resolve().parents[1] / "matrices" / "tuning.toml").read_text(encoding="utf-8"))
    facts = {r["id"]: r for r in rows["tuning_fact"]}
    f = facts["cpu_binding_min_cpus.v0_16"]
    assert f["value"] == "5" and f["releases"] == [">=0.16.0rc1"]
    assert f["note"] != ("MIN_CPUS_PER_NPU = 5 (2 IRQ + main + ACL + release); 'Insufficient CPUs for binding with "
                         "CPU role reservations' and the worker runs unbound")
    assert "on A2, A3 and 310P" in f["note"] and "Ascend 950 (A5) up to v0.21.0rc1" in f["note"]
    assert "with IRQ/ACL/REL reservations' (v0.16.0rc1 to v0.21.0rc1" in f["note"]
    assert "v0.16.0rc1/vllm_ascend/cpu_binding.py" in f["source"] and "v0.22.1rc1/vllm_ascend/cpu_binding.py" in f["source"]
    a5 = facts["cpu_binding_a5_exempt"]
    assert a5["value"] == "A5" and a5["releases"] == [">=0.22.1rc1"]
    assert not satisfies("0.21.0rc1", a5["releases"][0]) and satisfies("0.30.0rc2", a5["releases"][0])
    assert "MIN_CPUS_PER_NPU_WITHOUT_IRQ = 3" in a5["source"] and "v0.23.0rc1/vllm_ascend/cpu_binding.py" in a5["source"]
    assert "insufficient CPU clusters" in a5["note"]
    rule = (Path(__file__).resolve().parents[1] / "doctor" / "rules" / "tuning.py").read_text(encoding="utf-8")
    assert 'v.fact("cpu_binding_a5_exempt")' in rule and "ctx.hardware == exempt.value" in rule


def test_newer_vllms_engine_core_exit_warning_is_the_engine_died_row():
    """vLLM at 00080ee1 logs the monitor's event as '[shutdown] MPClient: engine core exited
    unexpectedly; starting cleanup' (the older 'Engine core proc ... died unexpectedly')."""
    from doctor.explain.answers import primary

    line = "(APIServer pid=1) WARNING 12-01 08:32:59 [core_client.py:611] [shutdown] MPClient: engine core exited unexpectedly; starting cleanup"
    top = primary(catalog().explain_text(line))
    assert top is not None and top.id == "vllm.engine_died"
    s = by_id("vllm.engine_died")
    assert "00080ee1" in s.cause_en and "00080ee1" in s.cause_zh and "00080ee13c7a451fce071ccb8d0e94d395acf5a7" in s.source


STARTUP_WARNINGS = [f"vllm_ascend.{x}" for x in (
    "compilation_level_forced", "cudagraph_mode_fallback", "eager_mode_default", "npu_compilation_pending",
    "aclgraph_enabled", "torchair_compilation_enabled", "ray_aclgraph_eager", "prefix_caching_v1_disabled",
    "block_size_forced_128", "chunked_prefill_off_non_mla", "ffts_streams_limited", "aclgraph_sizes_reduced",
    "capture_size_truncated", "capture_sizes_overridden", "speculative_quant_reset", "attention_backend_reset",
    "dbo_ignored", "custom_kernels_env_off", "v2_model_runner_fallback", "graph_capture_skipped")]


def test_vllm_ascend_startup_warnings_are_known():
    """vllm-ascend's start-up warnings, read from its source at every tag (docs/facts-audit.md):
    each example line is answered by its own row (benign rows as a benign answer, the others as
    the primary answer), and no near miss produces it."""
    from doctor.explain.answers import primary
    cat = catalog()
    for sid in STARTUP_WARNINGS:
        s = by_id(sid)
        got = cat.explain_text(s.example)
        if s.benign:
            assert sid in {a.id for a in got if a.benign}, (sid, [a.id for a in got])
            assert primary(got) is None or primary(got).id != sid
        else:
            top = primary(got)
            assert top is not None and top.id == sid, (sid, [a.id for a in got])
        for line in s.near_miss:
            assert sid not in {a.id for a in cat.explain_text(line)}, (sid, line)
    assert not by_id("vllm_ascend.custom_kernels_env_off").benign
    assert "ValueError" in by_id("vllm_ascend.block_size_forced_128").cause_en


def test_nineteenth_audit_z_facts_say_what_their_sources_say():
    """docs/facts-audit.md "Nineteenth sample (seed 44), facts #41 to #50": three causes fixed."""
    s = by_id("vllm_ascend.rfork_transfer_engine_init")  # 0.29.0rc1 sdist comment: OS-assigned, or YR range
    assert "bind its own port (within YuanRong's" not in s.cause_en
    assert "端口 0 表示由引擎自行绑定端口（在 YuanRong" not in s.cause_zh
    assert "assigned by the OS" in s.cause_en and "由操作系统分配" in s.cause_zh
    assert "YR_TE_RPC_PORT_MIN/MAX" in s.cause_en and "YR_TE_RPC_PORT_MIN/MAX" in s.cause_zh
    assert "pypi.org/project/vllm-ascend/0.29.0rc1/" in s.source
    assert re.search(s.pattern, "RuntimeError: YuanRong TransferEngine initialize('10.0.0.1:0', 'ascend', "
                                "'npu:0') failed: <status>")
    s = by_id("vllm_ascend.transformers_arch")  # requirements.txt v0.9.2rc1: transformers==4.52.4
    assert "up to v0.12.0rc1 (v0.11.0rc3 to v0.12.0rc1 cap it at <=4.57.1)" not in s.cause_en
    assert "都没有 transformers 的下限（v0.11.0rc3" not in s.cause_zh
    for text in (s.cause_en, s.cause_zh):
        assert "transformers==4.52.4" in text and "v0.9.2rc1" in text and "<4.54.0" in text
    assert "v0.9.2rc1/requirements.txt" in s.source and "pypi.org/project/transformers/4.57.0/" in s.source
    s = by_id("cann.hccl_error_in_pg")  # HCCLUtils.hpp HCCL_CHECK_ERROR appends AclGetErrMsg(), any code
    assert "EE/EI/EJ" not in s.cause_en and "EE/EI/EJ" not in s.cause_zh
    for text in (s.cause_en, s.cause_zh):
        assert "HCCL_CHECK_ERROR" in text and "aclGetRecentErrMsg" in text
        assert "v5.0.rc2" in text and "v6.0.rc1.1" in text and "EJ0001" in text
    assert "HCCLUtils.hpp" in s.source and "AclInterface.cpp" in s.source
    assert re.search(s.pattern, "RuntimeError: [ERROR] HCCL error in: torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:64")


def test_the_v073_block_size_value_error_is_not_the_benign_warning():
    """v0.7.3rc1-v0.7.3.post1 raise what later releases log: the raised form stops the start."""
    from doctor.explain.answers import primary

    raised = primary(catalog().explain_text("ValueError: If prefix caching is enabled, block size must be set to 128."))
    assert raised is not None and raised.id == "vllm_ascend.prefix_caching_block_size_error" and not raised.benign
    logged = catalog().explain_text("WARNING 06-18 10:00:00 [platform.py:206] If prefix caching is enabled, "
                                    "block size must be set to 128.")
    assert primary(logged) is None and any(a.id == "vllm_ascend.block_size_forced_128" and a.benign for a in logged)
    s = by_id("vllm_ascend.prefix_caching_block_size_error")
    assert "v0.7.3rc1" in s.cause_en and "v0.7.3rc1" in s.cause_zh and "v0.7.3rc1/vllm_ascend/platform.py" in s.source
