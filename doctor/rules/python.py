"""The target interpreter: found, version range, architecture, glibc."""
from __future__ import annotations

from typing import Iterable, Optional

from doctor.facts import PythonFacts
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Finding
from doctor.i18n import T
from doctor.versions import pep440, satisfies
from doctor.rules.base import Context, rule
from doctor.rules.sources import TORCH_NPU_FILES, VERSIONING, VLLM_ASCEND_FILES

ARCHES = ("x86_64", "aarch64")


def _running(ctx: Context) -> Optional[PythonFacts]:
    """The interpreter's facts when it was given and runs (else python.interpreter says why)."""
    p = ctx.facts.python
    return p if p is not None and p.source != "site-packages" and p.found else None


def python_interpreter(ctx: Context) -> Iterable[Finding]:
    p = ctx.facts.python
    if p is None:
        return []
    if p.source == "site-packages":
        return [Finding("python.interpreter", INFO, T("python.interpreter.site_packages"), observed=", ".join(p.sys_path))]
    if not p.found and p.source == "image":  # nothing in an image runs: there was no file to describe
        return [Finding("python.interpreter", FAIL, T("image.python.missing"), observed=p.error,
                        hint=T("image.python.missing_hint"), fixable=Fixable.MANUAL)]
    if not p.found:
        return [Finding("python.interpreter", FAIL, T("python.interpreter.not_running"), observed=p.error,
                        hint=T("python.interpreter.not_running.hint"), fixable=Fixable.MANUAL)]
    return []


def python_version(ctx: Context) -> Iterable[Finding]:
    p, r = _running(ctx), ctx.release
    if p is None:
        return []
    if r is None:
        return [Finding("python.version", INFO, T("python.version.no_release", version=p.version, executable=p.executable),
                        observed=p.version)]
    if r.requires_python and satisfies(p.version, r.requires_python) is False:
        return [Finding("python.version", FAIL,
                        T("python.version.not_installable", version=p.version, release=r.vllm_ascend,
                          requires=r.requires_python),
                        observed=p.version, expected=r.python, hint=T("python.version.not_installable.hint", range=r.python),
                        fixable=Fixable.MANUAL, source=r.source_of("requires_python"))]
    if satisfies(p.version, r.python) is False:
        return [Finding("python.version", WARN,
                        T("python.version.unsupported", version=p.version, release=r.vllm_ascend, range=r.python),
                        observed=p.version, expected=r.python, hint=T("python.version.unsupported.hint"),
                        fixable=Fixable.MANUAL, source=r.source_of("python"))]
    return [Finding("python.version", OK, T("python.version.ok", version=p.version),
                    observed=p.version, expected=r.python, source=r.source_of("python"))]


def python_arch(ctx: Context) -> Iterable[Finding]:
    p = _running(ctx)
    if p is None:
        return []
    if p.machine in ARCHES:
        return [Finding("python.arch", OK, T("python.arch.ok", machine=p.machine), observed=p.machine)]
    return [Finding("python.arch", FAIL, T("python.arch.unsupported", machine=p.machine),
                    observed=p.machine, expected=" or ".join(ARCHES), fixable=Fixable.NONE)]


def python_glibc(ctx: Context) -> Iterable[Finding]:
    p, r = _running(ctx), ctx.release
    if p is None:
        return []
    if not p.glibc:
        return [Finding("python.glibc", INFO, T("python.glibc.unknown"))]
    have, needs = pep440(p.glibc), pep440(r.glibc_min) if r is not None else None
    if r is not None and have is not None and needs is not None and have < needs:
        return [Finding("python.glibc", WARN,
                        T("python.glibc.too_old", glibc=p.glibc, needs=r.glibc_min, release=r.vllm_ascend),
                        observed=p.glibc, expected=f">={r.glibc_min}", hint=T("python.glibc.too_old.hint"),
                        fixable=Fixable.MANUAL, source=r.source_of("glibc_min"))]
    return [Finding("python.glibc", OK, T("python.glibc.ok", glibc=p.glibc), observed=p.glibc,
                    expected=f">={r.glibc_min}" if r else None)]


RULES = (
    rule("python.interpreter", python_interpreter, "docs/check.md"),
    rule("python.version", python_version, VERSIONING),
    rule("python.arch", python_arch, TORCH_NPU_FILES),
    rule("python.glibc", python_glibc, VLLM_ASCEND_FILES),
)
