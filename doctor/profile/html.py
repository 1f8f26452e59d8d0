"""profile --report FILE.html: one self-contained page (inline SVG and a few lines of script,
nothing fetched): the verdict, the step breakdown chart, a timeline of typical steps with the
host and device lanes and every idle gap marked by its cause, the top operators, the advice.

Every string from the profile is HTML-escaped; the page holds no script from the data.
"""
from __future__ import annotations

import html
from bisect import bisect_left
from typing import List, Optional, Sequence, Tuple

from doctor.i18n import tr
from doctor.profile import intervals as iv
from doctor.profile.analyse import RankFigures, StepFigures, classify_gap
from doctor.profile.report import Report
from doctor.profile.text import dur, headline, pct
from doctor.profile.view import COMMUNICATION, COPY

COLORS = {
    "compute": "#3b7dd8", "comm": "#e08a1e", "comm_exposed": "#e08a1e", "copy": "#8e6bbf",
    "host_late": "#d64541", "sync": "#f0b429", "kernel_wait": "#9aa5b1", "other": "#5f6b7a",
    "unattributed": "#c9ced6", "dropped": "#eef1f5", "host": "#2f9e6e", "marker": "#1f6f4a", "alloc": "#b5179e",
}
PARTS = ("compute", "comm_exposed", "copy", "host_late", "sync", "kernel_wait", "other", "unattributed")
MAX_BARS = 240
MAX_RECTS = 4000


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _parts(s: StepFigures) -> List[Tuple[str, float]]:
    busy_other = max(0.0, s.busy - s.comm_exposed - s.copy)
    return [("compute", busy_other), ("comm_exposed", s.comm_exposed), ("copy", s.copy),
            ("host_late", s.idle.host_late), ("sync", s.idle.sync), ("kernel_wait", s.idle.kernel_wait),
            ("other", s.idle.other), ("unattributed", s.idle.unattributed)]


def _legend(lang: str, keys: Sequence[str]) -> str:
    items = "".join(f'<span class="key"><i style="background:{COLORS[k]}"></i>{_e(tr("profile.html.part." + k, lang))}</span>'
                    for k in keys)
    return f'<div class="legend">{items}</div>'


def breakdown_chart(steps: Sequence[StepFigures], lang: str, width: int = 1100, height: int = 260) -> str:
    """Stacked bars, one per step (bins of consecutive steps past MAX_BARS)."""
    if not steps:
        return ""
    per = max(1, -(-len(steps) // MAX_BARS))
    bins: List[Tuple[str, List[Tuple[str, float]], float]] = []
    for i in range(0, len(steps), per):
        group = steps[i:i + per]
        parts = [(k, sum(dict(_parts(s))[k] for s in group) / len(group)) for k in PARTS]
        label = group[0].label if per == 1 else f"{group[0].label} .. {group[-1].label}"
        bins.append((label, parts, sum(v for _, v in parts)))
    top = max(b[2] for b in bins) or 1.0
    left, bottom = 60, 24
    plot_w, plot_h = width - left - 10, height - bottom - 10
    bar_w = plot_w / len(bins)
    out = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img">']
    for tick in range(5):
        y = 10 + plot_h * tick / 4
        out.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" class="axis" text-anchor="end">{_e(dur(top * (4 - tick) / 4))}</text>')
    for n, (label, parts, total) in enumerate(bins):
        x = left + n * bar_w
        y = 10 + plot_h
        tip = [f"{label}: {dur(total)}"] + [f"{tr('profile.html.part.' + k, lang)} {dur(v)}" for k, v in parts if v > 0]
        out.append(f'<g class="bar"><title>{_e(chr(10).join(tip))}</title>')
        for k, v in parts:
            if v <= 0:
                continue
            h = plot_h * v / top
            y -= h
            out.append(f'<rect x="{x + 0.5:.1f}" y="{y:.2f}" width="{max(bar_w - 1, 0.6):.2f}" height="{h:.2f}" '
                       f'fill="{COLORS[k]}"/>')
        out.append("</g>")
    every = max(1, len(bins) // 10)
    for n in range(0, len(bins), every):
        x = left + n * bar_w + bar_w / 2
        out.append(f'<text x="{x:.1f}" y="{height - 6}" class="axis" text-anchor="middle">{n * per + 1}</text>')
    out.append("</svg>")
    return "".join(out)


def _window(f: RankFigures) -> Optional[Tuple[float, float, List[StepFigures]]]:
    """Three consecutive steps around the typical one (or the first that stands out)."""
    steps = [s for s in f.steps if not s.partial] or f.steps
    if not steps:
        return None
    if f.jitter:
        k = next((i for i, s in enumerate(steps) if s.index == f.jitter[0].index), len(steps) // 2)
    else:
        walls = sorted(range(len(steps)), key=lambda i: steps[i].wall)
        k = walls[len(walls) // 2]
    lo = max(0, k - 1)
    chosen = steps[lo:lo + 3]
    return chosen[0].start, chosen[-1].end, chosen


def timeline(f: RankFigures, lang: str, width: int = 1100) -> str:
    got = _window(f)
    rank = f.rank
    if got is None or not len(rank):
        return ""
    lo, hi, chosen = got
    span = hi - lo or 1.0
    left = 110
    plot_w = width - left - 10
    lanes = [("host", 34), ("device", 60), ("idle", 90)]
    height = 140

    def x(t: float) -> float:
        return left + plot_w * (t - lo) / span

    out = [f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img">']
    for name, y in lanes:
        out.append(f'<text x="{left - 8}" y="{y + 12}" class="axis" text-anchor="end">'
                   f'{_e(tr("profile.html.lane." + name, lang))}</text>')
    for s in chosen:
        out.append(f'<line x1="{x(s.start):.1f}" x2="{x(s.start):.1f}" y1="20" y2="{height - 16}" class="step"/>'
                   f'<text x="{x(s.start) + 3:.1f}" y="16" class="axis">{_e(s.label)} · {_e(dur(s.wall))}</text>')
    # host lane: the launches (HostToDevice flow starts) and the synchronising / allocating calls
    rects = 0
    first, last = bisect_left(rank.start, lo), bisect_left(rank.start, hi)
    px_last = -1.0
    for i in range(first, last):
        t = rank.launch[i]
        if t == t and lo <= t < hi:  # not nan
            px = x(t)
            if px - px_last >= 1.0:
                out.append(f'<rect x="{px:.1f}" y="34" width="1" height="16" fill="{COLORS["host"]}"/>')
                px_last = px
                rects += 1
    for calls, color in ((rank.sync, COLORS["sync"]), (rank.alloc, COLORS["alloc"])):
        for i in calls.within(lo, hi):
            a, b = x(calls.start[i]), x(min(calls.end[i], hi))
            out.append(f'<rect x="{a:.1f}" y="30" width="{max(b - a, 1):.1f}" height="4" fill="{color}">'
                       f'<title>{_e(calls.name[i])} {_e(dur(calls.end[i] - calls.start[i]))}</title></rect>')
    # device lane: kernels, merged where narrower than a pixel
    run: Optional[List[float]] = None
    run_cat = -1
    for i in range(first, last):
        a, b = x(rank.start[i]), x(min(rank.end[i], hi))
        cat = rank.category[i]
        if run is not None and cat == run_cat and a - run[1] < 0.8 and rects < MAX_RECTS:
            run[1] = max(run[1], b)
            continue
        if run is not None:
            out.append(_device_rect(run, run_cat))
            rects += 1
        run, run_cat = [a, b], cat
        if rects >= MAX_RECTS:
            break
    if run is not None:
        out.append(_device_rect(run, run_cat))
    # idle lane: each gap in its cause's colour
    for s in chosen:
        busy = []
        for i in range(bisect_left(rank.start, s.start), bisect_left(rank.start, s.end)):
            busy.append((rank.start[i], min(rank.end[i], s.end)))
        for g0, g1 in iv.gaps(iv.union(busy), s.start, s.end):
            pos = g0
            for cause, part in classify_gap(rank, g0, g1):
                a, b = x(pos), x(pos + part)
                pos += part
                if b - a < 0.3:
                    continue
                out.append(f'<rect x="{a:.1f}" y="90" width="{b - a:.1f}" height="16" fill="{COLORS[cause]}">'
                           f'<title>{_e(tr("profile.html.part." + cause, lang))} {_e(dur(part))}</title></rect>')
    out.append(f'<text x="{left}" y="{height - 2}" class="axis">{_e(dur(0))}</text>'
               f'<text x="{width - 10}" y="{height - 2}" class="axis" text-anchor="end">{_e(dur(span))}</text>')
    out.append("</svg>")
    return "".join(out)


def _device_rect(run: List[float], cat: int) -> str:
    color = COLORS["comm"] if cat == COMMUNICATION else COLORS["copy"] if cat == COPY else COLORS["compute"]
    return f'<rect x="{run[0]:.1f}" y="60" width="{max(run[1] - run[0], 0.6):.1f}" height="20" fill="{color}"/>'


CSS = """
body{font:14px/1.45 -apple-system,'Segoe UI',Roboto,'Noto Sans CJK SC','Microsoft YaHei',sans-serif;margin:24px;color:#1d2530;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid #e3e7ec;padding-bottom:4px}
.verdict{font-size:17px;font-weight:600;padding:10px 14px;border-radius:6px;background:#fdecea;color:#8a1c17;margin:10px 0}
.verdict.balanced{background:#e8f6ee;color:#1f6f4a} .verdict.device{background:#fff6e0;color:#7a5300}
.figs{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0}
.fig{border:1px solid #e3e7ec;border-radius:6px;padding:6px 12px;min-width:120px}
.fig b{display:block;font-size:18px} .fig span{color:#5f6b7a;font-size:12px}
.chart{display:block;max-width:100%;height:auto;background:#fafbfc;border:1px solid #e3e7ec;border-radius:6px}
.grid{stroke:#e3e7ec} .axis{font-size:11px;fill:#5f6b7a} .step{stroke:#1d2530;stroke-dasharray:3 3;stroke-width:.8}
.legend{margin:6px 0 0;font-size:12px;color:#3c4652} .key{margin-right:14px;white-space:nowrap}
.key i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;font-size:13px} td,th{padding:3px 10px;border-bottom:1px solid #eef1f5;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums} code{background:#f2f4f7;padding:1px 5px;border-radius:4px}
.src{color:#5f6b7a;font-size:12px;word-break:break-all} li{margin:6px 0} .muted{color:#5f6b7a}
"""

SCRIPT = """
document.querySelectorAll('.bar').forEach(function(g){g.addEventListener('mouseenter',function(){g.style.opacity=.75});
g.addEventListener('mouseleave',function(){g.style.opacity=1});});
"""


def _figures(rep: Report, lang: str) -> str:
    s = rep.verdict.shares
    items = [("device_busy", pct(s.get("device_busy", 0.0))), ("host_wait", pct(s.get("host_wait", 0.0))),
             ("idle_host_wait", pct(s.get("idle_host_wait", 0.0))),
             ("communication_exposed", pct(s.get("communication_exposed", 0.0))),
             ("steps", str(sum(len(r.figures.steps) for r in rep.ranks)))]
    walls = sorted(x.wall for r in rep.ranks for x in r.figures.steps if not x.partial)
    if walls:
        items.append(("step_p50", dur(walls[len(walls) // 2])))
    return '<div class="figs">' + "".join(
        f'<div class="fig"><b>{_e(v)}</b><span>{_e(tr("profile.html.fig." + k, lang))}</span></div>' for k, v in items) + "</div>"


def _ops_table(f: RankFigures, lang: str) -> str:
    if not f.top_ops:
        return ""
    rows = "".join(f"<tr><td>{_e(o.name)}</td><td>{_e(o.core)}</td><td class=n>{_e(pct(o.share))}</td>"
                   f"<td class=n>{_e(dur(o.total_us))}</td><td class=n>{o.count}</td>"
                   f"<td>{_e(' '.join(f'{k}={v:.2f}' for k, v in o.metrics.items() if k.endswith(('mac_ratio', 'mte2_ratio', 'vec_ratio'))))}</td></tr>"
                   for o in f.top_ops)
    head = "".join(f"<th>{_e(tr('profile.html.col.' + c, lang))}</th>" for c in ("name", "core", "share", "total", "count", "pmu"))
    return f"<table><tr>{head}</tr>{rows}</table>"


def render(rep: Report, lang: str, before: Optional[Report] = None) -> str:
    text, _ = headline(rep, lang)
    bound = rep.verdict.bound or "none"
    main = rep.main
    parts = [f"<!doctype html><html lang=\"{'zh' if lang == 'zh' else 'en'}\"><head><meta charset=\"utf-8\">",
             f"<title>{_e(tr('profile.html.title', lang))}: {_e(rep.path)}</title>",
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
             f"<style>{CSS}</style></head><body>",
             f"<h1>{_e(tr('profile.html.title', lang))}</h1><div class=muted>{_e(rep.path)}</div>",
             f'<div class="verdict {_e(bound)}">{_e(text)}</div>', _figures(rep, lang)]
    for r in rep.ranks:
        f = r.figures
        if len(rep.ranks) > 1:
            parts.append(f"<h2>{_e(r.label)}</h2>")
        parts.append(f"<h2>{_e(tr('profile.html.breakdown', lang))}</h2>")
        parts.append(breakdown_chart(f.steps, lang))
        parts.append(_legend(lang, PARTS))
        tl = timeline(f, lang)
        if tl:
            parts.append(f"<h2>{_e(tr('profile.html.timeline', lang))}</h2>")
            parts.append(tl)
            parts.append(_legend(lang, ("host", "sync", "alloc", "compute", "comm", "copy", "host_late", "kernel_wait",
                                        "other", "unattributed")))
        parts.append(f"<h2>{_e(tr('profile.html.ops', lang))}</h2>")
        parts.append(_ops_table(f, lang))
        if len(rep.ranks) > 3 and r is rep.ranks[1]:
            parts.append(f"<p class=muted>{_e(tr('profile.html.more_ranks', lang, n=len(rep.ranks) - 2))}</p>")
            break
    if before is not None and before.main is not None:
        parts.append(f"<h2>{_e(tr('profile.html.before', lang))}</h2>")
        parts.append(breakdown_chart(before.main.figures.steps, lang))
    if rep.advice:
        items = []
        for a in rep.advice:
            setting = f"<div><code>{_e(a.setting)}</code>{(' ' + _e(a.releases)) if a.releases else ''}</div>" \
                if a.setting else ""
            items.append(f"<li>{_e(a.text.text(lang))}{setting}<div class=src>{_e(a.source)}</div></li>")
        parts.append(f"<h2>{_e(tr('profile.html.advice', lang))}</h2><ol>{''.join(items)}</ol>")
    if rep.missing:
        items = [f"<li>{_e(m.text.text(lang))}<div class=muted>→ {_e(m.collect.text(lang))}</div></li>"
                 for m in rep.missing]
        parts.append(f"<h2>{_e(tr('profile.html.missing', lang))}</h2><ul>{''.join(items)}</ul>")
    if main is not None:
        ident = main.identity
        parts.append(f"<p class=muted>{_e(ident.producer)} · torch_npu {_e(ident.torch_npu_version or '?')} · "
                     f"CANN {_e(ident.cann_version or '?')} · {_e(ident.level or '?')} · aic_metrics "
                     f"{_e(ident.aic_metrics or '?')}</p>")
    parts.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "".join(parts)
