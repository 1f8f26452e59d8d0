"""Every finding id check can emit: why the rule exists and where the knowledge comes from.

`ascend-doctor matrix explain <finding-id>` prints these; docs/findings.md lists them. Ids are
a contract (scripts match on them): add, never rename.
"""
from __future__ import annotations

from typing import Dict

VA = "https://github.com/vllm-project/vllm-ascend"
FORMATS = "shared/facts/formats.md"


def _e(layer: str, why_en: str, why_zh: str, source: str) -> Dict[str, str]:
    return {"layer": layer, "why_en": why_en, "why_zh": why_zh, "source": source}


CATALOG: Dict[str, Dict[str, str]] = {
    "driver.installed": _e(
        "driver", "The NPU driver (Ascend HDK) must be installed on the host and, in a container, mounted from it "
        "(version.info, lib64, /etc/ascend_install.info). Everything above it loads libascend_hal.so.",
        "NPU 驱动（昇腾 HDK）必须安装在宿主机上，容器内需从宿主机挂载（version.info、lib64、/etc/ascend_install.info）。上层都依赖 libascend_hal.so。",
        f"{VA} docs/source/installation.md (docker run mounts); {FORMATS} 1, 4, 8b"),
    "driver.libs": _e(
        "driver", "libascend_hal.so under driver/lib64/driver is what torch_npu loads first; a container that mounts "
        "only version.info fails with 'libascend_hal.so: cannot open shared object file'.",
        "torch_npu 首先加载 driver/lib64/driver 下的 libascend_hal.so；只挂载了 version.info 的容器会报找不到 libascend_hal.so。",
        f"{FORMATS} 8b"),
    "firmware.installed": _e(
        "firmware", "The firmware version is read from firmware/version.info; containers usually do not mount it.",
        "固件版本读取自 firmware/version.info；容器通常不挂载该文件。", f"{FORMATS} 2"),
    "firmware.compat": _e(
        "firmware", "The driver lists the firmware ranges it accepts (compatible_version_fw) and the firmware lists "
        "the driver families it accepts (compatible_version_drv); both must agree.",
        "驱动声明其接受的固件范围（compatible_version_fw），固件声明其接受的驱动系列（compatible_version_drv），两者必须一致。",
        f"{FORMATS} 1-2 (parser notes)"),
    "cann.installed": _e(
        "cann", "The CANN toolkit provides libascendcl/libhccl that torch_npu links against; it is found through "
        "ASCEND_HOME_PATH or the default layouts (ascend-toolkit/latest <= 8.3, cann -> cann-<ver> >= 8.5).",
        "CANN toolkit 提供 torch_npu 依赖的 libascendcl/libhccl；通过 ASCEND_HOME_PATH 或默认目录（<= 8.3 为 ascend-toolkit/latest，>= 8.5 为 cann -> cann-<版本>）查找。",
        f"{FORMATS} 3; hiascend CANN 8.5.0 release notes (layout change)"),
    "cann.kernels": _e(
        "cann", "The ops/kernels package (Ascend-cann-kernels-<chip> before 8.5, Ascend-cann-<chip>-ops from 8.5) "
        "must be installed at the toolkit's version; without it operators fail at run time (e.g. error 561103).",
        "ops/kernels 包（8.5 前为 Ascend-cann-kernels-<chip>，8.5 起为 Ascend-cann-<chip>-ops）必须与 toolkit 同版本；缺失时算子运行失败（如 561103）。",
        f"{VA} installation.md; {FORMATS} 3e, 3h; {VA}/issues (AVD-042)"),
    "cann.nnal": _e(
        "cann", "NNAL (ATB) provides libatb.so, which torch_npu and vllm-ascend need, at the same version as CANN; "
        "a mismatch shows as undefined atb:: / Mki symbols.",
        "NNAL（ATB）提供 torch_npu 和 vllm-ascend 需要的 libatb.so，且须与 CANN 同版本；不一致时会出现 atb:: / Mki 未定义符号。",
        f"{VA} installation.md (from v0.13.0); {VA}/issues/152; Ascend/pytorch#99"),
    "cann.driver_compat": _e(
        "cann", "Each CANN release supports a set of driver (HDK) lines; an older driver than listed fails at "
        "aclInit or with driver error codes (507033, watchdog timeouts).",
        "每个 CANN 版本支持若干驱动（HDK）系列；驱动比列表旧时会在 aclInit 失败或报驱动错误码（507033、watchdog 超时）。",
        "matrices/cann-driver.toml (hiascend release notes, ascend-deployer CANN_*.json)"),
    "cann.release_match": _e(
        "cann", "Every vllm-ascend release is built and tested against one CANN (the matrix's 'stable CANN'); older "
        "CANN lacks operators it calls.",
        "每个 vllm-ascend 版本都基于某个 CANN（矩阵中的 stable CANN）构建和测试；更旧的 CANN 缺少其调用的算子。",
        f"{VA} docs/source/community/versioning_policy.md"),
    "devices.nodes": _e(
        "devices", "/dev/davinciN plus davinci_manager, devmm_svm and hisi_hdc must exist; containers get them with "
        "--device.", "必须存在 /dev/davinciN 以及 davinci_manager、devmm_svm、hisi_hdc；容器通过 --device 获得。",
        f"{FORMATS} 9a"),
    "devices.permissions": _e(
        "devices", "Device nodes are HwHiAiUser:HwHiAiUser 0660: a non-root user must be in that group "
        "(drvErr=87, -8005 otherwise).", "设备节点属主为 HwHiAiUser:HwHiAiUser，权限 0660：非 root 用户必须在该组中（否则 drvErr=87、-8005）。",
        f"{FORMATS} 8d, 9c"),
    "devices.npu_smi": _e(
        "devices", "npu-smi info shows the chips, their health and the driver; its error codes (-8005, -8020) name "
        "the problem. A hang means a stuck driver.", "npu-smi info 显示芯片、健康状态和驱动；其错误码（-8005、-8020）指明问题；卡住说明驱动挂死。",
        f"{FORMATS} 5, 5h"),
    "devices.health": _e(
        "devices", "A chip whose health is not OK (Warning, Alarm, Critical) needs the board's error-code list.",
        "健康状态不为 OK（Warning、Alarm、Critical）的芯片需要对照板卡错误码手册。", f"{FORMATS} 5c, 5g"),
    "devices.busy": _e(
        "devices", "Processes holding NPUs limit the memory a new server gets (informational).",
        "占用 NPU 的进程会减少新服务可用的显存（提示信息）。", f"{FORMATS} 5a"),
    "devices.hardware_support": _e(
        "devices", "Releases support A2 (910B), A3 (910_93), 300I Duo (310P) and from 0.21 A5; first-generation "
        "Ascend 910 is not supported.", "各版本支持 A2（910B）、A3（910_93）、300I Duo（310P），0.21 起支持 A5；不支持第一代 Ascend 910。",
        f"{VA} README / Dockerfiles per release"),
    "python.interpreter": _e(
        "python", "The doctor reads the target environment through its interpreter (--python) or site-packages.",
        "doctor 通过目标解释器（--python）或 site-packages 读取目标环境。", "DESIGN.md"),
    "python.version": _e(
        "python", "Wheels exist only for the Python range of each release (3.9-3.11 up to 0.11, 3.10-3.11 up to "
        "0.20, 3.10-3.12 from 0.21).", "每个版本只为其 Python 范围提供 wheel（0.11 及以前 3.9-3.11，0.20 及以前 3.10-3.11，0.21 起 3.10-3.12）。",
        f"{VA} versioning_policy.md; wheel metadata"),
    "python.arch": _e(
        "python", "torch_npu and vllm-ascend ship x86_64 and aarch64 wheels only.", "torch_npu 和 vllm-ascend 只提供 x86_64 和 aarch64 的 wheel。",
        "package index file lists"),
    "python.glibc": _e(
        "python", "vllm-ascend wheels from 0.23.0rc1 are manylinux_2_34: older glibc cannot install them.",
        "vllm-ascend 从 0.23.0rc1 起为 manylinux_2_34：更旧的 glibc 无法安装。", "wheel file tags on the package index"),
    "torch.version": _e(
        "torch", "torch_npu extends exactly one torch release; vllm from the index always pins a newer torch, so "
        "installing it after vllm-ascend silently replaces torch.", "torch_npu 只扩展某一个 torch 版本；索引上的 vllm 总是固定更新的 torch，在 vllm-ascend 之后安装它会悄悄替换 torch。",
        f"{VA}/issues/5710; wheel metadata (facts/index-metadata.json)"),
    "torch.build": _e(
        "torch", "torch_npu extends the CPU build of torch; a CUDA build (with GBs of nvidia-* packages) is what "
        "`pip install vllm` pulls on x86_64.", "torch_npu 扩展的是 CPU 版 torch；x86_64 上 `pip install vllm` 会拉取 CUDA 版（连同数 GB 的 nvidia-* 包）。",
        f"{VA}/issues (AVD-014, AVD-016); Ascend/pytorch README"),
    "torch.companions": _e(
        "torch", "torchvision and torchaudio are built for one torch release each; a mismatch fails at import "
        "('operator torchvision::nms does not exist').", "torchvision 和 torchaudio 各自对应一个 torch 版本；不匹配时导入失败（'operator torchvision::nms does not exist'）。",
        "matrices/torch-npu.toml [[torch]] (PyTorch release pairing)"),
    "torch_npu.version": _e(
        "torch_npu", "Each release pins one torch-npu (and the docs may recommend a .postN build from the Ascend "
        "mirror); torch-npu itself pins torch.", "每个版本固定一个 torch-npu（文档可能推荐 Ascend 镜像上的 .postN 版本）；torch-npu 本身又固定 torch。",
        f"{VA} versioning_policy.md; wheel metadata"),
    "torch_npu.cann": _e(
        "torch_npu", "A torch-npu build targets a CANN release; older CANN gives undefined symbols on import.",
        "torch-npu 针对某个 CANN 版本构建；更旧的 CANN 会在导入时报未定义符号。", "Ascend/pytorch COMPATIBILITY.en.md"),
    "vllm.version": _e(
        "vllm", "A vllm-ascend release works with one vLLM release; official images were found shipping another "
        "one (0.11.0rc3 with vllm 0.11.2+empty).", "一个 vllm-ascend 版本只配套一个 vLLM 版本；官方镜像曾带错 vLLM（0.11.0rc3 配 vllm 0.11.2+empty）。",
        f"{VA} versioning_policy.md; seed 001"),
    "vllm.local_version": _e(
        "vllm", "Source builds with VLLM_TARGET_DEVICE=empty report 'X+empty'; vllm-ascend's vllm_version_is() "
        "compares strictly and never matches it; VLLM_VERSION overrides.", "VLLM_TARGET_DEVICE=empty 的源码构建版本号为 'X+empty'；vllm-ascend 的 vllm_version_is() 严格比较，永远不相等；可用 VLLM_VERSION 覆盖。",
        f"{VA} vllm_ascend/utils.py; vllm setup.py"),
    "vllm_ascend.installed": _e(
        "vllm_ascend", "The installed vllm-ascend selects the matrix row everything else is judged against; dev "
        "builds map to their base release.", "已安装的 vllm-ascend 决定对照矩阵中的哪一行；开发版映射到其基础版本。", "matrices/vllm-ascend.toml"),
    "vllm_ascend.plugin": _e(
        "vllm_ascend", "vLLM finds the NPU through the 'ascend' entry point in group vllm.platform_plugins; without "
        "it vLLM runs on UnspecifiedPlatform.", "vLLM 通过 vllm.platform_plugins 组中的 'ascend' 入口找到 NPU；缺少时 vLLM 会运行在 UnspecifiedPlatform 上。",
        f"{FORMATS} 8f; {VA}/issues/130"),
    "vllm_ascend.triton": _e(
        "vllm_ascend", "triton-ascend and mainline triton both install the 'triton' package; from 0.13.0rc2 the "
        "release pins triton-ascend, and 310P does not support it.", "triton-ascend 与主线 triton 都安装 'triton' 包；从 0.13.0rc2 起版本固定 triton-ascend，310P 不支持。",
        f"{VA} Dockerfiles (pip uninstall -y triton); wheel metadata"),
    "vllm_ascend.numpy": _e(
        "vllm_ascend", "Releases up to 0.19 require numpy<2 (np.float_ and friends were removed in numpy 2).",
        "0.19 及以前的版本要求 numpy<2（numpy 2 删除了 np.float_ 等接口）。", "wheel metadata"),
    "vllm_ascend.transformers": _e(
        "vllm_ascend", "Releases constrain transformers; outside the range models fail to load or quantised "
        "weights break.", "各版本限制 transformers 版本；超出范围会导致模型加载失败或量化权重出错。", f"wheel metadata; {VA}/issues/6302"),
    "vllm_ascend.requirements": _e(
        "vllm_ascend", "Every other requirement of the vllm-ascend wheel must be met.", "vllm-ascend wheel 的其他依赖也必须满足。",
        "wheel metadata"),
    "vllm_ascend.known_problems": _e(
        "vllm_ascend", "Known problems of the installed release, from its release notes and issues.",
        "已安装版本的已知问题，来自其发布说明和 issue。", "matrices/vllm-ascend.toml known_problems"),
    "mooncake.installed": _e(
        "mooncake", "Only mooncake-transfer-engine-npu (from 0.3.11.post1) or a source build with "
        "-DUSE_ASCEND_DIRECT=ON has the Ascend transport ('Unsupported transport ascend' otherwise).",
        "只有 mooncake-transfer-engine-npu（0.3.11.post1 起）或用 -DUSE_ASCEND_DIRECT=ON 源码构建的版本带昇腾传输层（否则报 'Unsupported transport ascend'）。",
        "shared/facts/mooncake.md section 0"),
    "mooncake.transport": _e(
        "mooncake", "The Ascend transport is ascend_transport.so linked with libascendcl/libllm_datadist (v0.3.7: "
        "linked into engine.so); it is read from the ELF dynamic section, without loading Mooncake. CUDA, TCP-only "
        "and legacy USE_ASCEND builds fail with 'Unsupported transport ascend, please rebuild Mooncake'.",
        "Ascend 传输是链接了 libascendcl/libllm_datadist 的 ascend_transport.so（v0.3.7 直接链接进 engine.so）；通过读取 ELF "
        "动态段判断，不加载 Mooncake。CUDA、仅 TCP 以及旧的 USE_ASCEND 版本会报 'Unsupported transport ascend'。",
        "shared/facts/mooncake.md sections 1.4, 2"),
    "mooncake.loader_path": _e(
        "mooncake", "A source build installs libtransfer_engine.so and ascend_transport.so into /usr/local/lib, which "
        "must be on the loader path (ldconfig does not cache ascend_transport.so: its name lacks 'lib'); CANN's lib64 "
        "must be there too (set_env.sh). Followed as ld.so(8) does: RPATH, LD_LIBRARY_PATH, RUNPATH, ld.so.cache.",
        "源码编译会把 libtransfer_engine.so 和 ascend_transport.so 装到 /usr/local/lib，该目录必须在库搜索路径中（ldconfig "
        "不缓存 ascend_transport.so：名字不以 lib 开头）；CANN 的 lib64 也必须在其中（set_env.sh）。按 ld.so(8) 的顺序判断。",
        f"{VA}/issues/6949; shared/facts/mooncake.md section 1.4"),
    "mooncake.config": _e(
        "mooncake", "vllm-ascend's KV-pool backend reads MOONCAKE_CONFIG_PATH with strict json.load; protocol must be "
        "'ascend', the master a host:port, global_segment_size a positive size that fits the host; which keys are "
        "read depends on the vllm-ascend version.",
        "vllm-ascend 的 KV 池后端用严格的 json.load 读取 MOONCAKE_CONFIG_PATH；protocol 必须为 'ascend'，master 为 host:port，"
        "global_segment_size 为正数且不超过本机内存；读取哪些键取决于 vllm-ascend 版本。",
        "shared/facts/mooncake.md section 4 (vllm-ascend MooncakeStoreConfig at each tag)"),
    "mooncake.env": _e(
        "mooncake", "Mooncake's Ascend direct transport reads ASCEND_BUFFER_POOL (count:sizeMB, not with "
        "ASCEND_USE_ASYNC_TRANSFER), ASCEND_CONNECT_TIMEOUT / ASCEND_TRANSFER_TIMEOUT (integer ms, invalid values "
        "silently ignored) and ASCEND_ENABLE_USE_FABRIC_MEM (exactly 1, A3).",
        "Mooncake 的 Ascend direct 传输读取 ASCEND_BUFFER_POOL（个数:大小MB，不能与 ASCEND_USE_ASYNC_TRANSFER 同时使用）、"
        "ASCEND_CONNECT_TIMEOUT / ASCEND_TRANSFER_TIMEOUT（毫秒整数，非法值被静默忽略）和 ASCEND_ENABLE_USE_FABRIC_MEM（仅 1，A3）。",
        "shared/facts/mooncake.md section 5 (ascend_direct_transport.cpp)"),
    "mooncake.serve_args": _e(
        "mooncake", "The --kv-transfer-config of the user's vllm serve command: valid JSON, a connector the installed "
        "vllm-ascend registers (read from its source), a valid kv_role, extra-config keys that connector reads in "
        "that version, and MOONCAKE_CONFIG_PATH for the KV-pool connector.",
        "用户 vllm serve 命令中的 --kv-transfer-config：JSON 合法、connector 已在已安装的 vllm-ascend 中注册（读取其源码）、"
        "kv_role 合法、extra config 的键被该版本的 connector 读取，KV 池 connector 需设置 MOONCAKE_CONFIG_PATH。",
        "shared/facts/mooncake.md section 5; vllm-ascend register_connector() at each tag"),
    "mooncake.master": _e(
        "mooncake", "mooncake_master must be reachable on its RPC port; its metrics port answers /health (plain OK up "
        "to v0.3.10, JSON with service_ready from v0.3.10.post2), /metrics and /metrics/summary (storage figures).",
        "mooncake_master 的 RPC 端口必须可达；其 metrics 端口提供 /health（v0.3.10 及以前为纯文本 OK，v0.3.10.post2 起为含 "
        "service_ready 的 JSON）、/metrics 和 /metrics/summary（存储数据）。",
        "shared/facts/mooncake.md section 3"),
    "env.cann_env": _e(
        "env", "CANN's set_env.sh exports LD_LIBRARY_PATH (toolkit and driver lib64), ASCEND_OPP_PATH and "
        "ASCEND_HOME_PATH; without them torch_npu fails with libhccl.so / libascendcl.so not found.",
        "CANN 的 set_env.sh 导出 LD_LIBRARY_PATH（toolkit 与驱动 lib64）、ASCEND_OPP_PATH 和 ASCEND_HOME_PATH；缺少时 torch_npu 报找不到 libhccl.so / libascendcl.so。",
        f"{FORMATS} 3i, 8a"),
    "env.nnal_env": _e(
        "env", "NNAL's set_env.sh sets ATB_HOME_PATH and the cxx_abi library directory; without it libatb.so is not "
        "found.", "NNAL 的 set_env.sh 设置 ATB_HOME_PATH 和 cxx_abi 库目录；缺少时找不到 libatb.so。", f"{FORMATS} 3j"),
    "env.vllm_version_override": _e(
        "env", "VLLM_VERSION tells vllm-ascend which vLLM code paths to use; a stale value from a tutorial makes it "
        "load code for another vLLM.", "VLLM_VERSION 告诉 vllm-ascend 使用哪个 vLLM 的代码路径；教程里遗留的旧值会让它加载另一个 vLLM 的代码。",
        f"{VA}/issues (AVD-020, AVD-022)"),
    "env.vllm_target_device": _e(
        "env", "VLLM_TARGET_DEVICE decides what a vLLM source build compiles for; Ascend needs 'empty'.",
        "VLLM_TARGET_DEVICE 决定 vLLM 源码构建的目标；昇腾需要 'empty'。", "vllm setup.py"),
    "env.cwd_shadow": _e(
        "env", "python puts the working directory first on sys.path: a vllm/ or vllm_ascend/ folder there shadows "
        "the installed package ('unknown location').", "python 把当前目录放在 sys.path 首位：其中的 vllm/ 或 vllm_ascend/ 目录会遮蔽已安装的包（'unknown location'）。",
        f"{VA}/issues (AVD-024, AVD-026)"),
    "env.pip_check": _e(
        "env", "pip check computed from metadata; 'vllm requires torch==X' is the expected residual when torch "
        "matches vllm-ascend's pin.", "根据元数据计算的 pip check；当 torch 与 vllm-ascend 的固定版本一致时，'vllm requires torch==X' 属于预期残留。",
        f"{VA}/issues/5710, /issues/3266"),
    "env.requirements": _e(
        "env", "check --requirements FILE judges the environment pip would make from the file; when pip cannot "
        "resolve the file (a pin not on the index, a conflict, an index that does not answer), nothing can be judged.",
        "check --requirements FILE 评估 pip 按该文件安装后的环境；pip 无法解析该文件时（索引上没有某个版本、冲突、索引无响应）无法评估。",
        "docs/guard.md; https://pip.pypa.io/en/stable/reference/installation-report/"),
    "env.shadowed_dists": _e(
        "env", "The same distribution installed twice on sys.path: only the first copy is used and pip uninstall "
        "removes only one.", "同一个包在 sys.path 上安装了两份：只使用第一份，pip uninstall 也只删除一份。", "importlib.metadata semantics"),
}

# Generic ids: <layer>.probe_error (a probe crashed) and <layer>.rule_error (a rule crashed).
GENERIC = {
    "probe_error": _e("*", "A probe crashed or could not read its source; the layer was not fully checked.",
                      "探测出错或无法读取数据；该层未完整检查。", "DESIGN.md"),
    "rule_error": _e("*", "A rule raised an exception (a bug in the doctor); other rules still ran.",
                     "规则抛出异常（doctor 的缺陷）；其他规则照常运行。", "DESIGN.md"),
}


def add_rule_records() -> None:
    """Rules written as one record per finding id carry their own text (catalogue keys) and
    source; they join the catalog here, after the entries above."""
    from doctor.rules.all_rules import RULES

    for rule in RULES:
        if rule.why is not None and rule.id not in CATALOG:
            CATALOG[rule.id] = _e(rule.layer, rule.why.text("en"), rule.why.text("zh"), rule.source or "")


def describe(finding_id: str) -> Dict[str, str]:
    """The catalog entry of a finding id (generic ids resolved), or KeyError."""
    if finding_id in CATALOG:
        return CATALOG[finding_id]
    layer, _, topic = finding_id.partition(".")
    if topic in GENERIC:
        return dict(GENERIC[topic], layer=layer)
    raise KeyError(finding_id)


def markdown() -> str:
    """docs/findings.md, generated: ``python -m doctor.rules.catalog > docs/findings.md``."""
    lines = ["# Findings / 检查项", "",
             "Every id `ascend-doctor check` can report, why the rule exists, and where the knowledge comes from.",
             "Ids are stable: scripts may match on them. `ascend-doctor matrix explain <id>` prints the same text.",
             "", "`ascend-doctor check` 可能报告的每个检查项：规则的理由与知识来源。检查项 id 保持稳定，脚本可以依赖。", ""]
    layer = None
    for fid, entry in CATALOG.items():
        if entry["layer"] != layer:
            layer = entry["layer"]
            lines += [f"## {layer}", ""]
        lines += [f"### `{fid}`", "", entry["why_en"], "", entry["why_zh"], "", f"Source: {entry['source']}", ""]
    lines += ["## generic", ""]
    for topic, entry in GENERIC.items():
        lines += [f"### `<layer>.{topic}`", "", entry["why_en"], "", entry["why_zh"], ""]
    return "\n".join(lines).rstrip() + "\n"


add_rule_records()

if __name__ == "__main__":
    print(markdown(), end="")
