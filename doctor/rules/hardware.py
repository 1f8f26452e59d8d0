"""Driver, firmware and devices."""
from __future__ import annotations

import shlex
from typing import Iterable, Optional, Sequence, Union

from doctor.facts import Chip, DevicesFacts, DriverFacts, NpuSmiInfo
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Finding, cmd
from doctor.i18n import T, Text, join
from doctor.parse.npusmi import error_code
from doctor.versions import AscendVersion, in_version_range
from doctor.rules.access import denied_finding
from doctor.rules.base import Context, rule
from doctor.rules.sources import HOST_FORMATS as FORMATS
from doctor.rules.sources import INSTALLATION, VLLM_ASCEND

# Huawei's npu-smi reference: in the header of `npu-smi info`, "npu-smi" is the tool's version and
# "Version" the driver's.
NPU_SMI_FIELDS = ("https://hiascend.com/document/detail/zh/Atlas%20300I%20Pro%20Inference%20Card/"
                  "Atlas%20300I%20Pro%20Inference%20Card/300Ipro_015.html")

DRIVER_MOUNTS = (
    "-v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
    "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info "
    "-v /etc/ascend_install.info:/etc/ascend_install.info "
    "-v /usr/local/dcmi:/usr/local/dcmi -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi"
)
MANAGEMENT_DEVICES = "--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc"
# npu-smi return codes with a known cause: the catalogue message that explains each.
NPU_SMI_ERRORS = {-8005: "devices.npu_smi.ret8005", -8020: "devices.npu_smi.ret8020"}


def _runtime_driver(ctx: Context) -> Optional[DriverFacts]:
    """The driver facts, outside the build stage (where the driver is not judged)."""
    return None if ctx.build else ctx.facts.driver


def driver_installed(ctx: Context) -> Iterable[Finding]:
    d = ctx.facts.driver
    if d is None:
        return []
    if ctx.build:
        return [ctx.skip_build("driver.installed")]
    if not d.found and d.denied is not None:
        return []  # there, but this user may not read it: driver.permission says so
    if not d.found:
        if ctx.facts.host.in_container:
            return [Finding("driver.installed", FAIL, T("driver.installed.not_mounted"),
                            observed=f"{d.version_path} missing", expected="driver mounted from the host",
                            hint=T("driver.installed.not_mounted.hint", mounts=DRIVER_MOUNTS, devices=MANAGEMENT_DEVICES),
                            fixable=Fixable.MANUAL, evidence=[d.version_path, d.install_info_path])]
        return [Finding("driver.installed", FAIL, T("driver.installed.missing"),
                        observed=f"{d.version_path} missing", expected="Ascend HDK driver installed",
                        hint=T("driver.installed.missing.hint"), fixable=Fixable.VENDOR, evidence=[d.version_path])]
    if d.malformed:
        return [Finding("driver.installed", FAIL, T("driver.installed.unreadable", path=d.version_path),
                        observed=d.malformed, hint=T("driver.installed.unreadable.hint"),
                        fixable=Fixable.VENDOR, evidence=[d.version_path])]
    return [Finding("driver.installed", OK, T("driver.installed.ok", version=d.version),
                    observed=d.version, evidence=[d.version_path])]


def driver_reboot_pending(ctx: Context) -> Iterable[Finding]:
    """The driver npu-smi reports as loaded (its header's ``Version:``) against the one
    installed (driver/version.info): after an install without a reboot they differ, and every
    check of the installed files alone says all is well."""
    d, info, dev = _runtime_driver(ctx), _npu_smi_info(ctx), _devices(ctx)
    if d is None or info is None or dev is None or dev.npu_smi is None or not d.found or not d.version \
            or not info.driver_version:
        return []
    if AscendVersion(d.version) == AscendVersion(info.driver_version):
        return []
    where = T("driver.reboot_pending.where_container") if ctx.facts.host.in_container else ""
    return [Finding("driver.reboot_pending", WARN,
                    T("driver.reboot_pending", loaded=info.driver_version, installed=d.version, path=d.version_path),
                    observed=f"{info.driver_version} (npu-smi info)", expected=f"{d.version} ({d.version_path})",
                    hint=T("driver.reboot_pending.hint", where=where), fixable=Fixable.MANUAL,
                    evidence=[d.version_path, " ".join(dev.npu_smi.argv)],
                    commands=[cmd("npu-smi", "info", label=T("driver.reboot_pending.confirm")),
                              cmd("reboot", label=T("driver.reboot_pending.reboot", where=where))])]


def driver_libs(ctx: Context) -> Iterable[Finding]:
    d = ctx.facts.driver
    if d is None:
        return []
    if ctx.build:
        return [ctx.skip_build("driver.libs")]
    if not d.found:
        return []
    if d.hal_lib_found:
        return [Finding("driver.libs", OK, T("driver.libs.ok"), evidence=[d.lib_dir])]
    container = ctx.facts.host.in_container
    hint = T("driver.libs.missing.hint_container", lib_dir=shlex.quote(d.lib_dir)) if container \
        else T("driver.libs.missing.hint_host")
    return [Finding("driver.libs", FAIL, T("driver.libs.missing"),
                    observed=f"{d.lib_dir}/driver/libascend_hal.so missing",
                    hint=hint, fixable=Fixable.MANUAL if container else Fixable.VENDOR, evidence=[d.lib_dir])]


def firmware_installed(ctx: Context) -> Iterable[Finding]:
    d, fw = ctx.facts.driver, ctx.facts.firmware
    if fw is None or d is None:
        return []
    if ctx.build:
        return [ctx.skip_build("firmware.installed")]
    if not fw.found and fw.denied is not None:
        return [denied_finding("firmware.installed", fw.denied, ctx, WARN)]
    if fw.found and fw.malformed:  # the file is there, its version is not one
        return [Finding("firmware.installed", WARN, T("firmware.installed.malformed", path=fw.version_path),
                        observed=fw.malformed, hint=T("firmware.installed.missing.hint"), fixable=Fixable.VENDOR,
                        evidence=[fw.version_path])]
    if not fw.found:
        if ctx.facts.host.in_container:
            return [Finding("firmware.installed", INFO, T("firmware.installed.container"),
                            observed=f"{fw.version_path} missing", evidence=[fw.version_path])]
        return [Finding("firmware.installed", WARN, T("firmware.installed.missing"),
                        observed=fw.malformed or f"{fw.version_path} missing",
                        hint=T("firmware.installed.missing.hint"), fixable=Fixable.VENDOR, evidence=[fw.version_path])]
    return [Finding("firmware.installed", OK, T("firmware.installed.ok", version=fw.version),
                    observed=fw.version, evidence=[fw.version_path])]


def firmware_compat(ctx: Context) -> Iterable[Finding]:
    d, fw = _runtime_driver(ctx), ctx.facts.firmware
    if fw is None or d is None or not fw.found or fw.malformed or not fw.version or not d.found or not d.version:
        return []
    # Each side lists what it accepts (inclusive ranges); the driver's word on the firmware decides.
    drv_ok = (not d.compatible_fw) or any(in_version_range(fw.version, lo, hi) for lo, hi in d.compatible_fw)
    fw_ok = (not fw.compatible_drv) or any(in_version_range(d.version, lo, hi) for lo, hi in fw.compatible_drv)
    evidence = [d.version_path, fw.version_path]
    if not drv_ok:
        fw_ranges = ",".join(f"[{lo},{hi}]" for lo, hi in d.compatible_fw)
        return [Finding("firmware.compat", FAIL, T("firmware.compat.driver_rejects", driver=d.version, firmware=fw.version),
                        observed=fw.version, expected=f"firmware in {fw_ranges}",
                        hint=T("firmware.compat.driver_rejects.hint"), fixable=Fixable.VENDOR, evidence=evidence)]
    if not fw_ok:
        drv_ranges = ",".join(f"[{lo},{hi}]" for lo, hi in fw.compatible_drv)
        return [Finding("firmware.compat", WARN, T("firmware.compat.firmware_rejects", driver=d.version, firmware=fw.version),
                        observed=d.version, expected=f"driver in {drv_ranges}",
                        hint=T("firmware.compat.firmware_rejects.hint"), fixable=Fixable.VENDOR, evidence=evidence)]
    return [Finding("firmware.compat", OK, T("firmware.compat.ok", driver=d.version, firmware=fw.version),
                    observed=f"{d.version} / {fw.version}", evidence=evidence)]


def _devices(ctx: Context) -> Optional[DevicesFacts]:
    return ctx.facts.devices


def devices_nodes(ctx: Context) -> Iterable[Finding]:
    dev = _devices(ctx)
    if dev is None:
        return []
    if ctx.build:
        return [ctx.skip_build("devices.nodes")]
    container = ctx.facts.host.in_container
    present = [n for n in dev.davinci if n.exists]
    missing_mgmt = [n.path for n in dev.management if not n.exists]
    if not present:
        hint = T("devices.nodes.none.hint_container", devices=MANAGEMENT_DEVICES) if container \
            else T("devices.nodes.none.hint_host")
        return [Finding("devices.nodes", FAIL, T("devices.nodes.none"), observed="none", expected="/dev/davinci0 ...",
                        hint=hint, fixable=Fixable.MANUAL if container else Fixable.VENDOR)]
    if missing_mgmt:
        return [Finding("devices.nodes", FAIL, T("devices.nodes.management", missing=", ".join(missing_mgmt)),
                        observed=f"{len(present)} davinci nodes, missing {' '.join(missing_mgmt)}",
                        hint=T("devices.nodes.management.hint", flags=" ".join(f"--device {p}" for p in missing_mgmt)),
                        fixable=Fixable.MANUAL)]
    return [Finding("devices.nodes", OK, T("devices.nodes.ok", count=len(present)),
                    observed=" ".join(n.path.rsplit("/", 1)[-1] for n in present))]


def devices_permissions(ctx: Context) -> Iterable[Finding]:
    dev = _devices(ctx)
    if dev is None:
        return []
    if ctx.build:
        return [ctx.skip_build("devices.permissions")]
    present = [n for n in dev.davinci if n.exists]
    blocked = [n for n in present + [n for n in dev.management if n.exists] if not n.accessible]
    if blocked:
        group = blocked[0].group or "HwHiAiUser"
        user = ctx.facts.host.user
        return [Finding("devices.permissions", FAIL, T("devices.permissions.denied", user=user, path=blocked[0].path),
                        observed=f"{blocked[0].path} mode {oct(blocked[0].mode)} group {group}",
                        expected=f"read/write, e.g. membership of {group}",
                        hint=T("devices.permissions.denied.hint", group=shlex.quote(group), user=shlex.quote(user)),
                        fixable=Fixable.MANUAL, evidence=[n.path for n in blocked])]
    if present:
        return [Finding("devices.permissions", OK, T("devices.permissions.ok"))]
    return []


def devices_npu_smi(ctx: Context) -> Iterable[Finding]:
    dev = _devices(ctx)
    if dev is None:
        return []
    if ctx.build:
        return [ctx.skip_build("devices.npu_smi")]
    container = ctx.facts.host.in_container
    cmd = dev.npu_smi
    if not dev.npu_smi_path:
        hint = T("devices.npu_smi.missing.hint_container") if container else T("devices.npu_smi.missing.hint_host")
        return [Finding("devices.npu_smi", WARN, T("devices.npu_smi.missing"), observed="not on PATH", hint=hint,
                        fixable=Fixable.MANUAL if container else Fixable.VENDOR)]
    assert cmd is not None
    evidence = [" ".join(cmd.argv)] + (cmd.stdout + cmd.stderr).strip().splitlines()[:3]
    if cmd.timed_out:
        return [Finding("devices.npu_smi", FAIL, T("devices.npu_smi.timeout", seconds=f"{dev.npu_smi_timeout_s:g}"),
                        observed="timeout", hint=T("devices.npu_smi.timeout.hint"), fixable=Fixable.VENDOR,
                        evidence=evidence[:1])]
    if not cmd.ok or dev.npu_smi_info is None:
        text = (cmd.stdout + "\n" + cmd.stderr).strip()
        code = error_code(text)
        hint = T(NPU_SMI_ERRORS[code]) if code in NPU_SMI_ERRORS else T("devices.npu_smi.failed.hint")
        last = text.splitlines()[-1] if text else (cmd.error or f"exit {cmd.returncode}")
        return [Finding("devices.npu_smi", FAIL, T("devices.npu_smi.failed", last=last),
                        observed=f"exit {cmd.returncode}" + (f", ret {code}" if code is not None else ""),
                        hint=hint, fixable=Fixable.MANUAL, evidence=evidence)]
    info = dev.npu_smi_info
    names = ", ".join(sorted({c.name for c in info.chips}))
    return [Finding("devices.npu_smi", OK,
                    T("devices.npu_smi.ok", count=len(info.chips), names=names, memory=_memory(info.chips),
                      driver=info.driver_version),
                    observed=ctx.hardware or info.layout,
                    evidence=evidence[:1] + [f"NPU {c.npu} chip {c.chip}: {c.name} {c.health}, HBM {c.hbm_used_mb}/{c.hbm_total_mb} MB"
                                             for c in info.chips if c.hbm_total_mb])]


def _npu_smi_info(ctx: Context) -> Optional[NpuSmiInfo]:
    """What npu-smi info reported, when it ran and answered (runtime stage only)."""
    dev = _devices(ctx)
    if ctx.build or dev is None or not dev.npu_smi_path or dev.npu_smi is None or dev.npu_smi.timed_out \
            or not dev.npu_smi.ok:
        return None
    return dev.npu_smi_info


def devices_health(ctx: Context) -> Iterable[Finding]:
    if ctx.build and _devices(ctx) is not None:
        return [ctx.skip_build("devices.health")]
    info = _npu_smi_info(ctx)
    if info is None:
        return []
    bad = [c for c in info.chips if c.health.upper() != "OK"]
    if not bad:
        return [Finding("devices.health", OK, T("devices.health.ok"))]
    # Alarm and Critical stop the chip; a Warning may be transient (npu-smi health levels).
    worst = FAIL if any(c.health.lower() in ("critical", "alarm") for c in bad) else WARN
    return [Finding("devices.health", worst,
                    T("devices.health.bad", count=len(bad),
                      chips=join((T("devices.health.chip", npu=c.npu, chip=c.chip, health=c.health) for c in bad),
                                 "sep.comma")),
                    observed=", ".join(sorted({c.health for c in bad})), expected="OK",
                    hint=T("devices.health.bad.hint"), fixable=Fixable.VENDOR,
                    commands=[cmd("npu-smi", "info", "-t", "health", "-i", str(n)) for n in sorted({c.npu for c in bad})])]


def devices_busy(ctx: Context) -> Iterable[Finding]:
    info = _npu_smi_info(ctx)
    if info is None or not info.processes:
        return []
    busy = ", ".join(map(str, sorted({p.npu for p in info.processes})))
    return [Finding("devices.busy", INFO, T("devices.busy.in_use", npus=busy, count=len(info.processes)),
                    observed=", ".join(f"{p.pid}{'(' + p.name + ')' if p.name else ''}@{p.npu}"
                                       for p in info.processes[:8]))]


def _memory(chips: Sequence[Chip]) -> Union[str, Text]:
    """', 32 GB HBM per chip, 151 GB in use' (310P cards have DDR only: nothing to add)."""
    totals = sorted({c.hbm_total_mb for c in chips if c.hbm_total_mb})
    if not totals:
        return ""
    used = sum(c.hbm_used_mb or 0 for c in chips) / 1024
    return T("devices.npu_smi.hbm", per="/".join(f"{t // 1024} GB" for t in totals), used=f"{used:.0f}")


def _release_for_hardware(ctx: Context) -> dict:
    """The hint and the command of an unsupported release: the plan for the newest release that
    supports this hardware (a line of its own, on the same target), or that none does."""
    from doctor.matrix.query import newest_release
    from doctor.rules.commands import target_args

    other = newest_release(ctx.matrix, hardware=ctx.hardware)
    if other is None:
        return {"hint": T("devices.hardware_support.unsupported.none", hardware=ctx.hardware)}
    args = list(target_args(ctx))
    while "--target" in args:  # this check's own --target is the release that does not fit
        i = args.index("--target")
        del args[i:i + 2]
    return {"hint": T("devices.hardware_support.unsupported.hint", target=other.vllm_ascend),
            "commands": [cmd("ascend-doctor", "fix", "--target", f"vllm-ascend=={other.vllm_ascend}", *args)]}


def hardware_support(ctx: Context) -> Iterable[Finding]:
    if ctx.build or ctx.hardware is None:
        return []
    if ctx.hardware == "910":
        return [Finding("devices.hardware_support", FAIL, T("devices.hardware_support.first_910"),
                        observed="Ascend 910 (A1)", expected="Atlas A2 / A3 / 300I Duo", fixable=Fixable.NONE)]
    r = ctx.release
    if r is None:
        return [Finding("devices.hardware_support", INFO, T("devices.hardware_support.no_release", hardware=ctx.hardware),
                        observed=ctx.hardware)]
    if ctx.hardware not in r.hardware:
        return [Finding("devices.hardware_support", FAIL,
                        T("devices.hardware_support.unsupported", release=r.vllm_ascend, hardware=ctx.hardware),
                        observed=ctx.hardware, expected=", ".join(r.hardware), fixable=Fixable.AUTO,
                        source=r.source_of("hardware"), **_release_for_hardware(ctx))]
    return [Finding("devices.hardware_support", OK,
                    T("devices.hardware_support.ok", release=r.vllm_ascend, hardware=ctx.hardware),
                    observed=ctx.hardware, source=r.source_of("hardware"))]


RULES = (
    rule("driver.installed", driver_installed, f"{INSTALLATION}; {FORMATS}#driver"),
    rule("driver.reboot_pending", driver_reboot_pending, f"{NPU_SMI_FIELDS}; {FORMATS}#npu-smi"),
    rule("driver.libs", driver_libs, f"{FORMATS}#driver"),
    rule("firmware.installed", firmware_installed, f"{FORMATS}#firmware"),
    rule("firmware.compat", firmware_compat, f"{FORMATS}#firmware"),
    rule("devices.nodes", devices_nodes, f"{FORMATS}#devices"),
    rule("devices.permissions", devices_permissions, f"{FORMATS}#devices"),
    rule("devices.npu_smi", devices_npu_smi, f"{FORMATS}#npu-smi"),
    rule("devices.health", devices_health, f"{FORMATS}#npu-smi"),
    rule("devices.busy", devices_busy, f"{FORMATS}#npu-smi"),
    rule("devices.hardware_support", hardware_support, f"{VLLM_ASCEND}/README.md"),
)
