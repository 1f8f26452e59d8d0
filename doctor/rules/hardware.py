"""Driver, firmware and devices."""
from __future__ import annotations

from typing import Iterable, List

from doctor.findings import FAIL, INFO, OK, WARN, Finding, msg
from doctor.parse.npusmi import error_code
from doctor.versions import in_version_range
from doctor.rules.base import Context, Rule

DRIVER_MOUNTS = (
    "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
    "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info "
    "-v /etc/ascend_install.info:/etc/ascend_install.info "
    "-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi"
)
MANAGEMENT_DEVICES = "--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc"
NPU_SMI_ERRORS = {
    -8005: msg("DCMI could not initialise: the driver or firmware was upgraded without a reboot, "
               "or this user is not allowed to use the devices (not root and not in HwHiAiUser)",
               "DCMI 初始化失败：驱动或固件升级后未重启，或当前用户无权访问设备（非 root 且不在 HwHiAiUser 组）"),
    -8020: msg("the devices are held by another container or namespace; map the right /dev/davinci* "
               "into this container (or run it --privileged)",
               "设备已被其他容器或命名空间占用；请把正确的 /dev/davinci* 映射进本容器（或使用 --privileged）"),
}


def driver_installed(ctx: Context) -> Iterable[Finding]:
    d = ctx.facts.driver
    if d is None:
        return []
    if ctx.build:
        return [ctx.skip_build("driver.installed"), ctx.skip_build("driver.libs")]
    out: List[Finding] = []
    container = ctx.facts.host.in_container
    if not d.found:
        if container:
            out.append(Finding(
                "driver.installed", FAIL,
                msg("NPU driver is not mounted into this container", "NPU 驱动未挂载进容器"),
                observed=f"{d.version_path} missing", expected="driver mounted from the host",
                hint=msg(f"restart the container with: docker run {DRIVER_MOUNTS} {MANAGEMENT_DEVICES} --device /dev/davinci0 ...",
                         f"重新启动容器并加上：docker run {DRIVER_MOUNTS} {MANAGEMENT_DEVICES} --device /dev/davinci0 ..."),
                fixable="manual", evidence=[d.version_path, d.install_info_path],
            ))
        else:
            out.append(Finding(
                "driver.installed", FAIL, msg("no NPU driver found", "未找到 NPU 驱动"),
                observed=f"{d.version_path} missing", expected="Ascend HDK driver installed",
                hint=msg("install the Ascend HDK driver and firmware for your board, e.g. "
                         "./Ascend-hdk-910b-npu-driver_<version>_linux-<arch>.run --full --install-for-all, then reboot",
                         "为板卡安装昇腾 HDK 驱动和固件，例如 ./Ascend-hdk-910b-npu-driver_<版本>_linux-<arch>.run --full --install-for-all，然后重启"),
                fixable="vendor", evidence=[d.version_path],
            ))
        return out
    if d.malformed:
        out.append(Finding("driver.installed", FAIL,
                           msg("driver version.info is unreadable", "驱动 version.info 无法解析"),
                           observed=d.malformed, hint=msg("reinstall the NPU driver", "请重新安装 NPU 驱动"),
                           fixable="vendor", evidence=[d.version_path]))
    else:
        out.append(Finding("driver.installed", OK, msg(f"NPU driver {d.version}", f"NPU 驱动 {d.version}"),
                           observed=d.version, evidence=[d.version_path]))
    if d.hal_lib_found:
        out.append(Finding("driver.libs", OK, msg("driver libraries present (libascend_hal.so)",
                                                  "驱动库存在（libascend_hal.so）"),
                           evidence=[d.lib_dir]))
    else:
        hint = (msg(f"mount the driver libraries: docker run -v {d.lib_dir}/:{d.lib_dir}/ ...",
                    f"挂载驱动库：docker run -v {d.lib_dir}/:{d.lib_dir}/ ...") if container else
                msg("reinstall the NPU driver (its lib64 is incomplete)", "请重新安装 NPU 驱动（lib64 不完整）"))
        out.append(Finding("driver.libs", FAIL,
                           msg("libascend_hal.so is missing: torch_npu cannot load",
                               "缺少 libascend_hal.so：torch_npu 无法加载"),
                           observed=f"{d.lib_dir}/driver/libascend_hal.so missing",
                           hint=hint, fixable="manual" if container else "vendor", evidence=[d.lib_dir]))
    return out


def firmware(ctx: Context) -> Iterable[Finding]:
    d, fw = ctx.facts.driver, ctx.facts.firmware
    if fw is None or d is None:
        return []
    if ctx.build:
        return [ctx.skip_build("firmware.installed")]
    if not fw.found or fw.malformed:
        if ctx.facts.host.in_container:
            return [Finding("firmware.installed", INFO,
                            msg("firmware version is not visible in the container (judge it on the host)",
                                "容器内看不到固件版本（请在宿主机上检查）"),
                            observed=f"{fw.version_path} missing", evidence=[fw.version_path])]
        return [Finding("firmware.installed", WARN,
                        msg("firmware version.info not found", "未找到固件 version.info"),
                        observed=fw.malformed or f"{fw.version_path} missing",
                        hint=msg("install the Ascend HDK firmware matching the driver", "安装与驱动配套的昇腾 HDK 固件"),
                        fixable="vendor", evidence=[fw.version_path])]
    out = [Finding("firmware.installed", OK, msg(f"firmware {fw.version}", f"固件 {fw.version}"),
                   observed=fw.version, evidence=[fw.version_path])]
    if not d.found or not d.version:
        return out
    drv_ok = (not d.compatible_fw) or any(in_version_range(fw.version, lo, hi) for lo, hi in d.compatible_fw)
    fw_ok = (not fw.compatible_drv) or any(in_version_range(d.version, lo, hi) for lo, hi in fw.compatible_drv)
    fw_ranges = ",".join(f"[{lo},{hi}]" for lo, hi in d.compatible_fw)
    drv_ranges = ",".join(f"[{lo},{hi}]" for lo, hi in fw.compatible_drv)
    evidence = [d.version_path, fw.version_path]
    if not drv_ok:
        out.append(Finding(
            "firmware.compat", FAIL,
            msg(f"driver {d.version} does not support firmware {fw.version}",
                f"驱动 {d.version} 不支持固件 {fw.version}"),
            observed=fw.version, expected=f"firmware in {fw_ranges}",
            hint=msg("install the firmware package released with this driver (Ascend-hdk-<chip>-npu-firmware_<version>.run --full), then reboot",
                     "安装与该驱动同版本发布的固件包（Ascend-hdk-<chip>-npu-firmware_<版本>.run --full），然后重启"),
            fixable="vendor", evidence=evidence))
    elif not fw_ok:
        out.append(Finding(
            "firmware.compat", WARN,
            msg(f"firmware {fw.version} does not list driver {d.version} as compatible",
                f"固件 {fw.version} 的兼容列表中没有驱动 {d.version}"),
            observed=d.version, expected=f"driver in {drv_ranges}",
            hint=msg("upgrade the firmware to the one released with the driver; check with npu-smi info -t board -i 0 (Compatibility)",
                     "把固件升级到与驱动同批发布的版本；可用 npu-smi info -t board -i 0 查看 Compatibility"),
            fixable="vendor", evidence=evidence))
    else:
        out.append(Finding("firmware.compat", OK,
                           msg(f"driver {d.version} and firmware {fw.version} accept each other",
                               f"驱动 {d.version} 与固件 {fw.version} 相互兼容"),
                           observed=f"{d.version} / {fw.version}", evidence=evidence))
    return out


def devices(ctx: Context) -> Iterable[Finding]:
    dev = ctx.facts.devices
    if dev is None:
        return []
    ids = ("devices.nodes", "devices.permissions", "devices.npu_smi", "devices.health")
    if ctx.build:
        return [ctx.skip_build(i) for i in ids]
    out: List[Finding] = []
    container = ctx.facts.host.in_container
    present = [n for n in dev.davinci if n.exists]
    missing_mgmt = [n.path for n in dev.management if not n.exists]
    if not present:
        out.append(Finding(
            "devices.nodes", FAIL, msg("no NPU device nodes (/dev/davinciN)", "没有 NPU 设备节点（/dev/davinciN）"),
            observed="none", expected="/dev/davinci0 ...",
            hint=msg(f"pass the devices: docker run --device /dev/davinci0 {MANAGEMENT_DEVICES} ..."
                     if container else "load the NPU driver (install it, then reboot) and check dmesg",
                     f"把设备映射进容器：docker run --device /dev/davinci0 {MANAGEMENT_DEVICES} ..."
                     if container else "加载 NPU 驱动（安装后重启）并检查 dmesg"),
            fixable="manual" if container else "vendor"))
    elif missing_mgmt:
        flags = " ".join(f"--device {p}" for p in missing_mgmt)
        out.append(Finding(
            "devices.nodes", FAIL,
            msg(f"management device nodes missing: {', '.join(missing_mgmt)}", f"缺少管理设备节点：{', '.join(missing_mgmt)}"),
            observed=f"{len(present)} davinci nodes, missing {' '.join(missing_mgmt)}",
            hint=msg(f"add to docker run: {flags}", f"在 docker run 中加上：{flags}"), fixable="manual"))
    else:
        out.append(Finding("devices.nodes", OK,
                           msg(f"{len(present)} NPU device nodes", f"{len(present)} 个 NPU 设备节点"),
                           observed=" ".join(n.path.rsplit("/", 1)[-1] for n in present)))
    blocked = [n for n in present + [n for n in dev.management if n.exists] if not n.accessible]
    if blocked:
        group = blocked[0].group or "HwHiAiUser"
        out.append(Finding(
            "devices.permissions", FAIL,
            msg(f"this user ({ctx.facts.host.user}) cannot open {blocked[0].path}",
                f"当前用户（{ctx.facts.host.user}）无法打开 {blocked[0].path}"),
            observed=f"{blocked[0].path} mode {oct(blocked[0].mode)} group {group}",
            expected=f"read/write, e.g. membership of {group}",
            hint=msg(f"sudo usermod -aG {group} {ctx.facts.host.user}  (then log in again)",
                     f"sudo usermod -aG {group} {ctx.facts.host.user}（然后重新登录）"),
            fixable="manual", evidence=[n.path for n in blocked]))
    elif present:
        out.append(Finding("devices.permissions", OK, msg("device nodes are accessible", "设备节点可访问")))
    out.extend(_npu_smi(ctx, container))
    return out


def _npu_smi(ctx: Context, container: bool) -> List[Finding]:
    dev = ctx.facts.devices
    out: List[Finding] = []
    cmd = dev.npu_smi
    if not dev.npu_smi_path:
        hint = (msg("mount it: docker run -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi -v /usr/local/dcmi:/usr/local/dcmi ...",
                    "挂载它：docker run -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi -v /usr/local/dcmi:/usr/local/dcmi ...")
                if container else msg("npu-smi ships with the driver (/usr/local/sbin/npu-smi); reinstall the driver",
                                      "npu-smi 随驱动安装（/usr/local/sbin/npu-smi）；请重新安装驱动"))
        out.append(Finding("devices.npu_smi", WARN,
                           msg("npu-smi not found: chip model and health not checked",
                               "未找到 npu-smi：无法检查芯片型号和健康状态"),
                           observed="not on PATH", hint=hint, fixable="manual" if container else "vendor"))
        return out
    assert cmd is not None
    evidence = [" ".join(cmd.argv)] + [l for l in (cmd.stdout + cmd.stderr).strip().splitlines()[:3]]
    if cmd.timed_out:
        out.append(Finding(
            "devices.npu_smi", FAIL,
            msg(f"npu-smi info did not answer within {dev.npu_smi_timeout_s:g}s", f"npu-smi info 在 {dev.npu_smi_timeout_s:g} 秒内无响应"),
            observed="timeout", hint=msg("the driver may be hung: check dmesg and the device-side logs, reboot if needed",
                                         "驱动可能挂死：检查 dmesg 和 device 侧日志，必要时重启"),
            fixable="vendor", evidence=evidence[:1]))
        return out
    if not cmd.ok or dev.npu_smi_info is None:
        text = (cmd.stdout + "\n" + cmd.stderr).strip()
        code = error_code(text)
        explained = NPU_SMI_ERRORS.get(code) if code is not None else None
        last = text.splitlines()[-1] if text else (cmd.error or f"exit {cmd.returncode}")
        out.append(Finding(
            "devices.npu_smi", FAIL,
            msg(f"npu-smi info failed: {last}", f"npu-smi info 执行失败：{last}"),
            observed=f"exit {cmd.returncode}" + (f", ret {code}" if code is not None else ""),
            hint=explained or msg("run npu-smi info by hand and check dmesg", "手动运行 npu-smi info 并检查 dmesg"),
            fixable="manual", evidence=evidence))
        return out
    info = dev.npu_smi_info
    names = sorted({c.name for c in info.chips})
    memory_en, memory_zh = _memory(info.chips)
    out.append(Finding("devices.npu_smi", OK,
                       msg(f"npu-smi: {len(info.chips)} chips ({', '.join(names)}{memory_en}), driver {info.driver_version}",
                           f"npu-smi：{len(info.chips)} 个芯片（{', '.join(names)}{memory_zh}），驱动 {info.driver_version}"),
                       observed=ctx.hardware or info.layout,
                       evidence=evidence[:1] + [f"NPU {c.npu} chip {c.chip}: {c.name} {c.health}, HBM {c.hbm_used_mb}/{c.hbm_total_mb} MB"
                                                for c in info.chips if c.hbm_total_mb]))
    bad = [c for c in info.chips if c.health.upper() != "OK"]
    if bad:
        worst = FAIL if any(c.health.lower() in ("critical", "alarm") for c in bad) else WARN
        out.append(Finding(
            "devices.health", worst,
            msg(f"{len(bad)} chip(s) not healthy: " + ", ".join(f"NPU {c.npu} chip {c.chip} {c.health}" for c in bad),
                f"{len(bad)} 个芯片状态异常：" + "，".join(f"NPU {c.npu} chip {c.chip} {c.health}" for c in bad)),
            observed=", ".join(sorted({c.health for c in bad})), expected="OK",
            hint=msg("npu-smi info -t health -i <NPU> shows the error code; look it up in the board's error-code list",
                     "用 npu-smi info -t health -i <NPU> 查看错误码，并对照板卡错误码手册"),
            fixable="vendor"))
    else:
        out.append(Finding("devices.health", OK, msg("all chips report OK", "所有芯片状态 OK")))
    if info.processes:
        busy = sorted({p.npu for p in info.processes})
        out.append(Finding(
            "devices.busy", INFO,
            msg(f"NPU {', '.join(map(str, busy))} in use by {len(info.processes)} process(es)",
                f"NPU {', '.join(map(str, busy))} 正被 {len(info.processes)} 个进程占用"),
            observed=", ".join(f"{p.pid}{'(' + p.name + ')' if p.name else ''}@{p.npu}" for p in info.processes[:8])))
    return out


def _memory(chips) -> tuple:
    """', 32 GB HBM per chip, 151 GB in use' (310P cards have DDR only: nothing to add)."""
    totals = sorted({c.hbm_total_mb for c in chips if c.hbm_total_mb})
    if not totals:
        return "", ""
    used = sum(c.hbm_used_mb or 0 for c in chips) / 1024
    per = "/".join(f"{t // 1024} GB" for t in totals)
    return f", {per} HBM per chip, {used:.0f} GB in use", f"，每芯片 {per} HBM，已用 {used:.0f} GB"


def hardware_support(ctx: Context) -> Iterable[Finding]:
    if ctx.build or ctx.hardware is None:
        return []
    if ctx.hardware == "910":
        return [Finding("devices.hardware_support", FAIL,
                        msg("first-generation Ascend 910 is not supported by vllm-ascend",
                            "vllm-ascend 不支持第一代 Ascend 910"),
                        observed="Ascend 910 (A1)", expected="Atlas A2 / A3 / 300I Duo",
                        fixable="none")]
    r = ctx.release
    if r is None:
        return [Finding("devices.hardware_support", INFO, msg(f"hardware: {ctx.hardware}", f"硬件：{ctx.hardware}"),
                        observed=ctx.hardware)]
    if ctx.hardware not in r.hardware:
        return [Finding("devices.hardware_support", FAIL,
                        msg(f"vllm-ascend {r.vllm_ascend} does not support {ctx.hardware}",
                            f"vllm-ascend {r.vllm_ascend} 不支持 {ctx.hardware}"),
                        observed=ctx.hardware, expected=", ".join(r.hardware),
                        hint=msg("pick a release that supports this hardware: ascend-doctor fix --target vllm-ascend==<version>",
                                 "选择支持该硬件的版本：ascend-doctor fix --target vllm-ascend==<版本>"),
                        fixable="auto", source=r.source_of("hardware"))]
    return [Finding("devices.hardware_support", OK,
                    msg(f"{ctx.hardware} is supported by vllm-ascend {r.vllm_ascend}",
                        f"vllm-ascend {r.vllm_ascend} 支持 {ctx.hardware}"),
                    observed=ctx.hardware, source=r.source_of("hardware"))]


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:driver_installed", "driver", driver_installed),
    Rule("group:firmware", "firmware", firmware),
    Rule("group:devices", "devices", devices),
    Rule("group:hardware_support", "devices", hardware_support),
)
