"""Summary statistics as `vllm bench serve` reports them (numpy's default linear percentile)."""
from __future__ import annotations

import math
from typing import Dict, Optional, Sequence

PERCENTILES = (50, 90, 99)


def percentile(values: Sequence[float], q: float) -> Optional[float]:
    """The q-th percentile with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(values: Sequence[float], scale: float = 1000.0) -> Dict[str, Optional[float]]:
    """mean, p50, p90 and p99 (seconds in, milliseconds out by default), None when empty."""
    if not values:
        return {"mean": None, **{f"p{q}": None for q in PERCENTILES}}
    out: Dict[str, Optional[float]] = {"mean": round(sum(values) / len(values) * scale, 3)}
    for q in PERCENTILES:
        p = percentile(values, q)
        out[f"p{q}"] = round(p * scale, 3) if p is not None else None
    return out
