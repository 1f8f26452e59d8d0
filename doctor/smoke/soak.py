"""A soak run's memory samples: is something climbing steadily (device memory growing until
an OOM after hours is a known failure class)?

A series climbs when a least-squares line through its samples rises by at least MIN_GROWTH of
its capacity (or of its first value when the capacity is unknown) over the run, and explains
most of the movement (R^2 >= MIN_R2), so that a sawtooth of caches filling and draining is not
taken for a leak. Needs MIN_SAMPLES samples.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

MIN_SAMPLES = 5
MIN_GROWTH = 0.05
MIN_R2 = 0.8


@dataclass(frozen=True)
class Trend:
    name: str
    samples: int
    first: float
    last: float
    slope_per_hour: float
    r2: float
    climbing: bool
    hours_to_full: Optional[float]

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "samples": self.samples, "first": self.first, "last": self.last,
                "slope_per_hour": round(self.slope_per_hour, 3), "r2": round(self.r2, 3),
                "climbing": self.climbing,
                "hours_to_full": None if self.hours_to_full is None else round(self.hours_to_full, 2)}


def fit(points: Sequence[Tuple[float, float]]) -> Tuple[float, float, float]:
    """slope, intercept and R^2 of the least-squares line through (t, value) points."""
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    stt = sum((t - mt) ** 2 for t, _ in points)
    if stt == 0:
        return 0.0, mv, 0.0
    slope = sum((t - mt) * (v - mv) for t, v in points) / stt
    intercept = mv - slope * mt
    svv = sum((v - mv) ** 2 for _, v in points)
    sres = sum((v - (intercept + slope * t)) ** 2 for t, v in points)
    return slope, intercept, (1.0 - sres / svv) if svv > 0 else 0.0


def trend(name: str, points: Sequence[Tuple[float, float]], capacity: Optional[float] = None) -> Optional[Trend]:
    """``points`` are (seconds since start, value); None with fewer than MIN_SAMPLES points."""
    if len(points) < MIN_SAMPLES:
        return None
    pts = sorted(points)
    slope, intercept, r2 = fit(pts)
    span = pts[-1][0] - pts[0][0]
    rise = slope * span
    base = capacity if capacity else abs(pts[0][1]) or 1.0
    climbing = slope > 0 and r2 >= MIN_R2 and rise >= MIN_GROWTH * base
    to_full = None
    if climbing and capacity and slope > 0:
        to_full = max(0.0, (capacity - pts[-1][1]) / slope / 3600.0)
    return Trend(name, len(pts), pts[0][1], pts[-1][1], slope * 3600.0, r2, climbing, to_full)


def trends(series: Dict[str, List[Tuple[float, float]]], capacities: Dict[str, float]) -> List[Trend]:
    out: List[Trend] = []
    for name in sorted(series):
        t = trend(name, series[name], capacities.get(name))
        if t is not None:
            out.append(t)
    return out
