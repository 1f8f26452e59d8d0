"""The process environment: CANN/NNAL variables, vLLM overrides, shadowing, pip-check."""
from __future__ import annotations

import fnmatch
import shlex
from typing import Iterable, List

from doctor.facts import PackagesFacts
from doctor.rules import pipcheck
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Finding, cmd
from doctor.i18n import T, Text, join
from doctor.versions import public, same_release
from doctor.rules import commands as C
from doctor.rules.base import Context, rule
from doctor.rules.sources import HOST_FORMATS as FORMATS
from doctor.rules.sources import VLLM_ASCEND, VLLM_ASCEND_ISSUES

STACK = {"torch", "torch-npu", "torchvision", "torchaudio", "vllm", "vllm-ascend", "triton-ascend",
         "transformers", "numpy", "mooncake-transfer-engine-npu"}
# vllm from the index is a CUDA wheel: its torch pin (always newer than vllm-ascend's) and its
# CUDA-only packages cannot be satisfied on an Ascend host. vllm-ascend's maintainers document
# this as expected (vllm-ascend #5710, #3266): it is the residual of a correct install.
VLLM_RESIDUAL = ("torch", "torchvision", "torchaudio", "xformers", "flashinfer-*", "nvidia-*", "triton",
                 "cupy-*", "tilelang", "apache-tvm-ffi", "quack-kernels", "tokenspeed-mla", "humming-kernels",
                 "fastsafetensors", "intel-extension-for-pytorch")
RESIDUAL_SOURCE = f"{VLLM_ASCEND_ISSUES}/5710"


def _ld_path(ctx: Context) -> List[str]:
    return [p.rstrip("/") for p in ctx.env.get("LD_LIBRARY_PATH", "").split(":") if p]


def cann_env(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None or not c.found:
        return []
    env = ctx.env
    ld = _ld_path(ctx)
    problems: List[Text] = []
    homes = [h.rstrip("/") for h in (c.home, c.real_home) if h]
    base = c.home.rsplit("/", 2)[0] if c.home else "/usr/local/Ascend"
    if not any(any(p.startswith(h) for h in homes) or p.startswith(base + "/ascend-toolkit") or p.startswith(base + "/cann")
               for p in ld):
        problems.append(T("env.cann_env.no_toolkit_lib"))
    if not env.get("ASCEND_OPP_PATH"):
        problems.append(T("env.cann_env.no_opp_path"))
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        if env.get(var) and c.how != var and env[var].rstrip("/") not in homes:
            problems.append(T("env.cann_env.stale_home", var=var, value=env[var], home=c.home))
    d = ctx.facts.driver
    if not ctx.build and d is not None and d.found and not any(p.startswith(d.lib_dir) for p in ld):
        problems.append(T("env.cann_env.no_driver_lib", lib_dir=d.lib_dir))
    set_env = c.set_env or "/usr/local/Ascend/ascend-toolkit/set_env.sh"
    if problems:
        found = join(problems, "sep.semi")
        return [Finding("env.cann_env", WARN if ctx.build else FAIL, T("env.cann_env.not_set", problems=found),
                        observed=found, expected=f"variables exported by {set_env}",
                        hint=T("env.cann_env.not_set.hint"), commands=[C.source(set_env)], fixable=Fixable.MANUAL,
                        evidence=[f"LD_LIBRARY_PATH={env.get('LD_LIBRARY_PATH', '')}"])]
    return [Finding("env.cann_env", OK, T("env.cann_env.ok"), observed=env.get("ASCEND_OPP_PATH"))]


def nnal_env(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None or not c.nnal.found:
        return []
    atb = ctx.env.get("ATB_HOME_PATH")
    set_env = c.nnal.set_env or f"{c.nnal.path}/set_env.sh"
    if not atb:
        return [Finding("env.nnal_env", WARN if ctx.build else FAIL, T("env.nnal_env.unset"),
                        observed="ATB_HOME_PATH unset", commands=[C.source(set_env)], fixable=Fixable.MANUAL)]
    abi = [p for p in _ld_path(ctx) if "/nnal/atb/" in p and "cxx_abi_" in p]
    wanted = atb.rstrip("/").split("/")[-1]
    if abi and not any(wanted in p for p in abi):
        return [Finding("env.nnal_env", WARN, T("env.nnal_env.abi", wanted=wanted), observed=abi[0], expected=atb,
                        hint=T("env.nnal_env.abi.hint"), commands=[C.source(set_env)], fixable=Fixable.MANUAL)]
    return [Finding("env.nnal_env", OK, T("env.nnal_env.ok", atb=atb), observed=atb)]


def vllm_version_override(ctx: Context) -> Iterable[Finding]:
    override = ctx.env.get("VLLM_VERSION")
    vllm = ctx.facts.version_of("vllm")
    if not (override and vllm):
        return []
    if same_release(vllm, override):
        return [Finding("env.vllm_version_override", OK, T("env.vllm_version_override.ok", override=override),
                        observed=override)]
    return [Finding("env.vllm_version_override", FAIL,
                    T("env.vllm_version_override.stale", override=override, vllm=vllm),
                    observed=override, expected=public(vllm),
                    fixable=Fixable.MANUAL,
                    commands=[cmd("unset", "VLLM_VERSION"),
                              cmd("export", f"VLLM_VERSION={public(vllm)}", label=T("env.vllm_version_override.keep"))])]


def vllm_target_device(ctx: Context) -> Iterable[Finding]:
    target = ctx.env.get("VLLM_TARGET_DEVICE")
    if not target or target in ("empty", "npu"):
        return []
    return [Finding("env.vllm_target_device", WARN, T("env.vllm_target_device.other", target=target),
                    observed=target, expected="empty", hint=T("env.vllm_target_device.other.hint"), fixable=Fixable.MANUAL,
                    commands=[cmd("export", "VLLM_TARGET_DEVICE=empty")])]


def cwd_shadow(ctx: Context) -> Iterable[Finding]:
    w = ctx.facts.workdir
    if w is None:
        return []
    out = []
    for s in w.shadows:
        if s.same_as_installed:
            continue
        # a folder without __init__.py is a namespace package: imports fail instead of loading the wrong code
        trap = not s.is_package
        out.append(Finding("env.cwd_shadow", FAIL if trap else WARN,
                           T("env.cwd_shadow.trap" if trap else "env.cwd_shadow.package", path=s.path, name=s.name, cwd=w.cwd),
                           observed=s.path, expected=f"the installed {s.name}",
                           hint=T("env.cwd_shadow.hint", path=shlex.quote(s.path)), fixable=Fixable.MANUAL))
    return out


def _residual(ctx: Context, c: pipcheck.Conflict) -> bool:
    if c.installed is None and c.requirer not in STACK and _cuda_only(ctx, c.required):
        return True  # xgrammar -> triton: what fix leaves out on purpose (matrix package set cuda_only)
    if c.requirer != "vllm" or not any(fnmatch.fnmatch(c.required, p) for p in VLLM_RESIDUAL):
        return False
    torch = ctx.facts.version_of("torch")
    return bool(ctx.release and torch and same_release(torch, ctx.release.torch))


def _cuda_only(ctx: Context, name: str) -> bool:
    from doctor.matrix.query import package_set

    try:
        patterns = package_set(ctx.matrix, "cuda_only")
    except KeyError:
        return False
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def _covered(ctx: Context, c: pipcheck.Conflict) -> bool:
    """Conflicts that a dedicated finding already reports (torch.version, torch_npu.version ...)."""
    if c.requirer == "torch-npu" and c.required == "torch":
        return True
    return bool(ctx.release) and c.requirer == "vllm-ascend" and c.required in {
        "torch", "torch-npu", "numpy", "transformers", "triton-ascend", "torchvision", "torchaudio"}


def _conflicts(ctx: Context, pk: PackagesFacts) -> List[pipcheck.Conflict]:
    """pip check's answer: given by the caller (from its cache), else computed once per context."""
    if ctx.pip_conflicts is None:
        py = ctx.facts.python
        ctx.pip_conflicts = pipcheck.check(pk.dists, py.markers if py else {})
    return ctx.pip_conflicts


def vllm_ascend_requirements(ctx: Context) -> Iterable[Finding]:
    pk = ctx.facts.packages
    if pk is None or ctx.facts.dist("vllm-ascend") is None:
        return []
    own = [c for c in _conflicts(ctx, pk) if c.requirer == "vllm-ascend" and not _covered(ctx, c)]
    if not own:
        return [Finding("vllm_ascend.requirements", OK, T("vllm_ascend.requirements.ok"))]
    specs = [c.requirement.split(';')[0].strip() for c in own[:5]]
    return [Finding("vllm_ascend.requirements", FAIL,
                    T("vllm_ascend.requirements.unmet", count=len(own), first=own[0].words()),
                    observed="; ".join(c.describe() for c in own[:5]),
                    commands=[C.fix_apply(ctx)] + C.by_hand([C.pip_install(ctx, *specs, no_deps=False)]),
                    fixable=Fixable.AUTO, evidence=[c.describe() for c in own])]


def pip_check(ctx: Context) -> Iterable[Finding]:
    pk = ctx.facts.packages
    if pk is None:
        return []
    rest = [c for c in _conflicts(ctx, pk) if c.requirer != "vllm-ascend" and not _covered(ctx, c)]
    residual = [c for c in rest if _residual(ctx, c)]
    real = [c for c in rest if not _residual(ctx, c)]
    stack = [c for c in real if c.requirer in STACK or c.required in STACK]
    evidence = [c.describe() for c in real[:20]] + [c.describe() + "  (expected)" for c in residual[:5]]
    if real:
        return [Finding("env.pip_check", FAIL if stack else WARN,
                        T("env.pip_check.broken", count=len(real), first=(stack or real)[0].words()),
                        observed=f"{len(real)} conflicts" + (f" (+{len(residual)} expected)" if residual else ""),
                        hint=T("env.pip_check.broken.hint"),
                        commands=[C.doctor(ctx, "fix", label=T("env.pip_check.broken.plan"))] if stack else [],
                        fixable=Fixable.AUTO if stack else Fixable.MANUAL, evidence=evidence)]
    if residual:
        return [Finding("env.pip_check", INFO, T("env.pip_check.residual", first=residual[0].words()),
                        observed=f"{len(residual)} expected conflict(s)", source=RESIDUAL_SOURCE, evidence=evidence)]
    return [Finding("env.pip_check", OK, T("env.pip_check.ok", count=len(pk.dists)),
                    observed=f"{len(pk.dists)} distributions")]


def shadowed_dists(ctx: Context) -> Iterable[Finding]:
    pk = ctx.facts.packages
    if pk is None or not pk.shadowed:
        return []
    return [Finding("env.shadowed_dists", WARN,
                    T("env.shadowed_dists.twice", count=len(pk.shadowed),
                      dists=join((f"{d.name} {d.version}" for d in pk.shadowed[:5]), "sep.comma")),
                    observed="; ".join(f"{d.name} {d.version} in {d.location}" for d in pk.shadowed[:5]),
                    hint=T("env.shadowed_dists.twice.hint"), fixable=Fixable.MANUAL,
                    evidence=[d.metadata_path for d in pk.shadowed])]


RULES = (
    rule("env.cann_env", cann_env, f"{FORMATS}#cann-environment"),
    rule("env.nnal_env", nnal_env, f"{FORMATS}#nnal"),
    rule("env.vllm_version_override", vllm_version_override,
         f"{VLLM_ASCEND}/vllm_ascend/envs.py; {VLLM_ASCEND}/vllm_ascend/utils.py"),
    rule("env.vllm_target_device", vllm_target_device, "https://github.com/vllm-project/vllm/blob/main/vllm/envs.py"),
    rule("env.cwd_shadow", cwd_shadow, "https://docs.python.org/3/library/sys_path_init.html"),
    # vllm_ascend.requirements is judged here, from the same pip check (its layer is vllm_ascend)
    rule("vllm_ascend.requirements", vllm_ascend_requirements,
         "https://packaging.python.org/en/latest/specifications/core-metadata/#requires-dist-multiple-use",
         fixer="requirements", reinstall=True),
    rule("env.pip_check", pip_check, f"{RESIDUAL_SOURCE}; {VLLM_ASCEND_ISSUES}/3266", fixer="requirements"),
    rule("env.shadowed_dists", shadowed_dists,
         "https://docs.python.org/3/library/importlib.metadata.html#distributions"),
)
