"""profile --compare BEFORE AFTER: what changed and by how much, step for step.

Keep the profile of a good state and compare when performance regresses (the profiling field
report's last advice). Figures are per step (medians), so captures of different lengths compare;
steps are paired in order for the step-for-step table.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from doctor.profile.report import Report

WORSE = 0.10  # a change of 10 % or more is reported as a change


@dataclass
class Change:
    key: str
    before: float
    after: float
    unit: str  # us | share | count
    worse: Optional[bool]  # None: neither better nor worse

    @property
    def ratio(self) -> Optional[float]:
        return (self.after - self.before) / self.before if self.before else None


@dataclass
class Comparison:
    changes: List[Change]  # every figure, changed or not
    steps: List[Tuple[int, float, float]]  # (index, before µs, after µs) paired in order
    ops: List[Tuple[str, float, float]]  # operator, µs per step before, after
    bound: Tuple[Optional[str], Optional[str]]
    regression: bool

    def notable(self) -> List[Change]:
        out = []
        for c in self.changes:
            if c.unit == "share":
                if abs(c.after - c.before) >= 0.05:
                    out.append(c)
            elif c.ratio is None and c.after != c.before or c.ratio is not None and abs(c.ratio) >= WORSE:
                out.append(c)
        return out


def _per_step(rep: Report) -> Dict[str, float]:
    steps = [s for r in rep.ranks for s in r.figures.steps if not s.partial]
    n = len(steps) or 1

    def med(get) -> float:  # type: ignore[no-untyped-def]
        vals = [get(s) for s in steps]
        return statistics.median(vals) if vals else 0.0

    t = rep.totals
    s = rep.verdict.shares
    return {
        "step_p50_us": med(lambda x: x.wall),
        "step_busy_p50_us": med(lambda x: x.busy),
        "step_idle_p50_us": med(lambda x: x.idle.total),
        "step_host_wait_p50_us": med(lambda x: x.idle.host_wait),
        "step_comm_exposed_p50_us": med(lambda x: x.comm_exposed),
        "kernels_per_step": med(lambda x: float(x.kernels)),
        "device_busy_share": s.get("device_busy", 0.0),
        "idle_host_wait_share": s.get("idle_host_wait", 0.0),
        "communication_exposed_share": s.get("communication_exposed", 0.0),
        "alloc_calls_per_step": t.alloc_calls / n,
        "sync_calls_per_step": t.sync_calls / n,
    }


# which direction is worse for each figure
HIGHER_IS_WORSE = {"step_p50_us", "step_idle_p50_us", "step_host_wait_p50_us", "step_comm_exposed_p50_us",
                   "kernels_per_step", "idle_host_wait_share", "communication_exposed_share", "alloc_calls_per_step",
                   "sync_calls_per_step"}
NEUTRAL = {"step_busy_p50_us", "device_busy_share"}


def _ops(rep: Report) -> Dict[str, float]:
    n = sum(len(r.figures.steps) for r in rep.ranks) or 1
    out: Dict[str, float] = {}
    for r in rep.ranks:
        for o in r.figures.top_ops:
            out[o.name] = out.get(o.name, 0.0) + o.total_us / n
    return out


def compare(before: Report, after: Report) -> Comparison:
    b, a = _per_step(before), _per_step(after)
    changes = []
    for key in b:
        unit = "share" if key.endswith("_share") else "us" if key.endswith("_us") else "count"
        worse: Optional[bool] = None
        if key not in NEUTRAL and a[key] != b[key]:
            worse = (a[key] > b[key]) == (key in HIGHER_IS_WORSE)
        changes.append(Change(key, b[key], a[key], unit, worse))
    bs = [s.wall for r in before.ranks for s in r.figures.steps if not s.partial]
    as_ = [s.wall for r in after.ranks for s in r.figures.steps if not s.partial]
    steps = [(i, bs[i], as_[i]) for i in range(min(len(bs), len(as_)))]
    bo, ao = _ops(before), _ops(after)
    names = sorted(set(bo) | set(ao), key=lambda k: -abs(ao.get(k, 0.0) - bo.get(k, 0.0)))
    ops = [(k, bo.get(k, 0.0), ao.get(k, 0.0)) for k in names[:10]]
    step = next(c for c in changes if c.key == "step_p50_us")
    regression = step.ratio is not None and step.ratio >= WORSE
    return Comparison(changes, steps, ops, (before.verdict.bound, after.verdict.bound), regression)


def to_json(c: Comparison) -> Dict:
    return {
        "bound": {"before": c.bound[0], "after": c.bound[1]},
        "regression": c.regression,
        "changes": [{"figure": x.key, "before": round(x.before, 4), "after": round(x.after, 4), "unit": x.unit,
                     "change": None if x.ratio is None else round(x.ratio, 4), "worse": x.worse}
                    for x in c.changes],
        "notable": [x.key for x in c.notable()],
        "steps": [{"index": i, "before_us": round(b, 3), "after_us": round(a, 3)} for i, b, a in c.steps],
        "operators_per_step_us": [{"name": n, "before": round(b, 3), "after": round(a, 3)} for n, b, a in c.ops],
    }
