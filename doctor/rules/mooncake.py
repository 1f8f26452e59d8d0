"""Mooncake: which build is installed and where, whether the Ascend transport is in it, whether
the loader finds it, and whether the config, the environment, the serve command and the master
fit (facts/mooncake.md). The judgement lives in doctor.rules.mooncake_*; these rules pick the inputs
and turn the results into findings.
"""
from __future__ import annotations

import posixpath
from typing import Dict, Iterable, List, Optional, Tuple

from doctor.facts import ElfFacts, MooncakeFacts
from doctor.findings import FAIL, INFO, OK, WARN, Finding, msg
from doctor.rules import mooncake_config as mconfig
from doctor.rules import mooncake_env as envvars
from doctor.shell import mooncake_master as master
from doctor.parse import serveargs
from doctor.rules.issues import Issue, worst_first
from doctor.parse.libnames import ASCEND_DEPS, CUDA_DEPS, is_mooncake_lib, lib_base
from doctor.parse.sizes import human
from doctor.versions import pep440, same_release
from doctor.matrix.query import key_windows, threshold
from doctor.rules.base import Context, Rule

LAYER = "mooncake"
NPU_DIST = "mooncake-transfer-engine-npu"
SOURCE = "facts/mooncake.md"


# -- shared inputs --------------------------------------------------------------------------------


def _m(ctx: Context) -> Optional[MooncakeFacts]:
    return ctx.facts.mooncake


def _env(ctx: Context) -> Dict[str, str]:
    env = dict(ctx.facts.env)
    m = _m(ctx)
    if m is not None:
        env.update(m.serve_env)
    return env


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


def _finding(fid: str, i: Issue, **kw) -> Finding:
    return Finding(fid, i.status, msg(i.en, i.zh), observed=i.observed, expected=i.expected,
                   hint=msg(i.hint_en, i.hint_zh or i.hint_en) if i.hint_en else None,
                   fixable=i.fixable if i.status in (FAIL, WARN) else "none", source=i.source,
                   evidence=list(i.evidence), **kw)


def _base(path: str) -> str:
    return posixpath.basename(path)


def _owner(m: MooncakeFacts):
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


def _glibc_too_old(ctx: Context) -> bool:
    g = ctx.facts.python.glibc if ctx.facts.python else None
    gv, want = pep440(g), pep440(threshold(ctx.matrix, "mooncake_npu_wheel_glibc"))
    return bool(gv and want and gv < want)


def _remedy(ctx: Context) -> Tuple[str, str, str]:
    """(en, zh, fixable): what installs the right Mooncake for this host and release."""
    r = ctx.release
    py = _python(ctx)
    first, glibc_need = threshold(ctx.matrix, "mooncake_first_npu_wheel"), threshold(ctx.matrix, "mooncake_npu_wheel_glibc")
    want = r.mooncake if r and r.mooncake else first
    pip_ok = (r is None or r.mooncake_install == "pip" or not r.mooncake) and not _glibc_too_old(ctx)
    build = f"ascend-doctor mooncake build --tag v{want} --python {py}"
    if pip_ok:
        cmd = f"{py} -m pip install mooncake-transfer-engine-npu=={want}"
        return (f"{cmd}   (source CANN's set_env.sh before running vLLM)",
                f"{cmd}（运行 vLLM 前先 source CANN 的 set_env.sh）", "auto")
    why_en = (f"no NPU wheel exists for {want} (the first is {first})" if not _glibc_too_old(ctx)
              else f"glibc {ctx.facts.python.glibc} < {glibc_need}: the NPU wheel cannot be installed here")
    why_zh = (f"{want} 没有 NPU wheel（第一个是 {first}）" if not _glibc_too_old(ctx)
              else f"glibc {ctx.facts.python.glibc} < {glibc_need}：本机无法安装 NPU wheel")
    return (f"{build}   (pip is not enough: {why_en}; it builds with -DUSE_ASCEND_DIRECT=ON)",
            f"{build}（pip 不够：{why_zh}；会用 -DUSE_ASCEND_DIRECT=ON 编译）", "auto")


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


def mooncake_installed(ctx: Context) -> Iterable[Finding]:
    m, r, pk = _m(ctx), ctx.release, ctx.facts.packages
    if m is None:
        return _installed_from_dists(ctx) if pk is not None else []
    kind = install_kind(m)
    remedy_en, remedy_zh, fixable = _remedy(ctx)
    wanted = r.mooncake if r else None
    source = r.source_of("mooncake") if r else SOURCE
    needs = _connector_needs_mooncake(_serve(ctx))
    if kind == "none":
        env = _env(ctx)
        if needs:
            return [Finding("mooncake.installed", FAIL,
                            msg(f"{needs} needs Mooncake, but `import mooncake` fails for {_python(ctx)} "
                                "('Please install mooncake by following the instructions ...')",
                                f"{needs} 需要 Mooncake，但 {_python(ctx)} 无法 `import mooncake`"),
                            observed="not installed", expected=wanted or NPU_DIST,
                            hint=msg(remedy_en, remedy_zh), fixable=fixable, source=source)]
        if env.get("MOONCAKE_CONFIG_PATH"):
            return [Finding("mooncake.installed", WARN,
                            msg("MOONCAKE_CONFIG_PATH is set but Mooncake is not installed for this interpreter",
                                "设置了 MOONCAKE_CONFIG_PATH，但当前解释器没有安装 Mooncake"),
                            observed="not installed", expected=wanted or NPU_DIST,
                            hint=msg(remedy_en, remedy_zh), fixable=fixable, source=source)]
        if r is not None and r.mooncake:
            return [Finding("mooncake.installed", INFO,
                            msg("Mooncake is not installed (only needed for KV-cache pooling and PD disaggregation)",
                                "未安装 Mooncake（仅 KV Cache 池化和 PD 分离需要）"),
                            observed="not installed", expected=r.mooncake, hint=msg(remedy_en, remedy_zh),
                            source=source)]
        return []
    if kind == "off-path":
        where = m.off_path_dirs[0]
        site = posixpath.dirname(where)
        return [Finding("mooncake.installed", FAIL if needs else WARN,
                        msg(f"Mooncake was installed into {site} (CANN's python/site-packages, where `make install` "
                            f"puts it when set_env.sh was sourced), which is not on {_python(ctx)}'s sys.path",
                            f"Mooncake 安装在 {site}（source 过 set_env.sh 时 `make install` 的安装位置），"
                            f"但它不在 {_python(ctx)} 的 sys.path 中"),
                        observed=where, expected="on sys.path",
                        hint=msg(f"source the CANN set_env.sh (it puts {site} on PYTHONPATH), or: export PYTHONPATH={site}:$PYTHONPATH",
                                 f"source CANN 的 set_env.sh（会把 {site} 加入 PYTHONPATH），或：export PYTHONPATH={site}:$PYTHONPATH"),
                        fixable="manual", source="facts/mooncake.md §1.4")]
    if kind == "metadata-only":
        d = m.dists[0]
        return [Finding("mooncake.installed", FAIL,
                        msg(f"{d.name} {d.version} is recorded as installed but its mooncake package is missing",
                            f"记录显示已安装 {d.name} {d.version}，但 mooncake 包目录不存在"),
                        observed=f"{d.name} {d.version} (no mooncake/)", expected="mooncake/ in " + d.location,
                        hint=msg(f"{_python(ctx)} -m pip install --force-reinstall --no-deps {d.name}=={d.version}",
                                 f"{_python(ctx)} -m pip install --force-reinstall --no-deps {d.name}=={d.version}"),
                        fixable="auto", source=SOURCE)]
    owner = _owner(m)
    site = posixpath.dirname(m.package_dir)
    sharing = [d for d in m.dists if d.owns_package and d.location.rstrip("/") == site.rstrip("/")]
    if len(sharing) > 1:
        names = " ".join(d.name for d in sharing)
        return [Finding("mooncake.installed", FAIL,
                        msg(f"{' and '.join(f'{d.name} {d.version}' for d in sharing)} are both installed into {m.package_dir}: "
                            "its files are a mix of both builds (uninstalling either removes files of the other)",
                            f"{'、'.join(f'{d.name} {d.version}' for d in sharing)} 都安装到了 {m.package_dir}："
                            "其中的文件来自两个不同的构建（卸载任何一个都会删掉另一个的文件）"),
                        observed=", ".join(d.name for d in sharing), expected=f"{NPU_DIST} only",
                        hint=msg(f"{_python(ctx)} -m pip uninstall -y {names} && {remedy_en}",
                                 f"{_python(ctx)} -m pip uninstall -y {names} && {remedy_zh}"),
                        fixable=fixable, source=source, evidence=[f"package: {m.package_dir}"])]
    if kind == "other-wheel":
        state = transport_state(m, package_only=True)
        if state[0] != "ascend":
            return [Finding("mooncake.installed", FAIL,
                            msg(f"{owner.name} {owner.version} is not the Ascend build: only {NPU_DIST} (>= {threshold(ctx.matrix, 'mooncake_first_npu_wheel')}) "
                                "or a -DUSE_ASCEND_DIRECT=ON source build has the Ascend transport "
                                "('Unsupported transport ascend, please rebuild Mooncake')",
                                f"{owner.name} {owner.version} 不是昇腾版本：只有 {NPU_DIST}（>= {threshold(ctx.matrix, 'mooncake_first_npu_wheel')}）"
                                "或用 -DUSE_ASCEND_DIRECT=ON 源码编译的版本才含 Ascend 传输"),
                            observed=f"{owner.name} {owner.version}", expected=f"{NPU_DIST} {wanted or ''}".strip(),
                            hint=msg(f"{_python(ctx)} -m pip uninstall -y {owner.name} && {remedy_en}",
                                     f"{_python(ctx)} -m pip uninstall -y {owner.name} && {remedy_zh}"),
                            fixable=fixable, source=source,
                            evidence=[f"package: {m.package_dir}", f"installer: {owner.installer or '?'}"])]
        return [Finding("mooncake.installed", INFO,
                        msg(f"{owner.name} {owner.version} (a local wheel that has the Ascend transport)",
                            f"{owner.name} {owner.version}（本地构建的 wheel，含 Ascend 传输）"),
                        observed=f"{owner.name} {owner.version}", expected=wanted, source=source)]
    version = m.version
    label = f"{NPU_DIST} {version}" if kind == "npu-wheel" else \
        f"a source build ({'version ' + version if version else 'version unknown'}) in {posixpath.dirname(m.package_dir)}"
    label_zh = f"{NPU_DIST} {version}" if kind == "npu-wheel" else \
        f"源码编译版本（{'版本 ' + version if version else '版本未知'}），位于 {posixpath.dirname(m.package_dir)}"
    evidence = [f"package: {m.package_dir}"] + ([f"version from {m.version_source}"] if m.version_source else [])
    if m.master_version is not None and not version:
        evidence.append(f"{' '.join(m.master_version.argv)}: {(m.master_version.stdout or m.master_version.stderr or m.master_version.error or '').strip()[:200]}")
    if len(m.package_dirs) > 1:
        evidence.append("other copies (not imported): " + ", ".join(m.package_dirs[1:]))
    if r is None or not r.mooncake:
        return [Finding("mooncake.installed", INFO, msg(label, label_zh), observed=version or kind, evidence=evidence,
                        source=source)]
    if kind == "npu-wheel":
        if same_release(version, r.mooncake):
            how = "pip is enough" if r.mooncake_install == "pip" else "the NPU wheel"
            return [Finding("mooncake.installed", OK,
                            msg(f"{label} matches vllm-ascend {r.vllm_ascend} ({how})",
                                f"{label} 与 vllm-ascend {r.vllm_ascend} 配套"),
                            observed=version, expected=r.mooncake, evidence=evidence, source=source)]
        older = (pep440(version) or pep440("0")) < (pep440(r.mooncake) or pep440("0"))
        if r.mooncake_install == "source" and not older:
            return [Finding("mooncake.installed", INFO,
                            msg(f"{label}: vllm-ascend {r.vllm_ascend} images build Mooncake v{r.mooncake} from source; "
                                f"the NPU wheel is newer (the way newer releases go), not tested with this release",
                                f"{label}：vllm-ascend {r.vllm_ascend} 镜像是源码编译 Mooncake v{r.mooncake}；"
                                "NPU wheel 更新（新版本的做法），未与本版本一起测试"),
                            observed=version, expected=r.mooncake, evidence=evidence, source=source)]
        return [Finding("mooncake.installed", WARN if older else INFO,
                        msg(f"{label}, but vllm-ascend {r.vllm_ascend} is tested with {r.mooncake}",
                            f"{label}，但 vllm-ascend {r.vllm_ascend} 配套测试的是 {r.mooncake}"),
                        observed=version, expected=r.mooncake,
                        hint=msg(remedy_en, remedy_zh) if older else None, fixable=fixable if older else "none",
                        evidence=evidence, source=source)]
    # a source build
    if version and same_release(version, r.mooncake):
        return [Finding("mooncake.installed", OK,
                        msg(f"{label} matches vllm-ascend {r.vllm_ascend} (Mooncake v{r.mooncake})",
                            f"{label_zh} 与 vllm-ascend {r.vllm_ascend} 配套（Mooncake v{r.mooncake}）"),
                        observed=version, expected=r.mooncake, evidence=evidence, source=source)]
    if r.mooncake_install == "pip":
        note_en = ("glibc is older than 2.35, so a source build is the way here" if _glibc_too_old(ctx)
                   else f"pip is enough for this release: {remedy_en}")
        note_zh = ("glibc 低于 2.35，此时源码编译是正确做法" if _glibc_too_old(ctx) else f"本版本用 pip 即可：{remedy_zh}")
        return [Finding("mooncake.installed", INFO,
                        msg(f"{label}; vllm-ascend {r.vllm_ascend} uses {NPU_DIST}=={r.mooncake} ({note_en})",
                            f"{label_zh}；vllm-ascend {r.vllm_ascend} 使用 {NPU_DIST}=={r.mooncake}（{note_zh}）"),
                        observed=version or "source build", expected=r.mooncake, evidence=evidence, source=source)]
    if not version:
        return [Finding("mooncake.installed", INFO,
                        msg(f"{label}; vllm-ascend {r.vllm_ascend} images build v{r.mooncake} (a make install has no "
                            "metadata, and mooncake_master --version only reports it from v0.3.11)",
                            f"{label_zh}；vllm-ascend {r.vllm_ascend} 镜像编译的是 v{r.mooncake}（make install 不留元数据，"
                            "mooncake_master --version 从 v0.3.11 起才输出版本）"),
                        observed="unknown", expected=r.mooncake, evidence=evidence, source=source)]
    return [Finding("mooncake.installed", WARN,
                    msg(f"{label}, but vllm-ascend {r.vllm_ascend} is built and tested with Mooncake v{r.mooncake}",
                        f"{label_zh}，但 vllm-ascend {r.vllm_ascend} 配套的是 Mooncake v{r.mooncake}"),
                    observed=version, expected=r.mooncake, hint=msg(remedy_en, remedy_zh), fixable=fixable,
                    evidence=evidence, source=source)]


def _installed_from_dists(ctx: Context) -> List[Finding]:
    """A snapshot from before the mooncake probe existed: judge the distribution names only."""
    pk, r = ctx.facts.packages, ctx.release
    builds = sorted(d for d in pk.dists if d.startswith("mooncake-transfer-engine"))
    if not builds:
        if r is not None and r.mooncake:
            return [Finding("mooncake.installed", INFO,
                            msg("Mooncake is not installed (only needed for KV-cache pooling and PD disaggregation)",
                                "未安装 Mooncake（仅 KV Cache 池化和 PD 分离需要）"),
                            observed="not installed", expected=r.mooncake, source=r.source_of("mooncake"))]
        return []
    if NPU_DIST not in builds:
        d = pk.dists[builds[0]]
        return [Finding("mooncake.installed", FAIL,
                        msg(f"{d.display_name or d.name} {d.version} has no Ascend transport ('Unsupported transport ascend')",
                            f"{d.display_name or d.name} {d.version} 不含昇腾传输层（'Unsupported transport ascend'）"),
                        observed=f"{d.name} {d.version}", expected=NPU_DIST, fixable="auto")]
    d = pk.dists[NPU_DIST]
    return [Finding("mooncake.installed", OK, msg(f"{NPU_DIST} {d.version}", f"{NPU_DIST} {d.version}"),
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
    remedy_en, remedy_zh, fixable = _remedy(ctx)
    blocked = "mooncake.installed" if kind == "other-wheel" else None
    if state == "ascend":
        deps = ", ".join(_deps(obj, ASCEND_DEPS + ("libmetadef", "libgraph")))
        return [Finding("mooncake.transport", OK,
                        msg(f"Ascend direct transport present: {obj.path} (links {deps})",
                            f"Ascend direct 传输存在：{obj.path}（链接 {deps}）"),
                        observed=obj.path, evidence=evidence, source="facts/mooncake.md §2 (ELF dependencies)")]
    if state == "ascend-builtin":
        return [Finding("mooncake.transport", OK,
                        msg(f"the Ascend transport is linked into {_base(obj.path)} (the v0.3.7 layout: {', '.join(_deps(obj, ASCEND_DEPS))})",
                            f"Ascend 传输直接链接进了 {_base(obj.path)}（v0.3.7 的布局：{', '.join(_deps(obj, ASCEND_DEPS))}）"),
                        observed=obj.path, evidence=evidence, source="facts/mooncake.md §1.4")]
    if state == "unlinked":
        detail = obj.error or "it does not link libascendcl / libllm_datadist"
        return [Finding("mooncake.transport", FAIL,
                        msg(f"{obj.path} is not a usable Ascend transport ({detail})",
                            f"{obj.path} 不是可用的 Ascend 传输（{detail}）"),
                        observed=detail, expected="NEEDED libascendcl.so, libllm_datadist.so",
                        hint=msg(remedy_en, remedy_zh), fixable=fixable, evidence=evidence, blocked_by=blocked,
                        source="facts/mooncake.md §2")]
    if state == "unknown":
        return [Finding("mooncake.transport", WARN,
                        msg(f"no Mooncake shared library to inspect in {m.package_dir}: cannot tell whether the Ascend transport is built in",
                            f"{m.package_dir} 中没有可检查的 Mooncake 共享库：无法判断是否包含 Ascend 传输"),
                        observed="no engine*.so / ascend_transport.so", evidence=evidence, blocked_by=blocked,
                        hint=msg(f"{_python(ctx)} -c \"from mooncake.engine import TransferEngine\"",
                                 f"{_python(ctx)} -c \"from mooncake.engine import TransferEngine\""),
                        fixable="manual", source="facts/mooncake.md §2")]
    what = {
        "cuda": ("a CUDA build (links " + (", ".join(_deps(obj, CUDA_DEPS)) if obj else "CUDA") + ")",
                 "CUDA 版本（链接 " + (", ".join(_deps(obj, CUDA_DEPS)) if obj else "CUDA") + "）"),
        "legacy-hccl": ("built with the legacy USE_ASCEND (HCCL) transport, which is unmaintained and needs private CANN headers",
                        "使用旧的 USE_ASCEND（HCCL）传输编译，已不再维护且依赖未公开的 CANN 头文件"),
        "none": ("built without USE_ASCEND_DIRECT: no ascend_transport.so, and no CANN library among its dependencies",
                 "编译时未开启 USE_ASCEND_DIRECT：没有 ascend_transport.so，依赖中也没有 CANN 库"),
    }[state]
    return [Finding("mooncake.transport", FAIL,
                    msg(f"Mooncake in {m.package_dir} has no Ascend transport: {what[0]}; protocol \"ascend\" fails with "
                        "'Unsupported transport ascend, please rebuild Mooncake'",
                        f"{m.package_dir} 中的 Mooncake 不含 Ascend 传输：{what[1]}；protocol \"ascend\" 会报 "
                        "'Unsupported transport ascend, please rebuild Mooncake'"),
                    observed=state, expected="ascend_transport.so linked with libascendcl",
                    hint=msg(remedy_en, remedy_zh), fixable=fixable, evidence=evidence, blocked_by=blocked,
                    source="facts/mooncake.md §1.6, §2")]


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
                           msg(f"LD_LIBRARY_PATH names {', '.join(stale)}, which does not exist (the docs' prefix; the package is in {m.package_dir})",
                               f"LD_LIBRARY_PATH 中的 {', '.join(stale)} 不存在（文档中的前缀；包实际位于 {m.package_dir}）"),
                           observed=", ".join(stale), source="facts/mooncake.md §5 (library path)"))
    if not bad:
        how = sorted({f"{lk.name} via {lk.how}" for lk in m.lookups})
        out.insert(0, Finding("mooncake.loader_path", OK,
                              msg(f"the loader finds every library Mooncake needs ({len(m.lookups)} lookups)",
                                  f"动态链接器能找到 Mooncake 需要的所有库（{len(m.lookups)} 项）"),
                              observed="; ".join(how[:6]), evidence=[f"{lk.name} -> {lk.found} ({lk.how})" for lk in m.lookups],
                              source="ld.so(8)"))
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
            en = (f"{first.name} is in {where}, which is neither on LD_LIBRARY_PATH nor in the ld.so cache: "
                  f"`import mooncake.engine` fails with '{first.name}: cannot open shared object file'")
            zh = (f"{first.name} 位于 {where}，但该目录既不在 LD_LIBRARY_PATH 中也不在 ld.so 缓存里："
                  f"`import mooncake.engine` 会报 '{first.name}: cannot open shared object file'")
            # ldconfig only caches lib*.so names: no help for ascend_transport.so in the same directory.
            unnamed = [_base(t) for t in m.transport_files if posixpath.dirname(t) == where and not _base(t).startswith("lib")]
            if first.name.startswith("lib") and not unnamed:
                hint = (f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH   (or for good: echo {where} > /etc/ld.so.conf.d/mooncake.conf && ldconfig)",
                        f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH（永久生效：echo {where} > /etc/ld.so.conf.d/mooncake.conf && ldconfig）")
            else:
                other = (unnamed or [first.name])[0]
                hint = (f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH   (put it in the environment of vLLM: ldconfig "
                        f"ignores {other}, whose name does not start with 'lib')",
                        f"export LD_LIBRARY_PATH={where}:$LD_LIBRARY_PATH（写入 vLLM 的启动环境：ldconfig 不会缓存 "
                        f"{other}，因为它的名字不以 'lib' 开头）")
        else:
            en = f"{first.name} (needed by {_base(first.needed_by)}) is nowhere on this host: the Mooncake install is incomplete"
            zh = f"本机找不到 {first.name}（{_base(first.needed_by)} 需要它）：Mooncake 安装不完整"
            r_en, r_zh, _ = _remedy(ctx)
            hint = (r_en, r_zh)
        out.insert(0, Finding("mooncake.loader_path", status, msg(en, zh), observed=f"{first.name} not found",
                              expected=where or first.name, hint=msg(*hint), fixable="manual", evidence=evidence,
                              source="https://github.com/vllm-project/vllm-ascend/issues/6949"))
        return out
    c = ctx.facts.cann
    set_env = (c.set_env if c and c.set_env else "/usr/local/Ascend/ascend-toolkit/set_env.sh")
    names = ", ".join(sorted({lk.name for lk in cann}))
    on_disk = [d for lk in cann for d in lk.on_disk]
    if on_disk:
        en = f"{names} (CANN) not on the loader path: CANN's set_env.sh is not sourced in this environment"
        zh = f"动态链接器找不到 {names}（CANN）：当前环境没有 source CANN 的 set_env.sh"
        hint = (f"source {set_env}", f"source {set_env}")
    else:
        en = f"{names} is missing from CANN: the Ascend transport needs llm_datadist/HIXL (CANN >= 8.3 toolkit or the cann-hixl package)"
        zh = f"CANN 中缺少 {names}：Ascend 传输需要 llm_datadist/HIXL（CANN >= 8.3 toolkit 或 cann-hixl 包）"
        hint = ("install a CANN toolkit that ships libllm_datadist.so, then source its set_env.sh",
                "安装包含 libllm_datadist.so 的 CANN toolkit，然后 source 其 set_env.sh")
    out.insert(0, Finding("mooncake.loader_path", status, msg(en, zh), observed=names, hint=msg(*hint),
                          fixable="manual" if on_disk else "vendor", evidence=evidence, source="facts/mooncake.md §2"))
    return out


# -- config, env, serve args ------------------------------------------------------------------------


def mooncake_config(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.config_var is None:
        return []
    var = m.config_var
    if not m.config_found:
        reason = {"not found": "no such file", "is a directory": "is a directory", "empty": "is empty",
                  "not readable": "cannot be read"}.get(m.config_error or "", m.config_error or "unreadable")
        where = f" (looked up inside --root {ctx.facts.host.root})" if ctx.facts.host.root not in ("", "/") else ""
        # In a docker build the config is often mounted only at run time.
        return [Finding("mooncake.config", WARN if ctx.build else FAIL,
                        msg(f"MOONCAKE_CONFIG_PATH={var}: {reason}{where}; the connector's open() raises FileNotFoundError",
                            f"MOONCAKE_CONFIG_PATH={var}：{reason}{where}；connector 的 open() 会抛出 FileNotFoundError"),
                        observed=reason, expected="a JSON file",
                        hint=msg("export MOONCAKE_CONFIG_PATH=/absolute/path/to/mooncake.json",
                                 "export MOONCAKE_CONFIG_PATH=/绝对路径/mooncake.json"),
                        fixable="manual", source=SOURCE)]
    cmd = _serve(ctx)
    # The build machine's memory says nothing about the serving host's.
    mem = (None, None) if ctx.build else (m.mem_total_kb, m.mem_available_kb)
    cctx = mconfig.ConfigContext(vllm_ascend=_vllm_ascend(ctx), mooncake=m.version, env=_env(ctx),
                                 mem_total_kb=mem[0], mem_available_kb=mem[1],
                                 ranks=cmd.ranks if cmd and not cmd.error else 1, path=var,
                                 keys=key_windows(ctx.matrix, "config"),
                                 ssd_offload_since=threshold(ctx.matrix, "mooncake_ssd_offload"),
                                 since={t.name: t.version for t in ctx.matrix.thresholds})
    issues = worst_first(mconfig.check_text(m.config_text or "", cctx))
    if ctx.build:
        issues.append(Issue(INFO, "build stage: global_segment_size is not compared with this machine's memory",
                            "构建阶段：不将 global_segment_size 与本机内存比较"))
    elif m.mem_total_kb is None:
        issues.append(Issue(INFO, "this host's memory is unknown (no /proc/meminfo): global_segment_size not compared with it",
                            "本机内存未知（没有 /proc/meminfo）：未将 global_segment_size 与内存比较"))
    return [_finding("mooncake.config", i) for i in issues]


def mooncake_env(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None:
        return []
    cann = ctx.facts.cann.version if ctx.facts.cann else None
    issues = envvars.check_env(_env(ctx), vllm_ascend=_vllm_ascend(ctx), mooncake=m.version, cann=cann,
                               hardware=ctx.hardware)
    return [_finding("mooncake.env", i) for i in worst_first(issues)]


def mooncake_serve_args(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    cmd = _serve(ctx)
    if m is None or cmd is None:
        return []
    sctx = serveargs.ServeContext(vllm_ascend=_vllm_ascend(ctx), connectors=m.connectors, modules=m.vllm_ascend_modules,
                                  vllm_connectors=m.vllm_connectors, env=_env(ctx),
                                  mooncake_installed=install_kind(m) not in ("none", "off-path", "metadata-only"),
                                  extra_keys={f: key_windows(ctx.matrix, f) for f in ("p2p", "layerwise", "store")},
                                  backends={b: w[0] for b, w in key_windows(ctx.matrix, "store_backend").items()})
    issues = worst_first(serveargs.check(cmd, sctx))
    src = m.serve_args_source
    out = []
    for i in issues:
        f = _finding("mooncake.serve_args", i)
        f.evidence.append(f"from {src}")
        if m.connector_files and i.status == OK:
            f.evidence.append("connectors read from " + ", ".join(m.connector_files))
        out.append(f)
    return out


# -- master -----------------------------------------------------------------------------------------


def mooncake_master(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or m.master is None:
        return []
    mf = m.master
    where = f"{mf.address} (from {mf.source})"
    if mf.error:
        return [Finding("mooncake.master", FAIL, msg(f"master address {where}: {mf.error}", f"master 地址 {where}：{mf.error}"),
                        observed=mf.address, expected="host:port", fixable="manual", source="facts/mooncake.md §3")]
    out: List[Finding] = []
    health = master.parse_health(mf.health)
    ev = [f"TCP {mf.host}:{mf.port}: " + ("connected" if mf.tcp_ok else (mf.tcp_error or "not tried")) + f" ({mf.tcp_ms:g} ms)"
          if mf.port else "RPC port not given"]
    for h in (mf.health, mf.metrics, mf.summary):
        if h is not None:
            ev.append(f"GET {h.url}: " + (f"HTTP {h.status} {h.content_type}".strip() if h.status is not None else (h.error or "?"))
                      + f" ({h.elapsed_ms:g} ms)")
    if mf.port and not mf.tcp_ok:
        verb = "does not answer" if mf.tcp_timed_out else "refuses connections"
        out.append(Finding("mooncake.master", FAIL,
                           msg(f"mooncake_master at {where} {verb} ({mf.tcp_error}): store.setup() fails with 'Initialize mooncake failed'",
                               f"{where} 上的 mooncake_master {'无响应' if mf.tcp_timed_out else '拒绝连接'}（{mf.tcp_error}）："
                               "store.setup() 会报 'Initialize mooncake failed'"),
                           observed=mf.tcp_error, expected="a listening mooncake_master",
                           hint=msg(f"start it on {mf.host}: mooncake_master --port {mf.port} --eviction_high_watermark_ratio 0.9 --eviction_ratio 0.1 "
                                    f"(and open TCP {mf.port} in the firewall)",
                                    f"在 {mf.host} 上启动：mooncake_master --port {mf.port} --eviction_high_watermark_ratio 0.9 --eviction_ratio 0.1"
                                    f"（并在防火墙放行 TCP {mf.port}）"),
                           fixable="manual", evidence=ev, source="facts/mooncake.md §3"))
    if not health.reachable:
        if out:
            out[0].evidence.append(f"metrics endpoint {mf.metrics_url}: {health.detail}")
            return out
        return [Finding("mooncake.master", WARN,
                        msg(f"mooncake_master at {where}: the RPC port answers, but the HTTP endpoint {mf.metrics_url}/health does not "
                            f"({health.detail}); metrics may be on another --metrics_port, or disabled",
                            f"{where} 上的 mooncake_master：RPC 端口可连接，但 HTTP 端点 {mf.metrics_url}/health 无响应"
                            f"（{health.detail}）；metrics 可能在其他 --metrics_port 上，或已关闭"),
                        observed=health.detail, expected=f"{mf.metrics_url}/health",
                        hint=msg("name the metrics port: --mooncake-master HOST:PORT:METRICS_PORT (mooncake_master --metrics_port, default 9003)",
                                 "指定 metrics 端口：--mooncake-master HOST:PORT:METRICS_PORT（mooncake_master --metrics_port，默认 9003）"),
                        fixable="manual", evidence=ev, source="facts/mooncake.md §3.3")]
    fmt = {"plain": ("plain \"OK\" (mooncake_master <= v0.3.10)", "纯文本 \"OK\"（mooncake_master <= v0.3.10）"),
           "json": (f"JSON role={health.role} ha_state={health.ha_state} service_ready={health.ready} (mooncake_master >= v0.3.10.post2)",
                    f"JSON role={health.role} ha_state={health.ha_state} service_ready={health.ready}（mooncake_master >= v0.3.10.post2）"),
           "other": (f"unexpected answer: {health.detail}", f"意外的应答：{health.detail}")}[health.format]
    if health.format == "json" and health.ready is False:
        out.append(Finding("mooncake.master", WARN,
                           msg(f"mooncake_master at {where} is up but not serving: health {fmt[0]}",
                               f"{where} 上的 mooncake_master 已启动但未提供服务：health {fmt[1]}"),
                           observed=health.detail, expected="service_ready=true",
                           hint=msg(f"curl -s {mf.metrics_url}/ha_status   (a standby in an HA setup: use the leader's address)",
                                    f"curl -s {mf.metrics_url}/ha_status（HA 部署中的备节点：请使用 leader 地址）"),
                           fixable="manual", evidence=ev, source="facts/mooncake.md §3.3"))
    elif health.format == "other":
        out.append(Finding("mooncake.master", WARN,
                           msg(f"{mf.metrics_url}/health does not look like mooncake_master: {fmt[0]}",
                               f"{mf.metrics_url}/health 不像是 mooncake_master：{fmt[1]}"),
                           observed=health.detail, evidence=ev, fixable="manual", source="facts/mooncake.md §3.3"))
    elif not out:
        out.append(Finding("mooncake.master", OK,
                           msg(f"mooncake_master at {where} is up; health: {fmt[0]}", f"{where} 上的 mooncake_master 正常；health：{fmt[1]}"),
                           observed=health.format, evidence=ev, source="facts/mooncake.md §3.3"))
        if health.format == "plain" and m.version and (pep440(m.version) or pep440("0")) >= pep440(threshold(ctx.matrix, "mooncake_master_health_json")):
            out.append(Finding("mooncake.master", INFO,
                               msg(f"the master runs an older Mooncake (<= v0.3.10) than this client ({m.version})",
                                   f"master 运行的 Mooncake（<= v0.3.10）比本机客户端（{m.version}）旧"),
                               observed="plain OK", expected=f">= {m.version}", source="facts/mooncake.md §3.3"))
    metrics = master.parse_metrics(mf.metrics.body) if mf.metrics and mf.metrics.status == 200 else {}
    summary = mf.summary.body if mf.summary and mf.summary.status == 200 else ""
    st = master.storage(metrics, summary)
    if st.capacity is None and not st.summary:
        return out
    figures = (f"memory {human(int(st.allocated or 0))} / {human(int(st.capacity or 0))} used, "
               f"{st.keys if st.keys is not None else '?'} keys" + (f", {st.clients} clients" if st.clients is not None else ""))
    figures_zh = (f"内存已用 {human(int(st.allocated or 0))} / {human(int(st.capacity or 0))}，"
                  f"{st.keys if st.keys is not None else '?'} 个 key" + (f"，{st.clients} 个客户端" if st.clients is not None else ""))
    ev2 = [st.summary] if st.summary else []
    if not st.capacity:
        out.append(Finding("mooncake.master", INFO,
                           msg(f"master storage: {figures}: no segment mounted yet (no vLLM instance has registered its global_segment_size)",
                               f"master 存储：{figures_zh}：尚未挂载任何 segment（还没有 vLLM 实例注册 global_segment_size）"),
                           observed="0 B capacity", evidence=ev2, source="facts/mooncake.md §3.3"))
    elif st.allocated is not None and st.allocated / st.capacity >= 0.95:
        out.append(Finding("mooncake.master", WARN,
                           msg(f"master storage nearly full: {figures} (puts fail with 'insufficient space' until eviction catches up)",
                               f"master 存储接近满：{figures_zh}（淘汰跟上之前 put 会报 'insufficient space'）"),
                           observed=f"{st.allocated / st.capacity:.0%}", expected="< 95%",
                           hint=msg("raise global_segment_size on the instances, or lower --eviction_high_watermark_ratio",
                                    "调大各实例的 global_segment_size，或调低 --eviction_high_watermark_ratio"),
                           fixable="manual", evidence=ev2, source="facts/mooncake.md §3.1"))
    else:
        out.append(Finding("mooncake.master", INFO, msg(f"master storage: {figures}", f"master 存储：{figures_zh}"),
                           observed=f"{human(int(st.capacity))} capacity", evidence=ev2, source="facts/mooncake.md §3.3"))
    return out


def mooncake_probe_errors(ctx: Context) -> Iterable[Finding]:
    m = _m(ctx)
    if m is None or not m.errors:
        return []
    return [Finding(f"{LAYER}.probe_error", WARN,  # the generic <layer>.probe_error
                    msg(f"part of the Mooncake probe failed: {m.errors[0]}", f"Mooncake 探测部分失败：{m.errors[0]}"),
                    observed="; ".join(m.errors[:3]), evidence=list(m.errors))]


# Several finding ids per check: to be split into one record per finding id.
RULES = (
    Rule("group:mooncake_installed", "mooncake", mooncake_installed),
    Rule("group:mooncake_transport", "mooncake", mooncake_transport),
    Rule("group:mooncake_loader_path", "mooncake", mooncake_loader_path),
    Rule("group:mooncake_config", "mooncake", mooncake_config),
    Rule("group:mooncake_env", "mooncake", mooncake_env),
    Rule("group:mooncake_serve_args", "mooncake", mooncake_serve_args),
    Rule("group:mooncake_master", "mooncake", mooncake_master),
    Rule("group:mooncake_probe_errors", "mooncake", mooncake_probe_errors),
)
