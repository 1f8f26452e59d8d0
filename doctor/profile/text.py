"""The text report, as (line, style) pairs: the verdict first, then the figures behind it, the
steps that stand out, the top operators, what to change and what the profile cannot tell.

Every string that comes from the files (kernel names, paths, labels) goes through :func:`shown`
before it is printed: a name is data and may hold terminal escapes.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from doctor.i18n import tr
from doctor.profile.report import RankResult, Report

Line = Tuple[str, Optional[str]]
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


def shown(text: object, limit: int = 160) -> str:
    """A string from data made safe for a terminal: control characters (ESC, CR, BEL, C1) and
    bidirectional overrides replaced, tabs and newlines as spaces, cut at ``limit``."""
    s = str(text).replace("\t", " ").replace("\n", " ")
    s = _UNSAFE.sub("\ufffd", s)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def dur(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs"


def headline(rep: Report, lang: str) -> Tuple[str, str]:
    v = rep.verdict
    s = v.shares
    if v.bound is None:
        return tr("profile.bound.none", lang), "bold yellow"
    if v.bound == "host" and v.basis == "idle":
        # the verdict was read from the idle time (verdict.judge): the measured host wait (0 with no
        # flows) is not the figure behind it, the idle time is
        idle = s.get("idle", 0.0)
        if idle - s.get("idle_unattributed", 0.0) <= 1e-9:
            return tr("profile.bound.host_idle", lang, idle=pct(idle)), "bold red"
        return tr("profile.bound.host_idle_partial", lang, idle=pct(idle),
                  share=pct(s.get("host_wait", 0.0) + s.get("idle_unattributed", 0.0))), "bold red"
    if v.bound == "host":
        return tr("profile.bound.host", lang, share=pct(s.get("host_wait", 0.0)),
                  idle=pct(s.get("idle", 0.0))), "bold red"
    if v.bound == "communication":
        return tr("profile.bound.communication", lang, share=pct(s.get("communication_exposed", 0.0))), "bold red"
    if v.bound == "device":
        kind = tr(f"profile.kind.{v.device_kind or 'unknown'}", lang)
        how = tr("profile.kind.measured" if v.device_kind_measured else "profile.kind.inferred", lang)
        return tr("profile.bound.device", lang, share=pct(s.get("device_busy", 0.0)), kind=kind, how=how), "bold yellow"
    return tr("profile.bound.balanced", lang, busy=pct(s.get("device_busy", 0.0)), host=pct(s.get("host_wait", 0.0)),
              comm=pct(s.get("communication_exposed", 0.0))), "bold green"


def _rank_lines(r: RankResult, lang: str, many: bool) -> List[Line]:
    out: List[Line] = []
    f = r.figures
    t = f.totals
    s = r.verdict.shares
    ind = "  "
    if many:
        out.append((tr("profile.rank.head", lang, rank=shown(r.label), bound=r.verdict.bound or "-",
                       busy=pct(s.get("device_busy", 0.0)), host=pct(s.get("host_wait", 0.0))), "bold"))
    idn = r.identity
    files = [shown(v.rsplit("/", 1)[-1]) for v in r.files.values() if v]
    out.append((ind + tr("profile.files", lang, producer=idn.producer, torch_npu=shown(idn.torch_npu_version or "?"),
                         cann=shown(idn.cann_version or "?"), level=shown(idn.level or "?") +
                         (tr("profile.inferred", lang) if idn.level_inferred else ""),
                         aic=shown(idn.aic_metrics or "?"), files=", ".join(files)), "dim"))
    if idn.era:
        out.append((ind + tr("profile.era", lang, era=idn.era), "dim"))
    if not len(f.rank):
        out.append((ind + tr("profile.no_device", lang, ops=f.rank.host_ops), None))
        return out
    seg = f.segmentation
    how = tr(f"profile.steps.{seg.method}", lang, anchor=shown(seg.anchor or ""))
    walls = sorted(x.wall for x in f.steps if not x.partial) or [0.0]
    out.append((ind + tr("profile.steps", lang, n=len(f.steps), how=how, p50=dur(walls[len(walls) // 2]),
                         p90=dur(walls[int(0.9 * (len(walls) - 1))])), None))
    if f.dropped:
        out.append((ind + tr("profile.dropped", lang, n=len(f.dropped), total=dur(sum(b - a for a, b in f.dropped))),
                    "dim"))
    out.append((ind + tr("profile.busy", lang, busy=pct(s["device_busy"]), compute=pct(s["compute"]),
                         comm=pct(s["communication"]), idle=pct(s["idle"])), None))
    if t.idle.total > 0:
        out.append((ind + tr("profile.idle", lang, late=pct(s["idle_host_late"]), sync=pct(s["idle_sync"]),
                             kernel=pct(s["idle_kernel_wait"]), other=pct(s["idle_other"]),
                             none=pct(s["idle_unattributed"]), share=pct(s["idle_host_wait"])), None))
    g = f.gap_stats
    if g.get("count"):
        hist = f.gap_histogram
        count = sum(hist) or 1
        out.append((ind + tr("profile.gaps", lang, n=int(g["count"]), p50=dur(g["p50_us"]), p90=dur(g["p90_us"]),
                             max=dur(g["max_us"]), mid=pct((hist[1] + hist[2]) / count)), None))
    if f.launch_latency and f.launch_latency["p50_us"] >= 0:
        out.append((ind + tr("profile.latency", lang, p50=dur(f.launch_latency["p50_us"]),
                             p90=dur(f.launch_latency["p90_us"])), "dim"))
    if t.comm > 0:
        out.append((ind + tr("profile.comm", lang, total=pct(s["communication"]), exposed=pct(s["communication_exposed"]),
                             overlapped=dur(t.comm - t.comm_exposed)), None))
    if f.task_queue is not None:
        out.append((ind + tr("profile.task_queue.on" if f.task_queue else "profile.task_queue.off", lang), "dim"))
    if t.alloc_calls:
        later = sum(1 for x in f.steps[1:] if x.alloc_calls)
        key = "profile.alloc" if later else "profile.alloc_first"
        out.append((ind + tr(key, lang, calls=t.alloc_calls, total=dur(t.alloc_us), steps=later), None))
    c = r.communication
    if c and c.get("wait_ratio") is not None:
        key = "profile.commjson.slow_peer" if c.get("waits_on_slower_peer") else "profile.commjson"
        out.append((ind + tr(key, lang, ops=c["ops"], wait=dur(c["wait_ms"] * 1000), transit=dur(c["transit_ms"] * 1000),
                             ratio=pct(c["wait_ratio"])), "bold" if c.get("waits_on_slower_peer") else None))
    m = r.memory
    if m and m.get("peak_reserved_mb") is not None:
        rise = m.get("rise_in_loop_mb")
        key = "profile.memory.rise" if rise else "profile.memory.flat" if rise is not None else "profile.memory.peak"
        out.append((ind + tr(key, lang, peak=f"{m['peak_reserved_mb']:,.0f} MB", rise=f"{rise or 0:,.0f} MB",
                             held=f"{m.get('reserved_after_first_step_mb') or 0:,.0f} MB",
                             component=shown(str(m.get("component") or "?"))), "bold" if rise else None))
    if t.compile_calls:
        out.append((ind + tr("profile.compile", lang, calls=t.compile_calls), None))
    for j in f.jitter[:5]:
        new = ", ".join(f"{shown(n, 60)} {dur(v)}" for n, v in j.new_kernels[:3])
        tokens = f" ({j.typical_tokens} → {j.tokens} tokens)" if j.tokens and j.typical_tokens else ""
        out.append((ind + tr("profile.jitter", lang, step=shown(j.label), wall=dur(j.wall), typical=dur(j.typical),
                             reason=tr(f"profile.reason.{j.reason}", lang)) + tokens +
                    (" — " + tr("profile.jitter_new", lang, kernels=new) if new else ""), "yellow"))
    if len(f.jitter) > 5:
        out.append((ind + tr("profile.jitter_more", lang, n=len(f.jitter) - 5), "dim"))
    if f.top_ops:
        out.append((ind + tr("profile.top", lang), "bold"))
        for o in f.top_ops[:8]:
            ms = " ".join(f"{k.replace('_ratio', '')}={v:.2f}" for k, v in o.metrics.items()
                          if k in ("aic_mac_ratio", "aic_mte2_ratio", "aiv_vec_ratio", "aiv_mte2_ratio", "cube_utilization(%)"))
            out.append((ind + f"  {pct(o.share):>6}  {dur(o.total_us):>10}  {o.count:>6}×  {shown(o.name, 70)}"
                        + (f"  [{shown(o.core)}]" if o.core else "") + (f"  {ms}" if ms else ""), None))
        if f.pmu is None:
            out.append((ind + "  " + tr("profile.no_pmu", lang), "dim"))
    for note in r.notes:
        out.append((ind + tr("profile.note", lang, note=shown(note)), "dim"))
    return out


def lines(rep: Report, lang: str) -> List[Line]:
    out: List[Line] = []
    text, style = headline(rep, lang)
    out.append((tr("profile.title", lang, path=shown(rep.path, 200), verdict=text), style))
    many = len(rep.ranks) > 1
    for r in rep.ranks:
        out += _rank_lines(r, lang, many)
    if rep.slow is not None:
        sp = rep.slow.spreads
        if rep.slow.rank:
            out.append((tr("profile.slow_rank", lang, rank=shown(rep.slow.rank), spread=pct(sp["compute"])), "yellow"))
        else:
            out.append((tr("profile.no_slow_rank", lang, spread=pct(sp["compute"]), comm=pct(sp["communication"]),
                           free=pct(sp["free"])), None))
    if rep.cluster_only:
        for c in rep.cluster_only:
            out.append((f"  {shown(c.label)}: computing {dur(c.compute_us)}, communication (not overlapped) "
                        f"{dur(c.comm_us)}, free {dur(c.free_us)}", None))
    for note in rep.notes:
        out.append((tr("profile.note", lang, note=shown(note)), "dim"))
    if rep.advice:
        rel = tr("profile.release", lang, release=rep.releases, source=tr(f"profile.release_from.{rep.release_source}", lang)) \
            if rep.releases else tr("profile.release_unknown", lang)
        out.append((tr("profile.advice", lang, release=rel), "bold"))
        for k, a in enumerate(rep.advice, 1):
            out.append((f"  {k}. {a.text.text(lang)}", None))
            if a.setting:
                out.append(("     " + tr("profile.setting", lang, setting=a.setting) +
                            (f"  ({a.releases})" if a.releases else ""), "cyan"))
            for command in a.commands:
                out.append(("     " + command.shell(), "cyan"))
            out.append(("     " + tr("profile.source", lang, source=a.source), "dim"))
    if rep.missing:
        out.append((tr("profile.cannot", lang), "bold"))
        for m in rep.missing:
            out.append((f"  - {m.text.text(lang)}", None))
            out.append((f"    → {m.collect.text(lang)}", "dim"))
    return out
