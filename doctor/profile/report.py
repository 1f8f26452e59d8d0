"""A profile's findings as one object: the verdict, the figures behind it, per step and per
rank, the advice and what is missing. ``to_json`` is the stable ``profile --json`` document
(docs/profile.md): ``summary`` holds ``bound``, ``device_busy_share`` and
``idle_host_wait_share`` (0..1) at least.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from doctor import __version__
from doctor.profile import advice as adv
from doctor.profile.analyse import GAP_BUCKETS, RankFigures, StepFigures, sum_steps
from doctor.profile.cluster import RankTotals, SlowRank, slow_rank
from doctor.profile.identify import Identity
from doctor.profile.verdict import Verdict, judge

SCHEMA_VERSION = 1
MAX_STEPS_JSON = 5000


@dataclass
class RankResult:
    label: str
    files: Dict[str, Optional[str]]
    identity: Identity
    figures: RankFigures
    verdict: Verdict
    notes: List[str] = field(default_factory=list)
    memory: Optional[Dict[str, Any]] = None  # memory_record.csv: peaks and the rise inside the loop
    communication: Optional[Dict[str, Any]] = None  # communication.json: transit, wait, sync totals


@dataclass
class Report:
    path: str
    layout: str
    ranks: List[RankResult]
    totals: StepFigures
    verdict: Verdict
    advice: List[adv.Advice]
    missing: List[adv.Missing]
    slow: Optional[SlowRank]
    releases: Optional[str]
    release_source: Optional[str]  # option | torch_npu | None
    notes: List[str] = field(default_factory=list)
    cluster_only: List[RankTotals] = field(default_factory=list)

    @property
    def main(self) -> Optional[RankResult]:
        return self.ranks[0] if self.ranks else None


def _r(x: float, digits: int = 4) -> float:
    return round(x, digits)


def _us(x: float) -> float:
    return round(x, 3)


def step_json(s: StepFigures) -> Dict[str, Any]:
    return {"index": s.index, "label": s.label, "start_us": _us(s.start), "wall_us": _us(s.wall),
            "busy_us": _us(s.busy), "compute_us": _us(s.compute), "communication_us": _us(s.comm),
            "communication_exposed_us": _us(s.comm_exposed), "idle_us": _us(s.idle.total),
            "idle_host_late_us": _us(s.idle.host_late), "idle_sync_us": _us(s.idle.sync),
            "idle_kernel_wait_us": _us(s.idle.kernel_wait), "idle_other_us": _us(s.idle.other),
            "idle_unattributed_us": _us(s.idle.unattributed), "kernels": s.kernels, "dropped_idle_us": _us(s.dropped),
            "alloc_calls": s.alloc_calls, "tokens": s.tokens, "partial": s.partial}


def _walls(f: RankFigures) -> List[float]:
    return [s.wall for s in f.steps if not s.partial]


def summary(verdict: Verdict, totals: StepFigures, figures: Sequence[RankFigures]) -> Dict[str, Any]:
    s = verdict.shares
    walls = [w for f in figures for w in _walls(f)]
    first = figures[0] if figures else None
    return {
        "bound": verdict.bound,
        "device_kind": verdict.device_kind,
        "device_kind_measured": verdict.device_kind_measured,
        "basis": verdict.basis,
        "device_busy_share": _r(s.get("device_busy", 0.0)),
        "idle_share": _r(s.get("idle", 0.0)),
        "idle_host_wait_share": _r(s.get("idle_host_wait", 0.0)),
        "host_wait_share": _r(s.get("host_wait", 0.0)),
        "compute_share": _r(s.get("compute", 0.0)),
        "communication_share": _r(s.get("communication", 0.0)),
        "communication_exposed_share": _r(s.get("communication_exposed", 0.0)),
        "steps": sum(len(f.steps) for f in figures),
        "step_method": first.segmentation.method if first else None,
        "step_anchor": first.segmentation.anchor if first else None,
        "step_p50_us": _us(statistics.median(walls)) if walls else None,
        "step_p90_us": _us(sorted(walls)[int(0.9 * (len(walls) - 1))]) if walls else None,
        "wall_us": _us(totals.wall),
        "dropped_idle_us": _us(totals.dropped),
        "ranks": len(figures),
    }


def rank_json(r: RankResult, lang: str) -> Dict[str, Any]:
    f = r.figures
    t = f.totals
    return {
        "label": r.label,
        "files": r.files,
        "identity": r.identity.to_json(),
        "summary": summary(r.verdict, t, [f]),
        "idle": {"total_us": _us(t.idle.total), "host_late_us": _us(t.idle.host_late), "sync_us": _us(t.idle.sync),
                 "kernel_wait_us": _us(t.idle.kernel_wait), "other_us": _us(t.idle.other),
                 "unattributed_us": _us(t.idle.unattributed)},
        "launch_gaps": {**{k: (_us(v) if k != "count" else int(v)) for k, v in f.gap_stats.items()},
                        "histogram_edges_us": list(GAP_BUCKETS), "histogram": f.gap_histogram},
        "launch_latency": {k: (_us(v) if k != "count" else int(v)) for k, v in f.launch_latency.items()},
        "communication": {"total_us": _us(t.comm), "exposed_us": _us(t.comm_exposed),
                          "overlapped_us": _us(t.comm - t.comm_exposed), "operators": r.communication},
        "allocations": {"calls": t.alloc_calls, "total_us": _us(t.alloc_us),
                        "steps_with_calls": sum(1 for s in f.steps if s.alloc_calls)},
        "memory": r.memory,
        "sync_calls": t.sync_calls,
        "compile_calls": t.compile_calls,
        "task_queue": f.task_queue,
        "jitter": [{"index": j.index, "label": j.label, "wall_us": _us(j.wall), "typical_us": _us(j.typical),
                    "reason": j.reason, "tokens": j.tokens, "typical_tokens": j.typical_tokens,
                    "new_kernels": [{"name": n, "us": _us(v)} for n, v in j.new_kernels]} for j in f.jitter],
        "top_ops": [{"name": o.name, "core": o.core, "total_us": _us(o.total_us), "count": o.count,
                     "share": _r(o.share), "metrics": {k: _r(v) for k, v in o.metrics.items()}} for o in f.top_ops],
        "pmu": {"columns": f.pmu, "cube_mac_ratio": None if f.cube_ratio is None else _r(f.cube_ratio),
                "memory_bound_share": None if f.memory_bound_share is None else _r(f.memory_bound_share),
                "measured": f.device_kind_measured},
        "overlap_lane_us": {k: _us(v) for k, v in sorted(f.rank.overlap.items())},
        "steps": [step_json(s) for s in f.steps[:MAX_STEPS_JSON]],
        "steps_truncated": len(f.steps) > MAX_STEPS_JSON,
        "notes": r.notes,
    }


def to_json(rep: Report, lang: str) -> Dict[str, Any]:
    doc: Dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool_version": __version__,
        "kind": "profile",
        "path": rep.path,
        "layout": rep.layout,
        "release": {"vllm_ascend": rep.releases, "from": rep.release_source},
        "summary": summary(rep.verdict, rep.totals, [r.figures for r in rep.ranks]),
        "ranks": [rank_json(r, lang) for r in rep.ranks],
        "slow_rank": None if rep.slow is None else {"rank": rep.slow.rank,
                                                    "spreads": {k: _r(v) for k, v in rep.slow.spreads.items()},
                                                    "per_step": rep.slow.per_step},
        "advice": [a.to_json(lang) for a in rep.advice],
        "cannot_tell": [m.to_json(lang) for m in rep.missing],
        "notes": rep.notes,
    }
    if rep.cluster_only:
        doc["cluster"] = [{"rank": c.label, "computing_us": _us(c.compute_us),
                           "communication_not_overlapped_us": _us(c.comm_us), "free_us": _us(c.free_us)}
                          for c in rep.cluster_only]
    return doc


def assemble(path: str, layout: str, ranks: List[RankResult], releases: Sequence[str], release_source: Optional[str],
             notes: Sequence[str] = (), cluster_only: Sequence[RankTotals] = ()) -> Report:
    """The report over every rank: the verdict of the steps of all ranks together."""
    figures = [r.figures for r in ranks]
    totals = sum_steps([f.totals for f in figures]) if figures else sum_steps([])
    kinds = [f for f in figures if f.device_kind is not None]
    kind = kinds[0].device_kind if kinds else None
    measured = bool(kinds and kinds[0].device_kind_measured)
    verdict = judge(totals, kind, measured)
    totals_by_rank = [RankTotals(r.label, f.totals.compute + f.totals.copy, f.totals.comm, f.totals.idle.total,
                                 len(f.steps)) for r, f in zip(ranks, figures)]
    slow = slow_rank(totals_by_rank) if len(ranks) > 1 else slow_rank(list(cluster_only)) if cluster_only else None
    rel = adv.Releases(releases)
    advice: List[adv.Advice] = []
    missing: List[adv.Missing] = []
    if figures:
        advice = adv.advise(_merged(figures, totals), verdict, rel, slow.rank if slow else None)
        tp_seen = any(f.totals.comm > 0 for f in figures)
        missing = adv.missing(figures[0], ranks[0].identity, len(ranks), tp_seen)
    return Report(path, layout, ranks, totals, verdict, advice, missing, slow, rel.label(), release_source,
                  list(notes), list(cluster_only))


def _merged(figures: Sequence[RankFigures], totals: StepFigures) -> RankFigures:
    """The first rank's figures with the totals of all (what the advice reads)."""
    f = figures[0]
    if len(figures) == 1:
        return f
    steps = [s for g in figures for s in g.steps]
    jitter = [j for g in figures for j in g.jitter]
    return RankFigures(label="all", segmentation=f.segmentation, steps=steps, dropped=f.dropped, totals=totals,
                       launch_latency=f.launch_latency, gap_stats=f.gap_stats, gap_histogram=f.gap_histogram,
                       jitter=jitter, top_ops=f.top_ops, device_kind=f.device_kind,
                       device_kind_measured=f.device_kind_measured, cube_ratio=f.cube_ratio,
                       memory_bound_share=f.memory_bound_share, pmu=f.pmu, task_queue=f.task_queue, rank=f.rank)
