"""One rank's profile as the analysis sees it: device tasks (sorted, categorised, with their host
launch time when a HostToDevice flow gives it), and the host calls that explain idle time.

Built from a trace (trace_view.json / msprof_*.json) and/or a kernel table (kernel_details.csv /
op_summary_*.csv); the trace wins for timing (streams, flows), the table adds types, cores,
shapes and PMU ratios. Columns are arrays: a rank of half a million kernels stays a few tens of MB.
"""
from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_left
from operator import itemgetter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from doctor.profile.kernels import COMM_CORES, KernelTable
from doctor.profile.trace import CANN, COMM, DEVICE, GC, OVERLAP, PYTHON, Interner, Trace

COMPUTE, COMMUNICATION, COPY = 0, 1, 2
HOST_BUCKET = 1000.0  # µs
CATEGORY_NAMES = ("compute", "comm", "copy")
_COLLECTIVE = re.compile(r"allreduce|allgather|alltoall|reducescatter|broadcast|all_reduce|all_gather|reduce_scatter",
                         re.I)
# host API calls that block the host until the device has caught up (MSPROF best practice
# sync_api_frequent_call; MSTT synchronize rule): device idle while the host is in or just out of one
SYNC_API = re.compile(r"Synchronize|aclrtMemcpy(?!Async)|aclrtQueryEvent|aclrtQueryStream", re.I)
# device-memory allocation on the host (MSTT memory rule; CANN/Runtime names seen in traces)
ALLOC_API = re.compile(r"aclrtMalloc|aclMallocMemInner|DevMalloc|aclrtFree|aclrtMapMem|aclrtUnmapMem|"
                       r"aclrtReserveMemAddress|aclrtReleaseMemAddress", re.I)
COMPILE_API = re.compile(r"aclopCompileAndExecute$", re.I)  # the MSTT Operator Dispatch rule counts these
# framework-lane events that mark steps (torch's ProfilerStep#N, vllm-ascend's scopes)
MARKER = re.compile(r"^(ProfilerStep#\d+|prepare input|forward|post process|sample_token|draft_token|execute_model)$")


def task_category(name: str, task_type: str) -> Optional[int]:
    """COMPUTE, COMMUNICATION or COPY; None for a task that only waits (an event or notify
    wait/record: the stream is stalled, not busy)."""
    t = task_type.upper()
    n = name.lower()
    if "WAIT" in t or "RECORD" in t or n.startswith(("notify_wait", "notify_record", "event_wait", "event_record")):
        return None
    if t in COMM_CORES or n.startswith(("hcom_", "hccl")) or ("aivkernel" in n and _COLLECTIVE.search(n)):
        return COMMUNICATION
    if "SDMA" in t or "MEMCPY" in t or n.startswith("memcpy") or ("tensormove" in n and n.startswith("aclnninplacecopy")):
        return COPY
    return COMPUTE


@dataclass
class Calls:
    """Host calls of one kind, sorted by start."""

    start: array = field(default_factory=lambda: array("d"))
    end: array = field(default_factory=lambda: array("d"))
    name: List[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.start)

    def within(self, lo: float, hi: float) -> range:
        """Indices of the calls starting in [lo, hi)."""
        return range(bisect_left(self.start, lo), bisect_left(self.start, hi))

    def add(self, start: float, end: float, name: str) -> None:
        self.start.append(start)
        self.end.append(end)
        self.name.append(name)

    def sorted(self) -> "Calls":
        order = sorted(range(len(self.start)), key=self.start.__getitem__)
        return Calls(array("d", (self.start[i] for i in order)), array("d", (self.end[i] for i in order)),
                     [self.name[i] for i in order])


@dataclass
class Rank:
    """The analysable view of one profile (one rank)."""

    label: str
    names: List[str] = field(default_factory=list)
    # device tasks sorted by start
    start: array = field(default_factory=lambda: array("d"))
    end: array = field(default_factory=lambda: array("d"))
    name: array = field(default_factory=lambda: array("i"))
    category: array = field(default_factory=lambda: array("b"))
    launch: array = field(default_factory=lambda: array("d"))  # host launch ts (nan: no flow)
    stream: array = field(default_factory=lambda: array("q"))
    # the HOST_BUCKET-µs buckets in which some host event started, sorted (where the host was active:
    # a set of milliseconds instead of millions of timestamps)
    host_marks: array = field(default_factory=lambda: array("d"))
    sync: Calls = field(default_factory=Calls)
    sync_reach: array = field(default_factory=lambda: array("d"))  # running max of sync ends, by start
    alloc: Calls = field(default_factory=Calls)
    compile: Calls = field(default_factory=Calls)
    markers: Calls = field(default_factory=Calls)  # ProfilerStep#N, vllm-ascend scopes
    gc: Calls = field(default_factory=Calls)
    overlap: Dict[str, float] = field(default_factory=dict)  # Overlap Analysis lane totals, µs
    has_trace: bool = False
    host_lane: bool = False  # a framework (Python) lane
    has_cann: bool = False
    has_flows: bool = False
    task_queue: Optional[bool] = None  # Enqueue/Dequeue seen on the framework lane
    table: Optional[KernelTable] = None
    devices: int = 0
    api_calls: int = 0
    host_ops: int = 0

    def __len__(self) -> int:
        return len(self.start)

    def task_name(self, i: int) -> str:
        return self.names[self.name[i]]


class _Tasks:
    """Device tasks gathered unsorted as columns, then put into the rank by start."""

    def __init__(self) -> None:
        self.intern = Interner()
        self.start, self.end, self.launch = array("d"), array("d"), array("d")
        self.name, self.category, self.stream = array("i"), array("b"), array("q")

    def add(self, start: float, end: float, name: str, category: int, launch: float, stream: int) -> None:
        self.start.append(start)
        self.end.append(end)
        self.name.append(self.intern(name))
        self.category.append(category)
        self.launch.append(launch)
        self.stream.append(stream)

    def into(self, rank: "Rank") -> None:
        order = sorted(range(len(self.start)), key=self.start.__getitem__)
        pick = itemgetter(*order) if len(order) > 1 else None
        for src, dst in ((self.start, rank.start), (self.end, rank.end), (self.launch, rank.launch),
                         (self.name, rank.name), (self.category, rank.category), (self.stream, rank.stream)):
            dst.extend(pick(src) if pick is not None else src)
        rank.names = self.intern.names


def from_trace(trace: Trace, label: str, table: Optional[KernelTable] = None) -> Rank:
    rank = Rank(label=label, has_trace=True, table=table)
    names = trace.names
    tasks = _Tasks()
    device = trace.of(DEVICE)
    rank.devices = len(device)
    # a category per (name, task type) and a rank name id per trace name id, worked out once each
    categories: Dict[int, Optional[int]] = {}
    task_ids: Dict[int, int] = {}
    wide = len(names) + 1
    t_start, t_end, t_name = tasks.start.append, tasks.end.append, tasks.name.append
    t_cat, t_launch, t_stream = tasks.category.append, tasks.launch.append, tasks.stream.append
    for pid, cols in device:
        launches = trace.launches.get(pid)
        for i, (n, s, d, k, tid) in enumerate(zip(cols.name, cols.ts, cols.dur, cols.kind, cols.tid)):
            key = n * wide + k
            if key in categories:
                cat = categories[key]
            else:
                cat = categories[key] = task_category(names[n], names[k])
            if cat is None:
                continue
            t = task_ids.get(n)
            if t is None:
                t = task_ids[n] = tasks.intern(names[n])
            t_start(s)
            t_end(s + d)
            t_name(t)
            t_cat(cat)
            t_launch(launches[i] if launches is not None else math.nan)
            t_stream(tid)
    for pid, cols in trace.of(COMM):
        for i in range(len(cols)):
            thread = trace.thread_names.get((pid, cols.tid[i]), "")
            if thread.lower().startswith("plane"):
                continue  # the small tasks of an operator, already inside its op-level event
            s = cols.ts[i]
            tasks.add(s, s + cols.dur[i], names[cols.name[i]], COMMUNICATION, math.nan, -1)
    tasks.into(rank)
    del tasks
    starts: Set[int] = set()
    bucket = HOST_BUCKET.__rfloordiv__  # t // HOST_BUCKET
    # what each name is, once per name: 0 nothing, else the host calls it goes to
    api_kind: Dict[int, Optional[Calls]] = {}
    for _, cols in trace.of(CANN):
        rank.has_cann = True
        rank.api_calls += len(cols)
        starts.update(map(int, map(bucket, cols.ts)))
        for n, s, d in zip(cols.name, cols.ts, cols.dur):
            if n in api_kind:
                calls = api_kind[n]
            else:
                name = names[n]
                calls = api_kind[n] = rank.sync if SYNC_API.search(name) else rank.alloc if ALLOC_API.search(name) \
                    else rank.compile if COMPILE_API.search(name) else None
            if calls is not None:
                calls.add(s, s + d, names[n])
    queue = False
    marker: Dict[int, bool] = {}
    for _, cols in trace.of(PYTHON):
        rank.host_lane = True
        rank.host_ops += len(cols)
        starts.update(map(int, map(bucket, cols.ts)))
        if not queue:
            queue = any(names[n] == "Enqueue" or names[n].startswith("Dequeue@") for n in set(cols.name))
        for n, s, d in zip(cols.name, cols.ts, cols.dur):
            is_marker = marker.get(n)
            if is_marker is None:
                is_marker = marker[n] = MARKER.match(names[n]) is not None
            if is_marker:
                rank.markers.add(s, s + d, names[n])
    if rank.host_lane:
        rank.task_queue = queue
    for _, cols in trace.of(GC):
        for i in range(len(cols)):
            rank.gc.add(cols.ts[i], cols.ts[i] + cols.dur[i], names[cols.name[i]])
    rank.host_marks = array("d", (b * HOST_BUCKET for b in sorted(starts)))
    del starts
    rank.sync, rank.alloc, rank.compile = rank.sync.sorted(), rank.alloc.sorted(), rank.compile.sorted()
    reach = -math.inf
    for e in rank.sync.end:
        reach = max(reach, e)
        rank.sync_reach.append(reach)
    rank.markers, rank.gc = rank.markers.sorted(), rank.gc.sorted()
    rank.has_flows = trace.flows_h2d > 0
    for _, cols in trace.of(OVERLAP):
        for i in range(len(cols)):
            key = names[cols.name[i]]
            rank.overlap[key] = rank.overlap.get(key, 0.0) + cols.dur[i]
    return rank


def from_table(table: KernelTable, label: str) -> Rank:
    """A rank from the kernel table alone (no trace): device timing only, no host lane."""
    rank = Rank(label=label, table=table)
    tasks = _Tasks()
    for i in range(len(table)):
        s = table.start[i]
        if math.isnan(s):
            continue
        name = table.text(table.name[i])
        cat = COMMUNICATION if table.is_comm(i) else task_category(name, table.text(table.core[i]))
        if cat is None:
            continue
        tasks.add(s, s + table.dur[i], name, cat, math.nan, -1)
    tasks.into(rank)
    rank.devices = 1 if len(rank) else 0
    return rank
