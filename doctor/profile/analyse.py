"""Per-step figures of one rank: device busy and idle, the causes of idle time, communication
and its exposed part, allocations, launch gaps, jitter and the top operators.

Idle time is split as Holistic Trace Analysis does for GPUs (hta/analyzers/breakdown_analysis.py),
with HostToDevice flows as the link from a kernel to the host call that launched it: a gap
before a kernel the host launched only after the previous one had finished is the host's
("host launched late"), or a sync wait when the host was in or just out of a synchronising call
(aclrtSynchronize*, a blocking aclrtMemcpy); a gap before a kernel already queued is the device's
own ("kernel wait" when short, else "other"); without a flow the cause is unattributed.
"""
from __future__ import annotations

import math
import re
import statistics
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.profile import intervals as iv
from doctor.profile.kernels import KernelTable, first_dim
from doctor.profile.steps import Segmentation, Step, segment
from doctor.profile.view import COMMUNICATION, COMPUTE, COPY, HOST_BUCKET, Rank

KERNEL_WAIT_US = 2.0
SYNC_RETURN_US = 50.0  # after a synchronising call returns: the return and the next launch are the sync's  # a queued kernel starting this soon after the previous one: device-side latency
DROP_MIN_US = 20_000.0  # idle between requests: at least this long...
DROP_STEPS = 5.0  # ...and this many median steps (a single window: DROP_WINDOW_US)
DROP_WINDOW_US = 50_000.0
# ...and with no host event in it (MSTT's conjectured_gc calls a Free gap with fewer than 1e-4 ACL
# events per µs idle; here the quiet stretch itself is what is dropped)
GAP_BUCKETS = (10.0, 30.0, 80.0, 200.0, 1000.0)  # µs edges of the launch-gap histogram
JITTER_RATIO = 1.5
JITTER_MADS = 3.0
PREFILL = re.compile(r"prompt|prefill|flashattentionscore(?!grad)|_npu_flash_attention|FlashAttention(?!.*Incre)"
                     r"|ReshapeAndCache", re.I)
DECODE_ATTENTION = re.compile(r"paged|incre|fusedinferattention|FusedInferAttentionScore|PagedAttention|MLA", re.I)
MATMUL = re.compile(r"matmul|gemm|\bmm\b|batchmatmul|quantbatchmatmul|grouped_matmul|GroupedMatmul", re.I)


@dataclass
class Idle:
    host_late: float = 0.0
    sync: float = 0.0
    kernel_wait: float = 0.0
    other: float = 0.0
    unattributed: float = 0.0

    @property
    def total(self) -> float:
        return self.host_late + self.sync + self.kernel_wait + self.other + self.unattributed

    @property
    def host_wait(self) -> float:
        return self.host_late + self.sync

    def add(self, other: "Idle") -> None:
        self.host_late += other.host_late
        self.sync += other.sync
        self.kernel_wait += other.kernel_wait
        self.other += other.other
        self.unattributed += other.unattributed


@dataclass
class StepFigures:
    index: int
    label: str
    start: float
    end: float
    wall: float  # µs, without the idle dropped as between requests
    busy: float
    compute: float
    comm: float
    comm_exposed: float
    copy: float
    idle: Idle
    kernels: int
    dropped: float = 0.0
    partial: bool = False
    alloc_calls: int = 0
    alloc_us: float = 0.0
    sync_calls: int = 0
    compile_calls: int = 0
    gc_us: float = 0.0
    tokens: Optional[int] = None
    gaps: List[float] = field(default_factory=list)


@dataclass
class Jitter:
    index: int
    label: str
    wall: float
    typical: float
    reason: str  # prefill | allocation | host | gc | device
    new_kernels: List[Tuple[str, float]]
    tokens: Optional[int] = None
    typical_tokens: Optional[int] = None


@dataclass
class TopOp:
    name: str
    core: str
    total_us: float
    count: int
    share: float  # of all kernel time
    metrics: Dict[str, float] = field(default_factory=dict)


@dataclass
class RankFigures:
    label: str
    segmentation: Segmentation
    steps: List[StepFigures]
    dropped: List[Tuple[float, float]]
    totals: StepFigures
    launch_latency: Dict[str, float]
    gap_stats: Dict[str, float]
    gap_histogram: List[int]
    jitter: List[Jitter]
    top_ops: List[TopOp]
    device_kind: Optional[str]
    device_kind_measured: bool
    cube_ratio: Optional[float]
    memory_bound_share: Optional[float]
    pmu: Optional[str]
    task_queue: Optional[bool]
    rank: Rank


def _spans(rank: Rank, cats: Sequence[int]) -> List[iv.Span]:
    return iv.union((rank.start[i], rank.end[i]) for i in range(len(rank)) if rank.category[i] in cats)


class _Clipper:
    """Fast clipping of one sorted disjoint span list to many windows."""

    def __init__(self, spans: List[iv.Span]):
        self.spans = spans
        self.starts = [s for s, _ in spans]

    def clip(self, lo: float, hi: float) -> List[iv.Span]:
        i = max(0, bisect_right(self.starts, lo) - 1)
        j = bisect_left(self.starts, hi)
        return iv.clip(self.spans[i:j], lo, hi)


def _quantile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    v = sorted(values)
    k = (len(v) - 1) * q
    lo = math.floor(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def _host_active(rank: Rank, lo: float, hi: float) -> bool:
    """Some host event started in [lo, hi) (to the HOST_BUCKET)."""
    marks = rank.host_marks
    i = bisect_left(marks, lo - HOST_BUCKET)
    return i < len(marks) and marks[i] < hi and marks[i] + HOST_BUCKET > lo


def dropped_windows(rank: Rank, busy: List[iv.Span], seg: Segmentation) -> List[iv.Span]:
    """Idle windows the server spent waiting for requests: long, and (with a host lane) quiet."""
    if not busy or not seg.steps:
        return []
    walls = [s.wall for s in seg.steps if not s.partial]
    limit = max(DROP_MIN_US, DROP_STEPS * statistics.median(walls)) if len(walls) >= 3 else DROP_WINDOW_US
    lo = min(s.start for s in seg.steps)
    hi = max(s.end for s in seg.steps)
    out = []
    for g0, g1 in iv.gaps(busy, lo, hi):
        if g1 - g0 < limit:
            continue
        if not (rank.host_lane or rank.has_cann):
            out.append((g0, g1))  # a kernel table alone: no host events to tell, the device was idle
            continue
        # the quiet part only: the longest stretch without a host event (the host's work at the
        # end of one request and the start of the next stays in the steps)
        a, b = bisect_left(rank.host_marks, g0 - HOST_BUCKET), bisect_left(rank.host_marks, g1)
        active = [(m, m + HOST_BUCKET) for m in rank.host_marks[a:b]]
        quiet = iv.gaps(active, g0, g1)
        if quiet:
            q0, q1 = max(quiet, key=lambda q: q[1] - q[0])
            if q1 - q0 >= limit:
                out.append((q0, q1))
    return out


def _sync_end(rank: Rank, lo: float, hi: float) -> Optional[float]:
    """The latest end of the synchronising host calls that started by ``hi``, when one of them
    was still running at ``lo`` (or later), else None."""
    j = bisect_right(rank.sync.start, hi)
    if j == 0:
        return None
    end = rank.sync_reach[j - 1]
    return end if end >= lo else None


def classify_gap(rank: Rank, g0: float, g1: float) -> List[Tuple[str, float]]:
    """The causes of the idle gap [g0, g1) with their µs: host_late, sync, kernel_wait, other or
    unattributed. A sync wait is the part of a late launch up to SYNC_RETURN_US after the host
    came out of the synchronising call (its return and the launch that follows); host work after
    that is the host's own."""
    j = bisect_left(rank.start, g1 - 1e-6)
    length = g1 - g0
    if j >= len(rank):
        # after the last kernel: the host has not launched anything yet
        return [("host_late" if (rank.host_lane or rank.has_cann) and _host_active(rank, g0, g1) else "unattributed",
                 length)]
    launch = rank.launch[j]
    if math.isnan(launch):
        return [("unattributed", length)]
    if launch > g0:
        end = _sync_end(rank, g0, launch)
        if end is None:
            return [("host_late", length)]
        sync = min(length, max(0.0, end - g0) + SYNC_RETURN_US)
        return [("sync", sync), ("host_late", length - sync)] if length > sync else [("sync", length)]
    return [("kernel_wait" if length <= KERNEL_WAIT_US else "other", length)]


def _step(rank: Rank, k: int, step: Step, clips: Dict[str, _Clipper], dropped: List[iv.Span]) -> StepFigures:
    lo, hi = step.start, step.end
    window = iv.subtract([(lo, hi)], iv.clip(dropped, lo, hi))
    cut = (hi - lo) - iv.total(window)

    whole = len(window) == 1 and window[0] == (lo, hi)

    def within(name: str) -> List[iv.Span]:
        got = clips[name].clip(lo, hi)
        return got if whole else iv.intersect(got, window)

    busy, compute, comm, copy = within("busy"), within("compute"), within("comm"), within("copy")
    exposed = iv.subtract(comm, iv.union(compute + copy))
    idle = Idle()
    gaps: List[float] = []
    for g0, g1 in iv.subtract(window, busy):
        for cause, part in classify_gap(rank, g0, g1):
            setattr(idle, cause, getattr(idle, cause) + part)
        gaps.append(g1 - g0)
    first, last = bisect_left(rank.start, lo), bisect_left(rank.start, hi)
    fig = StepFigures(index=k, label=step.label, start=lo, end=hi, wall=iv.total(window), busy=iv.total(busy),
                      compute=iv.total(compute), comm=iv.total(comm), comm_exposed=iv.total(exposed),
                      copy=iv.total(copy), idle=idle, kernels=last - first, dropped=cut, partial=step.partial,
                      gaps=gaps)
    for i in rank.alloc.within(lo, hi):
        fig.alloc_calls += 1
        fig.alloc_us += rank.alloc.end[i] - rank.alloc.start[i]
    fig.sync_calls = len(rank.sync.within(lo, hi))
    fig.compile_calls = len(rank.compile.within(lo, hi))
    fig.gc_us = sum(rank.gc.end[i] - rank.gc.start[i] for i in rank.gc.within(lo, hi))
    return fig


def _tokens(rank: Rank, steps: List[StepFigures]) -> None:
    """Tokens of each step: the first dimension of its first matmul's input (kernel_details shapes)."""
    t = rank.table
    if t is None or not len(t):
        return
    starts = [s.start for s in steps]
    seen: Dict[int, int] = {}
    matmul = [bool(MATMUL.search(n)) for n in t.names]
    for i in range(len(t)):
        st = t.start[i]
        if math.isnan(st):
            continue
        k = bisect_right(starts, st) - 1
        if k < 0 or k in seen or st >= steps[k].end:
            continue
        if matmul[t.type[i]] or matmul[t.name[i]]:
            d = first_dim(t.text(t.shapes[i]))
            if d is not None:
                seen[k] = d
    for k, d in seen.items():
        steps[k].tokens = d


def _names_in(rank: Rank, lo: float, hi: float) -> Counter:
    out: Counter = Counter()
    for i in range(bisect_left(rank.start, lo), bisect_left(rank.start, hi)):
        out[rank.task_name(i)] += rank.end[i] - rank.start[i]
    return out


def _jitter(rank: Rank, steps: List[StepFigures]) -> List[Jitter]:
    full = [s for s in steps if not s.partial and s.wall > 0]
    if len(full) < 5:
        return []
    walls = [s.wall for s in full]
    p50 = statistics.median(walls)
    mad = statistics.median(abs(w - p50) for w in walls)
    out: List[Jitter] = []
    for n, s in enumerate(full):
        around = [x for x in full[max(0, n - 3):n + 4] if x is not s]
        typical_step = sorted(around, key=lambda x: x.wall)[len(around) // 2]
        typical = statistics.median(x.wall for x in around)
        if s.wall < JITTER_RATIO * typical or s.wall < p50 + JITTER_MADS * mad:
            continue
        mine = _names_in(rank, s.start, s.end)
        usual = _names_in(rank, typical_step.start, typical_step.end)
        new: List[Tuple[str, float]] = sorted(((k, float(v)) for k, v in mine.items() if k not in usual),
                                              key=lambda kv: -kv[1])[:5]
        excess = s.wall - typical
        tokens_jump = s.tokens is not None and typical_step.tokens and s.tokens >= 4 * typical_step.tokens
        if tokens_jump or any(PREFILL.search(k) for k, _ in new):
            reason = "prefill"
        elif s.alloc_calls > typical_step.alloc_calls and s.alloc_us >= 0.3 * excess:
            reason = "allocation"
        elif s.gc_us >= 0.3 * excess:
            reason = "gc"
        elif s.idle.host_wait - typical_step.idle.host_wait >= 0.5 * excess:
            reason = "host"
        else:
            reason = "device"
        out.append(Jitter(s.index, s.label, s.wall, typical, reason, new, s.tokens, typical_step.tokens))
    return out


def _weighted(values: Sequence[Tuple[float, float]]) -> Optional[float]:
    w = sum(d for d, v in values if not math.isnan(v))
    return sum(d * v for d, v in values if not math.isnan(v)) / w if w > 0 else None


def top_ops(rank: Rank, limit: int = 10) -> List[TopOp]:
    """Operators by total device time: the kernel table's Type and core when there is one."""
    total: Dict[Tuple[str, str], float] = defaultdict(float)
    count: Counter = Counter()
    metrics: Dict[Tuple[str, str], Dict[str, List[Tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    t = rank.table
    if t is not None and len(t):
        for i in range(len(t)):
            key = (t.text(t.type[i]) or t.text(t.name[i]), t.text(t.core[i]))
            d = t.dur[i]
            total[key] += d
            count[key] += 1
            for m, col in t.metrics.items():
                metrics[key][m].append((d, col[i]))
    else:
        for i in range(len(rank)):
            key = (rank.task_name(i), ("HCCL" if rank.category[i] == COMMUNICATION else
                                       "SDMA" if rank.category[i] == COPY else ""))
            total[key] += rank.end[i] - rank.start[i]
            count[key] += 1
    grand = sum(total.values()) or 1.0
    out = []
    for key in sorted(total, key=lambda k: -total[k])[:limit]:
        ms = {m: v for m, v in ((m, _weighted(vals)) for m, vals in metrics[key].items()) if v is not None}
        out.append(TopOp(key[0], key[1], total[key], count[key], total[key] / grand, ms))
    return out


def _metric(t: KernelTable, col: str, i: int) -> float:
    c = t.metrics.get(col)
    return c[i] if c is not None and not math.isnan(c[i]) else 0.0


def device_kind(rank: Rank) -> Tuple[Optional[str], bool, Optional[float], Optional[float]]:
    """(compute | memory, measured?, cube busy ratio, share of compute time memory-bound).

    Measured with PMU columns (MSPROF: memory bound when mte2_ratio / max(mac_ratio, vec_ratio) > 1);
    without them, inferred from what dominates: decode attention and decode-shaped matmuls
    (few tokens) read far more bytes than they compute on."""
    t = rank.table
    if t is not None and len(t) and t.pmu == "PipeUtilization":
        mem = cmp = 0.0
        cube: List[Tuple[float, float]] = []
        for i in range(len(t)):
            if t.is_comm(i):
                continue
            d = t.dur[i]
            mte2 = max(_metric(t, "aic_mte2_ratio", i), _metric(t, "aiv_mte2_ratio", i))
            work = max(_metric(t, "aic_mac_ratio", i), _metric(t, "aiv_vec_ratio", i))
            if mte2 == 0 and work == 0:
                continue
            if work == 0 or mte2 / work > 1:
                mem += d
            else:
                cmp += d
            if "aic_mac_ratio" in t.metrics and t.text(t.core[i]).upper() in ("AI_CORE", "MIX_AIC"):
                cube.append((d, t.metrics["aic_mac_ratio"][i]))
        if mem + cmp > 0:
            share = mem / (mem + cmp)
            return ("memory" if share >= 0.5 else "compute"), True, _weighted(cube), share
    # inferred
    attention = matmul_small = compute = 0.0
    if t is not None and len(t):
        attention_name = [bool(DECODE_ATTENTION.search(n)) for n in t.names]
        matmul_name = [bool(MATMUL.search(n)) for n in t.names]
        for i in range(len(t)):
            if t.is_comm(i):
                continue
            d = t.dur[i]
            compute += d
            if attention_name[t.type[i]] or attention_name[t.name[i]]:
                attention += d
            elif matmul_name[t.type[i]] or matmul_name[t.name[i]]:
                dim = first_dim(t.text(t.shapes[i]))
                if dim is not None and dim <= 256:
                    matmul_small += d
    else:
        is_attention = [bool(DECODE_ATTENTION.search(n)) for n in rank.names]
        for i in range(len(rank)):
            if rank.category[i] != COMPUTE:
                continue
            d = rank.end[i] - rank.start[i]
            compute += d
            if is_attention[rank.name[i]]:
                attention += d
    if compute <= 0:
        return None, False, None, None
    share = (attention + matmul_small) / compute
    return ("memory" if share >= 0.5 else "compute"), False, None, share


def sum_steps(steps: Sequence[StepFigures]) -> StepFigures:
    tot = StepFigures(index=-1, label="total", start=min((s.start for s in steps), default=0.0),
                      end=max((s.end for s in steps), default=0.0), wall=0.0, busy=0.0, compute=0.0, comm=0.0,
                      comm_exposed=0.0, copy=0.0, idle=Idle(), kernels=0)
    for s in steps:
        tot.wall += s.wall
        tot.busy += s.busy
        tot.compute += s.compute
        tot.comm += s.comm
        tot.comm_exposed += s.comm_exposed
        tot.copy += s.copy
        tot.idle.add(s.idle)
        tot.kernels += s.kernels
        tot.dropped += s.dropped
        tot.alloc_calls += s.alloc_calls
        tot.alloc_us += s.alloc_us
        tot.sync_calls += s.sync_calls
        tot.compile_calls += s.compile_calls
        tot.gc_us += s.gc_us
        tot.gaps.extend(s.gaps)
    return tot


def analyse(rank: Rank) -> RankFigures:
    seg = segment(rank)
    busy = _spans(rank, (COMPUTE, COMMUNICATION, COPY))
    clips = {"busy": _Clipper(busy), "compute": _Clipper(_spans(rank, (COMPUTE,))),
             "comm": _Clipper(_spans(rank, (COMMUNICATION,))), "copy": _Clipper(_spans(rank, (COPY,)))}
    dropped = dropped_windows(rank, busy, seg)
    steps = [_step(rank, k, s, clips, dropped) for k, s in enumerate(seg.steps)]
    steps = [s for s in steps if s.wall > 0]
    for n, s in enumerate(steps):
        s.index = n
    _tokens(rank, steps)
    totals = sum_steps(steps)
    gaps = totals.gaps
    hist = [0] * (len(GAP_BUCKETS) + 1)
    for g in gaps:
        hist[bisect_right(GAP_BUCKETS, g)] += 1
    gap_stats = {"count": float(len(gaps)), "mean_us": statistics.fmean(gaps) if gaps else 0.0,
                 "p50_us": _quantile(gaps, 0.5), "p90_us": _quantile(gaps, 0.9), "max_us": max(gaps, default=0.0)}
    latency = [rank.start[i] - rank.launch[i] for i in range(len(rank)) if not math.isnan(rank.launch[i])]
    launch_latency = {"count": float(len(latency)), "p50_us": _quantile(latency, 0.5),
                      "p90_us": _quantile(latency, 0.9)} if latency else {}
    kind, measured, cube, mem_share = device_kind(rank)
    return RankFigures(label=rank.label, segmentation=seg, steps=steps, dropped=dropped, totals=totals,
                       launch_latency=launch_latency, gap_stats=gap_stats, gap_histogram=hist,
                       jitter=_jitter(rank, steps), top_ops=top_ops(rank), device_kind=kind,
                       device_kind_measured=measured, cube_ratio=cube, memory_bound_share=mem_share,
                       pmu=rank.table.pmu if rank.table is not None else None, task_queue=rank.task_queue, rank=rank)
