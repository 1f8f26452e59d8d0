"""profile --compare as text lines: the verdict of the change first."""
from __future__ import annotations

from typing import List, Tuple

from doctor.i18n import tr
from doctor.profile.compare import Comparison
from doctor.profile.text import Line, dur, pct, shown


def _value(unit: str, v: float) -> str:
    return pct(v) if unit == "share" else dur(v) if unit == "us" else f"{v:.1f}"


def lines(c: Comparison, pair: Tuple[str, str], lang: str) -> List[Line]:
    out: List[Line] = []
    step = next(x for x in c.changes if x.key == "step_p50_us")
    ratio = step.ratio or 0.0
    head = "profile.compare.slower" if c.regression else "profile.compare.faster" if ratio <= -0.10 else \
        "profile.compare.same"
    out.append((tr(head, lang, before=shown(pair[0], 200), after=shown(pair[1], 200), change=pct(abs(ratio)),
                   b=dur(step.before), a=dur(step.after)), "bold red" if c.regression else "bold green"))
    if c.bound[0] != c.bound[1]:
        out.append(("  " + tr("profile.compare.bound", lang, before=c.bound[0] or "-", after=c.bound[1] or "-"), "yellow"))
    for x in c.notable():
        word = tr("profile.compare.worse" if x.worse else "profile.compare.better" if x.worse is False else
                  "profile.compare.changed", lang)
        change = f" ({'+' if (x.ratio or 0) >= 0 else ''}{pct(x.ratio)})" if x.ratio is not None and x.unit != "share" else ""
        out.append((f"  {word}: {tr('profile.figure.' + x.key, lang)} {_value(x.unit, x.before)} → "
                    f"{_value(x.unit, x.after)}{change}", "yellow" if x.worse else None))
    if c.ops:
        out.append(("  " + tr("profile.compare.ops", lang), "bold"))
        for name, b, a in c.ops[:6]:
            if abs(a - b) < 0.5:
                continue
            out.append((f"    {shown(name, 70)}: {dur(b)} → {dur(a)} " + tr("profile.compare.per_step", lang), None))
    if c.steps:
        out.append(("  " + tr("profile.compare.steps", lang, n=len(c.steps)), "bold"))
        for i, b, a in c.steps[:12]:
            mark = "  ▲" if b and (a - b) / b >= 0.10 else "  ▼" if b and (a - b) / b <= -0.10 else ""
            out.append((f"    {i + 1:>4}: {dur(b):>10} → {dur(a):>10}{mark}", None))
        if len(c.steps) > 12:
            out.append(("    " + tr("profile.compare.more_steps", lang, n=len(c.steps) - 12), "dim"))
    return out
