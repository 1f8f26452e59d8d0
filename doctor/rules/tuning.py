"""The tuning layer, host and environment: CPU frequency, swap, NUMA, transparent hugepages,
kernel, virtual machine, CPU binding, /dev/shm, limits, hugepages for Mooncake, and the
variables the installed release recommends, ignores or rejects (docs/tuning.md).

Host settings are judged at run time only and only when the host shows them (/proc and /sys
under --root): an image or a host that hides them gets no finding. Recommendations are made only
for a serve command the user gave: the doctor's own environment is not the server's otherwise.
"""
from __future__ import annotations

import json
from typing import Dict, Iterable, List, Optional

from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Command, Edit, Finding, Status, cmd
from doctor.i18n import T, Text
from doctor.matrix.model import TuningAdvice, TuningFact, TuningVar
from doctor.parse.procfs import parse_cpulist, parse_size
from doctor.rules.base import Context, rule
from doctor.versions import satisfies
from doctor.rules.tuning_common import GIB, View, Words, compact_cpus, gib, joined, kernel_tuple, used_chips, view

SHM_DOCKER_DEFAULT = 64 * 1024 * 1024
UNSET = T("tuning.env_recommended.unset")
SHM_SOURCE = ("https://docs.vllm.ai/en/latest/deployment/docker.html; "
              "https://docs.docker.com/reference/cli/docker/container/run/")
OS_GUIDE = "https://github.com/vllm-project/vllm-ascend/blob/v0.13.0rc1/docs/source/developer_guide/performance_and_debug/optimization_and_tuning.md"
CPU_BINDING_DOC = "https://github.com/vllm-project/vllm-ascend/blob/v0.25.1rc1/docs/source/user_guide/feature_guide/cpu_binding.md"


def _source(v: View, fid: str) -> Optional[str]:
    row = v.fact(fid) or v.any_fact(fid)
    return row.source if row else None


# -- host ----------------------------------------------------------------------------------


def cpu_governor(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    if not v.runtime or v.host is None or not v.host.governors:
        return []
    total = sum(v.host.governors.values())
    slow = {g: n for g, n in v.host.governors.items() if g != "performance"}
    source = _source(v, "os_tuning_guide")
    if not slow:
        return [Finding("tuning.cpu_governor", OK, T("tuning.cpu_governor.ok", n=total), observed="performance",
                        source=source)]
    observed = ", ".join(g if len(slow) == 1 else f"{g} ({n})" for g, n in sorted(slow.items()))
    return [Finding(
        "tuning.cpu_governor", WARN, T("tuning.cpu_governor.slow", governors=observed, n=sum(slow.values()), total=total),
        observed=observed, expected="performance", hint=T("tuning.hint.host_only"), fixable=Fixable.MANUAL, source=source,
        commands=[cmd("sh", "-c", "echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor")])]


def swappiness(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    if not v.runtime or h is None or h.swappiness is None or not h.meminfo_kb.get("SwapTotal"):
        return []  # no swap: the setting cannot cost anything
    swap = gib(h.meminfo_kb["SwapTotal"] * 1024)
    source = _source(v, "os_tuning_guide")
    if h.swappiness <= 1:
        return [Finding("tuning.swappiness", OK, T("tuning.swappiness.ok", value=h.swappiness, swap=swap),
                        observed=str(h.swappiness), source=source)]
    return [Finding("tuning.swappiness", WARN, T("tuning.swappiness.high", value=h.swappiness, swap=swap),
                    observed=str(h.swappiness), expected="0 or 1", hint=T("tuning.hint.host_only"), fixable=Fixable.MANUAL,
                    source=source, commands=[cmd("sysctl", "-w", "vm.swappiness=0")])]


def numa_balancing(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    if not v.runtime or h is None or h.numa_balancing is None or len(h.numa_nodes) < 2:
        return []  # one NUMA node: nothing to balance
    source = _source(v, "os_tuning_guide")
    if h.numa_balancing == 0:
        return [Finding("tuning.numa_balancing", OK, T("tuning.numa_balancing.ok", nodes=len(h.numa_nodes)),
                        observed="0", source=source)]
    return [Finding("tuning.numa_balancing", WARN, T("tuning.numa_balancing.on", nodes=len(h.numa_nodes)),
                    observed=str(h.numa_balancing), expected="0", hint=T("tuning.hint.host_only"), fixable=Fixable.MANUAL,
                    source=source, commands=[cmd("sysctl", "-w", "kernel.numa_balancing=0")])]


def thp(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    if not v.runtime or v.host is None or v.host.thp is None or v.host.thp == "always":
        return []
    return [Finding("tuning.thp", INFO, T("tuning.thp.not_always", value=v.host.thp), observed=v.host.thp,
                    expected="always", hint=T("tuning.hint.host_only"), fixable=Fixable.MANUAL, source=_source(v, "thp_always"),
                    commands=[cmd("sh", "-c", "echo always > /sys/kernel/mm/transparent_hugepage/enabled")])]


def kernel(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    running = v.host.kernel if v.host else None
    have = kernel_tuple(running)
    row = v.any_fact("kernel_min")
    floor = kernel_tuple(row.value if row else None)
    if not v.runtime or running is None or row is None or have is None or floor is None or have >= floor:
        return []
    return [Finding("tuning.kernel", INFO, T("tuning.kernel.old", kernel=running, floor=row.value),
                    observed=running, expected=f">={row.value}", source=row.source)]


def virtual_machine(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    if not v.runtime or v.host is None or v.host.hypervisor is not True:
        return []
    return [Finding("tuning.virtual_machine", INFO, T("tuning.virtual_machine.vm"), observed="hypervisor",
                    expected="bare metal", source=_source(v, "virtual_machine"))]


def numa_affinity(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    if not v.runtime or h is None or len(h.numa_nodes) < 2 or not h.npu_numa or not h.cpus_allowed:
        return []
    allowed = set(parse_cpulist(h.cpus_allowed))
    chips = v.chips()
    far: List[str] = []
    nodes = set()
    for i in used_chips(v):
        node = h.npu_numa.get(chips[i].bus_id)
        if node is None or node < 0 or str(node) not in h.numa_nodes:
            continue
        nodes.add(node)
        local = set(parse_cpulist(h.numa_nodes[str(node)]))
        if not local & allowed:
            far.append(f"NPU {chips[i].npu} chip {chips[i].chip} -> node {node} (CPUs {h.numa_nodes[str(node)]})")
    if not nodes:
        return []
    source = CPU_BINDING_DOC + "; https://github.com/Ascend/pytorch/blob/master/docs/zh/api/environment_variable/performance_tuning/CPU_AFFINITY_CONF.md"
    if not far:
        return [Finding("tuning.numa_affinity", OK, T("tuning.numa_affinity.ok", nodes=joined(sorted(nodes))),
                        observed=compact_cpus(sorted(allowed)), source=source)]
    return [Finding("tuning.numa_affinity", WARN, T("tuning.numa_affinity.far", n=len(far), cpus=compact_cpus(sorted(allowed))),
                    observed=compact_cpus(sorted(allowed)), evidence=far, hint=T("tuning.numa_affinity.hint"),
                    fixable=Fixable.MANUAL, source=source)]


def cpu_binding(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    on = v.fact("cpu_binding_default_on")
    if not v.runtime or h is None or not h.cpus_allowed or on is None or v.machine != "aarch64":
        return []
    if v.spec is not None and v.spec.cpu_binding is False:
        return []
    least = v.fact("cpu_binding_min_cpus")
    npus = len(v.chips())
    if least is None or not least.value or not npus:
        return []
    # the release holds this chip to its own minimum (no IRQ CPUs reserved), not the one above
    exempt = v.fact("cpu_binding_a5_exempt")
    if exempt is not None and ctx.hardware == exempt.value:
        return []
    need = int(least.value) * npus
    have = len(parse_cpulist(h.cpus_allowed))
    source = f"{least.source}; {on.source}"
    if have >= need:
        return [Finding("tuning.cpu_binding", OK, T("tuning.cpu_binding.ok", version=v.version, cpus=have, npus=npus),
                        observed=str(have), expected=f">={need}", source=source)]
    return [Finding("tuning.cpu_binding", WARN,
                    T("tuning.cpu_binding.short", version=v.version, cpus=have, npus=npus, per=least.value, need=need),
                    observed=f"{have} CPUs", expected=f">={need} CPUs", hint=T("tuning.cpu_binding.hint", need=need),
                    fixable=Fixable.MANUAL, source=source, evidence=[least.note or ""])]


def shm(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    if not v.runtime or h is None or h.shm is None or h.shm.size_bytes is None:
        return []
    size = h.shm.size_bytes
    want_row = v.any_fact("shm_size")
    want = parse_size(want_row.value if want_row else None) or GIB
    ranks = v.spec.ranks if v.spec is not None else None
    source = SHM_SOURCE + (f"; {want_row.source}" if want_row else "")
    shown = f"{size / (1 << 20):.0f} MiB"
    container = ctx.facts.host.in_container
    commands = [] if container else [cmd("mount", "-o", "remount,size=1g", "/dev/shm")]
    hint = T("tuning.shm.hint_container") if container else T("tuning.shm.hint_host")
    if size >= want:
        return [Finding("tuning.shm", OK, T("tuning.shm.ok", size=shown), observed=shown, source=source)]
    if size <= SHM_DOCKER_DEFAULT:
        status = FAIL if ranks is not None and ranks > 1 else WARN
        return [Finding("tuning.shm", status, T("tuning.shm.tiny", size=shown, ranks=ranks or "?"), observed=shown,
                        expected=">=1g", hint=hint, fixable=Fixable.MANUAL, source=source, commands=commands)]
    status = WARN if ranks is not None and ranks > 1 else INFO
    return [Finding("tuning.shm", status, T("tuning.shm.small", size=shown), observed=shown, expected=">=1g",
                    hint=hint, fixable=Fixable.MANUAL, source=source, commands=commands)]


def nofile(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    limit = h.limits.get("nofile") if h is not None else None
    row = v.any_fact("vllm_nofile_target")
    if not v.runtime or not limit or row is None or not row.value:
        return []
    target = int(row.value)
    hard = limit[1]
    if hard is None or hard >= target:
        return [Finding("tuning.nofile", OK, T("tuning.nofile.ok", hard=hard if hard is not None else "unlimited"),
                        observed=str(hard), source=row.source)]
    return [Finding("tuning.nofile", WARN, T("tuning.nofile.low", soft=limit[0], hard=hard, target=target),
                    observed=f"{limit[0]}/{hard}", expected=f">={target}", hint=T("tuning.nofile.hint", target=target),
                    fixable=Fixable.MANUAL, source=row.source, commands=[cmd("ulimit", "-n", str(target))])]


def _mooncake_config(ctx: Context) -> dict:
    m = ctx.facts.mooncake
    if m is None or not m.config_text:
        return {}
    try:
        data = json.loads(m.config_text)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def memlock(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    limit = h.limits.get("memlock") if h is not None else None
    if not v.runtime or not limit or str(_mooncake_config(ctx).get("protocol", "")).lower() != "rdma":
        return []
    row = v.any_fact("mooncake_memlock")
    if limit[0] is None:
        return [Finding("tuning.memlock", OK, T("tuning.memlock.ok"), observed="unlimited",
                        source=row.source if row else None)]
    return [Finding("tuning.memlock", WARN, T("tuning.memlock.limited", kib=limit[0] // 1024), observed=f"{limit[0]} bytes",
                    expected="unlimited", hint=T("tuning.memlock.hint"), fixable=Fixable.MANUAL,
                    source=row.source if row else None, commands=[cmd("ulimit", "-l", "unlimited")])]


def hugepages(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    h = v.host
    if not v.runtime or h is None or "MC_STORE_USE_HUGEPAGE" not in v.env or "HugePages_Total" not in h.meminfo_kb:
        return []
    row = v.any_fact("mooncake_hugepage")
    source = row.source if row else None
    page_kb = h.meminfo_kb.get("Hugepagesize", 2048)
    free = h.meminfo_kb.get("HugePages_Free", 0) * page_kb * 1024
    segment = parse_size(str(_mooncake_config(ctx).get("global_segment_size", "")).strip() or None)
    if h.meminfo_kb["HugePages_Total"] == 0 or (segment and free < segment):
        need = -(-(segment or 0) // (page_kb * 1024)) if segment else None
        commands = [cmd("sysctl", "-w", f"vm.nr_hugepages={need}")] if need else []
        return [Finding("tuning.hugepages", WARN,
                        T("tuning.hugepages.short", free=gib(free), segment=gib(segment) if segment else "?"),
                        observed=f"{h.meminfo_kb.get('HugePages_Free', 0)} free x {page_kb} kB",
                        expected=f">= {gib(segment)} GiB" if segment else "> 0", hint=T("tuning.hint.host_only"),
                        fixable=Fixable.MANUAL, source=source, commands=commands)]
    return [Finding("tuning.hugepages", OK, T("tuning.hugepages.ok", free=gib(free)), observed=gib(free), source=source)]


# -- environment ---------------------------------------------------------------------------


def _condition(v: View, when: str) -> bool:
    sp = v.spec
    if when == "always":
        return True
    if when in ("multi_npu", "multi_npu_graph"):
        return sp is not None and sp.ranks > 1 and (when == "multi_npu" or sp.graph_mode)
    if when == "no_sleep_mode":
        return sp is None or not sp.sleep_mode
    if when == "no_cpu_binding":
        binding = v.fact("cpu_binding_default_on") is not None and v.machine == "aarch64"
        explicit = sp.cpu_binding if sp is not None else None
        return not (explicit is True or (binding and explicit is not False))
    return False


def _satisfies(value: Optional[str], wanted: str, accept: Iterable[str]) -> bool:
    if value is None:
        return False
    options = (wanted,) + tuple(accept)
    if wanted.endswith(".so.2"):  # LD_PRELOAD: any listed library anywhere in the list will do
        return any(o in value for o in options)
    items = [i.strip() for i in value.split(",")]  # option lists (PYTORCH_NPU_ALLOC_CONF): one item will do
    return value.strip() in options or any(o in items for o in options)


def env_recommended(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    if v.spec is None:
        return []
    groups: Dict[str, List[TuningAdvice]] = {}
    for a in v.advice():
        if _condition(v, a.when):
            groups.setdefault(a.var, []).append(a)
    out: List[Finding] = []
    for var, rows in groups.items():
        meta = v.var(var)
        value = v.env.get(var)
        effective = value if value is not None else (meta.default if meta else None)
        if any(_satisfies(effective, a.value, a.accept) for a in rows):
            others = [a for a in rows if not _satisfies(effective, a.value, a.accept)]
            if others:  # one source is followed, another says otherwise: say so, change nothing
                out.append(Finding("tuning.env_recommended", INFO, T(
                    "tuning.env_recommended.disputed", var=var, value=value if value is not None else UNSET,
                    effective=effective, others=[T("tuning.env_recommended.who", who=_who(a), value=a.value) for a in others]),
                    observed=value, source="; ".join(a.source for a in rows),
                    evidence=_evidence(meta, rows)))
            continue
        status = WARN if any(a.level == "warn" for a in rows) else INFO
        values = sorted({a.value for a in rows})
        agreed = len(values) == 1
        if agreed and var == "LD_PRELOAD" and values[0] == JEMALLOC and v.host is not None and v.host.jemalloc is None:
            out.append(_jemalloc_missing(v, rows, value, status, meta))
            continue
        if agreed and var == "LD_PRELOAD" and values[0] == JEMALLOC and v.host is not None and v.host.jemalloc:
            found = f"{v.host.jemalloc}:{value}" if value else v.host.jemalloc
            out.append(Finding(
                "tuning.env_recommended", status, _missing_title(v, var, value, rows, status),
                observed=value, expected=values[0], fixable=Fixable.MANUAL,
                hint=T("tuning.env_recommended.hint_one", var=var, value=found),
                source="; ".join(a.source for a in rows), evidence=_evidence(meta, rows),
                commands=[cmd("export", f"{var}={found}")], edits=[Edit("export", var, found)]))
            continue
        out.append(Finding(
            "tuning.env_recommended", status,
            _missing_title(v, var, value, rows, status),
            observed=value, expected=" | ".join(values), fixable=Fixable.MANUAL,
            hint=T("tuning.env_recommended.hint_one" if agreed else "tuning.env_recommended.hint_disagree",
                   var=var, value=_export_value(var, values[0], value, _arch(v))),
            source="; ".join(a.source for a in rows), evidence=_evidence(meta, rows),
            commands=[cmd("export", f"{var}={_export_value(var, values[0], value, _arch(v))}")] if agreed else [],
            edits=[Edit("export", var, _export_value(var, values[0], value))] if agreed else []))
    return out


JEMALLOC = "libjemalloc.so.2"
# the package that brings libjemalloc.so.2, by the judged root's package manager (/etc/os-release)
JEMALLOC_INSTALL = {"apt": ("apt-get", "install", "-y", "libjemalloc2"), "yum": ("yum", "install", "-y", "jemalloc")}


def _jemalloc_path(v: View) -> str:
    """Where the distribution's package puts libjemalloc.so.2 (the tuning guide's path on Debian
    and Ubuntu, /usr/lib64/ on openEuler and its kin)."""
    family = v.host.os_family if v.host is not None else ""
    return f"/usr/lib64/{JEMALLOC}" if family == "yum" else f"/usr/lib/{_arch(v)}-linux-gnu/{JEMALLOC}"


def _jemalloc_missing(v: View, rows: List[TuningAdvice], value: Optional[str], status: Status,
                      meta: Optional[TuningVar]) -> Finding:
    """The guide preloads jemalloc and the judged root has none (or it was not looked for): an
    export of a missing file makes every later command print "cannot be preloaded", so the
    install step comes first and the export is said to apply after it, never printed to run now."""
    h = v.host
    family = h.os_family if h is not None else ""
    install = JEMALLOC_INSTALL.get(family) if h is not None and h.jemalloc_looked else None
    path = _jemalloc_path(v)
    later = f"{path}:{value}" if value else path
    if install is not None:
        hint = T("tuning.env_recommended.jemalloc_install", var="LD_PRELOAD", value=later, lib=JEMALLOC)
    elif h is not None and h.jemalloc_looked:
        hint = T("tuning.env_recommended.jemalloc_absent", var="LD_PRELOAD", value=later, lib=JEMALLOC)
    else:
        hint = T("tuning.env_recommended.jemalloc_unknown", var="LD_PRELOAD", value=later, lib=JEMALLOC)
    return Finding("tuning.env_recommended", status, _missing_title(v, "LD_PRELOAD", value, rows, status),
                   observed=value, expected=JEMALLOC, fixable=Fixable.MANUAL, hint=hint,
                   source="; ".join(a.source for a in rows), evidence=_evidence(meta, rows),
                   commands=[cmd(*install)] if install is not None else [])


def _missing_title(v: View, var: str, value: Optional[str], rows: List[TuningAdvice], status: str) -> Text:
    advice = [T("tuning.env_recommended.who", who=_who(a), value=a.value) for a in rows]
    shown = value if value is not None else UNSET
    effect = next((a for a in rows if a.level == "warn" and a.effect_en), None) if status == WARN else None
    if effect is not None:
        return T("tuning.env_recommended.missing_effect", var=var, value=shown, version=v.version, advice=advice,
                 effect=Words(en=effect.effect_en or "", zh=effect.effect_zh or effect.effect_en or ""))
    return T("tuning.env_recommended.missing", var=var, value=shown, version=v.version, advice=advice)


def _arch(v: View) -> str:
    p = v.ctx.facts.python
    return (p.machine if p is not None and p.machine else None) or v.ctx.facts.host.machine or "x86_64"


def _export_value(var: str, wanted: str, current: Optional[str], arch: str = "$(uname -m)") -> str:
    """The value to export: for lists, what is set already plus the recommended item. A printed
    command gets the machine's arch filled in (it is shlex-quoted: $(uname -m) would not expand);
    a launch-script edit keeps the guide's $(uname -m)."""
    if var == "LD_PRELOAD":  # the tuning guide's path (Debian/Ubuntu; openEuler has /usr/lib64/)
        lib = f"/usr/lib/{arch}-linux-gnu/libjemalloc.so.2" if wanted == "libjemalloc.so.2" else wanted
        return f"{lib}:{current}" if current else lib
    if var == "PYTORCH_NPU_ALLOC_CONF" and current:
        return f"{current},{wanted}"
    return wanted


def _who(a: TuningAdvice) -> Words:
    return Words(en=a.who_en, zh=a.who_zh)


def _evidence(meta: Optional[TuningVar], rows: List[TuningAdvice]) -> List[str]:
    out = [f"{meta.name}: {meta.effect_en}"] if meta else []
    for a in rows:
        line = f"{a.id}: {a.value} ({a.who_en})"
        if a.effect_en:
            line += f": {a.effect_en}"
        out.append(line)
    return out


def env_ignored(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    if v.version is None:
        return []
    out: List[Finding] = []
    for name in sorted(v.env):
        meta = v.var(name)
        source: Optional[str]
        if meta is not None and any(satisfies(v.version, r) for r in meta.overridden):
            title = T("tuning.env_ignored.overridden", var=name, version=v.version, by=meta.replaced_by or "")
            evidence, source = [f"{name}: {meta.effect_en}"], meta.source
        elif meta is not None and not meta.read_by and meta.built_by:
            # read by setup.py when vllm-ascend is compiled, never by the server: nothing to unset
            windows = " | ".join(meta.built_by)
            built = any(satisfies(v.version, r) for r in meta.built_by)
            title = (T("tuning.env_ignored.build_only", var=name, version=v.version, windows=windows) if built
                     else T("tuning.env_ignored.unbuilt", var=name, version=v.version, windows=windows))
            out.append(Finding("tuning.env_ignored", INFO, title, observed=f"{name}={v.env[name]}", source=meta.source,
                               evidence=[f"{name}: {meta.effect_en}"],
                               hint=T("tuning.env_ignored.hint_build", var=name) if built
                               else T("tuning.env_ignored.hint", var=name),
                               edits=[] if built else [Edit("unset", name)]))
            continue
        elif meta is not None and meta.read_by:
            if any(satisfies(v.version, r) for r in meta.read_by + meta.upstream):
                continue
            title = T("tuning.env_ignored.unread", var=name, version=v.version, windows=" | ".join(meta.read_by))
            evidence = [f"{name}: {meta.effect_en}"] + ([f"replaced by: {meta.replaced_by}"] if meta.replaced_by else [])
            source = meta.source
        elif meta is not None and not meta.read_by and not meta.upstream and name.startswith("VLLM_ASCEND_"):
            # a vllm-ascend name on record that no release reads as a variable (VLLM_ASCEND_MLA is a
            # backend's name); an empty read_by of another variable means CANN or torch_npu reads it
            title = T("tuning.env_ignored.never", var=name)
            evidence, source = [f"{name}: {meta.effect_en}"], meta.source
        elif meta is None and name.startswith("VLLM_ASCEND_") and v.within_checked():
            title = T("tuning.env_ignored.unknown", var=name, checked=v.checked_through)
            evidence, source = [], _source(v, "checked_through")
        else:
            continue
        older = _older_name(v, name)
        if older is not None:  # this release reads the name it later renamed to this one
            hint = T("tuning.env_ignored.hint_older", var=name, version=v.version, older=older.name)
            evidence.append(f"read by {v.version}: {older.name}")
        elif meta is not None and meta.replaced_by and _replacement_read(v, meta.replaced_by):
            hint = T("tuning.env_ignored.hint_replaced", var=name, replacement=meta.replaced_by)
        else:
            hint = T("tuning.env_ignored.hint", var=name)
        out.append(Finding("tuning.env_ignored", INFO, title, observed=f"{name}={v.env[name]}", source=source,
                           evidence=evidence, hint=hint,
                           edits=[Edit("unset", name)]))
    return out


def _older_name(v: View, name: str) -> Optional[TuningVar]:
    """The row this release reads whose replaced_by is ``name``: the older name of a renamed variable."""
    return next((r for r in v.ctx.matrix.tuning_vars if r.replaced_by == name and v.version is not None
                 and any(satisfies(v.version, s) for s in r.read_by)), None)


def _replacement_read(v: View, replacement: str) -> bool:
    """A replacement that is a variable on record is named only for a release that reads it (the older
    name set on a release before the rename is read by neither); an option or free text is named as it is."""
    row = v.var(replacement)
    if row is None or not row.read_by or v.version is None:
        return True
    return any(satisfies(v.version, s) for s in row.read_by + row.upstream)


def _alloc_conf(v: View) -> str:
    return v.env.get("PYTORCH_NPU_ALLOC_CONF", "")


def env_harmful(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    out: List[Finding] = []
    blocking = v.env.get("ASCEND_LAUNCH_BLOCKING", "").strip() == "1"
    rejected = v.fact("launch_blocking_graph_rejected")
    if blocking and not (rejected and v.spec is not None and v.spec.graph_mode):
        key = "tuning.env_harmful.blocking_unknown" if rejected and v.spec is None else "tuning.env_harmful.blocking"
        out.append(Finding("tuning.env_harmful", WARN, T(key, version=v.version), observed="ASCEND_LAUNCH_BLOCKING=1",
                           expected="unset", fixable=Fixable.MANUAL, hint=T("tuning.hint.unset", var="ASCEND_LAUNCH_BLOCKING"),
                           source="; ".join(filter(None, [_source(v, "launch_blocking_disables_task_queue"),
                                                          rejected.source if rejected else None])),
                           commands=[cmd("unset", "ASCEND_LAUNCH_BLOCKING")], edits=[Edit("unset", "ASCEND_LAUNCH_BLOCKING")]))
    if v.env.get("TASK_QUEUE_ENABLE", "").strip() == "0":
        queue_var = v.var("TASK_QUEUE_ENABLE")
        out.append(Finding("tuning.env_harmful", WARN, T("tuning.env_harmful.task_queue_off"), observed="TASK_QUEUE_ENABLE=0",
                           expected="1 | 2", fixable=Fixable.MANUAL, hint=T("tuning.hint.unset", var="TASK_QUEUE_ENABLE"),
                           source=queue_var.source if queue_var else None,
                           commands=[cmd("unset", "TASK_QUEUE_ENABLE")], edits=[Edit("unset", "TASK_QUEUE_ENABLE")]))
    conf = _alloc_conf(v)
    exclusive = v.any_fact("alloc_conf_exclusive")
    split = any(k in conf for k in ("max_split_size_mb", "garbage_collection_threshold"))
    if split and "expandable_segments:True" in conf:
        out.append(Finding("tuning.env_harmful", WARN, T("tuning.env_harmful.alloc_conflict", value=conf),
                           observed=conf, fixable=Fixable.MANUAL, source=exclusive.source if exclusive else None,
                           hint=T("tuning.env_harmful.alloc_conflict_hint")))
    elif split and v.fact("alloc_conf_set_by_release"):
        out.append(Finding("tuning.env_harmful", INFO, T("tuning.env_harmful.alloc_split", value=conf, version=v.version),
                           observed=conf, source=_source(v, "alloc_conf_set_by_release")))
    if conf and v.env.get("PYTORCH_ALLOC_CONF"):
        out.append(Finding("tuning.env_harmful", WARN, T("tuning.env_harmful.alloc_both"), observed="PYTORCH_ALLOC_CONF + PYTORCH_NPU_ALLOC_CONF",
                           fixable=Fixable.MANUAL, hint=T("tuning.hint.unset", var="PYTORCH_ALLOC_CONF"),
                           source=exclusive.source if exclusive else None,
                           commands=[cmd("unset", "PYTORCH_ALLOC_CONF")], edits=[Edit("unset", "PYTORCH_ALLOC_CONF")]))
    return out


def rejected(ctx: Context) -> Iterable[Finding]:
    """Combinations the installed release's code refuses at start-up."""
    v = view(ctx)
    out: List[Finding] = []
    sp = v.spec
    row = v.fact("v0_engine_rejected")
    if row and v.env.get("VLLM_USE_V1", "").strip() == "0":
        out.append(_rejected(row, T("tuning.rejected.v0", version=v.version), "VLLM_USE_V1=0",
                             [Edit("unset", "VLLM_USE_V1")], [cmd("unset", "VLLM_USE_V1")]))
    row = v.fact("launch_blocking_graph_rejected")
    if row and sp is not None and sp.graph_mode and v.env.get("ASCEND_LAUNCH_BLOCKING", "").strip() == "1":
        out.append(_rejected(row, T("tuning.rejected.launch_blocking", version=v.version), "ASCEND_LAUNCH_BLOCKING=1",
                             [Edit("unset", "ASCEND_LAUNCH_BLOCKING")], [cmd("unset", "ASCEND_LAUNCH_BLOCKING")]))
    row = v.fact("flashcomm1_needs_tp")
    if row and sp is not None and sp.tp == 1 and v.env.get("VLLM_ASCEND_ENABLE_FLASHCOMM1", "").strip() == "1":
        out.append(_rejected(row, T("tuning.rejected.flashcomm1", version=v.version), "VLLM_ASCEND_ENABLE_FLASHCOMM1=1, tp=1",
                             [Edit("unset", "VLLM_ASCEND_ENABLE_FLASHCOMM1")], [cmd("unset", "VLLM_ASCEND_ENABLE_FLASHCOMM1")]))
    row = v.fact("sleep_mode_rejects_expandable")
    if row and sp is not None and sp.sleep_mode and "expandable_segments:True" in _alloc_conf(v):
        out.append(_rejected(row, T("tuning.rejected.sleep_expandable"), f"PYTORCH_NPU_ALLOC_CONF={_alloc_conf(v)}",
                             [Edit("unset", "PYTORCH_NPU_ALLOC_CONF")], [cmd("unset", "PYTORCH_NPU_ALLOC_CONF")]))
    return out


def _rejected(row: TuningFact, title: Text, observed: str, edits: List[Edit], commands: List[Command]) -> Finding:
    return Finding("tuning.rejected", FAIL, title, observed=observed, fixable=Fixable.MANUAL, source=row.source,
                   evidence=[row.note or ""], hint=T("tuning.rejected.hint"), edits=edits, commands=commands)


RULES = (
    rule("tuning.cpu_governor", cpu_governor, OS_GUIDE),
    rule("tuning.swappiness", swappiness, OS_GUIDE),
    rule("tuning.numa_balancing", numa_balancing, OS_GUIDE),
    rule("tuning.thp", thp,
         "https://www.hiascend.com/doc_center/source/zh/mindie/20RC1/AcceleratePlugin/turbodev/mindie-turbo-0009.html"),
    rule("tuning.kernel", kernel, "https://pypi.org/project/msprechecker/"),
    rule("tuning.virtual_machine", virtual_machine, "https://pypi.org/project/msprechecker/"),
    rule("tuning.numa_affinity", numa_affinity, CPU_BINDING_DOC),
    rule("tuning.cpu_binding", cpu_binding, CPU_BINDING_DOC),
    rule("tuning.shm", shm, SHM_SOURCE),
    rule("tuning.nofile", nofile,
         "https://github.com/vllm-project/vllm/blob/8a8fc946398c34a3b23786c9cb7bf217e223b268/vllm/utils/__init__.py#L2725"),
    rule("tuning.memlock", memlock,
         "https://github.com/kvcache-ai/Mooncake/blob/main/docs/source/deployment/kubernetes-deployment-guide/rbg-integration.md"),
    rule("tuning.hugepages", hugepages,
         "https://github.com/kvcache-ai/Mooncake/blob/main/docs/source/deployment/mooncake-store-deployment-guide.md"),
    rule("tuning.env_recommended", env_recommended, "matrices/tuning.toml"),
    rule("tuning.env_ignored", env_ignored, "matrices/tuning.toml"),
    rule("tuning.env_harmful", env_harmful,
         "https://github.com/Ascend/pytorch/blob/master/docs/zh/api/environment_variable/op_execution/TASK_QUEUE_ENABLE.md"),
    rule("tuning.rejected", rejected, "matrices/tuning.toml"),
)
