"""The target interpreter: found, version range, architecture, glibc."""
from __future__ import annotations

from typing import Iterable, List

from doctor.findings import FAIL, INFO, OK, WARN, Finding, msg
from doctor.i18n import T
from doctor.versions import pep440, satisfies
from doctor.rules.base import Context, Rule

ARCHES = ("x86_64", "aarch64")


def python_checks(ctx: Context) -> Iterable[Finding]:
    p = ctx.facts.python
    if p is None:
        return []
    if p.source == "site-packages":
        return [Finding("python.interpreter", INFO,
                        msg("no interpreter given (--site-packages): Python version, arch and glibc not judged",
                            "未指定解释器（--site-packages）：不检查 Python 版本、架构和 glibc"),
                        observed=", ".join(p.sys_path))]
    if not p.found and p.source == "image":  # nothing in an image runs: there was no file to describe
        return [Finding("python.interpreter", FAIL, T("image.python.missing"), observed=p.error,
                        hint=T("image.python.missing_hint"), fixable="manual")]
    if not p.found:
        return [Finding("python.interpreter", FAIL,
                        msg("cannot run the target Python interpreter", "无法运行目标 Python 解释器"),
                        observed=p.error,
                        hint=msg("point the doctor at the serving environment: ascend-doctor check --python /path/to/venv/bin/python",
                                 "指定推理环境的解释器：ascend-doctor check --python /path/to/venv/bin/python"),
                        fixable="manual")]
    out: List[Finding] = [_version(ctx), _arch(ctx)]
    out.append(_glibc(ctx))
    return [f for f in out if f is not None]


def _version(ctx: Context) -> Finding:
    p, r = ctx.facts.python, ctx.release
    if r is None:
        return Finding("python.version", INFO, msg(f"Python {p.version} ({p.executable})", f"Python {p.version}（{p.executable}）"),
                       observed=p.version)
    if r.requires_python and satisfies(p.version, r.requires_python) is False:
        return Finding("python.version", FAIL,
                       msg(f"Python {p.version} is outside what vllm-ascend {r.vllm_ascend} installs on ({r.requires_python})",
                           f"Python {p.version} 不在 vllm-ascend {r.vllm_ascend} 支持的范围内（{r.requires_python}）"),
                       observed=p.version, expected=r.python,
                       hint=msg(f"create an environment with a supported Python: python3.11 -m venv /opt/vllm-env (range {r.python})",
                                f"用受支持的 Python 新建环境：python3.11 -m venv /opt/vllm-env（范围 {r.python}）"),
                       fixable="manual", source=r.source_of("requires_python"))
    if satisfies(p.version, r.python) is False:
        return Finding("python.version", WARN,
                       msg(f"Python {p.version} is not in the supported range of vllm-ascend {r.vllm_ascend} ({r.python})",
                           f"Python {p.version} 不在 vllm-ascend {r.vllm_ascend} 的支持范围内（{r.python}）"),
                       observed=p.version, expected=r.python,
                       hint=msg("no prebuilt wheels for this Python: use a supported one", "该 Python 没有预编译 wheel：请使用受支持的版本"),
                       fixable="manual", source=r.source_of("python"))
    return Finding("python.version", OK, msg(f"Python {p.version}", f"Python {p.version}"),
                   observed=p.version, expected=r.python, source=r.source_of("python"))


def _arch(ctx: Context) -> Finding:
    machine = ctx.facts.python.machine
    if machine in ARCHES:
        return Finding("python.arch", OK, msg(f"architecture {machine}", f"架构 {machine}"), observed=machine)
    return Finding("python.arch", FAIL,
                   msg(f"architecture {machine} has no torch_npu / vllm-ascend wheels",
                       f"架构 {machine} 没有 torch_npu / vllm-ascend 的 wheel"),
                   observed=machine, expected=" or ".join(ARCHES), fixable="none")


def _glibc(ctx: Context) -> Finding:
    p, r = ctx.facts.python, ctx.release
    if not p.glibc:
        return Finding("python.glibc", INFO, msg("glibc version unknown (musl or static interpreter)",
                                                 "glibc 版本未知（musl 或静态解释器）"))
    if r is not None and pep440(p.glibc) is not None and pep440(r.glibc_min) is not None \
            and pep440(p.glibc) < pep440(r.glibc_min):
        return Finding("python.glibc", WARN,
                       msg(f"glibc {p.glibc} is older than the {r.glibc_min} the vllm-ascend {r.vllm_ascend} wheel needs",
                           f"glibc {p.glibc} 低于 vllm-ascend {r.vllm_ascend} wheel 要求的 {r.glibc_min}"),
                       observed=p.glibc, expected=f">={r.glibc_min}",
                       hint=msg("reinstalling from the index will fail on this OS; build vllm-ascend from source or use the official image",
                                "在该系统上从索引重装会失败；请从源码构建 vllm-ascend 或使用官方镜像"),
                       fixable="manual", source=r.source_of("glibc_min"))
    return Finding("python.glibc", OK, msg(f"glibc {p.glibc}", f"glibc {p.glibc}"), observed=p.glibc,
                   expected=f">={r.glibc_min}" if r else None)


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:python_checks", "python", python_checks),
)
