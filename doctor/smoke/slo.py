"""--slo: latency objectives that turn the endpoint figures into pass or fail.

``ttft=500ms,tpot=50ms`` holds each metric's p99 to the limit; ``ttft:p50=300ms`` names another
statistic (mean, p50, p90, p99). Metrics: ttft, tpot, itl, e2el. Units: ms or s (a bare number
is milliseconds).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

METRICS = ("ttft", "tpot", "itl", "e2el")
STATS = ("mean", "p50", "p90", "p99")
DEFAULT_STAT = "p99"
_ITEM = re.compile(r"^(?P<metric>[a-z0-9]+)(?::(?P<stat>[a-z0-9]+))?=(?P<value>[0-9]*\.?[0-9]+)(?P<unit>ms|s)?$")


class SloError(ValueError):
    pass


@dataclass(frozen=True)
class Objective:
    metric: str
    stat: str
    limit_ms: float

    def label(self) -> str:
        return f"{self.metric} {self.stat}"


def parse_slo(text: str) -> List[Objective]:
    out: List[Objective] = []
    for raw in text.split(","):
        item = raw.strip().lower()
        if not item:
            continue
        m = _ITEM.match(item)
        if not m:
            raise SloError(f"{raw.strip()!r}: write METRIC[:STAT]=VALUE[ms|s], e.g. ttft=500ms")
        metric, stat = m["metric"], m["stat"] or DEFAULT_STAT
        if metric not in METRICS:
            raise SloError(f"{metric!r}: the metrics are {', '.join(METRICS)}")
        if stat not in STATS:
            raise SloError(f"{stat!r}: the statistics are {', '.join(STATS)}")
        value = float(m["value"]) * (1000.0 if m["unit"] == "s" else 1.0)
        out.append(Objective(metric, stat, value))
    if not out:
        raise SloError("empty: write e.g. ttft=500ms,tpot=50ms")
    return out


@dataclass(frozen=True)
class Check:
    objective: Objective
    measured_ms: Optional[float]

    @property
    def ok(self) -> bool:
        return self.measured_ms is not None and self.measured_ms <= self.objective.limit_ms

    def to_json(self) -> Dict[str, Any]:
        return {"metric": self.objective.metric, "stat": self.objective.stat, "limit_ms": self.objective.limit_ms,
                "measured_ms": self.measured_ms, "ok": self.ok}


def evaluate(objectives: List[Objective], figures: Dict[str, Any]) -> List[Check]:
    """Each objective against the endpoint figures (``<metric>_ms`` summaries); a metric with no
    measurement fails its objective."""
    return [Check(o, (figures.get(f"{o.metric}_ms") or {}).get(o.stat)) for o in objectives]
