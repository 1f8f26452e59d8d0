"""all_reduce figures as nccl-tests (and Ascend's hccl_test) define them, and which rank hung.

algbw = bytes / time; busbw = algbw * 2(n-1)/n for all_reduce (nccl-tests doc/PERFORMANCE.md),
the figure to compare with the link's peak. Each size's time is the slowest rank's mean over the
timed iterations (warm-up excluded): a collective is done when its last rank is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


def bus_factor(n: int) -> float:
    return 2.0 * (n - 1) / n if n > 0 else 0.0


def bandwidth_rows(per_rank: Dict[int, List[Dict[str, Any]]], n: int) -> List[Dict[str, Any]]:
    """One row per size that every rank finished: size, time (us), algbw and busbw (GB/s),
    and how many elements came out wrong on any rank."""
    sizes: Dict[int, List[Dict[str, Any]]] = {}
    for events in per_rank.values():
        for e in events:
            sizes.setdefault(int(e["size"]), []).append(e)
    rows = []
    for size in sorted(sizes):
        got = sizes[size]
        if len(got) < n:
            continue
        seconds = max(float(e["seconds"]) for e in got)
        algbw = size / seconds / 1e9 if seconds > 0 else 0.0
        rows.append({"bytes": size, "time_us": _sig(seconds * 1e6), "algbw_gbps": _sig(algbw),
                     "busbw_gbps": _sig(algbw * bus_factor(n)), "wrong": sum(int(e.get("wrong", 0)) for e in got)})
    return rows


def _sig(x: float) -> float:
    return float(f"{x:.6g}")


@dataclass
class RankState:
    rank: int
    device: str
    started_sizes: int = 0          # "start" events seen
    finished_sizes: int = 0         # "size" events seen
    steps: List[str] = field(default_factory=list)  # finished steps, in order
    running: Optional[str] = None   # the step it was in when last heard of
    error: Optional[str] = None     # its own failure report
    exit_code: Optional[int] = None
    killed: bool = False            # still running at the deadline

    def progress(self) -> int:
        return len(self.steps) * 1000 + self.started_sizes + self.finished_sizes

    def where(self) -> str:
        if self.running == "all_reduce" or "init" in self.steps:
            return f"all_reduce size #{self.started_sizes}" if self.started_sizes > self.finished_sizes else \
                f"after {self.finished_sizes} size(s)"
        return self.running or (self.steps[-1] if self.steps else "start-up")


def culprits(ranks: List[RankState]) -> List[RankState]:
    """The ranks to name when the stage did not finish. A rank that reported its own error is a
    culprit unless the error is a timeout waiting for others; of the ranks killed at the
    deadline, those that got least far are the ones the others were waiting for (all of them
    when they got equally far)."""
    own = [r for r in ranks if r.error and not _waiting_error(r.error)]
    if own:
        return own
    dead = [r for r in ranks if not r.killed and not r.error and r.exit_code not in (0, None)]
    if dead:
        return dead
    stuck = [r for r in ranks if r.killed]
    if not stuck:
        return [r for r in ranks if r.error]
    least = min(r.progress() for r in stuck)
    return [r for r in stuck if r.progress() == least]


def _waiting_error(text: str) -> bool:
    t = text.lower()
    return "timed out" in t or "timeout" in t or "connection closed by peer" in t or "connection reset" in t
