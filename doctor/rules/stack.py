"""The Python stack: torch, torch_npu, vllm, vllm-ascend and the rest of the release row."""
from __future__ import annotations

import re
from typing import Dict, Iterable, List, Optional, Tuple, Union

from doctor.facts import Distribution
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Command, Finding, cmd
from doctor.i18n import Join, T, Text, join
from doctor.matrix.model import Release
from doctor.matrix.query import torch_npu_row
from doctor.versions import AscendVersion, local_label, public, same_release, satisfies
from doctor.rules import commands as C
from doctor.rules.base import Context, rule
from doctor.rules.sources import TORCH_NPU, VERSIONING, VLLM_ASCEND
from doctor.rules.sources import VLLM_ASCEND_FILES as WHEEL_METADATA
from doctor.rules.sources import VLLM_ASCEND_ISSUES as VA_ISSUES

def _mismatch(ctx: Context, fid: str, name: str, have: str, r: Release, expected: Union[str, Join],
              by_hand: List[Command],
              source: Optional[str], why: Union[str, Text] = "") -> Finding:
    """'<name> <have> does not match vllm-ascend <r> (needs <expected>)', fixable by the plan or
    by the given commands."""
    return Finding(fid, FAIL, T("stack.mismatch", name=name, have=have, release=r.vllm_ascend, expected=expected, why=why),
                   observed=have, expected=expected, fixable=Fixable.AUTO, source=source,
                   commands=[C.fix_apply(ctx)] + C.by_hand(by_hand))


def _missing(fid: str, name: str, want: Optional[str], ctx: Context, source: Optional[str]) -> Finding:
    known = ctx.release is not None and want
    return Finding(fid, FAIL, T("stack.missing", name=name),
                   observed="not installed", expected=want,
                   hint=T("stack.missing.hint", name=name, want=want, release=ctx.release.vllm_ascend)
                   if known and ctx.release is not None else None,
                   commands=[C.fix_apply(ctx)] if known else [], fixable=Fixable.AUTO, source=source)


def _or(versions: Iterable[str]) -> Join:
    """Versions joined with "or" in the reader's language (data fields keep the English)."""
    return join(list(versions), "sep.or")


def _installed(ctx: Context, name: str) -> Optional[Distribution]:
    """The installed distribution, when the packages were read."""
    return ctx.facts.dist(name) if ctx.facts.packages is not None else None


def _all_dists(ctx: Context) -> Dict[str, Distribution]:
    """Every installed distribution by canonical name (none when the packages were not read)."""
    return ctx.facts.packages.dists if ctx.facts.packages is not None else {}


# -- torch -----------------------------------------------------------------------------------------


def torch_version(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    torch = ctx.facts.dist("torch")
    if torch is None:
        return [_missing("torch.version", "torch", r.torch, ctx, r.source_of("torch"))] if r is not None else []
    if r is None:
        return [Finding("torch.version", INFO, T("torch.version.no_release", version=torch.version), observed=torch.version)]
    if same_release(torch.version, r.torch):
        return [Finding("torch.version", OK, T("torch.version.ok", version=torch.version, release=r.vllm_ascend),
                        observed=torch.version, expected=r.torch, source=r.source_of("torch"))]
    mover = _newer_torch_puller(ctx, torch.version)
    why = T("torch.version.moved_by", mover=mover, torch=public(torch.version)) if mover else ""
    # by hand, complete and as the plan pins them: torch, its companions for that torch, and
    # torch-npu when the installed one is not one the release accepts
    companions = [f"{name}=={want}" for name, want, _ in _companion_misfits(ctx, r.torch)]
    by_hand = [C.pip_install(ctx, f"torch=={r.torch}", *companions)]
    npu = ctx.facts.dist("torch-npu")
    if npu is None or not any(same_release(npu.version, v) for v in r.torch_npu_accepted):
        by_hand.append(C.pip_install(ctx, f"torch-npu=={r.torch_npu_recommended or r.torch_npu}"))
    return [_mismatch(ctx, "torch.version", "torch", torch.version, r, r.torch, by_hand, r.source_of("torch"), why)]


def _torch_goal(ctx: Context, installed: str) -> str:
    """The torch the companions must fit: the release's when the installed torch is not it (the
    plan puts that one back, torch.version says so), else the installed one."""
    r = ctx.release
    return r.torch if r is not None and not same_release(installed, r.torch) else installed


def _companion_misfits(ctx: Context, goal: str) -> List[Tuple[str, str, str]]:
    """(name, version it must be, version installed) of each installed torchvision/torchaudio
    that does not belong to torch ``goal`` (the matrix's torch table)."""
    row = next((t for t in ctx.matrix.torch if same_release(goal, t.torch)), None)
    out = []
    for name in ("torchvision", "torchaudio"):
        d = ctx.facts.dist(name)
        want = getattr(row, name) if row else None
        if d is not None and want is not None and not same_release(d.version, want):
            out.append((name, want, d.version))
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


def torch_build(ctx: Context) -> Iterable[Finding]:
    torch = _installed(ctx, "torch")
    if torch is None:
        return []
    cuda = torch.details.get("cuda") or ""
    hip = torch.details.get("hip") or ""
    label = local_label(torch.version) or ""
    nvidia = sorted(d.display_name or d.name for d in _all_dists(ctx).values() if d.name.startswith("nvidia-"))
    if cuda or label.startswith("cu"):
        want = ctx.release.torch if ctx.release else public(torch.version)
        return [Finding("torch.build", FAIL,
                        T("torch.build.cuda", cuda=cuda or label, extra=T("torch.build.cuda.nvidia", count=len(nvidia))
                          if nvidia else ""),
                        observed=f"{torch.version} cuda={cuda or label}", expected="CPU build (+cpu)",
                        commands=[C.fix_apply(ctx)] + C.by_hand([C.pip_uninstall(ctx, "torch", *nvidia),
                                                                 C.pip_install(ctx, f"torch=={public(want)}")]),
                        fixable=Fixable.AUTO, evidence=nvidia[:10])]
    if hip or label.startswith("rocm"):
        return [Finding("torch.build", FAIL, T("torch.build.rocm"), observed=torch.version, expected="CPU build",
                        fixable=Fixable.AUTO)]
    if nvidia:
        return [Finding("torch.build", WARN, T("torch.build.nvidia_leftovers", count=len(nvidia)),
                        observed=", ".join(nvidia[:5]) + (" ..." if len(nvidia) > 5 else ""),
                        commands=[C.pip_uninstall(ctx, *nvidia)], fixable=Fixable.AUTO)]
    return [Finding("torch.build", OK, T("torch.build.cpu"), observed=label or "cpu")]


def torch_companions(ctx: Context) -> Iterable[Finding]:
    torch = _installed(ctx, "torch")
    if torch is None:
        return []
    out = []
    goal = _torch_goal(ctx, torch.version)
    row = next((t for t in ctx.matrix.torch if same_release(goal, t.torch)), None)
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
            out.append(Finding("torch.companions", FAIL,
                               T("torch.companions.mismatch", name=name, version=d.version, torch=public(goal),
                                 expected=expected),
                               observed=d.version, expected=expected,
                               commands=[C.fix_apply(ctx)] + C.by_hand(
                                   [C.pip_install(ctx, f"{name}=={want}" if want else f"{name}{expected}")]),
                               fixable=Fixable.AUTO, source=row.source if row else None))
        else:
            out.append(Finding("torch.companions", OK,
                               T("torch.companions.ok", name=name, version=d.version, torch=public(goal)),
                               observed=d.version, expected=want))
    return out


# -- torch-npu -------------------------------------------------------------------------------------


def torch_npu_version(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    npu = ctx.facts.dist("torch-npu")
    torch = ctx.facts.dist("torch")
    if npu is None:
        return [_missing("torch_npu.version", "torch-npu", r.torch_npu_recommended or r.torch_npu, ctx,
                         r.source_of("torch_npu"))] if r is not None else []
    wants_torch = _pinned(npu, "torch")
    if r is not None and not any(same_release(npu.version, v) for v in r.torch_npu_accepted):
        return [_mismatch(ctx, "torch_npu.version", "torch-npu", npu.version, r, _or(r.torch_npu_accepted),
                          [C.pip_install(ctx, f"torch-npu=={r.torch_npu_recommended or r.torch_npu}")],
                          r.source_of("torch_npu"))]
    if torch is not None and wants_torch and not same_release(torch.version, wants_torch):
        return [Finding("torch_npu.version", FAIL,
                        T("torch_npu.version.wrong_torch", version=npu.version, wants=wants_torch, torch=torch.version),
                        observed=torch.version, expected=wants_torch,
                        commands=[C.pip_install(ctx, f"torch=={public(wants_torch)}")], fixable=Fixable.AUTO)]
    if r is not None and r.torch_npu_recommended and not same_release(npu.version, r.torch_npu_recommended):
        return [Finding("torch_npu.version", INFO,
                        T("torch_npu.version.not_recommended", version=npu.version, recommended=r.torch_npu_recommended),
                        observed=npu.version, expected=r.torch_npu_recommended,
                        commands=[C.pip_install(ctx, f"torch-npu=={r.torch_npu_recommended}")],
                        fixable=Fixable.AUTO, source=r.source_of("torch_npu_recommended"))]
    if r is None:
        return [Finding("torch_npu.version", INFO, T("torch_npu.version.no_release", version=npu.version),
                        observed=npu.version)]
    return [Finding("torch_npu.version", OK, T("torch_npu.version.ok", version=npu.version, release=r.vllm_ascend),
                    observed=npu.version, expected=_or(r.torch_npu_accepted), source=r.source_of("torch_npu"))]


def _pinned(dist: Distribution, name: str) -> Optional[str]:
    for req in dist.requires:
        m = re.match(r"^" + re.escape(name) + r"\s*==\s*([\w.+]+)\s*$", req.strip())
        if m:
            return m.group(1)
    return None


def torch_npu_cann(ctx: Context) -> Iterable[Finding]:
    npu = _installed(ctx, "torch-npu")
    c = ctx.facts.cann
    if npu is None or c is None or not c.version:
        return []
    row = torch_npu_row(ctx.matrix, npu.version)
    if row is None or row.cann is None:
        return [Finding("torch_npu.cann", INFO, T("torch_npu.cann.unknown", version=npu.version), observed=c.version)]
    if AscendVersion(c.version) < AscendVersion(row.cann):
        return [Finding("torch_npu.cann", FAIL, T("torch_npu.cann.too_old", version=npu.version, built=row.cann, cann=c.version),
                        observed=c.version, expected=f">={row.cann}", hint=T("torch_npu.cann.too_old.hint"),
                        fixable=Fixable.VENDOR, source=row.source)]
    return [Finding("torch_npu.cann", OK, T("torch_npu.cann.ok", version=npu.version, built=row.cann, cann=c.version),
                    observed=c.version, expected=f">={row.cann}", source=row.source)]


# -- vllm ------------------------------------------------------------------------------------------


def _vllm_matches(r: Release, vllm: Distribution) -> bool:
    return any(same_release(vllm.version, v) for v in r.vllm_accepted)


def vllm_version(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    r = ctx.release
    vllm = ctx.facts.dist("vllm")
    if vllm is None:
        return [_missing("vllm.version", "vllm", r.vllm, ctx, r.source_of("vllm"))] if r else []
    if r is None:
        return [Finding("vllm.version", INFO, T("vllm.version.no_release", version=vllm.version), observed=vllm.version)]
    if not _vllm_matches(r, vllm):
        where = f" ({vllm.direct_url[len('file://'):]})" if vllm.editable and vllm.direct_url else ""
        return [Finding("vllm.version", FAIL,
                        T("vllm.version.mismatch", version=vllm.version, where=where, release=r.vllm_ascend, needs=r.vllm),
                        observed=vllm.version, expected=_or(r.vllm_accepted),
                        hint=T("vllm.version.mismatch.hint", needs=r.vllm), fixable=Fixable.AUTO, source=r.source_of("vllm"),
                        # no "by hand": vllm goes in without its dependencies (they would replace torch),
                        # and which of them are missing is known only from the wheel the plan downloads
                        # (`pip install --no-deps vllm==X` alone leaves dozens of requirements broken)
                        commands=[C.fix_apply(ctx),
                                  C.fix_apply(ctx, "--vllm-from", "source", label=T("cmd.vllm_source", version=r.vllm))])]
    return [Finding("vllm.version", OK, T("vllm.version.ok", version=vllm.version, release=r.vllm_ascend),
                    observed=vllm.version, expected=r.vllm, source=r.source_of("vllm"))]


def vllm_local_version(ctx: Context) -> Iterable[Finding]:
    vllm, r = _installed(ctx, "vllm"), ctx.release
    if vllm is None or r is None or not _vllm_matches(r, vllm):
        return []
    label = local_label(vllm.version)
    if not label or ctx.env.get("VLLM_VERSION"):
        return []
    return [Finding("vllm.local_version", INFO, T("vllm.local_version.label", version=vllm.version, label=label),
                    observed=vllm.version, expected=public(vllm.version),
                    hint=T("vllm.local_version.label.hint"), fixable=Fixable.MANUAL,
                    commands=[cmd("export", f"VLLM_VERSION={public(vllm.version)}")])]


# -- vllm-ascend -----------------------------------------------------------------------------------


def vllm_ascend_installed(ctx: Context) -> Iterable[Finding]:
    if ctx.facts.packages is None:
        return []
    va = ctx.facts.dist("vllm-ascend")
    r = ctx.release
    if va is None:
        if ctx.facts.image is None and not (ctx.facts.cann is not None and ctx.facts.cann.found):
            # no CANN here (a bare machine): nothing to install vllm-ascend for yet, and `fix --apply
            # --python X` would install the stack into X all the same (fix plans the vendor layers
            # first only without --python)
            return [Finding("vllm_ascend.installed", FAIL, T("vllm_ascend.installed.missing"), observed="not installed",
                            hint=T("vllm_ascend.installed.missing.no_cann"), fixable=Fixable.AUTO)]
        return [Finding("vllm_ascend.installed", FAIL, T("vllm_ascend.installed.missing"), observed="not installed",
                        hint=T("vllm_ascend.installed.missing.hint"), fixable=Fixable.AUTO, commands=[C.fix_apply(ctx)])]
    if r is None:
        return [Finding("vllm_ascend.installed", WARN, T("vllm_ascend.installed.unknown", version=va.version),
                        observed=va.version, expected="a release in the matrix",
                        hint=T("vllm_ascend.installed.unknown.hint"), fixable=Fixable.MANUAL,
                        commands=[cmd("ascend-doctor", "matrix", "sync", label=T("vllm_ascend.installed.unknown.sync")),
                                  cmd("ascend-doctor", "matrix", "show", label=T("vllm_ascend.installed.unknown.show"))])]
    if ctx.release_note:
        return [Finding("vllm_ascend.installed", WARN,
                        T("vllm_ascend.installed.dev_build", version=va.version, release=r.vllm_ascend, note=ctx.release_note),
                        observed=va.version, expected=r.vllm_ascend, source=r.source, fixable=Fixable.NONE)]
    return [Finding("vllm_ascend.installed", OK if r.curated else INFO,
                    T("vllm_ascend.installed.ok" if r.curated else "vllm_ascend.installed.generated", version=va.version),
                    observed=va.version, expected=r.key, source=r.source)]


def _judged_release(ctx: Context) -> Tuple[Optional[Distribution], Optional[Release]]:
    """(vllm-ascend distribution, its release row) when both are known, else (None, None)."""
    va = _installed(ctx, "vllm-ascend")
    if va is None or ctx.release is None:
        return None, None
    return va, ctx.release


def vllm_ascend_plugin(ctx: Context) -> Iterable[Finding]:
    va, r = _judged_release(ctx)
    if va is None or r is None:
        return []
    plugins = va.entry_points.get("vllm.platform_plugins", {})
    selected = ctx.env.get("VLLM_PLUGINS")
    if "ascend" not in plugins:
        return [Finding("vllm_ascend.plugin", FAIL, T("vllm_ascend.plugin.missing"),
                        observed=", ".join(f"{k}={v}" for k, v in plugins.items()) or "no vllm.platform_plugins entry point",
                        expected="ascend = vllm_ascend:register",
                        hint=T("vllm_ascend.plugin.missing.hint"), fixable=Fixable.AUTO, evidence=[va.metadata_path],
                        commands=[C.pip_install(ctx, f"vllm-ascend=={va.version}", force=True)])]
    if selected is not None and "ascend" not in [p.strip() for p in selected.split(",")]:
        return [Finding("vllm_ascend.plugin", FAIL, T("vllm_ascend.plugin.not_selected", selected=repr(selected)),
                        observed=selected, expected="unset, or a list containing ascend",
                        commands=[cmd("unset", "VLLM_PLUGINS")], fixable=Fixable.MANUAL)]
    others = sorted(name for d in _all_dists(ctx).values() if d.name != "vllm-ascend"
                    for name in d.entry_points.get("vllm.platform_plugins", {}))
    if others:
        return [Finding("vllm_ascend.plugin", WARN, T("vllm_ascend.plugin.others", others=", ".join(others)),
                        observed=", ".join(["ascend"] + others), commands=[cmd("export", "VLLM_PLUGINS=ascend")],
                        fixable=Fixable.MANUAL)]
    return [Finding("vllm_ascend.plugin", OK, T("vllm_ascend.plugin.ok", target=plugins["ascend"]), observed=plugins["ascend"])]


def vllm_ascend_triton(ctx: Context) -> Iterable[Finding]:
    va, r = _judged_release(ctx)
    if va is None or r is None:
        return []
    ta = ctx.facts.dist("triton-ascend")
    mainline = ctx.facts.dist("triton")
    if ta is not None and mainline is not None:
        return [Finding("vllm_ascend.triton", FAIL, T("vllm_ascend.triton.both", triton=mainline.version, version=ta.version),
                        observed=f"triton {mainline.version} + triton-ascend {ta.version}", expected="triton-ascend only",
                        hint=T("vllm_ascend.triton.both.hint"), fixable=Fixable.AUTO,
                        commands=[C.pip_uninstall(ctx, "triton", "triton-ascend"),
                                  C.pip_install(ctx, f"triton-ascend=={ta.version}")])]
    accepted = r.triton_ascend_accepted
    if ctx.hardware == "310P" and ta is not None:
        return [Finding("vllm_ascend.triton", WARN, T("vllm_ascend.triton.on_310p"), observed=ta.version,
                        commands=[C.pip_uninstall(ctx, "triton-ascend")], fixable=Fixable.AUTO)]
    if accepted and ta is None and ctx.hardware != "310P":
        return [_missing("vllm_ascend.triton", "triton-ascend", accepted[0], ctx, r.source_of("triton_ascend"))]
    if accepted and ta is not None and not any(same_release(ta.version, v) for v in accepted):
        return [_mismatch(ctx, "vllm_ascend.triton", "triton-ascend", ta.version, r, _or(accepted),
                          [C.pip_install(ctx, f"triton-ascend=={accepted[0]}")], r.source_of("triton_ascend"))]
    if mainline is not None:
        return [Finding("vllm_ascend.triton", WARN, T("vllm_ascend.triton.mainline", triton=mainline.version),
                        observed=mainline.version, commands=[C.pip_uninstall(ctx, "triton")], fixable=Fixable.AUTO)]
    if ta is not None and not accepted:
        return [Finding("vllm_ascend.triton", WARN, T("vllm_ascend.triton.unused", version=ta.version, release=r.vllm_ascend),
                        observed=ta.version, expected="not installed", commands=[C.pip_uninstall(ctx, "triton-ascend")],
                        fixable=Fixable.AUTO)]
    if ta is not None:
        return [Finding("vllm_ascend.triton", OK, T("vllm_ascend.triton.ok", version=ta.version),
                        observed=ta.version, expected=_or(accepted) if accepted else None)]
    return []


def _spec_check(ctx: Context, name: str, fid: str) -> Iterable[Finding]:
    va, r = _judged_release(ctx)
    if va is None or r is None:
        return []
    spec = getattr(r, name)
    d = ctx.facts.dist(name)
    if spec is None:
        return []
    if d is None:
        return [_missing(fid, name, spec, ctx, r.source_of(name))]
    if satisfies(d.version, spec) is False:
        why = T("vllm_ascend.numpy.why") if name == "numpy" else ""
        return [Finding(fid, FAIL, T("vllm_ascend.spec.unsatisfied", name=name, version=d.version, release=r.vllm_ascend,
                                     spec=spec, why=why),
                        observed=d.version, expected=spec, commands=[C.pip_install(ctx, f"{name}{spec}")],
                        fixable=Fixable.AUTO, source=r.source_of(name))]
    return [Finding(fid, OK, T("vllm_ascend.spec.ok", name=name, version=d.version, spec=spec),
                    observed=d.version, expected=spec, source=r.source_of(name))]


def vllm_ascend_numpy(ctx: Context) -> Iterable[Finding]:
    return _spec_check(ctx, "numpy", "vllm_ascend.numpy")


def vllm_ascend_transformers(ctx: Context) -> Iterable[Finding]:
    return _spec_check(ctx, "transformers", "vllm_ascend.transformers")


def vllm_ascend_known_problems(ctx: Context) -> Iterable[Finding]:
    va, r = _judged_release(ctx)
    if va is None or r is None or not r.known_problems:
        return []
    return [Finding("vllm_ascend.known_problems", INFO,
                    T("vllm_ascend.known_problems.some", count=len(r.known_problems), release=r.vllm_ascend,
                      first=r.known_problems[0].summary_words),
                    commands=[cmd("ascend-doctor", "matrix", "explain", r.vllm_ascend,
                                    label=T("vllm_ascend.known_problems.some.hint"))],
                    evidence=[T("vllm_ascend.known_problems.item", summary=kp.summary_words, source=kp.source)
                              for kp in r.known_problems])]


RULES = (
    rule("torch.version", torch_version, f"{VA_ISSUES}/5710; {WHEEL_METADATA}", fixer="torch"),
    rule("torch.build", torch_build, f"{TORCH_NPU}/README.md", fixer="torch"),
    rule("torch.companions", torch_companions, "matrices/torch-npu.toml", fixer="torch"),
    rule("torch_npu.version", torch_npu_version, f"{VERSIONING}; {WHEEL_METADATA}", fixer="torch_npu"),
    rule("torch_npu.cann", torch_npu_cann, f"{TORCH_NPU}/COMPATIBILITY.en.md"),
    rule("vllm.version", vllm_version, VERSIONING, fixer="vllm"),
    rule("vllm.local_version", vllm_local_version, f"{VLLM_ASCEND}/vllm_ascend/utils.py"),
    rule("vllm_ascend.installed", vllm_ascend_installed, "matrices/vllm-ascend.toml", fixer="vllm_ascend"),
    rule("vllm_ascend.plugin", vllm_ascend_plugin, f"{VLLM_ASCEND}/setup.py", fixer="vllm_ascend", reinstall=True),
    rule("vllm_ascend.triton", vllm_ascend_triton, f"{VLLM_ASCEND}/Dockerfile; {WHEEL_METADATA}", fixer="triton"),
    rule("vllm_ascend.numpy", vllm_ascend_numpy, WHEEL_METADATA, fixer="row_packages"),
    rule("vllm_ascend.transformers", vllm_ascend_transformers, WHEEL_METADATA, fixer="row_packages"),
    rule("vllm_ascend.known_problems", vllm_ascend_known_problems, "matrices/vllm-ascend.toml"),
)
