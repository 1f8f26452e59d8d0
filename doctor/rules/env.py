"""The process environment: CANN/NNAL variables, vLLM overrides, shadowing, pip-check."""
from __future__ import annotations

import fnmatch
from typing import Iterable, List

from doctor.rules import pipcheck
from doctor.findings import FAIL, INFO, OK, WARN, Finding, msg
from doctor.versions import public, same_release
from doctor.rules.base import Context, Rule

STACK = {"torch", "torch-npu", "torchvision", "torchaudio", "vllm", "vllm-ascend", "triton-ascend",
         "transformers", "numpy", "mooncake-transfer-engine-npu"}
# vllm from the index is a CUDA wheel: its torch pin (always newer than vllm-ascend's) and its
# CUDA-only packages cannot be satisfied on an Ascend host. vllm-ascend's maintainers document
# this as expected (vllm-ascend #5710, #3266): it is the residual of a correct install.
VLLM_RESIDUAL = ("torch", "torchvision", "torchaudio", "xformers", "flashinfer-*", "nvidia-*", "triton",
                 "cupy-*", "tilelang", "apache-tvm-ffi", "quack-kernels", "tokenspeed-mla", "humming-kernels",
                 "fastsafetensors", "intel-extension-for-pytorch")
RESIDUAL_SOURCE = "https://github.com/vllm-project/vllm-ascend/issues/5710"
FIX_CMD = "ascend-doctor fix"


def _ld_path(ctx: Context) -> List[str]:
    return [p.rstrip("/") for p in ctx.facts.env.get("LD_LIBRARY_PATH", "").split(":") if p]


def cann_env(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None or not c.found:
        return []
    env = ctx.facts.env
    ld = _ld_path(ctx)
    problems_en, problems_zh = [], []
    homes = [h.rstrip("/") for h in (c.home, c.real_home) if h]
    base = c.home.rsplit("/", 2)[0] if c.home else "/usr/local/Ascend"
    if not any(any(p.startswith(h) for h in homes) or p.startswith(base + "/ascend-toolkit") or p.startswith(base + "/cann")
               for p in ld):
        problems_en.append("the toolkit lib64 is not on LD_LIBRARY_PATH")
        problems_zh.append("LD_LIBRARY_PATH 中没有 toolkit 的 lib64")
    if not env.get("ASCEND_OPP_PATH"):
        problems_en.append("ASCEND_OPP_PATH is not set")
        problems_zh.append("未设置 ASCEND_OPP_PATH")
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        if env.get(var) and c.how != var and env[var].rstrip("/") not in homes:
            problems_en.append(f"{var}={env[var]} does not exist (CANN was found at {c.home})")
            problems_zh.append(f"{var}={env[var]} 不存在（CANN 实际位于 {c.home}）")
    d = ctx.facts.driver
    if not ctx.build and d is not None and d.found and not any(p.startswith(d.lib_dir) for p in ld):
        problems_en.append(f"the driver libraries ({d.lib_dir}) are not on LD_LIBRARY_PATH")
        problems_zh.append(f"LD_LIBRARY_PATH 中没有驱动库（{d.lib_dir}）")
    set_env = c.set_env or "/usr/local/Ascend/ascend-toolkit/set_env.sh"
    if problems_en:
        return [Finding(
            "env.cann_env", WARN if ctx.build else FAIL,
            msg("CANN environment is not set up: " + "; ".join(problems_en), "CANN 环境变量未生效：" + "；".join(problems_zh)),
            observed="; ".join(problems_en), expected=f"variables exported by {set_env}",
            hint=msg(f"source {set_env}   (in a Dockerfile: ENV the same variables, or source it in the entrypoint)",
                     f"source {set_env}   （Dockerfile 中可用 ENV 设置同样的变量，或在 entrypoint 中 source）"),
            fixable="manual", evidence=[f"LD_LIBRARY_PATH={env.get('LD_LIBRARY_PATH', '')}"])]
    return [Finding("env.cann_env", OK, msg("CANN environment variables are set", "CANN 环境变量已设置"),
                    observed=env.get("ASCEND_OPP_PATH"))]


def nnal_env(ctx: Context) -> Iterable[Finding]:
    c = ctx.facts.cann
    if c is None or not c.nnal.found:
        return []
    atb = ctx.facts.env.get("ATB_HOME_PATH")
    set_env = c.nnal.set_env or f"{c.nnal.path}/set_env.sh"
    if not atb:
        return [Finding("env.nnal_env", WARN if ctx.build else FAIL,
                        msg("NNAL/ATB environment is not set (ATB_HOME_PATH unset): libatb.so will not be found",
                            "NNAL/ATB 环境未生效（未设置 ATB_HOME_PATH）：将找不到 libatb.so"),
                        observed="ATB_HOME_PATH unset", hint=msg(f"source {set_env}", f"source {set_env}"),
                        fixable="manual")]
    abi = [p for p in _ld_path(ctx) if "/nnal/atb/" in p and "cxx_abi_" in p]
    wanted = atb.rstrip("/").split("/")[-1]
    if abi and not any(wanted in p for p in abi):
        return [Finding("env.nnal_env", WARN,
                        msg(f"ATB_HOME_PATH uses {wanted} but LD_LIBRARY_PATH points at another ABI directory",
                            f"ATB_HOME_PATH 使用 {wanted}，但 LD_LIBRARY_PATH 指向另一个 ABI 目录"),
                        observed=abi[0], expected=atb,
                        hint=msg(f"source {set_env} once, in a fresh shell", f"在新的 shell 中只 source 一次 {set_env}"),
                        fixable="manual")]
    return [Finding("env.nnal_env", OK, msg(f"NNAL environment set ({atb})", f"NNAL 环境已设置（{atb}）"), observed=atb)]


def vllm_overrides(ctx: Context) -> Iterable[Finding]:
    out: List[Finding] = []
    override = ctx.facts.env.get("VLLM_VERSION")
    vllm = ctx.facts.version_of("vllm")
    if override and vllm:
        if same_release(vllm, override):
            out.append(Finding("env.vllm_version_override", OK, msg(f"VLLM_VERSION={override} matches vllm",
                                                                    f"VLLM_VERSION={override} 与 vllm 一致"),
                               observed=override))
        else:
            out.append(Finding(
                "env.vllm_version_override", FAIL,
                msg(f"VLLM_VERSION={override} makes vllm-ascend load code for vLLM {override}, but vllm is {vllm}",
                    f"VLLM_VERSION={override} 让 vllm-ascend 按 vLLM {override} 加载代码，但实际 vllm 为 {vllm}"),
                observed=override, expected=public(vllm),
                hint=msg(f"unset VLLM_VERSION   (or export VLLM_VERSION={public(vllm)})",
                         f"unset VLLM_VERSION   （或 export VLLM_VERSION={public(vllm)}）"),
                fixable="manual"))
    target = ctx.facts.env.get("VLLM_TARGET_DEVICE")
    if target and target not in ("empty", "npu"):
        out.append(Finding("env.vllm_target_device", WARN,
                           msg(f"VLLM_TARGET_DEVICE={target}: a vLLM source build now would compile for {target}",
                               f"VLLM_TARGET_DEVICE={target}：此时从源码构建 vLLM 会按 {target} 编译"),
                           observed=target, expected="empty",
                           hint=msg("export VLLM_TARGET_DEVICE=empty before building vLLM for Ascend",
                                    "为昇腾构建 vLLM 前 export VLLM_TARGET_DEVICE=empty"),
                           fixable="manual"))
    return out


def cwd_shadow(ctx: Context) -> Iterable[Finding]:
    w = ctx.facts.workdir
    if w is None:
        return []
    out = []
    for s in w.shadows:
        if s.same_as_installed:
            continue
        trap = not s.is_package
        out.append(Finding(
            "env.cwd_shadow", FAIL if trap else WARN,
            msg(f"{s.path} shadows the installed {s.name} for `python` run from {w.cwd}"
                + (" (a folder without __init__.py: imports fail with 'unknown location')" if trap else ""),
                f"从 {w.cwd} 运行 python 时，{s.path} 会遮蔽已安装的 {s.name}"
                + ("（该目录没有 __init__.py：导入会报 'unknown location'）" if trap else "")),
            observed=s.path, expected=f"the installed {s.name}",
            hint=msg(f"run from another directory (cd /workspace), or rename {s.path}",
                     f"换一个目录运行（cd /workspace），或重命名 {s.path}"),
            fixable="manual"))
    return out


def _residual(ctx: Context, c: pipcheck.Conflict) -> bool:
    if c.requirer != "vllm" or not any(fnmatch.fnmatch(c.required, p) for p in VLLM_RESIDUAL):
        return False
    torch = ctx.facts.version_of("torch")
    return bool(ctx.release and torch and same_release(torch, ctx.release.torch))


def _covered(ctx: Context, c: pipcheck.Conflict) -> bool:
    """Conflicts that a dedicated finding already reports (torch.version, torch_npu.version ...)."""
    if c.requirer == "torch-npu" and c.required == "torch":
        return True
    return bool(ctx.release) and c.requirer == "vllm-ascend" and c.required in {
        "torch", "torch-npu", "numpy", "transformers", "triton-ascend", "torchvision", "torchaudio"}


def pip_check(ctx: Context) -> Iterable[Finding]:
    pk, py = ctx.facts.packages, ctx.facts.python
    if pk is None:
        return []
    conflicts = ctx.pip_conflicts if ctx.pip_conflicts is not None else pipcheck.check(pk.dists, py.markers if py else {})
    own = [c for c in conflicts if c.requirer == "vllm-ascend" and not _covered(ctx, c)]
    rest = [c for c in conflicts if c.requirer != "vllm-ascend" and not _covered(ctx, c)]
    residual = [c for c in rest if _residual(ctx, c)]
    real = [c for c in rest if not _residual(ctx, c)]
    out: List[Finding] = []
    if ctx.facts.dist("vllm-ascend") is not None:
        if own:
            out.append(Finding(
                "vllm_ascend.requirements", FAIL,
                msg(f"{len(own)} requirement(s) of vllm-ascend are not met: {own[0].describe()}",
                    f"vllm-ascend 有 {len(own)} 个依赖未满足：{own[0].describe()}"),
                observed="; ".join(c.describe() for c in own[:5]),
                hint=msg(f"{FIX_CMD} --apply, or: pip install " + " ".join(f"'{c.requirement.split(';')[0].strip()}'" for c in own[:5]),
                         f"{FIX_CMD} --apply，或：pip install " + " ".join(f"'{c.requirement.split(';')[0].strip()}'" for c in own[:5])),
                fixable="auto", evidence=[c.describe() for c in own]))
        else:
            out.append(Finding("vllm_ascend.requirements", OK, msg("all requirements of vllm-ascend are met",
                                                                   "vllm-ascend 的依赖均已满足")))
    stack = [c for c in real if c.requirer in STACK or c.required in STACK]
    evidence = [c.describe() for c in real[:20]] + [c.describe() + "  (expected)" for c in residual[:5]]
    if real:
        first = (stack or real)[0].describe()
        out.append(Finding(
            "env.pip_check", FAIL if stack else WARN,
            msg(f"{len(real)} broken requirement(s) among installed packages, e.g. {first}",
                f"已安装的包中有 {len(real)} 个依赖不满足，例如 {first}"),
            observed=f"{len(real)} conflicts" + (f" (+{len(residual)} expected)" if residual else ""),
            hint=msg(f"{FIX_CMD} to see a plan; for unrelated packages: pip install the versions named above",
                     f"运行 {FIX_CMD} 查看修复计划；与推理栈无关的包可按上面的版本手动安装"),
            fixable="auto" if stack else "manual", evidence=evidence))
    elif residual:
        out.append(Finding(
            "env.pip_check", INFO,
            msg(f"only the expected residual: {residual[0].describe()} (vllm-ascend pins an older torch on purpose)",
                f"只有预期内的残留：{residual[0].describe()}（vllm-ascend 有意固定较旧的 torch）"),
            observed=f"{len(residual)} expected conflict(s)", source=RESIDUAL_SOURCE, evidence=evidence))
    else:
        out.append(Finding("env.pip_check", OK, msg(f"no broken requirements among {len(pk.dists)} packages",
                                                    f"{len(pk.dists)} 个包的依赖均满足"),
                           observed=f"{len(pk.dists)} distributions"))
    if pk.shadowed:
        out.append(Finding(
            "env.shadowed_dists", WARN,
            msg(f"{len(pk.shadowed)} package(s) are installed twice on sys.path; the later copies are ignored: "
                + ", ".join(f"{d.name} {d.version}" for d in pk.shadowed[:5]),
                f"有 {len(pk.shadowed)} 个包在 sys.path 上装了两份，后面的副本被忽略："
                + "，".join(f"{d.name} {d.version}" for d in pk.shadowed[:5])),
            observed="; ".join(f"{d.name} {d.version} in {d.location}" for d in pk.shadowed[:5]),
            hint=msg("remove the stale copies (pip uninstall runs against the first one only)",
                     "删除多余的副本（pip uninstall 只作用于第一份）"),
            fixable="manual", evidence=[d.metadata_path for d in pk.shadowed]))
    return out


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:cann_env", "env", cann_env),
    Rule("group:nnal_env", "env", nnal_env),
    Rule("group:vllm_overrides", "env", vllm_overrides),
    Rule("group:cwd_shadow", "env", cwd_shadow),
    Rule("group:pip_check", "env", pip_check),
)
