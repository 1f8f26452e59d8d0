"""Ranks side by side: the slow rank (msprof-analyze's slow_rank rule: a dimension whose
(max - min) / mean across ranks exceeds 5 % names the rank at the far end).

In tensor parallel every collective waits for the last rank to arrive: the slow rank computes
longest, and the others show that time as communication (waiting) instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

SPREAD = 0.05


@dataclass
class RankTotals:
    label: str
    compute_us: float
    comm_us: float
    free_us: float
    steps: int = 0


@dataclass
class SlowRank:
    rank: Optional[str]  # None: within the spread
    spreads: Dict[str, float]  # dimension -> (max - min) / mean
    per_step: bool


def slow_rank(ranks: Sequence[RankTotals]) -> Optional[SlowRank]:
    if len(ranks) < 2:
        return None
    per_step = all(r.steps > 0 for r in ranks)

    def value(r: RankTotals, dim: str) -> float:
        v = {"compute": r.compute_us, "communication": r.comm_us, "free": r.free_us}[dim]
        return v / r.steps if per_step else v

    spreads: Dict[str, float] = {}
    for dim in ("compute", "communication", "free"):
        vals = [value(r, dim) for r in ranks]
        mean = sum(vals) / len(vals)
        spreads[dim] = (max(vals) - min(vals)) / mean if mean > 0 else 0.0
    rank = None
    if spreads["compute"] > SPREAD:
        rank = max(ranks, key=lambda r: value(r, "compute")).label
    return SlowRank(rank, spreads, per_step)


def from_cluster_table(header: List[str], rows: List[List[str]]) -> List[RankTotals]:
    """cluster_step_trace_time.csv (msprof-analyze cluster): the ``rank`` rows."""
    pos = {h.strip(): i for i, h in enumerate(header)}
    need = ("Type", "Index", "Computing", "Communication(Not Overlapped)", "Free")
    if any(n not in pos for n in need):
        raise ValueError("not a cluster_step_trace_time.csv (needs " + ", ".join(need) + ")")
    out: List[RankTotals] = []
    for r in rows:
        if len(r) <= max(pos[n] for n in need) or r[pos["Type"]].strip() != "rank":
            continue
        try:
            out.append(RankTotals(f"rank {r[pos['Index']].strip()}", float(r[pos["Computing"]]),
                                  float(r[pos["Communication(Not Overlapped)"]]), float(r[pos["Free"]])))
        except ValueError:
            continue
    return out
