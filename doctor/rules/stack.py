"""The Python stack: torch, torch_npu, vllm, vllm-ascend and the rest of the release row."""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Tuple

from doctor.facts import Distribution
from doctor.findings import FAIL, INFO, OK, WARN, Finding, msg
from doctor.matrix.query import torch_npu_row
from doctor.versions import AscendVersion, local_label, public, same_release, satisfies
from doctor.rules.base import Context, Rule

FIX = "ascend-doctor fix"


def _mismatch(fid: str, name: str, have: str, r, expected: str, command: str, source: Optional[str],
              why: Tuple[str, str] = ("", "")) -> Finding:
    """'<name> <have> does not match vllm-ascend <r> (needs <expected>)', fixable by the plan or
    by the given command."""
    return Finding(
        fid, FAIL,
        msg(f"{name} {have} does not match vllm-ascend {r.vllm_ascend} (needs {expected}){why[0]}",
            f"{name} {have} 与 vllm-ascend {r.vllm_ascend} 不配套（需要 {expected}）{why[1]}"),
        observed=have, expected=expected,
        hint=msg(f"{FIX} --apply, or by hand: {command}", f"{FIX} --apply，或手动：{command}"),
        fixable="auto", source=source)


def _missing(fid: str, name: str, want: Optional[str], ctx: Context, source: Optional[str]) -> Finding:
    return Finding(fid, FAIL, msg(f"{name} is not installed", f"未安装 {name}"),
                   observed="not installed", expected=want,
                   hint=msg(f"{FIX} --apply   (installs {name}=={want} with the pins of vllm-ascend {ctx.release.vllm_ascend})",
                            f"{FIX} --apply   （按 vllm-ascend {ctx.release.vllm_ascend} 的配套安装 {name}=={want}）")
                   if ctx.release and want else None,
                   fixable="auto", source=source)


def torch_checks(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    torch = ctx.facts.dist("torch")
    out: List[Finding] = []
    if torch is None:
        if r is not None:
            out.append(_missing("torch.version", "torch", r.torch, ctx, r.source_of("torch")))
        return out
    if r is None:
        out.append(Finding("torch.version", INFO, msg(f"torch {torch.version}", f"torch {torch.version}"),
                           observed=torch.version))
    elif same_release(torch.version, r.torch):
        out.append(Finding("torch.version", OK,
                           msg(f"torch {torch.version} matches vllm-ascend {r.vllm_ascend}",
                               f"torch {torch.version} 与 vllm-ascend {r.vllm_ascend} 配套"),
                           observed=torch.version, expected=r.torch, source=r.source_of("torch")))
    else:
        mover = _newer_torch_puller(ctx, torch.version)
        why = ((f" ({mover} pins torch {public(torch.version)}: installing it replaced torch)",
                f"（{mover} 固定了 torch {public(torch.version)}：安装它时替换了 torch）") if mover else ("", ""))
        out.append(_mismatch(
            "torch.version", "torch", torch.version, r, r.torch,
            f"pip install torch=={r.torch} --index-url https://download.pytorch.org/whl/cpu "
            f"&& pip install --no-deps torch-npu=={r.torch_npu_recommended or r.torch_npu}",
            r.source_of("torch"), why))
    out.append(_build(ctx, torch))
    out.extend(_companions(ctx, torch))
    return out


def _newer_torch_puller(ctx: Context, torch_version: str) -> Optional[str]:
    """Which installed package asks for exactly this torch (usually vllm from the index)."""
    for name in ("vllm", "vllm-ascend", "torchvision", "torchaudio"):
        d = ctx.facts.dist(name)
        if d is None:
            continue
        for req in d.requires:
            m = re.match(r"^torch\s*==\s*([\w.+]+)\s*(;.*)?$", req.strip())
            if m and same_release(torch_version, m.group(1)) and not (m.group(2) and "extra" in m.group(2)):
                return f"{d.display_name or name} {d.version}"
    return None


def _build(ctx: Context, torch: Distribution) -> Finding:
    cuda = torch.details.get("cuda") or ""
    hip = torch.details.get("hip") or ""
    label = local_label(torch.version) or ""
    nvidia = sorted(d.display_name or d.name for d in ctx.facts.packages.dists.values() if d.name.startswith("nvidia-"))
    if cuda or label.startswith("cu"):
        extra_en = f" and {len(nvidia)} nvidia-* packages" if nvidia else ""
        extra_zh = f"以及 {len(nvidia)} 个 nvidia-* 包" if nvidia else ""
        want = ctx.release.torch if ctx.release else public(torch.version)
        return Finding(
            "torch.build", FAIL,
            msg(f"torch is a CUDA build (CUDA {cuda or label}){extra_en}: torch_npu needs the CPU build",
                f"torch 是 CUDA 版本（CUDA {cuda or label}）{extra_zh}：torch_npu 需要 CPU 版本"),
            observed=f"{torch.version} cuda={cuda or label}", expected="CPU build (+cpu)",
            hint=msg(f"{FIX} --apply, or: pip uninstall -y torch {' '.join(nvidia[:3])}{' ...' if len(nvidia) > 3 else ''} && "
                     f"pip install torch=={want} --index-url https://download.pytorch.org/whl/cpu",
                     f"{FIX} --apply，或：pip uninstall -y torch {' '.join(nvidia[:3])}{' ...' if len(nvidia) > 3 else ''} && "
                     f"pip install torch=={want} --index-url https://download.pytorch.org/whl/cpu"),
            fixable="auto", evidence=nvidia[:10])
    if hip or label.startswith("rocm"):
        return Finding("torch.build", FAIL, msg("torch is a ROCm build: torch_npu needs the CPU build",
                                                "torch 是 ROCm 版本：torch_npu 需要 CPU 版本"),
                       observed=torch.version, expected="CPU build", fixable="auto")
    if nvidia:
        return Finding("torch.build", WARN,
                       msg(f"{len(nvidia)} nvidia-* CUDA packages are installed next to a CPU torch (left over from a CUDA install)",
                           f"CPU 版 torch 旁边装有 {len(nvidia)} 个 nvidia-* CUDA 包（CUDA 安装的残留）"),
                       observed=", ".join(nvidia[:5]) + (" ..." if len(nvidia) > 5 else ""),
                       hint=msg(f"pip uninstall -y {' '.join(nvidia)}", f"pip uninstall -y {' '.join(nvidia)}"),
                       fixable="auto")
    return Finding("torch.build", OK, msg("torch is a CPU build (what torch_npu extends)", "torch 为 CPU 版本（torch_npu 所需）"),
                   observed=label or "cpu")


def _companions(ctx: Context, torch: Distribution) -> List[Finding]:
    out = []
    row = next((t for t in ctx.matrix.torch if same_release(torch.version, t.torch)), None)
    for name in ("torchvision", "torchaudio"):
        d = ctx.facts.dist(name)
        if d is None:
            continue
        want = getattr(row, name) if row else None
        spec = getattr(ctx.release, name) if ctx.release else None
        bad_pair = want is not None and not same_release(d.version, want)
        bad_spec = spec is not None and satisfies(d.version, spec) is False
        if bad_pair or bad_spec:
            expected = want or spec
            out.append(Finding(
                "torch.companions", FAIL,
                msg(f"{name} {d.version} does not belong to torch {torch.version} (needs {expected})",
                    f"{name} {d.version} 与 torch {torch.version} 不配套（需要 {expected}）"),
                observed=d.version, expected=expected,
                hint=msg(f"{FIX} --apply, or: pip install --no-deps {name}=={want or expected}",
                         f"{FIX} --apply，或：pip install --no-deps {name}=={want or expected}"),
                fixable="auto", source=row.source if row else None))
        else:
            out.append(Finding("torch.companions", OK, msg(f"{name} {d.version} fits torch {torch.version}",
                                                           f"{name} {d.version} 与 torch {torch.version} 配套"),
                               observed=d.version, expected=want))
    return out


def torch_npu_checks(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    npu = ctx.facts.dist("torch-npu")
    torch = ctx.facts.dist("torch")
    out: List[Finding] = []
    if npu is None:
        if r is not None:
            out.append(_missing("torch_npu.version", "torch-npu", r.torch_npu_recommended or r.torch_npu, ctx,
                                r.source_of("torch_npu")))
        return out
    wants_torch = _pinned(npu, "torch")
    if r is not None and not any(same_release(npu.version, v) for v in r.torch_npu_accepted):
        out.append(_mismatch(
            "torch_npu.version", "torch-npu", npu.version, r, " or ".join(r.torch_npu_accepted),
            f"pip install --no-deps torch-npu=={r.torch_npu_recommended or r.torch_npu}", r.source_of("torch_npu")))
    elif torch is not None and wants_torch and not same_release(torch.version, wants_torch):
        out.append(Finding(
            "torch_npu.version", FAIL,
            msg(f"torch-npu {npu.version} needs torch {wants_torch}, but torch is {torch.version}",
                f"torch-npu {npu.version} 需要 torch {wants_torch}，但当前 torch 为 {torch.version}"),
            observed=torch.version, expected=wants_torch,
            hint=msg(f"pip install torch=={wants_torch} --index-url https://download.pytorch.org/whl/cpu",
                     f"pip install torch=={wants_torch} --index-url https://download.pytorch.org/whl/cpu"),
            fixable="auto"))
    elif r is not None and r.torch_npu_recommended and not same_release(npu.version, r.torch_npu_recommended):
        idx = next((t.index for t in ctx.matrix.torch_npu if same_release(t.version, r.torch_npu_recommended)), "pypi")
        extra = " --extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi" if idx == "ascend-mirror" else ""
        out.append(Finding(
            "torch_npu.version", INFO,
            msg(f"torch-npu {npu.version} is what the wheel pins; the docs recommend {r.torch_npu_recommended}",
                f"torch-npu {npu.version} 是 wheel 固定的版本；文档推荐 {r.torch_npu_recommended}"),
            observed=npu.version, expected=r.torch_npu_recommended,
            hint=msg(f"pip install --no-deps torch-npu=={r.torch_npu_recommended}{extra}",
                     f"pip install --no-deps torch-npu=={r.torch_npu_recommended}{extra}"),
            fixable="auto", source=r.source_of("torch_npu_recommended")))
    else:
        out.append(Finding("torch_npu.version", OK if r else INFO,
                           msg(f"torch-npu {npu.version}" + (f" matches vllm-ascend {r.vllm_ascend}" if r else ""),
                               f"torch-npu {npu.version}" + (f" 与 vllm-ascend {r.vllm_ascend} 配套" if r else "")),
                           observed=npu.version, expected=" or ".join(r.torch_npu_accepted) if r else None,
                           source=r.source_of("torch_npu") if r else None))
    out.extend(_torch_npu_cann(ctx, npu))
    return out


def _pinned(dist: Distribution, name: str) -> Optional[str]:
    for req in dist.requires:
        m = re.match(r"^" + re.escape(name) + r"\s*==\s*([\w.+]+)\s*$", req.strip())
        if m:
            return m.group(1)
    return None


def _torch_npu_cann(ctx: Context, npu: Distribution) -> List[Finding]:
    c = ctx.facts.cann
    if c is None or not c.version:
        return []
    row = torch_npu_row(ctx.matrix, npu.version)
    if row is None or row.cann is None:
        return [Finding("torch_npu.cann", INFO,
                        msg(f"torch-npu {npu.version} is not in the matrix; its CANN pairing is unknown",
                            f"矩阵中没有 torch-npu {npu.version}，无法判断其 CANN 配套"),
                        observed=c.version)]
    if AscendVersion(c.version) < AscendVersion(row.cann):
        return [Finding("torch_npu.cann", FAIL,
                        msg(f"torch-npu {npu.version} is built for CANN {row.cann}, but CANN is {c.version}",
                            f"torch-npu {npu.version} 基于 CANN {row.cann} 构建，但当前 CANN 为 {c.version}"),
                        observed=c.version, expected=f">={row.cann}",
                        hint=msg("symptoms: undefined symbol errors on import torch_npu; install the CANN the release needs, "
                                 "or the torch-npu build for your CANN",
                                 "症状：import torch_npu 报 undefined symbol；请安装该版本所需的 CANN，或与当前 CANN 配套的 torch-npu"),
                        fixable="vendor", source=row.source)]
    return [Finding("torch_npu.cann", OK,
                    msg(f"torch-npu {npu.version} is built for CANN {row.cann} (installed {c.version})",
                        f"torch-npu {npu.version} 基于 CANN {row.cann} 构建（已安装 {c.version}）"),
                    observed=c.version, expected=f">={row.cann}", source=row.source)]


def vllm_checks(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    vllm = ctx.facts.dist("vllm")
    if vllm is None:
        return [_missing("vllm.version", "vllm", r.vllm, ctx, r.source_of("vllm"))] if r else []
    if r is None:
        return [Finding("vllm.version", INFO, msg(f"vllm {vllm.version}", f"vllm {vllm.version}"), observed=vllm.version)]
    out: List[Finding] = []
    where = f" ({vllm.direct_url[len('file://'):]})" if vllm.editable and vllm.direct_url else ""
    if not any(same_release(vllm.version, v) for v in r.vllm_accepted):
        out.append(Finding(
            "vllm.version", FAIL,
            msg(f"vllm {vllm.version}{where} does not match vllm-ascend {r.vllm_ascend} (needs {r.vllm})",
                f"vllm {vllm.version}{where} 与 vllm-ascend {r.vllm_ascend} 不配套（需要 {r.vllm}）"),
            observed=vllm.version, expected=" or ".join(r.vllm_accepted),
            hint=msg(f"{FIX} --apply (reinstalls vllm {r.vllm} without letting it replace torch), or by hand: "
                     f"pip install --no-deps vllm=={r.vllm}; or from source: git clone -b v{r.vllm} https://github.com/vllm-project/vllm "
                     f"&& cd vllm && VLLM_TARGET_DEVICE=empty pip install -e . --no-deps",
                     f"{FIX} --apply（重装 vllm {r.vllm}，且不让它替换 torch），或手动：pip install --no-deps vllm=={r.vllm}；"
                     f"或源码：git clone -b v{r.vllm} https://github.com/vllm-project/vllm && cd vllm && "
                     f"VLLM_TARGET_DEVICE=empty pip install -e . --no-deps"),
            fixable="auto", source=r.source_of("vllm")))
        return out
    out.append(Finding("vllm.version", OK,
                       msg(f"vllm {vllm.version} matches vllm-ascend {r.vllm_ascend}", f"vllm {vllm.version} 与 vllm-ascend {r.vllm_ascend} 配套"),
                       observed=vllm.version, expected=r.vllm, source=r.source_of("vllm")))
    label = local_label(vllm.version)
    override = ctx.facts.env.get("VLLM_VERSION")
    if label and not override:
        out.append(Finding(
            "vllm.local_version", INFO,
            msg(f"vllm reports {vllm.version}: vllm-ascend's version checks compare strictly and never match '+{label}'",
                f"vllm 版本为 {vllm.version}：vllm-ascend 的版本判断是严格比较，带 '+{label}' 时永远不相等"),
            observed=vllm.version, expected=public(vllm.version),
            hint=msg(f"export VLLM_VERSION={public(vllm.version)}   (the documented override)",
                     f"export VLLM_VERSION={public(vllm.version)}   （官方文档中的覆盖方法）"),
            fixable="manual"))
    return out


def vllm_ascend_checks(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    va = ctx.facts.dist("vllm-ascend")
    r = ctx.release
    out: List[Finding] = []
    if va is None:
        return [Finding("vllm_ascend.installed", FAIL, msg("vllm-ascend is not installed", "未安装 vllm-ascend"),
                        observed="not installed",
                        hint=msg(f"{FIX} --apply   (installs the newest release that runs on this CANN, driver and Python)",
                                 f"{FIX} --apply   （安装能在当前 CANN、驱动和 Python 上运行的最新版本）"),
                        fixable="auto")]
    if r is None:
        out.append(Finding("vllm_ascend.installed", WARN,
                           msg(f"vllm-ascend {va.version} is not in the compatibility matrix", f"兼容矩阵中没有 vllm-ascend {va.version}"),
                           observed=va.version, expected="a release in the matrix",
                           hint=msg("update the matrix (ascend-doctor matrix sync) or judge against a known release: ascend-doctor check --target vllm-ascend==<version>",
                                    "更新矩阵（ascend-doctor matrix sync），或指定已知版本：ascend-doctor check --target vllm-ascend==<版本>"),
                           fixable="manual"))
        return out
    if ctx.release_note:
        out.append(Finding("vllm_ascend.installed", WARN,
                           msg(f"vllm-ascend {va.version} is a development build: judged as {r.vllm_ascend} ({ctx.release_note})",
                               f"vllm-ascend {va.version} 是开发版本：按 {r.vllm_ascend} 判断（{ctx.release_note}）"),
                           observed=va.version, expected=r.vllm_ascend, source=r.source, fixable="none"))
    else:
        note_en = "" if r.curated else " (row generated from index metadata, not curated)"
        note_zh = "" if r.curated else "（该行由索引元数据生成，未经人工核对）"
        out.append(Finding("vllm_ascend.installed", OK if r.curated else INFO,
                           msg(f"vllm-ascend {va.version}{note_en}", f"vllm-ascend {va.version}{note_zh}"),
                           observed=va.version, expected=r.key, source=r.source))
    out.append(_plugin(ctx, va))
    out.extend(_triton(ctx))
    out.extend(_spec_check(ctx, "numpy", "vllm_ascend.numpy", r.numpy))
    out.extend(_spec_check(ctx, "transformers", "vllm_ascend.transformers", r.transformers))
    if r.known_problems:
        n = len(r.known_problems)
        out.append(Finding("vllm_ascend.known_problems", INFO,
                           msg(f"{n} known problem(s) in vllm-ascend {r.vllm_ascend}: {r.known_problems[0].summary}",
                               f"vllm-ascend {r.vllm_ascend} 有 {n} 个已知问题：{r.known_problems[0].summary}"),
                           hint=msg(f"ascend-doctor matrix explain {r.vllm_ascend}", f"ascend-doctor matrix explain {r.vllm_ascend}"),
                           evidence=[f"{kp.summary} ({kp.source})" for kp in r.known_problems]))
    return out


def _plugin(ctx: Context, va: Distribution) -> Finding:
    plugins = va.entry_points.get("vllm.platform_plugins", {})
    selected = ctx.facts.env.get("VLLM_PLUGINS")
    if "ascend" not in plugins:
        return Finding("vllm_ascend.plugin", FAIL,
                       msg("vllm-ascend does not register the vllm platform plugin 'ascend': vLLM will not find the NPU",
                           "vllm-ascend 没有注册 vllm 平台插件 'ascend'：vLLM 找不到 NPU"),
                       observed=", ".join(f"{k}={v}" for k, v in plugins.items()) or "no vllm.platform_plugins entry point",
                       expected="ascend = vllm_ascend:register",
                       hint=msg(f"reinstall vllm-ascend: pip install --no-deps --force-reinstall vllm-ascend=={va.version}",
                                f"重装 vllm-ascend：pip install --no-deps --force-reinstall vllm-ascend=={va.version}"),
                       fixable="auto", evidence=[va.metadata_path])
    if selected is not None and "ascend" not in [p.strip() for p in selected.split(",")]:
        return Finding("vllm_ascend.plugin", FAIL,
                       msg(f"VLLM_PLUGINS={selected!r} does not load the 'ascend' platform plugin",
                           f"VLLM_PLUGINS={selected!r} 不会加载 'ascend' 平台插件"),
                       observed=selected, expected="unset, or a list containing ascend",
                       hint=msg("unset VLLM_PLUGINS", "unset VLLM_PLUGINS"), fixable="manual")
    others = sorted(name for d in ctx.facts.packages.dists.values() if d.name != "vllm-ascend"
                    for name in d.entry_points.get("vllm.platform_plugins", {}))
    if others:
        return Finding("vllm_ascend.plugin", WARN,
                       msg(f"other vLLM platform plugins are installed too: {', '.join(others)}",
                           f"还安装了其他 vLLM 平台插件：{', '.join(others)}"),
                       observed=", ".join(["ascend"] + others),
                       hint=msg("export VLLM_PLUGINS=ascend", "export VLLM_PLUGINS=ascend"), fixable="manual")
    return Finding("vllm_ascend.plugin", OK, msg(f"platform plugin ascend -> {plugins['ascend']}",
                                                 f"平台插件 ascend -> {plugins['ascend']}"), observed=plugins["ascend"])


def _triton(ctx: Context) -> List[Finding]:
    r = ctx.release
    ta = ctx.facts.dist("triton-ascend")
    mainline = ctx.facts.dist("triton")
    if ta is not None and mainline is not None:
        return [Finding("vllm_ascend.triton", FAIL,
                        msg(f"mainline triton {mainline.version} is installed next to triton-ascend {ta.version}: they share the 'triton' package",
                            f"主线 triton {mainline.version} 与 triton-ascend {ta.version} 同时安装：二者共用 'triton' 包名"),
                        observed=f"triton {mainline.version} + triton-ascend {ta.version}", expected="triton-ascend only",
                        hint=msg(f"pip uninstall -y triton triton-ascend && pip install --no-deps triton-ascend=={ta.version}",
                                 f"pip uninstall -y triton triton-ascend && pip install --no-deps triton-ascend=={ta.version}"),
                        fixable="auto")]
    accepted = r.triton_ascend_accepted
    if ctx.hardware == "310P" and ta is not None:
        return [Finding("vllm_ascend.triton", WARN,
                        msg("triton-ascend is not supported on 300I Duo (310P)", "300I Duo（310P）不支持 triton-ascend"),
                        observed=ta.version, hint=msg("pip uninstall -y triton-ascend", "pip uninstall -y triton-ascend"),
                        fixable="auto")]
    if accepted and ta is None and ctx.hardware != "310P":
        return [_missing("vllm_ascend.triton", "triton-ascend", accepted[0], ctx, r.source_of("triton_ascend"))]
    if accepted and ta is not None and not any(same_release(ta.version, v) for v in accepted):
        return [_mismatch("vllm_ascend.triton", "triton-ascend", ta.version, r, " or ".join(accepted),
                          f"pip install --no-deps triton-ascend=={accepted[0]}", r.source_of("triton_ascend"))]
    if mainline is not None:
        return [Finding("vllm_ascend.triton", WARN,
                        msg(f"mainline (CUDA) triton {mainline.version} is installed; the official images remove it",
                            f"安装了主线（CUDA）triton {mainline.version}；官方镜像会卸载它"),
                        observed=mainline.version, hint=msg("pip uninstall -y triton", "pip uninstall -y triton"),
                        fixable="auto")]
    if ta is not None and not accepted:
        return [Finding("vllm_ascend.triton", WARN,
                        msg(f"triton-ascend {ta.version} is installed but vllm-ascend {r.vllm_ascend} does not use it; "
                            "vLLM will import it as 'triton' and may call language features it lacks",
                            f"安装了 triton-ascend {ta.version}，但 vllm-ascend {r.vllm_ascend} 并不使用它；"
                            "vLLM 会把它当作 'triton' 导入，可能调用其缺少的接口"),
                        observed=ta.version, expected="not installed",
                        hint=msg("pip uninstall -y triton-ascend", "pip uninstall -y triton-ascend"), fixable="auto")]
    if ta is not None:
        return [Finding("vllm_ascend.triton", OK, msg(f"triton-ascend {ta.version}", f"triton-ascend {ta.version}"),
                        observed=ta.version, expected=" or ".join(accepted) or None)]
    return []


def _spec_check(ctx: Context, name: str, fid: str, spec: Optional[str]) -> List[Finding]:
    d = ctx.facts.dist(name)
    r = ctx.release
    if spec is None:
        return []
    if d is None:
        return [_missing(fid, name, spec, ctx, r.source_of(name))]
    if satisfies(d.version, spec) is False:
        why = {"numpy": msg(" (numpy 2 removed np.float_ and friends used by this release)",
                            "（numpy 2 删除了该版本用到的 np.float_ 等接口）")}.get(name, msg("", ""))
        return [Finding(fid, FAIL,
                        msg(f"{name} {d.version} does not satisfy vllm-ascend {r.vllm_ascend} ({spec}){why.en}",
                            f"{name} {d.version} 不满足 vllm-ascend {r.vllm_ascend} 的要求（{spec}）{why.zh}"),
                        observed=d.version, expected=spec,
                        hint=msg(f"pip install --no-deps '{name}{spec}'", f"pip install --no-deps '{name}{spec}'"),
                        fixable="auto", source=r.source_of(name))]
    return [Finding(fid, OK, msg(f"{name} {d.version} ({spec})", f"{name} {d.version}（{spec}）"),
                    observed=d.version, expected=spec, source=r.source_of(name))]


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:torch_checks", "torch", torch_checks),
    Rule("group:torch_npu_checks", "torch_npu", torch_npu_checks),
    Rule("group:vllm_checks", "vllm", vllm_checks),
    Rule("group:vllm_ascend_checks", "vllm_ascend", vllm_ascend_checks),
)
