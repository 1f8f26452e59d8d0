"""Pictures of the kvpool stage (pure): the TTFT1/2/3 bars and the TTFT-vs-documents curve with
the predicted knee, as a self-contained HTML page (inline SVG and CSS, nothing fetched: it opens
on an air-gapped machine) and as a few lines for the terminal.

Everything comes from the stage's JSON (``StageResult.to_json``); every string from a server or
a file (model names, URLs, errors) is HTML-escaped here and passed through the terminal filter
by the renderer.
"""
from __future__ import annotations

import html
import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

from doctor.i18n import tr

BAR_COLOURS = {"cold": "#8a8f98", "local": "#1b9e77", "remote": "#3b6fd8"}
STATUS_COLOURS = {"ok": "#1b7f3b", "warn": "#b26a00", "fail": "#b3261e", "skip": "#666"}
SPARK = "▁▂▃▄▅▆▇█"


def inert(value: Any, limit: int = 300) -> str:
    """A string from a server or a file, for titles and the terminal: the doctor's one
    terminal-safe filter (doctor.textsafe.clean), at most ``limit`` characters of it."""
    from doctor.textsafe import clean

    return clean(str(value)[:limit])


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _ms(v: Optional[float]) -> str:
    if v is None:
        return "-"
    return f"{v / 1000:.2f} s" if v >= 10000 else f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"


def _tick(v: float) -> str:
    return "0" if v == 0 else _ms(v)


def _nice_step(top: float, ticks: int = 5) -> float:
    raw = top / max(1, ticks)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _open_svg(w: int, h: int, label: str) -> List[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
            f'aria-label="{_e(label)}">']


def _y_grid(left: float, right: float, y: Any, step: float, ymax: float) -> List[str]:
    """Horizontal grid lines with their millisecond labels, every ``step`` up to ``ymax``."""
    out: List[str] = []
    tick = 0.0
    while tick <= ymax + 1e-9:
        out.append(f'<line x1="{left}" x2="{right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>')
        out.append(f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" class="tick" text-anchor="end">{_e(_tick(tick))}</text>')
        tick += step
    return out


def _bars(metrics: Dict[str, Any], lang: str) -> List[Tuple[str, str, Optional[float], Optional[float]]]:
    out = []
    for key, tier in (("cold", "cold"), ("local_hit", "local"), ("remote_hit", "remote")):
        out.append((tier, tr(f"smoke.kvpool.report.bar.{tier}", lang), metrics.get(f"ttft_{key}_p50_ms"),
                    metrics.get(f"ttft_{key}_p90_ms")))
    return out


def bars_svg(metrics: Dict[str, Any], lang: str) -> str:
    bars = _bars(metrics, lang)
    w, h, left, bottom, top_pad = 640, 300, 70, 50, 30
    plot_h = h - bottom - top_pad
    top = max([v for _, _, p50, p90 in bars for v in (p50, p90) if v is not None] or [1.0])
    step = _nice_step(top * 1.1)
    ymax = step * math.ceil(top * 1.1 / step)
    cold = bars[0][2]

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - v / ymax)

    parts = _open_svg(w, h, tr("smoke.kvpool.report.bars_title", lang)) + _y_grid(left, w - 20, y, step, ymax)
    slot = (w - left - 20) / len(bars)
    for i, (tier, label, p50, p90) in enumerate(bars):
        cx = left + slot * (i + 0.5)
        bw = slot * 0.5
        parts.append(f'<text x="{cx:.1f}" y="{h - bottom + 20}" class="label" text-anchor="middle">{_e(label)}</text>')
        if p50 is None:
            parts.append(f'<text x="{cx:.1f}" y="{y(0) - 10:.1f}" class="na" text-anchor="middle">'
                         f'{_e(tr("smoke.kvpool.report.not_measured", lang))}</text>')
            continue
        parts.append(f'<rect x="{cx - bw / 2:.1f}" y="{y(p50):.1f}" width="{bw:.1f}" height="{y(0) - y(p50):.1f}" '
                     f'fill="{BAR_COLOURS[tier]}"><title>{_e(label)} p50 {_e(_ms(p50))}</title></rect>')
        if p90 is not None and p90 > p50:
            parts.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(p50):.1f}" y2="{y(p90):.1f}" class="whisker"/>')
            parts.append(f'<line x1="{cx - 8:.1f}" x2="{cx + 8:.1f}" y1="{y(p90):.1f}" y2="{y(p90):.1f}" class="whisker"/>')
        text = _ms(p50)
        if tier != "cold" and cold:
            text += f" ({(p50 / cold - 1) * 100:+.0f}%)"
        label_y = y(max(p50, p90 or p50)) - 8
        parts.append(f'<text x="{cx:.1f}" y="{label_y:.1f}" class="value" text-anchor="middle">{_e(text)}</text>')
    parts.append(f'<line x1="{left}" x2="{w - 20}" y1="{y(0):.1f}" y2="{y(0):.1f}" class="axis"/>')
    parts.append(f'<text x="16" y="{top_pad + plot_h / 2:.1f}" class="axis-title" text-anchor="middle" '
                 f'transform="rotate(-90 16 {top_pad + plot_h / 2:.1f})">{_e(tr("smoke.kvpool.report.ttft_p50", lang))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def sweep_svg(sweep: Dict[str, Any], lang: str) -> str:
    points = [p for p in sweep.get("points") or [] if p.get("second_ttft_ms") is not None]
    if not points:
        return ""
    pred = sweep.get("prediction") or {}
    knee = sweep.get("knee") or {}
    w, h, left, right, bottom, top_pad = 760, 380, 80, 30, 60, 60
    plot_w, plot_h = w - left - right, h - bottom - top_pad
    xs = [p["docs"] for p in points]
    xmax_raw = max(xs + [pred.get("docs_high") or 0]) * 1.08
    xstep = _nice_step(xmax_raw, 8)
    xmax = xstep * math.ceil(xmax_raw / xstep)
    ys = [v for p in points for v in (p.get("cold_ttft_ms"), p.get("second_ttft_ms")) if v is not None]
    ystep = _nice_step(max(ys) * 1.1)
    ymax = ystep * math.ceil(max(ys) * 1.1 / ystep)

    def x(v: float) -> float:
        return left + plot_w * v / xmax

    def y(v: float) -> float:
        return top_pad + plot_h * (1 - v / ymax)

    parts = _open_svg(w, h, tr("smoke.kvpool.report.sweep_title", lang)) + _y_grid(left, w - right, y, ystep, ymax)
    tick = 0.0
    while tick <= xmax + 1e-9:
        parts.append(f'<text x="{x(tick):.1f}" y="{h - bottom + 18}" class="tick" text-anchor="middle">{tick:g}</text>')
        tick += xstep
    if pred.get("docs_high") is not None:
        lo, hi = float(pred["docs_low"]), float(pred["docs_high"])
        width = max(2.0, x(hi) - x(lo))
        parts.append(f'<rect x="{x(lo) - (1 if hi == lo else 0):.1f}" y="{top_pad}" width="{width:.1f}" height="{plot_h}" '
                     f'class="predicted"><title>{_e(tr("smoke.kvpool.report.predicted", lang))} '
                     f'{lo:.1f}-{hi:.1f}</title></rect>')
        parts.append(f'<text x="{x((lo + hi) / 2):.1f}" y="{top_pad - 8}" class="predicted-label" text-anchor="middle">'
                     f'{_e(tr("smoke.kvpool.report.predicted", lang))} {_e(_docs(lo, hi))}</text>')
    if knee.get("last_fit") is not None and knee.get("first_miss") is not None:
        a, b = knee["last_fit"], knee["first_miss"]
        parts.append(f'<rect x="{x(a):.1f}" y="{top_pad}" width="{x(b) - x(a):.1f}" height="{plot_h}" class="measured">'
                     f'<title>{_e(tr("smoke.kvpool.report.measured", lang))} {a}-{b}</title></rect>')
        for edge in (a, b):
            parts.append(f'<line x1="{x(edge):.1f}" x2="{x(edge):.1f}" y1="{top_pad}" y2="{y(0):.1f}" class="measured-edge"/>')
        parts.append(f'<text x="{x((a + b) / 2):.1f}" y="{top_pad + 14}" class="measured-label" text-anchor="middle">'
                     f'{_e(tr("smoke.kvpool.report.measured", lang))} {a}-{b}</text>')
    for key, cls in (("cold_ttft_ms", "cold"), ("second_ttft_ms", "hit")):
        pts = [(x(p["docs"]), y(p[key])) for p in points if p.get(key) is not None]
        if not pts:
            continue
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        parts.append(f'<polyline points="{path}" class="line-{cls}"/>')
        for (px, py), p in zip(pts, [p for p in points if p.get(key) is not None]):
            parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" class="dot-{cls}"><title>{p["docs"]}: '
                         f'{_e(_ms(p[key]))}</title></circle>')
    parts.append(f'<line x1="{left}" x2="{w - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" class="axis"/>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{h - 16}" class="axis-title" text-anchor="middle">'
                 f'{_e(tr("smoke.kvpool.report.docs_axis", lang, tokens=sweep.get("doc_len", "?")))}</text>')
    parts.append(f'<text x="16" y="{top_pad + plot_h / 2:.1f}" class="axis-title" text-anchor="middle" '
                 f'transform="rotate(-90 16 {top_pad + plot_h / 2:.1f})">{_e(tr("smoke.kvpool.report.ttft_median", lang))}</text>')
    lx = left  # the legend sits above the plot, where no line can run under it
    for cls, key in (("cold", "legend_cold"), ("hit", "legend_hit")):
        label = tr(f"smoke.kvpool.report.{key}", lang)
        parts.append(f'<line x1="{lx}" x2="{lx + 22}" y1="14" y2="14" class="line-{cls}"/>')
        parts.append(f'<text x="{lx + 28}" y="18" class="legend">{_e(label)}</text>')
        lx += 28 + 7 * _width(label) + 24
    parts.append("</svg>")
    return "".join(parts)


def _width(text: str) -> int:
    """Columns a label takes: CJK characters are twice as wide as Latin ones."""
    return sum(2 if "\u2e80" <= ch <= "\uffef" else 1 for ch in text)


def _docs(lo: float, hi: float) -> str:
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}"


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC","PingFang SC","Microsoft YaHei",
"WenQuanYi Micro Hei",sans-serif;
margin:24px auto;max-width:900px;color:#1d1d1f;padding:0 16px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:28px 0 8px}
.verdict{border-left:6px solid;padding:10px 14px;background:#f6f6f7;margin:12px 0}
.verdict b{text-transform:uppercase;margin-right:8px} .hint{color:#444;margin-top:6px;font-size:14px}
.meta{color:#555;font-size:13px} table{border-collapse:collapse;font-size:13px;width:100%}
th,td{border-bottom:1px solid #e3e3e6;padding:4px 8px;text-align:right} th:first-child,td:first-child{text-align:left}
th{background:#f0f0f3} ul{font-size:13px;color:#333;padding-left:20px} code{font-size:12px}
svg text{font-size:12px;fill:#333} .grid{stroke:#e6e6ea} .axis{stroke:#555} .whisker{stroke:#333;stroke-width:1.5}
.tick{fill:#666} .value{font-weight:600} .na{fill:#999;font-style:italic} .axis-title{fill:#444}
.predicted{fill:#f39c12;opacity:.22} .predicted-label{fill:#a35f00;font-weight:600}
.measured{fill:#d62728;opacity:.08} .measured-edge{stroke:#d62728;stroke-width:1.5;stroke-dasharray:3 3}
.measured-label{fill:#a31f1f;font-weight:600} td{white-space:nowrap}
.line-cold{fill:none;stroke:#8a8f98;stroke-width:2;stroke-dasharray:5 4} .dot-cold{fill:#8a8f98}
.line-hit{fill:none;stroke:#3b6fd8;stroke-width:2.5} .dot-hit{fill:#3b6fd8} .legend{fill:#333}
"""


def _row(cells: Sequence[Any], head: bool = False) -> str:
    tag = "th" if head else "td"
    return "<tr>" + "".join(f"<{tag}>{_e(c)}</{tag}>" for c in cells) + "</tr>"


def _num(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def html_report(stage: Dict[str, Any], lang: str, version: str = "") -> str:
    m = stage.get("metrics") or {}
    status = str(stage.get("status", ""))
    L = lambda key, **kw: tr(f"smoke.kvpool.report.{key}", lang, **kw)  # noqa: E731
    out = [f'<!DOCTYPE html><html lang="{"zh" if lang == "zh" else "en"}"><head><meta charset="utf-8">'
           f'<meta name="viewport" content="width=device-width,initial-scale=1">'
           f'<title>{_e(L("title"))}</title><style>{CSS}</style></head><body>',
           f'<h1>{_e(L("title"))}</h1>',
           f'<div class="meta">{_e(L("servers", model=m.get("model", "?"), url=m.get("url", "?"), peer=m.get("peer_url") or "-"))}'
           f'{" · ascend-doctor " + _e(version) if version else ""}</div>',
           f'<div class="verdict" style="border-color:{STATUS_COLOURS.get(status, "#666")}"><b>{_e(status)}</b>'
           f'{_e(stage.get("title", ""))}'
           + (f'<div class="hint">{_e(stage.get("hint"))}</div>' if stage.get("hint") else "") + "</div>",
           f'<h2>{_e(L("bars_title"))}</h2>', bars_svg(m, lang)]
    sweep = m.get("sweep")
    if sweep:
        out += [f'<h2>{_e(L("sweep_title"))}</h2>', sweep_svg(sweep, lang)]
        knee, pred = sweep.get("knee") or {}, sweep.get("prediction") or {}
        out.append("<ul>")
        out.append(f"<li>{_e(L('knee_line', measured=_knee(knee), agreement=L('agreement.' + str(sweep.get('agreement', 'unknown'))), by=L('knee_by.' + _by(knee))))}</li>")
        if pred:
            out.append(f"<li>{_e(L('prediction_line', docs=_docs(pred['docs_low'], pred['docs_high']), bound=pred.get('bound', '?')))}</li>")
            out += [f"<li><code>{_e(i)}</code></li>" for i in pred.get("inputs") or []]
        out.append("</ul>")
    phases = m.get("phases") or {}
    if phases:
        out.append(f'<h2>{_e(L("phases_title"))}</h2><table>')
        out.append(_row([L("col.phase"), L("col.requests"), L("col.tokens"), "TTFT mean", "p50", "p90", "p99",
                         L("col.hbm_hits"), L("col.pool_hits"), L("col.puts"), L("col.gets")], head=True))
        for name, p in phases.items():
            t, c, ms = p.get("ttft_ms") or {}, p.get("counters") or {}, p.get("master") or {}
            out.append(_row([L("phase." + (name if name in ("cold", "evict", "local", "remote") else "sweep")),
                             f"{p.get('completed')}/{p.get('requests')}",
                             _num(p.get("prompt_tokens")), _ms(t.get("mean")), _ms(t.get("p50")), _ms(t.get("p90")),
                             _ms(t.get("p99")), _num(c.get("hbm_hits")), _num(c.get("pool_hits")), _num(ms.get("puts")),
                             _num(ms.get("gets"))]))
        out.append("</table>")
    out.append(f'<h2>{_e(L("inputs_title"))}</h2><ul>')
    for line in text_facts(m, lang):
        out.append(f"<li>{_e(line)}</li>")
    out.append("</ul></body></html>\n")
    return "".join(out)


def _by(knee: Dict[str, Any]) -> str:
    """What told hits from misses; a report of an older doctor (no "by") read TTFT alone."""
    by = knee.get("by")
    return by if by in ("counters", "both", "ttft") else "ttft"


def _knee(knee: Dict[str, Any]) -> str:
    a, b = knee.get("last_fit"), knee.get("first_miss")
    if a is not None and b is not None:
        return f"{a}-{b}"
    if b is not None:
        return f"< {b}"
    if a is not None:
        return f"> {a}"
    return "-"


def text_facts(m: Dict[str, Any], lang: str) -> List[str]:
    """The sizes the stage chose and what it read them from."""
    out: List[str] = []
    ds = m.get("datasets") or {}
    if ds.get("a"):
        a = ds["a"]
        out.append(tr("smoke.kvpool.report.dataset_a", lang, requests=a.get("requests"), input=a.get("input_len"),
                      output=a.get("output_len"), concurrency=a.get("concurrency"), tokens=_num(a.get("prompt_tokens"))))
    if ds.get("b"):
        b = ds["b"]
        out.append(tr("smoke.kvpool.report.dataset_b", lang, requests=b.get("requests"), input=b.get("input_len"),
                      sized=b.get("sized_from", "")))
    kv = m.get("kv_bytes_per_token") or {}
    if kv.get("bytes"):
        out.append(tr("smoke.kvpool.report.kv_bytes", lang, formula=kv.get("formula", ""), dir=inert(kv.get("model_dir", ""))))
    elif kv:
        out.append(tr("smoke.kvpool.report.kv_unknown", lang, error=inert(kv.get("error") or "?")))
    mc = m.get("mooncake_config") or {}
    if mc.get("error"):
        out.append(tr("smoke.kvpool.report.mooncake_error", lang, path=inert(mc.get("path", "")), error=inert(mc["error"])))
    elif mc:
        out.append(tr("smoke.kvpool.report.mooncake", lang, path=inert(mc.get("path", "")),
                      protocol=inert(mc.get("protocol") or "-"), size=_num(mc.get("global_segment_size"))))
    master = m.get("master") or {}
    if master.get("metrics_url"):
        out.append(tr("smoke.kvpool.report.master", lang, url=inert(master["metrics_url"]), source=master.get("from") or "-",
                      state=inert(master.get("error") or "ok")))
    names = m.get("counter_names") or {}
    if names:
        out.append(tr("smoke.kvpool.report.counters", lang, names=", ".join(sorted(set(names.values())))))
    return out


def spark(values: Sequence[Optional[float]]) -> str:
    vals = [v for v in values if v is not None]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    out = []
    for v in values:
        if v is None:
            out.append(" ")
            continue
        i = 0 if hi == lo else round((v - lo) / (hi - lo) * (len(SPARK) - 1))
        out.append(SPARK[i])
    return "".join(out)


def text_lines(m: Dict[str, Any], lang: str, width: int = 30) -> List[str]:
    """The compact terminal form: the three bars, the sweep's curve and knee."""
    out: List[str] = []
    bars = _bars(m, lang)
    top = max([p50 for _, _, p50, _ in bars if p50 is not None] or [0.0])
    if top <= 0:
        return out
    cold = bars[0][2]
    label_w = max(_width(label) for _, label, _, _ in bars)
    for tier, label, p50, _ in bars:
        padded = label + " " * (label_w - _width(label))  # CJK labels are two columns a character
        if p50 is None:
            out.append(f"  {padded}  {tr('smoke.kvpool.report.not_measured', lang)}")
            continue
        n = max(1, round(p50 / top * width))
        gain = f" ({(p50 / cold - 1) * 100:+.0f}%)" if tier != "cold" and cold else ""
        out.append(f"  {padded}  {'█' * n} {_ms(p50)}{gain}")
    out += ["  " + line for line in text_facts(m, lang)[:2]]
    sweep = m.get("sweep")
    if sweep and sweep.get("points"):
        pts = sweep["points"]
        out.append("  " + tr("smoke.kvpool.report.sweep_line", lang, docs=" ".join(str(p["docs"]) for p in pts)))
        out.append("  " + spark([p.get("second_ttft_ms") for p in pts]) + "  " +
                   " ".join(_ms(p.get("second_ttft_ms")) for p in pts))
        pred = sweep.get("prediction") or {}
        knee = sweep.get("knee") or {}
        out.append("  " + tr("smoke.kvpool.report.knee_line", lang, measured=_knee(knee),
                             agreement=tr("smoke.kvpool.report.agreement." + str(sweep.get("agreement", "unknown")), lang),
                             by=tr("smoke.kvpool.report.knee_by." + _by(knee), lang))
                   + (("; " + tr("smoke.kvpool.report.prediction_line", lang,
                                 docs=_docs(pred["docs_low"], pred["docs_high"]), bound=pred.get("bound", "?")))
                      if pred else ""))
    return out
