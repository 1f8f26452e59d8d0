"""CANN toolkit, ops/kernels, NNAL, and CANN against the driver and the release."""
from __future__ import annotations

import shlex
from typing import Iterable, Optional

from doctor.facts import CannFacts
from doctor.findings import Fixable, FAIL, OK, SKIP, WARN, Finding, cmd
from doctor.i18n import T, Text
from doctor.matrix.query import INCOMPATIBLE, OK as DOCUMENTED, driver_compat
from doctor.versions import AscendVersion
from doctor.rules import commands as C
from doctor.rules.base import Context, rule
from doctor.rules.sources import HOST_FORMATS, INSTALLATION, VERSIONING, VLLM_ASCEND_ISSUES

CANN_DOWNLOAD = "https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%20{v}/"


def install_hint(version: str, arch: str) -> Text:
    """Install the toolkit, ops/kernels and NNAL of CANN ``version`` (one line of three commands)."""
    return T("cann.install_hint", version=version, arch=arch, url=CANN_DOWNLOAD.format(v=version))


def _arch(ctx: Context) -> str:
    return (ctx.facts.python.machine if ctx.facts.python and ctx.facts.python.machine else None) \
        or ctx.facts.host.machine or "<arch>"


def _cann_found(ctx: Context) -> Optional[CannFacts]:
    """The CANN facts when a toolkit with a readable version is installed, else None."""
    c = ctx.facts.cann
    return c if c is not None and c.found and c.version else None


def cann_installed(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None:
        return []
    want = ctx.release.cann_for(ctx.hardware)[0] if ctx.release else None
    if c.denied is not None and not c.version:
        return []  # there, but this user may not read it: cann.permission says so
    if not c.found:
        hint = install_hint(want, _arch(ctx)) if want else \
            T("cann.install_hint_any", base=CANN_DOWNLOAD.split("{v}")[0])
        return [Finding("cann.installed", FAIL, T("cann.installed.missing"),
                        observed="not installed", expected=f"CANN {want}" if ctx.release else "CANN installed",
                        hint=hint, fixable=Fixable.VENDOR, evidence=[f"searched {', '.join(c.searched)}"],
                        commands=[] if want else [cmd("ascend-doctor", "matrix", "show", label=T("cann.matrix_show"))],
                        source=ctx.release.source_of("cann") if ctx.release else None)]
    missing_libs = [lib for lib, ok in sorted(c.libs.items()) if not ok]
    evidence = [p for p in (c.home, c.install_info_path) if p]
    if not c.version:
        title = T("cann.installed.malformed", path=c.install_info_path) if c.install_info_path \
            else T("cann.installed.no_version", home=c.home)
        return [Finding("cann.installed", FAIL, title,
                        observed=c.malformed, hint=T("cann.installed.no_version.hint"),
                        fixable=Fixable.VENDOR, evidence=evidence)]
    if missing_libs:
        libs = ", ".join(missing_libs)
        return [Finding("cann.installed", FAIL, T("cann.installed.incomplete", version=c.version, home=c.home, libs=libs),
                        observed=f"missing {libs}", hint=T("cann.installed.incomplete.hint"),
                        fixable=Fixable.VENDOR, evidence=evidence)]
    note = f" ({c.malformed})" if c.malformed else ""
    return [Finding("cann.installed", WARN if c.malformed else OK,
                    T("cann.installed.ok", version=c.version, layout=c.layout, home=c.home, note=note),
                    observed=c.version, evidence=evidence + [f"also installed: {', '.join(c.other_versions)}"]
                    if len(c.other_versions) > 1 else evidence)]


def cann_kernels(ctx: Context) -> Iterable[Finding]:
    c = _cann_found(ctx)
    if c is None or c.version is None:
        return []
    if not c.ops_found:
        return [Finding("cann.kernels", FAIL, T("cann.kernels.missing", version=c.version),
                        observed="not installed", expected=f"{c.version}",
                        hint=T("cann.kernels.missing.hint", version=c.version, arch=_arch(ctx)), fixable=Fixable.VENDOR)]
    if c.ops_malformed:
        return [Finding("cann.kernels", FAIL, T("cann.kernels.malformed", path=c.ops_path),
                        observed=c.ops_malformed, expected=c.version,
                        hint=T("cann.kernels.mismatch.hint", version=c.version), fixable=Fixable.VENDOR,
                        evidence=[c.ops_path or ""])]
    if c.ops_version and AscendVersion(c.ops_version) != AscendVersion(c.version):
        return [Finding("cann.kernels", FAIL, T("cann.kernels.mismatch", ops=c.ops_version, version=c.version),
                        observed=c.ops_version, expected=c.version,
                        hint=T("cann.kernels.mismatch.hint", version=c.version),
                        fixable=Fixable.VENDOR, evidence=[c.ops_path or ""])]
    return [Finding("cann.kernels", OK, T("cann.kernels.ok", version=c.ops_version or c.version, package=c.ops_package),
                    observed=c.ops_version, evidence=[c.ops_path or ""])]


def cann_nnal(ctx: Context) -> Iterable[Finding]:
    c = _cann_found(ctx)
    if c is None or c.version is None:
        return []
    n = c.nnal
    if not n.found:
        return [Finding("cann.nnal", FAIL, T("cann.nnal.missing"),
                        observed=f"{n.path} missing", expected=f"NNAL {c.version}",
                        hint=T("cann.nnal.missing.hint", version=c.version, path=shlex.quote(n.path), arch=_arch(ctx)), fixable=Fixable.VENDOR)]
    if n.malformed:
        return [Finding("cann.nnal", FAIL, T("cann.nnal.malformed", path=n.path),
                        observed=n.malformed, expected=c.version,
                        hint=T("cann.nnal.malformed.hint", version=c.version), fixable=Fixable.VENDOR, evidence=[n.path])]
    if n.version and AscendVersion(n.version).release_line() != AscendVersion(c.version).release_line():
        return [Finding("cann.nnal", FAIL, T("cann.nnal.mismatch", nnal=n.version, version=c.version),
                        observed=n.version, expected=c.version,
                        hint=T("cann.nnal.mismatch.hint", version=c.version), fixable=Fixable.VENDOR, evidence=[n.path])]
    return [Finding("cann.nnal", OK, T("cann.nnal.ok", version=n.version) if n.version else T("cann.nnal.ok_unknown"),
                    observed=n.version, evidence=[n.path])]


def cann_driver(ctx: Context) -> Iterable[Finding]:
    c, d = ctx.facts.cann, ctx.facts.driver
    if c is None or not c.version:
        return []
    if ctx.build:
        return [ctx.skip_build("cann.driver_compat")]
    if d is None or not d.version:
        return [Finding("cann.driver_compat", SKIP, T("cann.driver_compat.no_driver"))]
    got = driver_compat(ctx.matrix, c.version, d.version)
    source = got.source
    supported = ", ".join(got.documented) if got.documented else None
    if got.status == DOCUMENTED:
        return [Finding("cann.driver_compat", OK, T("cann.driver_compat.ok", cann=c.version, driver=d.version),
                        observed=d.version, expected=supported, source=source)]
    if got.status in INCOMPATIBLE:
        return [Finding("cann.driver_compat", FAIL, T("cann.driver_compat.unsupported", cann=c.version, driver=d.version),
                        observed=d.version, expected=supported,
                        hint=T("cann.driver_compat.unsupported.hint", supported=supported, driver=d.version),
                        fixable=Fixable.VENDOR, source=source)]
    if got.documented and all(AscendVersion(d.version) > AscendVersion(p) for p in got.documented):
        return [Finding("cann.driver_compat", WARN, T("cann.driver_compat.untested", cann=c.version, driver=d.version),
                        observed=d.version, expected=supported, hint=T("cann.driver_compat.untested.hint"),
                        fixable=Fixable.VENDOR, source=source)]
    near = got.nearest
    if near is not None:
        return [Finding("cann.driver_compat", WARN,
                        T("matrix.driver_undocumented", cann=c.version, driver=d.version,
                          near_cann=near.cann, near_driver=near.driver),
                        observed=d.version, expected=f"CANN {near.cann} + HDK {near.driver}",
                        hint=T("matrix.driver_undocumented_hint", cann=c.version, driver=d.version,
                               near_cann=near.cann, near_driver=near.driver),
                        source=near.source)]
    return [Finding("cann.driver_compat", WARN, T("cann.driver_compat.unknown", cann=c.version),
                    observed=d.version, expected=supported, source=source)]


def cann_release(ctx: Context) -> Iterable[Finding]:
    c, r = ctx.facts.cann, ctx.release
    if c is None or not c.version or r is None:
        return []
    wanted = r.cann_for(ctx.hardware)
    have = AscendVersion(c.version)
    source = r.source_of("cann")
    if any(AscendVersion(w) == have for w in wanted):
        return [Finding("cann.release_match", OK, T("cann.release_match.ok", cann=c.version, release=r.vllm_ascend),
                        observed=c.version, expected=", ".join(wanted), source=source)]
    lowest = min((AscendVersion(w) for w in wanted))
    if have < lowest:
        return [Finding("cann.release_match", FAIL, T("cann.release_match.too_old", cann=c.version, release=r.vllm_ascend),
                        observed=c.version, expected=", ".join(wanted),
                        hint=install_hint(wanted[0], _arch(ctx)), fixable=Fixable.VENDOR, source=source,
                        commands=[C.doctor(ctx, "fix", "--prefer", "keep-cann", label=T("cann.release_match.keep_cann"))])]
    return [Finding("cann.release_match", WARN, T("cann.release_match.other", cann=c.version, release=r.vllm_ascend),
                    observed=c.version, expected=", ".join(wanted),
                    hint=T("cann.release_match.other.hint", supported=wanted[0]), fixable=Fixable.VENDOR, source=source)]


RULES = (
    rule("cann.installed", cann_installed, f"{HOST_FORMATS}#cann-toolkit; {INSTALLATION}"),
    rule("cann.kernels", cann_kernels, f"{INSTALLATION}; {HOST_FORMATS}#cann-toolkit"),
    rule("cann.nnal", cann_nnal, f"{INSTALLATION}; {VLLM_ASCEND_ISSUES}/152"),
    rule("cann.driver_compat", cann_driver, "matrices/cann-driver.toml"),
    rule("cann.release_match", cann_release, VERSIONING),
)
