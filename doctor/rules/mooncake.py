"""Mooncake: which build is installed and where, whether the Ascend transport is in it, whether
the loader finds it, and whether the config, the environment, the serve command and the master
fit (docs/sources/mooncake.md). The judgement lives in doctor.rules.mooncake_*; these rules pick
the inputs and turn the results into findings.
"""
from __future__ import annotations

import posixpath
import shlex
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from packaging.version import Version

from doctor.facts import ElfFacts, MooncakeDist, MooncakeFacts, PackagesFacts
from doctor.findings import Fixable, FAIL, INFO, OK, SKIP, WARN, Command, Datum, Finding, cmd
from doctor.i18n import T, Text, join
from doctor.rules import mooncake_config as mconfig
from doctor.rules import mooncake_env as envvars
from doctor.parse import master_http as master
from doctor.parse import serveargs
from doctor.rules.issues import Issue, worst_first
from doctor.parse.libnames import ASCEND_DEPS, CUDA_DEPS, is_mooncake_lib, lib_base
from doctor.parse.sizes import human
from doctor.versions import pep440, same_release
from doctor.matrix.model import Matrix, Release
from doctor.record import record
from doctor.matrix.query import key_windows, threshold
from doctor.rules import commands as C
from doctor.rules.base import Context, rule
from doctor.rules.sources import MOONCAKE, VLLM_ASCEND_ISSUES

LAYER = "mooncake"
NPU_DIST = "mooncake-transfer-engine-npu"
DOC = MOONCAKE
SOURCE = DOC
LOADER_ISSUE = f"{VLLM_ASCEND_ISSUES}/6949"
_ZERO = Version("0")  # an unparsable version sorts first


# -- shared inputs --------------------------------------------------------------------------------


def _m(ctx: Context) -> Optional[MooncakeFacts]:
    return ctx.facts.mooncake


def _env(ctx: Context) -> Dict[str, str]:
    return ctx.env


def _vllm_ascend(ctx: Context) -> Optional[str]:
    return ctx.facts.version_of("vllm-ascend") or (ctx.release.vllm_ascend if ctx.release else None)


def _python(ctx: Context) -> str:
    py = ctx.facts.python
    return (py.executable if py and py.executable else None) or "python3"


def _serve(ctx: Context) -> Optional[serveargs.ServeCommand]:
    m = _m(ctx)
    if m is None or m.serve_args is None:
        return None
    return serveargs.parse_command(m.serve_args, ctx.facts.env)


def _finding(fid: str, i: Issue, **kw: Any) -> Finding:
    return Finding(fid, i.status, i.title, observed=i.observed, expected=i.expected, hint=i.hint,
                   fixable=i.fixable if i.status in (FAIL, WARN) else Fixable.NONE, source=i.source,
                   evidence=list(i.evidence), **kw)


def _base(path: str) -> str:
    return posixpath.basename(path)


def _owner(m: MooncakeFacts) -> Optional[MooncakeDist]:
    """The distribution whose RECORD holds the mooncake package that is imported."""
    if m.package_dir is None:
        return None
    site = posixpath.dirname(m.package_dir)
    owners = [d for d in m.dists if d.owns_package and d.location.rstrip("/") == site.rstrip("/")]
    return next((d for d in owners if d.name == NPU_DIST), owners[0] if owners else None)


def install_kind(m: MooncakeFacts) -> str:
    """npu-wheel / other-wheel / source / off-path / metadata-only / none."""
    owner = _owner(m)
    if m.package_dir is None:
        if m.off_path_dirs:
            return "off-path"
        return "metadata-only" if m.dists else "none"
    if owner is None:
        return "source"
    return "npu-wheel" if owner.name == NPU_DIST else "other-wheel"


def config_knowledge(matrix: Matrix) -> Dict[str, Any]:
    """What the config check reads from the matrix: which vllm-ascend reads which key, and the
    Mooncake releases behaviour changed at (ConfigContext keyword arguments)."""
    return dict(keys=key_windows(matrix, "config"), ssd_offload_since=threshold(matrix, "mooncake_ssd_offload"),
                since={t.name: t.version for t in matrix.thresholds})


def env_knowledge(matrix: Matrix) -> Dict[str, Any]:
    """What the environment check reads from the matrix (check_env keyword arguments)."""
    return dict(since={t.name: t.version for t in matrix.thresholds})


def serve_knowledge(matrix: Matrix) -> Dict[str, Any]:
    """What the serve-command check reads from the matrix (ServeContext keyword arguments)."""
    return dict(extra_keys={f: key_windows(matrix, f) for f in ("p2p", "layerwise", "store")},
                backends={b: w[0] for b, w in key_windows(matrix, "store_backend").items()})


def _host_glibc(ctx: Context) -> Optional[str]:
    return ctx.facts.python.glibc if ctx.facts.python else None


def _glibc_too_old(ctx: Context) -> bool:
    g = _host_glibc(ctx)
    gv, want = pep440(g), pep440(threshold(ctx.matrix, "mooncake_npu_wheel_glibc"))
    return bool(gv and want and gv < want)


def _remedy(ctx: Context) -> Tuple[Text, Fixable, List[Command]]:
    """(what installs the right Mooncake for this host and release, fixable, the command)."""
    r = ctx.release
    py = _python(ctx)
    first, glibc_need = threshold(ctx.matrix, "mooncake_first_npu_wheel"), threshold(ctx.matrix, "mooncake_npu_wheel_glibc")
    want = r.mooncake if r and r.mooncake else first
    pip_ok = (r is None or r.mooncake_install == "pip" or not r.mooncake) and not _glibc_too_old(ctx)
    if pip_ok:
        return T("mooncake.remedy.pip"), Fixable.AUTO, [C.pip_install(ctx, f"{NPU_DIST}=={want}", no_deps=False)]
    why = T("mooncake.remedy.no_wheel", want=want, first=first) if not _glibc_too_old(ctx) \
        else T("mooncake.remedy.old_glibc", glibc=_host_glibc(ctx), needs=glibc_need)
    return T("mooncake.remedy.build", why=why), Fixable.AUTO, [cmd("ascend-doctor", "mooncake", "build", "--tag", f"v{want}",
                                                           "--python", py)]


def _connector_needs_mooncake(cmd: Optional[serveargs.ServeCommand]) -> Optional[str]:
    if cmd is None:
        return None
    data, _res = serveargs.kv_config(cmd)
    if not data:
        return None
    name = data.get("kv_connector")
    fam = serveargs.family(name)
    if fam is None:
        return None
    extra = data.get("kv_connector_extra_config") or {}
    if fam == "store" and isinstance(extra, dict) and str(extra.get("backend", "mooncake")).lower() != "mooncake":
        return None
    return str(name)


# -- installed -------------------------------------------------------------------------------------


@record(frozen=True)
class _Inputs:
    """What every check of mooncake.installed reads, made once per run."""

    ctx: Context
    m: MooncakeFacts
    kind: str  # install_kind(m)
    remedy: Text  # what installs the right Mooncake for this host and release
    fixable: Fixable
    fix_cmds: List[Command]
    wanted: Optional[str]  # the release row's Mooncake
    source: str
    needs: Optional[str]  # the serve command's connector that needs Mooncake
    python: str


def mooncake_installed(ctx: Context) -> Iterable[Finding]:
    """One check per way Mooncake can be installed (install_kind), each a few lines."""
    m, r, pk = _m(ctx), ctx.release, ctx.facts.packages
    if m is None:
        return _installed_from_dists(ctx, pk) if pk is not None else []
    remedy, fixable, fix_cmds = _remedy(ctx)
    i = _Inputs(ctx=ctx, m=m, kind=install_kind(m), remedy=remedy, fixable=fixable, fix_cmds=fix_cmds,
                wanted=r.mooncake if r else None, source=r.source_of("mooncake") if r else SOURCE,
                needs=_connector_needs_mooncake(_serve(ctx)), python=_python(ctx))
    early = _INSTALL_KINDS.get(i.kind)
    if early is not None:
        return early(i)
    mixed = _mixed(i)
    if mixed:
        return mixed
    if i.kind == "other-wheel":
        return _other_wheel(i)
    return _package(i)


def _not_installed(i: _Inputs) -> List[Finding]:
    r = i.ctx.release
    if i.needs:
        return [Finding("mooncake.installed", FAIL, T("mooncake.installed.needed", needs=i.needs, python=i.python),
                        observed="not installed", expected=i.wanted or NPU_DIST,
                        hint=i.remedy, commands=i.fix_cmds, fixable=i.fixable, source=i.source)]
    if _env(i.ctx).get("MOONCAKE_CONFIG_PATH"):
        return [Finding("mooncake.installed", WARN, T("mooncake.installed.config_without_mooncake"),
                        observed="not installed", expected=i.wanted or NPU_DIST,
                        hint=i.remedy, commands=i.fix_cmds, fixable=i.fixable, source=i.source)]
    if r is not None and r.mooncake:
        return [Finding("mooncake.installed", INFO, T("mooncake.installed.optional"),
                        observed="not installed", expected=r.mooncake, hint=i.remedy, commands=i.fix_cmds,
                        source=i.source)]
    return []


def _off_path(i: _Inputs) -> List[Finding]:
    where = i.m.off_path_dirs[0]
    site = posixpath.dirname(where)
    return [Finding("mooncake.installed", FAIL if i.needs else WARN, T("mooncake.installed.off_path", site=site, python=i.python),
                    observed=where, expected="on sys.path", hint=T("mooncake.installed.off_path.hint", site=shlex.quote(site)),
                    fixable=Fixable.MANUAL, source=f"{DOC}#install")]


def _metadata_only(i: _Inputs) -> List[Finding]:
    d = i.m.dists[0]
    return [Finding("mooncake.installed", FAIL, T("mooncake.installed.metadata_only", name=d.name, version=d.version),
                    observed=f"{d.name} {d.version} (no mooncake/)", expected="mooncake/ in " + d.location,
                    hint=T("mooncake.installed.reinstall_hint"),
                    commands=[C.pip_install(i.ctx, f"{d.name}=={d.version}", force=True)],
                    fixable=Fixable.AUTO, source=SOURCE)]


# install kinds judged before the package directory is looked at (they have none)
_INSTALL_KINDS: Dict[str, Callable[[_Inputs], List[Finding]]] = {
    "none": _not_installed, "off-path": _off_path, "metadata-only": _metadata_only}


def _site(m: MooncakeFacts) -> str:
    package_dir = m.package_dir
    assert package_dir is not None  # install_kind: only none, off-path and metadata-only (judged first) lack one
    return posixpath.dirname(package_dir)


def _mixed(i: _Inputs) -> List[Finding]:
    """Several distributions own the imported package: uninstall them, then install one."""
    m, site = i.m, _site(i.m)
    sharing = [d for d in m.dists if d.owns_package and d.location.rstrip("/") == site.rstrip("/")]
    if len(sharing) <= 1:
        return []
    names = [d.name for d in sharing]
    return [Finding("mooncake.installed", FAIL,
                    T("mooncake.installed.mixed", dists=join((f"{d.name} {d.version}" for d in sharing), "sep.and"),
                      package=m.package_dir),
                    observed=", ".join(d.name for d in sharing), expected=f"{NPU_DIST} only",
                    hint=T("mooncake.installed.uninstall_then", names=join(names), remedy=i.remedy),
                    commands=[C.pip_uninstall(i.ctx, *names)] + i.fix_cmds,
                    fixable=i.fixable, source=i.source, evidence=[f"package: {m.package_dir}"])]


def _other_wheel(i: _Inputs) -> List[Finding]:
    """A wheel other than the NPU one owns the package: fine when it has the Ascend transport."""
    m, owner = i.m, _owner(i.m)
    assert owner is not None  # install_kind: a wheel other than the NPU one owns the package
    state = transport_state(m, package_only=True)
    if state[0] != "ascend":
        return [Finding("mooncake.installed", FAIL,
                        T("mooncake.installed.not_ascend_build", name=owner.name, version=owner.version, npu=NPU_DIST,
                          first=threshold(i.ctx.matrix, "mooncake_first_npu_wheel")),
                        observed=f"{owner.name} {owner.version}", expected=f"{NPU_DIST} {i.wanted or ''}".strip(),
                        hint=T("mooncake.installed.uninstall_then", names=owner.name, remedy=i.remedy),
                        commands=[C.pip_uninstall(i.ctx, owner.name)] + i.fix_cmds,
                        fixable=i.fixable, source=i.source,
                        evidence=[f"package: {m.package_dir}", f"installer: {owner.installer or '?'}"])]
    return [Finding("mooncake.installed", INFO, T("mooncake.installed.local_wheel", name=owner.name, version=owner.version),
                    observed=f"{owner.name} {owner.version}", expected=i.wanted, source=i.source)]


def _package(i: _Inputs) -> List[Finding]:
    """The NPU wheel or a source build: what it is, then how it compares with the release row."""
    m, r, kind = i.m, i.ctx.release, i.kind
    version = m.version
    where = _site(m)
    label = T("mooncake.installed.wheel", name=NPU_DIST, version=version) if kind == "npu-wheel" else \
        (T("mooncake.installed.source_build", version=version, where=where) if version
         else T("mooncake.installed.source_build_unknown", where=where))
    evidence = [f"package: {m.package_dir}"] + ([f"version from {m.version_source}"] if m.version_source else [])
    if m.master_version is not None and not version:
        evidence.append(f"{' '.join(m.master_version.argv)}: {(m.master_version.stdout or m.master_version.stderr or m.master_version.error or '').strip()[:200]}")
    if len(m.package_dirs) > 1:
        evidence.append("other copies (not imported): " + ", ".join(m.package_dirs[1:]))
    if r is None or not r.mooncake:
        return [Finding("mooncake.installed", INFO, label, observed=version or kind,
                        evidence=evidence, source=i.source)]
    judge = _npu_wheel if kind == "npu-wheel" else _source_build
    return judge(i, r, label, evidence)


def _npu_wheel(i: _Inputs, r: Release, label: Text, evidence: List[str]) -> List[Finding]:
    version = i.m.version
    if same_release(version, r.mooncake):
        key = "mooncake.installed.wheel_ok_pip" if r.mooncake_install == "pip" else "mooncake.installed.wheel_ok"
        return [Finding("mooncake.installed", OK, T(key, label=label, release=r.vllm_ascend),
                        observed=version, expected=r.mooncake, evidence=evidence, source=i.source)]
    older = (pep440(version) or _ZERO) < (pep440(r.mooncake) or _ZERO)
    if r.mooncake_install == "source" and not older:
        return [Finding("mooncake.installed", INFO,
                        T("mooncake.installed.wheel_newer_than_source", label=label, release=r.vllm_ascend, row=r.mooncake),
                        observed=version, expected=r.mooncake, evidence=evidence, source=i.source)]
    return [Finding("mooncake.installed", WARN if older else INFO,
                    T("mooncake.installed.wheel_other", label=label, release=r.vllm_ascend, row=r.mooncake),
                    observed=version, expected=r.mooncake,
                    hint=i.remedy if older else None, fixable=i.fixable if older else Fixable.NONE,
                    commands=i.fix_cmds if older else [],
                    evidence=evidence, source=i.source)]


def _source_build(i: _Inputs, r: Release, label: Text, evidence: List[str]) -> List[Finding]:
    version = i.m.version
    if version and same_release(version, r.mooncake):
        return [Finding("mooncake.installed", OK, T("mooncake.installed.source_ok", label=label, release=r.vllm_ascend,
                                                    row=r.mooncake),
                        observed=version, expected=r.mooncake, evidence=evidence, source=i.source)]
    if r.mooncake_install == "pip":
        note = T("mooncake.installed.note_old_glibc") if _glibc_too_old(i.ctx) else T("mooncake.installed.note_pip", remedy=i.remedy)
        return [Finding("mooncake.installed", INFO,
                        T("mooncake.installed.source_vs_pip", label=label, release=r.vllm_ascend, npu=NPU_DIST, row=r.mooncake,
                          note=note),
                        observed=version or "source build", expected=r.mooncake, evidence=evidence, source=i.source)]
    if not version:
        return [Finding("mooncake.installed", INFO,
                        T("mooncake.installed.source_unknown_version", label=label, release=r.vllm_ascend, row=r.mooncake),
                        observed="unknown", expected=r.mooncake, evidence=evidence, source=i.source)]
    return [Finding("mooncake.installed", WARN,
                    T("mooncake.installed.source_other", label=label, release=r.vllm_ascend, row=r.mooncake),
                    observed=version, expected=r.mooncake, hint=i.remedy, commands=i.fix_cmds, fixable=i.fixable,
                    evidence=evidence, source=i.source)]


def _installed_from_dists(ctx: Context, pk: PackagesFacts) -> List[Finding]:
    """A snapshot from before the mooncake probe existed: judge the distribution names only."""
    r = ctx.release
    builds = sorted(d for d in pk.dists if d.startswith("mooncake-transfer-engine"))
    if not builds:
        if r is not None and r.mooncake:
            return [Finding("mooncake.installed", INFO, T("mooncake.installed.optional"),
                            observed="not installed", expected=r.mooncake, source=r.source_of("mooncake"))]
        return []
    if NPU_DIST not in builds:
        d = pk.dists[builds[0]]
        return [Finding("mooncake.installed", FAIL,
                        T("mooncake.installed.no_transport_dist", name=d.display_name or d.name, version=d.version),
                        observed=f"{d.name} {d.version}", expected=NPU_DIST, fixable=Fixable.AUTO)]
    d = pk.dists[NPU_DIST]
    return [Finding("mooncake.installed", OK, T("mooncake.installed.wheel", name=NPU_DIST, version=d.version),
                    observed=d.version, expected=r.mooncake if r else None)]


# -- transport -------------------------------------------------------------------------------------


def _deps(e: ElfFacts, prefixes: Tuple[str, ...]) -> List[str]:
    return [n for n in e.needed if lib_base(n).startswith(prefixes)]


def transport_state(m: MooncakeFacts, package_only: bool = False) -> Tuple[str, Optional[ElfFacts], List[str]]:
    """(state, the deciding object, evidence). state: ascend / ascend-builtin / unlinked / cuda /
    legacy-hccl / none / unknown."""
    elfs = [e for e in m.elf if not package_only or (m.package_dir and e.path.startswith(m.package_dir + "/"))]
    evidence = [f"{e.path}: " + (e.error or ("NEEDED " + ", ".join(e.needed) if e.needed else "no NEEDED entries"))
                for e in elfs]
    transports = [e for e in elfs if _base(e.path).startswith("ascend_transport")]
    if _chain_known_without_transport(m, elfs):
        # A stray ascend_transport.so elsewhere (an older build in /usr/local/lib) is not this build's.
        transports = []
    # The one the loader would use first: in the package (wheel), then the install prefix.
    for t in transports:
        if not t.error and _deps(t, ASCEND_DEPS):
            return "ascend", t, evidence
    engines = [e for e in elfs if not _base(e.path).startswith("ascend_transport")]
    for e in engines:
        # v0.3.7.post2 compiled the transport into transfer_engine / engine.so directly.
        if not e.error and (_deps(e, ("libllm_datadist", "libhixl", "libadxl"))
                            or (_deps(e, ("libascendcl",)) and e.ascend_strings)):
            return "ascend-builtin", e, evidence
    if transports:
        return "unlinked", transports[0], evidence
    cuda = next((e for e in elfs if not e.error and _deps(e, CUDA_DEPS)), None)
    if cuda is not None:
        return "cuda", cuda, evidence
    hccl = next((e for e in elfs if not e.error and _deps(e, ("libhccl",))), None)
    if hccl is not None:
        return "legacy-hccl", hccl, evidence
    if any(not e.error for e in elfs):
        return "none", None, evidence
    return "unknown", None, evidence


def _chain_known_without_transport(m: MooncakeFacts, elfs: List[ElfFacts]) -> bool:
    """The package's engine and every Mooncake library it pulls in were read, and none of them
    needs ascend_transport.so."""
    engines = [e for e in elfs if m.package_dir and e.path.startswith(m.package_dir + "/")
               and _base(e.path).startswith("engine") and not e.error]
    if not engines:
        return False
    if any(is_mooncake_lib(lk.name) and not lk.found for lk in m.lookups):
        return False  # part of the chain could not be followed
    names = {n for e in engines for n in e.needed} | {lk.name for lk in m.lookups}
    return not any(lib_base(n) == "ascend_transport" for n in names)


def mooncake_transport(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.package_dir is None:
        return []
    kind = install_kind(m)
    state, obj, evidence = transport_state(m, package_only=kind in ("npu-wheel", "other-wheel"))
    remedy, fixable, fix_cmds = _remedy(ctx)
    blocked = "mooncake.installed" if kind == "other-wheel" else None
    # transport_state names the deciding object for every state but none and unknown
    if state == "ascend" and obj is not None:
        deps = ", ".join(_deps(obj, ASCEND_DEPS + ("libmetadef", "libgraph")))
        return [Finding("mooncake.transport", OK, T("mooncake.transport.ascend", path=obj.path, deps=deps),
                        observed=obj.path, evidence=evidence, source=f"{DOC}#transport")]
    if state == "ascend-builtin" and obj is not None:
        return [Finding("mooncake.transport", OK,
                        T("mooncake.transport.builtin", name=_base(obj.path), deps=", ".join(_deps(obj, ASCEND_DEPS))),
                        observed=obj.path, evidence=evidence, source=f"{DOC}#transport")]
    if state == "unlinked" and obj is not None:
        detail = obj.error or "it does not link libascendcl / libllm_datadist"
        return [Finding("mooncake.transport", FAIL, T("mooncake.transport.unlinked", path=obj.path, detail=detail),
                        observed=detail, expected="NEEDED libascendcl.so, libllm_datadist.so",
                        hint=remedy, commands=fix_cmds, fixable=fixable, evidence=evidence, blocked_by=blocked,
                        source=f"{DOC}#transport")]
    if state == "unknown":
        return [Finding("mooncake.transport", WARN, T("mooncake.transport.unknown", package=m.package_dir),
                        observed="no engine*.so / ascend_transport.so", evidence=evidence, blocked_by=blocked,
                        hint=T("mooncake.transport.unknown.hint", python=shlex.quote(_python(ctx))),
                        fixable=Fixable.MANUAL, source=f"{DOC}#transport")]
    what = {
        "cuda": T("mooncake.transport.what_cuda", deps=", ".join(_deps(obj, CUDA_DEPS)) if obj else "CUDA"),
        "legacy-hccl": T("mooncake.transport.what_legacy"),
        "none": T("mooncake.transport.what_none"),
    }[state]
    return [Finding("mooncake.transport", FAIL, T("mooncake.transport.missing", package=m.package_dir, what=what),
                    observed=state, expected="ascend_transport.so linked with libascendcl",
                    hint=remedy, commands=fix_cmds, fixable=fixable, evidence=evidence, blocked_by=blocked,
                    source=f"{DOC}#build; {DOC}#transport")]


# -- loader path -----------------------------------------------------------------------------------


def mooncake_loader_path(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.package_dir is None or not m.lookups:
        return []
    bad = [lk for lk in m.lookups if not lk.found]
    out: List[Finding] = []
    stale = [d for d in m.ld_missing_dirs if "mooncake" in d]
    if stale:
        out.append(Finding("mooncake.loader_path", INFO,
                           T("mooncake.loader_path.stale_dir", dirs=", ".join(stale), package=m.package_dir),
                           observed=", ".join(stale), source=f"{DOC}#environment"))
    if not bad:
        how = sorted({f"{lk.name} via {lk.how}" for lk in m.lookups})
        out.insert(0, Finding("mooncake.loader_path", OK, T("mooncake.loader_path.ok", count=len(m.lookups)),
                              observed="; ".join(how[:6]), evidence=[f"{lk.name} -> {lk.found} ({lk.how})" for lk in m.lookups],
                              source="https://man7.org/linux/man-pages/man8/ld.so.8.html"))
        return out
    status = WARN if ctx.build else FAIL
    own = [lk for lk in bad if is_mooncake_lib(lk.name)]
    cann = [lk for lk in bad if lk not in own]
    evidence = [f"{lk.name} (needed by {lk.needed_by}): not found" + (f"; it is in {', '.join(lk.on_disk)}" if lk.on_disk else "")
                for lk in bad] + [f"LD_LIBRARY_PATH={':'.join(m.ld_library_path)}", f"ld.so.cache: {m.ld_cache}"]
    if own:
        first = own[0]
        where = posixpath.dirname(first.on_disk[0]) if first.on_disk else None
        if where:
            title = T("mooncake.loader_path.not_on_path", name=first.name, where=where)
            # ldconfig only caches lib*.so names: no help for ascend_transport.so in the same directory.
            unnamed = [_base(t) for t in m.transport_files if posixpath.dirname(t) == where and not _base(t).startswith("lib")]
            if first.name.startswith("lib") and not unnamed:
                hint = T("mooncake.loader_path.not_on_path.hint_ldconfig", where=shlex.quote(where))
            else:
                hint = T("mooncake.loader_path.not_on_path.hint_env", where=shlex.quote(where), other=(unnamed or [first.name])[0])
        else:
            title = T("mooncake.loader_path.nowhere", name=first.name, needed_by=_base(first.needed_by))
            hint = _remedy(ctx)[0]
        out.insert(0, Finding("mooncake.loader_path", status, title, observed=f"{first.name} not found",
                              expected=where or first.name, hint=hint, fixable=Fixable.MANUAL, evidence=evidence,
                              source=LOADER_ISSUE))
        return out
    c = ctx.facts.cann
    set_env = (c.set_env if c and c.set_env else "/usr/local/Ascend/ascend-toolkit/set_env.sh")
    names = ", ".join(sorted({lk.name for lk in cann}))
    on_disk = [d for lk in cann for d in lk.on_disk]
    if on_disk:
        title, hint = T("mooncake.loader_path.cann_not_sourced", names=names), T("mooncake.loader_path.source_hint", set_env=shlex.quote(set_env))
    else:
        title, hint = T("mooncake.loader_path.cann_missing", names=names), T("mooncake.loader_path.cann_missing.hint")
    out.insert(0, Finding("mooncake.loader_path", status, title, observed=names, hint=hint,
                          fixable=Fixable.MANUAL if on_disk else Fixable.VENDOR, evidence=evidence, source=f"{DOC}#transport"))
    return out


# -- config, env, serve args ------------------------------------------------------------------------

CONFIG_ERRORS = {"not found": "mooncake.config.file.not_found", "is a directory": "mooncake.config.file.directory",
                 "empty": "mooncake.config.file.empty", "not readable": "mooncake.config.file.unreadable"}


def mooncake_config(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.config_var is None:
        return []
    var = m.config_var
    if not m.config_found:
        key = CONFIG_ERRORS.get(m.config_error or "")
        reason = T(key) if key else (m.config_error or T("mooncake.config.file.unreadable_other"))
        root = ctx.facts.host.root
        where = T("mooncake.config.file.under_root", root=root) if root not in ("", "/") else ""
        # In a docker build the config is often mounted only at run time.
        return [Finding("mooncake.config", WARN if ctx.build else FAIL,
                        T("mooncake.config.file.missing", var=var, reason=reason, where=where),
                        observed=reason, expected="a JSON file", hint=T("mooncake.config.file.missing.hint"),
                        fixable=Fixable.MANUAL, source=mconfig.SOURCE)]
    cmd = _serve(ctx)
    # The build machine's memory says nothing about the serving host's.
    mem = (None, None) if ctx.build else (m.mem_total_kb, m.mem_available_kb)
    cctx = mconfig.ConfigContext(vllm_ascend=_vllm_ascend(ctx), mooncake=m.version, env=_env(ctx),
                                 mem_total_kb=mem[0], mem_available_kb=mem[1],
                                 ranks=cmd.ranks if cmd and not cmd.error else 1, path=var,
                                 **config_knowledge(ctx.matrix))
    issues = worst_first(mconfig.check_text(m.config_text or "", cctx))
    if ctx.build:
        issues.append(Issue(INFO, T("mooncake.config.memory_build_stage")))
    elif m.mem_total_kb is None:
        issues.append(Issue(INFO, T("mooncake.config.memory_unknown")))
    return [_finding("mooncake.config", i) for i in issues]


def mooncake_env(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None:
        return []
    cann = ctx.facts.cann.version if ctx.facts.cann else None
    issues = envvars.check_env(_env(ctx), vllm_ascend=_vllm_ascend(ctx), mooncake=m.version, cann=cann,
                               hardware=ctx.hardware, **env_knowledge(ctx.matrix))
    return [_finding("mooncake.env", i) for i in worst_first(issues)]


def mooncake_serve_args(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    cmd = _serve(ctx)
    if m is None or cmd is None:
        return []
    sctx = serveargs.ServeContext(vllm_ascend=_vllm_ascend(ctx), connectors=m.connectors, modules=m.vllm_ascend_modules,
                                  vllm_connectors=m.vllm_connectors, env=_env(ctx),
                                  mooncake_installed=install_kind(m) not in ("none", "off-path", "metadata-only"),
                                  **serve_knowledge(ctx.matrix))
    issues = worst_first(serveargs.check(cmd, sctx))
    src = m.serve_args_source
    out = []
    for i in issues:
        f = _finding("mooncake.serve_args", i)
        more: List[Datum] = [f"from {src}"]
        if m.connector_files and i.status == OK:
            more.append("connectors read from " + ", ".join(m.connector_files))
        f.evidence = list(f.evidence) + more
        out.append(f)
    return out


# -- master -----------------------------------------------------------------------------------------


def mooncake_master(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.master is None:
        return []
    mf = m.master
    where = f"{mf.address} (from {mf.source})"
    src = f"{DOC}#master"
    if mf.skipped or ctx.build:  # a `docker build` has no master: it is checked where vLLM runs
        return [Finding("mooncake.master", SKIP, T("mooncake.master.skipped_build", where=where,
                                                   reason=ctx.stage_reason_text()), source=src)]
    if mf.error:
        return [Finding("mooncake.master", FAIL, T("mooncake.master.bad_address", where=where, error=mf.error),
                        observed=mf.address, expected="host:port", fixable=Fixable.MANUAL, source=src)]
    out: List[Finding] = []
    health = master.parse_health(mf.health)
    ev = [f"TCP {mf.host}:{mf.port}: " + ("connected" if mf.tcp_ok else (mf.tcp_error or "not tried")) + f" ({mf.tcp_ms:g} ms)"
          if mf.port else "RPC port not given"]
    for h in (mf.health, mf.metrics, mf.summary):
        if h is not None:
            ev.append(f"GET {h.url}: " + (f"HTTP {h.status} {h.content_type}".strip() if h.status is not None else (h.error or "?"))
                      + f" ({h.elapsed_ms:g} ms)")
    if mf.port and not mf.tcp_ok:
        key = "mooncake.master.silent" if mf.tcp_timed_out else "mooncake.master.refused"
        out.append(Finding("mooncake.master", FAIL, T(key, where=where, error=mf.tcp_error),
                           observed=mf.tcp_error, expected="a listening mooncake_master",
                           hint=T("mooncake.master.down.hint", host=mf.host, port=mf.port),
                           fixable=Fixable.MANUAL, evidence=ev, source=src))
    if not health.reachable:
        if out:
            out[0].evidence = list(out[0].evidence) + [f"metrics endpoint {mf.metrics_url}: {health.detail}"]
            return out
        return [Finding("mooncake.master", WARN, T("mooncake.master.no_http", where=where, url=mf.metrics_url, detail=health.detail),
                        observed=health.detail, expected=f"{mf.metrics_url}/health",
                        hint=T("mooncake.master.no_http.hint"), fixable=Fixable.MANUAL, evidence=ev, source=src)]
    fmt = {"plain": T("mooncake.master.health_plain"),
           "json": T("mooncake.master.health_json", role=health.role, ha_state=health.ha_state, ready=health.ready),
           "other": T("mooncake.master.health_other", detail=health.detail)}[health.format]
    if health.format == "json" and health.ready is False:
        out.append(Finding("mooncake.master", WARN, T("mooncake.master.not_ready", where=where, health=fmt),
                           observed=health.detail, expected="service_ready=true",
                           hint=T("mooncake.master.not_ready.hint", url=mf.metrics_url),
                           fixable=Fixable.MANUAL, evidence=ev, source=src))
    elif health.format == "other":
        out.append(Finding("mooncake.master", WARN, T("mooncake.master.not_mooncake", url=mf.metrics_url, health=fmt),
                           observed=health.detail, evidence=ev, fixable=Fixable.MANUAL, source=src))
    elif not out:
        out.append(Finding("mooncake.master", OK, T("mooncake.master.ok", where=where, health=fmt),
                           observed=health.format, evidence=ev, source=src))
        json_since = pep440(threshold(ctx.matrix, "mooncake_master_health_json"))  # the schema checks it is PEP 440
        if health.format == "plain" and m.version and json_since is not None and (pep440(m.version) or _ZERO) >= json_since:
            out.append(Finding("mooncake.master", INFO, T("mooncake.master.older_than_client", version=m.version),
                               observed="plain OK", expected=f">= {m.version}", source=src))
    metrics = master.parse_metrics(mf.metrics.body) if mf.metrics and mf.metrics.status == 200 else {}
    summary = mf.summary.body if mf.summary and mf.summary.status == 200 else ""
    st = master.storage(metrics, summary)
    if st.capacity is None and not st.summary:
        return out
    figures = T("mooncake.master.figures", allocated=human(int(st.allocated or 0)), capacity=human(int(st.capacity or 0)),
                keys=st.keys if st.keys is not None else "?",
                clients=T("mooncake.master.figures.clients", clients=st.clients) if st.clients is not None else "")
    ev2 = [st.summary] if st.summary else []
    if not st.capacity:
        out.append(Finding("mooncake.master", INFO, T("mooncake.master.no_segment", figures=figures),
                           observed="0 B capacity", evidence=ev2, source=src))
    elif st.allocated is not None and st.allocated / st.capacity >= 0.95:
        out.append(Finding("mooncake.master", WARN, T("mooncake.master.nearly_full", figures=figures),
                           observed=f"{st.allocated / st.capacity:.0%}", expected="< 95%",
                           hint=T("mooncake.master.nearly_full.hint"), fixable=Fixable.MANUAL, evidence=ev2, source=src))
    else:
        out.append(Finding("mooncake.master", INFO, T("mooncake.master.storage", figures=figures),
                           observed=f"{human(int(st.capacity))} capacity", evidence=ev2, source=src))
    return out


def mooncake_probe_errors(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or not m.errors:
        return []
    return [Finding(f"{LAYER}.probe_error", WARN,  # the generic <layer>.probe_error
                    T("mooncake.probe_error.partial", error=m.errors[0]),
                    observed="; ".join(m.errors[:3]), evidence=list(m.errors))]


RULES = (
    rule("mooncake.installed", mooncake_installed, f"{DOC}#install", fixer="mooncake"),
    rule("mooncake.transport", mooncake_transport, f"{DOC}#transport", fixer="mooncake", reinstall=True),
    rule("mooncake.loader_path", mooncake_loader_path, f"{LOADER_ISSUE}; {DOC}#transport"),
    rule("mooncake.config", mooncake_config, f"{DOC}#config"),
    rule("mooncake.env", mooncake_env, f"{DOC}#environment"),
    rule("mooncake.serve_args", mooncake_serve_args, f"{DOC}#serve-args"),
    rule("mooncake.master", mooncake_master, f"{DOC}#master"),
    # the generic <layer>.probe_error, for the parts of the Mooncake probe that failed
    rule("mooncake.probe_error", mooncake_probe_errors, "docs/findings.md", why="why.generic.probe_error"),
)
