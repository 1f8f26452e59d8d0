"""CANN toolkit, ops/kernels, NNAL, and CANN against the driver and the release."""
from __future__ import annotations

from typing import Iterable, List

from doctor.findings import FAIL, OK, SKIP, WARN, Finding, msg
from doctor.i18n import T
from doctor.matrix.query import INCOMPATIBLE, OK as DOCUMENTED, driver_compat
from doctor.versions import AscendVersion
from doctor.rules.base import Context, Rule

CANN_DOWNLOAD = "https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%20{v}/"


def install_hint(version: str, arch: str) -> tuple:
    en = (f"install CANN {version} (toolkit, ops/kernels and NNAL) from {CANN_DOWNLOAD.format(v=version)}: "
          f"./Ascend-cann-toolkit_{version}_linux-{arch}.run --install && "
          f"./Ascend-cann-<chip>-ops_{version}_linux-{arch}.run --install && "
          f"./Ascend-cann-nnal_{version}_linux-{arch}.run --install")
    zh = (f"安装 CANN {version}（toolkit、ops/kernels 和 NNAL），下载地址 {CANN_DOWNLOAD.format(v=version)}："
          f"./Ascend-cann-toolkit_{version}_linux-{arch}.run --install && "
          f"./Ascend-cann-<chip>-ops_{version}_linux-{arch}.run --install && "
          f"./Ascend-cann-nnal_{version}_linux-{arch}.run --install")
    return en, zh


def _arch(ctx: Context) -> str:
    return (ctx.facts.python.machine if ctx.facts.python and ctx.facts.python.machine else None) \
        or ctx.facts.host.machine or "<arch>"


def cann_installed(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None:
        return []
    want = ctx.release.cann_for(ctx.hardware)[0] if ctx.release else None
    if not c.found:
        if want:
            en, zh = install_hint(want, _arch(ctx))
        else:
            en = ("install the CANN your vllm-ascend release needs (ascend-doctor matrix show lists them): toolkit, "
                  f"ops/kernels and NNAL from {CANN_DOWNLOAD.format(v='<version>')}, then source its set_env.sh")
            zh = ("安装 vllm-ascend 版本所需的 CANN（可用 ascend-doctor matrix show 查看）：toolkit、ops/kernels 和 NNAL，"
                  f"下载地址 {CANN_DOWNLOAD.format(v='<版本>')}，然后 source 其 set_env.sh")
        return [Finding("cann.installed", FAIL, msg("CANN toolkit not found", "未找到 CANN toolkit"),
                        observed="not installed", expected=f"CANN {want}" if ctx.release else "CANN installed",
                        hint=msg(en, zh), fixable="vendor", evidence=[f"searched {', '.join(c.searched)}"],
                        source=ctx.release.source_of("cann") if ctx.release else None)]
    out: List[Finding] = []
    missing_libs = [lib for lib, ok in sorted(c.libs.items()) if not ok]
    evidence = [p for p in (c.home, c.install_info_path) if p]
    if not c.version:
        out.append(Finding("cann.installed", FAIL,
                           msg(f"CANN found at {c.home} but its version cannot be read",
                               f"在 {c.home} 找到 CANN，但无法读取版本"),
                           observed=c.malformed, hint=msg("reinstall the CANN toolkit", "请重新安装 CANN toolkit"),
                           fixable="vendor", evidence=evidence))
    elif missing_libs:
        out.append(Finding("cann.installed", FAIL,
                           msg(f"CANN {c.version} at {c.home} is incomplete: {', '.join(missing_libs)} missing",
                               f"{c.home} 下的 CANN {c.version} 不完整：缺少 {', '.join(missing_libs)}"),
                           observed=f"missing {', '.join(missing_libs)}",
                           hint=msg("reinstall the toolkit package (Ascend-cann-toolkit_<version>_linux-<arch>.run --install)",
                                    "重新安装 toolkit 包（Ascend-cann-toolkit_<版本>_linux-<arch>.run --install）"),
                           fixable="vendor", evidence=evidence))
    else:
        note = f" ({c.malformed})" if c.malformed else ""
        out.append(Finding("cann.installed", WARN if c.malformed else OK,
                           msg(f"CANN {c.version} ({c.layout} layout, {c.home}){note}",
                               f"CANN {c.version}（{c.layout} 布局，{c.home}）{note}"),
                           observed=c.version, evidence=evidence + [f"also installed: {', '.join(c.other_versions)}"]
                           if len(c.other_versions) > 1 else evidence))
    if c.version:
        out.extend(_kernels(c))
        out.extend(_nnal(c))
    return out


def _kernels(c) -> List[Finding]:
    if not c.ops_found:
        return [Finding("cann.kernels", FAIL,
                        msg(f"the CANN ops/kernels package for {c.version} is not installed",
                            f"未安装 CANN {c.version} 的 ops/kernels 包"),
                        observed="not installed", expected=f"{c.version}",
                        hint=msg(f"install it: ./Ascend-cann-<chip>-ops_{c.version}_linux-<arch>.run --install "
                                 f"(before 8.5: Ascend-cann-kernels-<chip>_{c.version}_linux-<arch>.run)",
                                 f"安装：./Ascend-cann-<chip>-ops_{c.version}_linux-<arch>.run --install"
                                 f"（8.5 之前为 Ascend-cann-kernels-<chip>_{c.version}_linux-<arch>.run）"),
                        fixable="vendor")]
    if c.ops_version and AscendVersion(c.ops_version) != AscendVersion(c.version):
        return [Finding("cann.kernels", FAIL,
                        msg(f"ops/kernels {c.ops_version} do not match toolkit {c.version}",
                            f"ops/kernels {c.ops_version} 与 toolkit {c.version} 不一致"),
                        observed=c.ops_version, expected=c.version,
                        hint=msg(f"install the ops/kernels package of CANN {c.version}", f"安装 CANN {c.version} 的 ops/kernels 包"),
                        fixable="vendor", evidence=[c.ops_path or ""])]
    return [Finding("cann.kernels", OK, msg(f"ops/kernels {c.ops_version or c.version} ({c.ops_package})",
                                            f"ops/kernels {c.ops_version or c.version}（{c.ops_package}）"),
                    observed=c.ops_version, evidence=[c.ops_path or ""])]


def _nnal(c) -> List[Finding]:
    n = c.nnal
    if not n.found:
        return [Finding("cann.nnal", FAIL,
                        msg("NNAL (ATB) is not installed: torch_npu / vllm-ascend fail with libatb.so not found",
                            "未安装 NNAL（ATB）：torch_npu / vllm-ascend 会报 libatb.so 找不到"),
                        observed=f"{n.path} missing", expected=f"NNAL {c.version}",
                        hint=msg(f"./Ascend-cann-nnal_{c.version}_linux-<arch>.run --install && source {n.path}/set_env.sh",
                                 f"./Ascend-cann-nnal_{c.version}_linux-<arch>.run --install && source {n.path}/set_env.sh"),
                        fixable="vendor")]
    if n.version and AscendVersion(n.version).release_line() != AscendVersion(c.version).release_line():
        return [Finding("cann.nnal", FAIL,
                        msg(f"NNAL {n.version} does not match CANN {c.version}", f"NNAL {n.version} 与 CANN {c.version} 不一致"),
                        observed=n.version, expected=c.version,
                        hint=msg(f"install NNAL {c.version} (Ascend-cann-nnal_{c.version}_linux-<arch>.run)",
                                 f"安装 NNAL {c.version}（Ascend-cann-nnal_{c.version}_linux-<arch>.run）"),
                        fixable="vendor", evidence=[n.path])]
    return [Finding("cann.nnal", OK, msg(f"NNAL {n.version or '(version unknown)'}", f"NNAL {n.version or '（版本未知）'}"),
                    observed=n.version, evidence=[n.path])]


def cann_driver(ctx: Context) -> Iterable[Finding]:
    c, d = ctx.facts.cann, ctx.facts.driver
    if c is None or not c.version:
        return []
    if ctx.build:
        return [ctx.skip_build("cann.driver_compat")]
    if d is None or not d.version:
        return [Finding("cann.driver_compat", SKIP, msg("no driver version to judge CANN against",
                                                        "没有驱动版本，无法判断 CANN 与驱动的配套"))]
    got = driver_compat(ctx.matrix, c.version, d.version)
    status, row = got.status, got.row
    source = got.source
    supported = ", ".join(got.documented) if got.documented else None
    if status == DOCUMENTED:
        return [Finding("cann.driver_compat", OK, msg(f"CANN {c.version} supports driver {d.version}",
                                                      f"CANN {c.version} 支持驱动 {d.version}"),
                        observed=d.version, expected=supported, source=source)]
    if status in INCOMPATIBLE:
        return [Finding("cann.driver_compat", FAIL,
                        msg(f"CANN {c.version} does not support driver {d.version}",
                            f"CANN {c.version} 不支持驱动 {d.version}"),
                        observed=d.version, expected=supported,
                        hint=msg(f"upgrade the NPU driver and firmware to one of: {supported} (Ascend HDK), or install a CANN that supports {d.version}",
                                 f"把 NPU 驱动和固件升级到以下版本之一：{supported}（昇腾 HDK），或安装支持 {d.version} 的 CANN"),
                        fixable="vendor", source=source)]
    if got.documented and all(AscendVersion(d.version) > AscendVersion(p) for p in got.documented):
        return [Finding("cann.driver_compat", WARN,
                        msg(f"driver {d.version} is newer than the drivers CANN {c.version} lists",
                            f"驱动 {d.version} 比 CANN {c.version} 列出的驱动更新"),
                        observed=d.version, expected=supported,
                        hint=msg("newer drivers usually run older CANN; if aclInit fails, use the HDK released with this CANN",
                                 "新驱动通常兼容旧 CANN；若 aclInit 失败，请使用与该 CANN 同批发布的 HDK"),
                        fixable="vendor", source=source)]
    near = got.nearest
    if near is not None:
        return [Finding("cann.driver_compat", WARN,
                        T("matrix.driver_undocumented", cann=c.version, driver=d.version,
                          near_cann=near.cann, near_driver=near.driver),
                        observed=d.version, expected=f"CANN {near.cann} + HDK {near.driver}",
                        hint=T("matrix.driver_undocumented_hint", cann=c.version, driver=d.version,
                               near_cann=near.cann, near_driver=near.driver),
                        source=near.source)]
    return [Finding("cann.driver_compat", WARN,
                    msg(f"no confirmed driver pairing for CANN {c.version} in the matrix",
                        f"矩阵中没有 CANN {c.version} 的已确认驱动配套"),
                    observed=d.version, expected=supported, source=source)]


def cann_release(ctx: Context) -> Iterable[Finding]:
    c, r = ctx.facts.cann, ctx.release
    if c is None or not c.version or r is None:
        return []
    wanted = ctx.release.cann_for(ctx.hardware)
    have = AscendVersion(c.version)
    source = r.source_of("cann")
    if any(AscendVersion(w) == have for w in wanted):
        return [Finding("cann.release_match", OK,
                        msg(f"CANN {c.version} is what vllm-ascend {r.vllm_ascend} is released with",
                            f"CANN {c.version} 与 vllm-ascend {r.vllm_ascend} 配套"),
                        observed=c.version, expected=", ".join(wanted), source=source)]
    lowest = min((AscendVersion(w) for w in wanted))
    en, zh = install_hint(wanted[0], _arch(ctx))
    if have < lowest:
        return [Finding("cann.release_match", FAIL,
                        msg(f"CANN {c.version} is too old for vllm-ascend {r.vllm_ascend}",
                            f"CANN {c.version} 对 vllm-ascend {r.vllm_ascend} 来说太旧"),
                        observed=c.version, expected=", ".join(wanted),
                        hint=msg(en + "; or keep CANN and pick an older release: ascend-doctor fix --prefer keep-cann",
                                 zh + "；或保留 CANN 并选择更早的版本：ascend-doctor fix --prefer keep-cann"),
                        fixable="vendor", source=source)]
    return [Finding("cann.release_match", WARN,
                    msg(f"CANN {c.version} is not the CANN vllm-ascend {r.vllm_ascend} was released with",
                        f"CANN {c.version} 不是 vllm-ascend {r.vllm_ascend} 的配套 CANN"),
                    observed=c.version, expected=", ".join(wanted),
                    hint=msg(f"untested combination; the supported one is CANN {wanted[0]}",
                             f"未经验证的组合；配套的是 CANN {wanted[0]}"),
                    fixable="vendor", source=source)]


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:cann_installed", "cann", cann_installed),
    Rule("group:cann_driver", "cann", cann_driver),
    Rule("group:cann_release", "cann", cann_release),
)
