"""Where the steps of a profile are.

vllm-ascend never calls ``profiler.step()``, so a serving profile usually has no
``ProfilerStep#N``. In order of preference:

1. ``ProfilerStep#N`` ranges on the framework lane (training loops, scripts with a schedule);
2. vllm-ascend's scopes (``prepare input`` ... ``sample_token``; recorded when
   VLLM_CUSTOM_SCOPES_FOR_PROFILING=1, from v0.15.0rc1);
3. ``Step Id`` of kernel_details.csv (a table without a trace);
4. a once-per-forward kernel: a kernel name that recurs with a regular number of kernels between
   occurrences and the longest idle before it (the host preparing the next step);
5. the whole capture as one window.

A step is a window of device time. With host step starts known, a step begins at the host start
when the device was idle by then (the time the host spends preparing it is the step's), else at
its first kernel.
"""
from __future__ import annotations

import math
import statistics
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from doctor.profile.view import COMPUTE, Rank

MIN_TASKS_FOR_ANCHOR = 48
MIN_KERNELS_PER_STEP = 16
MAX_SPREAD = 0.35  # coefficient of variation of kernels per step for a regular anchor


@dataclass
class Step:
    start: float
    end: float
    label: str
    partial: bool = False

    @property
    def wall(self) -> float:
        return self.end - self.start


@dataclass
class Segmentation:
    steps: List[Step]
    method: str  # profiler_step | vllm_scope | table_step | anchor | window | none
    anchor: Optional[str] = None


def _host_windows(rank: Rank) -> Tuple[str, List[Tuple[float, float, str]]]:
    """Host step windows from the markers: ProfilerStep#N first, then vllm-ascend's scopes."""
    m = rank.markers
    prof = [(m.start[i], m.end[i], m.name[i]) for i in range(len(m)) if m.name[i].startswith("ProfilerStep#")]
    if prof:
        return "profiler_step", prof
    heads = [i for i in range(len(m)) if m.name[i] == "prepare input"]
    if not heads:
        heads = [i for i in range(len(m)) if m.name[i] == "execute_model"]
    if not heads:
        return "none", []
    out: List[Tuple[float, float, str]] = []
    for k, i in enumerate(heads):
        nxt = m.start[heads[k + 1]] if k + 1 < len(heads) else math.inf
        end = max(m.end[j] for j in range(i, len(m)) if m.start[j] < nxt)
        out.append((m.start[i], end, f"step {k + 1}"))
    return "vllm_scope", out


def _from_host(rank: Rank, windows: List[Tuple[float, float, str]], method: str) -> Segmentation:
    """Device windows for host step windows: each task belongs to the step it was launched in."""
    starts = [w[0] for w in windows]
    first: Dict[int, float] = {}
    last: Dict[int, float] = {}
    for i in range(len(rank)):
        t = rank.launch[i]
        when = rank.start[i] if math.isnan(t) else t
        k = bisect_right(starts, when) - 1
        if k < 0:
            continue
        first[k] = min(first.get(k, math.inf), rank.start[i])
        last[k] = max(last.get(k, -math.inf), rank.end[i])
    bounds: List[float] = []
    prev_end = -math.inf
    for k, (host_start, _, _) in enumerate(windows):
        f = first.get(k)
        if f is None:
            b = max(host_start, prev_end)
        elif f < max(host_start, prev_end):
            b = f
        else:
            b = max(host_start, prev_end)  # the device was idle when the host began the step
        bounds.append(b)
        prev_end = max(prev_end, last.get(k, -math.inf))
    steps: List[Step] = []
    for k, (_, host_end, label) in enumerate(windows):
        end = bounds[k + 1] if k + 1 < len(bounds) else max(host_end, last.get(k, host_end))
        if end > bounds[k]:
            steps.append(Step(bounds[k], end, label))
    return Segmentation(steps, method)


def _prev_end(rank: Rank) -> List[float]:
    out: List[float] = []
    best = -math.inf
    for i in range(len(rank)):
        out.append(best)
        best = max(best, rank.end[i])
    return out


def find_anchor(rank: Rank) -> Optional[str]:
    """A kernel that runs once per forward (see the module docstring), or None."""
    compute = [i for i in range(len(rank)) if rank.category[i] == COMPUTE]
    n = len(compute)
    if n < MIN_TASKS_FOR_ANCHOR:
        return None
    prev_end = _prev_end(rank)
    positions: Dict[int, List[int]] = defaultdict(list)
    for pos, i in enumerate(compute):
        positions[rank.name[i]].append(pos)
    counts = Counter({k: len(v) for k, v in positions.items()})
    scored: List[Tuple[float, int, int, int]] = []  # (gap before, count, first position, name)
    for name, c in counts.items():
        if c < 3 or c > n // MIN_KERNELS_PER_STEP:
            continue
        where = positions[name]
        seg = [b - a for a, b in zip(where, where[1:])]
        mean = statistics.fmean(seg)
        if statistics.median(seg) < MIN_KERNELS_PER_STEP or (statistics.pstdev(seg) / mean if mean else 1) > MAX_SPREAD:
            continue
        gaps = [max(0.0, rank.start[compute[p]] - prev_end[compute[p]]) for p in where[1:]]
        scored.append((statistics.fmean(gaps), c, where[0], name))
    if not scored:
        return None
    best = max(s[0] for s in scored)
    near = [s for s in scored if s[0] >= 0.9 * best]
    near.sort(key=lambda s: (s[1], s[2]))
    return rank.names[near[0][3]]


def _from_anchor(rank: Rank, anchor: str) -> Segmentation:
    prev_end = _prev_end(rank)
    heads = [i for i in range(len(rank)) if rank.task_name(i) == anchor and rank.category[i] == COMPUTE]
    bounds = [prev_end[i] if prev_end[i] > -math.inf else rank.start[i] for i in heads]
    bounds[0] = rank.start[heads[0]]
    steps: List[Step] = []
    if rank.start[0] < bounds[0]:
        steps.append(Step(rank.start[0], bounds[0], "partial", partial=True))
    end_all = max(rank.end)
    for k, b in enumerate(bounds):
        e = bounds[k + 1] if k + 1 < len(bounds) else end_all
        if e > b:
            steps.append(Step(b, e, f"step {k + 1}"))
    return Segmentation(steps, "anchor", anchor)


def _from_table_steps(rank: Rank) -> Optional[Segmentation]:
    t = rank.table
    if t is None or not len(t) or all(s < 0 for s in t.step):
        return None
    begin: Dict[int, float] = {}
    finish: Dict[int, float] = {}
    for i in range(len(t)):
        s, st = t.step[i], t.start[i]
        if s < 0 or math.isnan(st):
            continue
        begin[s] = min(begin.get(s, math.inf), st)
        finish[s] = max(finish.get(s, -math.inf), st + t.dur[i])
    ids = sorted(begin, key=lambda k: begin[k])
    if not ids:
        return None
    steps = []
    for k, s in enumerate(ids):
        end = begin[ids[k + 1]] if k + 1 < len(ids) else finish[s]
        steps.append(Step(begin[s], end, f"step {s}"))
    return Segmentation(steps, "table_step")


def segment(rank: Rank) -> Segmentation:
    if not len(rank):
        return Segmentation([], "none")
    method, windows = _host_windows(rank)
    if windows:
        seg = _from_host(rank, windows, method)
        if seg.steps:
            return seg
    if not rank.has_trace:
        seg_t = _from_table_steps(rank)
        if seg_t is not None:
            return seg_t
    anchor = find_anchor(rank)
    if anchor is not None:
        return _from_anchor(rank, anchor)
    return Segmentation([Step(rank.start[0], max(rank.end), "window")], "window")
