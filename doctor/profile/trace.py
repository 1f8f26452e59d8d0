"""A Chrome trace (trace_view.json, msprof_*.json, a torch.profiler trace) as compact columns.

The shell streams the file and hands every event to :meth:`TraceBuilder.add`; nothing here
reads a file. Events are kept as parallel ``array`` columns per process (8 to 36 bytes an
event instead of a dict), names are interned and capped, timestamps are kept relative to the
first whole microsecond seen (an Ascend ``ts`` is a string like ``"1704161511420306.491"``: as a
float it would lose the nanoseconds). Lanes are assigned at the end, because a process's
``process_name`` event may come after its first events.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

MAX_NAME = 240  # characters of a name kept (a name is data: it may be anything)
MAX_NAMES = 200_000  # distinct names kept; more become OTHER_NAME
OTHER_NAME = "(other names)"

# lanes (what a process of the trace is)
PYTHON, CANN, DEVICE, OVERLAP, COMM, GC, OTHER = "python", "cann", "device", "overlap", "comm", "gc", "other"

# host categories of the framework (torch) lane, by the event's ``cat``
HOST_CATS = ("cpu_op", "user_annotation", "python_function", "enqueue", "dequeue")


def lane_of(process_name: str) -> str:
    """The lane of a process by its ``process_name`` (torch_npu, msprof and Kineto spellings)."""
    n = process_name.strip().lower()
    if n in ("python", "python3", "pytorch") or n.startswith("python "):
        return PYTHON
    if n == "cann":
        return CANN
    if n in ("ascend hardware",) or n.startswith("npu ") and "mem" not in n:
        return DEVICE
    if n == "overlap analysis":
        return OVERLAP
    if n in ("communication", "hccl"):
        return COMM
    if n == "python gc":
        return GC
    return OTHER


class Interner:
    """Names to small integers; long names cut, and past MAX_NAMES distinct ones, one bucket."""

    def __init__(self) -> None:
        self.ids: Dict[str, int] = {}
        self.names: List[str] = []

    def __call__(self, name: Any) -> int:
        if not isinstance(name, str):
            name = "" if name is None else str(name)[:MAX_NAME]
        got = self.ids.get(name)
        if got is not None:
            return got
        key = name[:MAX_NAME]
        got = self.ids.get(key)
        if got is None:
            if len(self.names) >= MAX_NAMES:
                key = OTHER_NAME
                got = self.ids.get(key)
            if got is None:
                got = len(self.names)
                self.names.append(key)
                self.ids[key] = got
        if len(self.ids) < 4 * MAX_NAMES:
            self.ids[name] = got
        return got


@dataclass
class Columns:
    """The complete events (``ph: X``) of one process."""

    ts: array = field(default_factory=lambda: array("d"))
    dur: array = field(default_factory=lambda: array("d"))
    name: array = field(default_factory=lambda: array("i"))
    tid: array = field(default_factory=lambda: array("q"))
    kind: array = field(default_factory=lambda: array("i"))  # the device Task Type, else the event's cat

    def __len__(self) -> int:
        return len(self.ts)


@dataclass
class Trace:
    """What the analysis reads of a trace: per-process columns and the names of things."""

    names: List[str]
    processes: Dict[int, Columns]
    process_names: Dict[int, str]
    thread_names: Dict[Tuple[int, int], str]
    lanes: Dict[int, str]
    # device kernels' launch times on the host, per process, aligned with its columns (nan: no flow)
    launches: Dict[int, array]
    base_us: int  # absolute µs of relative time 0
    events: int  # events read
    skipped: int  # events of the wrong shape or types
    container: str  # "list" (Ascend) or "object" ({"traceEvents": [...]}, Kineto)
    flows_h2d: int  # HostToDevice flow pairs found
    memory_events: int  # [memory] instants (torch) / NPU MEM counters

    def of(self, lane: str) -> List[Tuple[int, Columns]]:
        return [(pid, cols) for pid, cols in sorted(self.processes.items()) if self.lanes.get(pid) == lane and len(cols)]

    def name(self, i: int) -> str:
        return self.names[i] if 0 <= i < len(self.names) else ""


def _num(value: Any) -> Optional[float]:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            v = float(value)
        except OverflowError:  # an integer of hundreds of digits
            return None
        return v if math.isfinite(v) else None
    if isinstance(value, str):
        try:
            v = float(value.strip())
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    return None


class TraceBuilder:
    """Feed it events (dicts, as decoded); :meth:`finish` returns the :class:`Trace`."""

    def __init__(self) -> None:
        self.intern = Interner()
        self.processes: Dict[int, Columns] = {}
        self.process_names: Dict[int, str] = {}
        self.process_labels: Dict[int, str] = {}
        self.thread_names: Dict[Tuple[int, int], str] = {}
        self.base: Optional[int] = None
        self.events = 0
        self.skipped = 0
        self.memory_events = 0
        self.container = "list"
        # HostToDevice flows: start (host) by id, finish (device) as columns
        # (as columns: half a million flows are a few MB, not a few hundred)
        self._s_id, self._s_ts = array("q"), array("d")
        self._f_id, self._f_ts, self._f_pid, self._f_tid = array("q"), array("d"), array("q"), array("q")
        self._fracs: Dict[str, float] = {}  # "491" -> 0.491: a capture's timestamps share few fractions
        self._kind_ids: Dict[Any, int] = {}
        self._cat_ids: Dict[Any, int] = {}

    # -- timestamps ---------------------------------------------------------------------------

    def _ts(self, value: Any) -> Optional[float]:
        """µs relative to ``base``; a string keeps its decimals exactly (split at the point)."""
        if isinstance(value, str):
            s = value.strip()
            dot = s.find(".")
            whole_text, frac_text = (s, "") if dot < 0 else (s[:dot], s[dot:])
            try:
                whole = int(whole_text)
                frac = float(frac_text) if frac_text not in ("", ".") else 0.0
            except ValueError:
                v = _num(s)
                if v is None:
                    return None
                whole, frac = int(math.floor(v)), v - math.floor(v)
            if self.base is None:
                self.base = whole
            try:
                return float(whole - self.base) + (frac if whole >= 0 else -frac)
            except OverflowError:  # hundreds of digits
                return None
        v = _num(value)
        if v is None:
            return None
        whole = int(math.floor(v))
        if self.base is None:
            self.base = whole
        try:
            return float(whole - self.base) + (v - whole)
        except OverflowError:
            return None

    # -- events -------------------------------------------------------------------------------

    def add(self, event: Any) -> None:
        self.events += 1
        if type(event) is not dict:
            self.skipped += 1
            return
        ph = event.get("ph")
        if ph == "X":
            if not self._fast_complete(event):
                self._complete(event)
        elif ph == "M":
            self._meta(event)
        elif ph in ("s", "f"):
            self._flow(event, ph)
        elif ph in ("i", "I", "C"):
            name = event.get("name")
            if name == "[memory]" or (isinstance(name, str) and "MEM" in name):
                self.memory_events += 1
        elif not isinstance(ph, str):
            self.skipped += 1

    def _fast_complete(self, event: Dict[str, Any]) -> bool:
        """The shape every real trace has (int pid and tid, ts a string or a number, dur a
        number), in one go; anything else goes the careful way (False)."""
        pid, tid, ts, raw_dur = event.get("pid"), event.get("tid"), event.get("ts"), event.get("dur")
        if type(pid) is not int or type(tid) is not int or self.base is None:
            return False
        if type(raw_dur) is float or type(raw_dur) is int:
            try:
                dur = float(raw_dur)
            except OverflowError:
                return False
        else:
            return False
        if type(ts) is str:
            whole_text, _, frac_text = ts.partition(".")
            try:
                whole = int(whole_text)
                rel = float(whole - self.base) + (float("." + frac_text) if frac_text else 0.0)
            except (ValueError, OverflowError):
                return False
            if whole < 0:  # the careful way keeps the sign of the fraction
                return False
        elif type(ts) is float or type(ts) is int:
            try:
                rel = float(ts) - self.base
            except OverflowError:
                return False
        else:
            return False
        if not (dur >= 0 and dur < 1e15) or not (-1e15 < rel < 1e15) or not (-(1 << 62) < tid < (1 << 62)):
            return False
        cols = self.processes.get(pid)
        if cols is None:
            cols = self.processes[pid] = Columns()
        args = event.get("args")
        kind = args.get("Task Type") if type(args) is dict else None
        if kind is None:
            kind = event.get("cat")
            k = self._cat_ids.get(kind) if type(kind) is str or kind is None else None
            if k is None:
                return False
        else:
            k = self._kind_ids.get(kind) if type(kind) is str else None
            if k is None:
                return False
        name = event.get("name")
        n = self.intern.ids.get(name) if type(name) is str else None
        if n is None:
            n = self.intern(name)
        cols.ts.append(rel)
        cols.dur.append(dur)
        cols.name.append(n)
        cols.tid.append(tid)
        cols.kind.append(k)
        return True

    def add_many(self, events: List[Any]) -> None:
        """The same as :meth:`add` on each event in turn (a decoded run of the file): complete
        events and HostToDevice flows of the usual shape (int pid and tid, ts a string of a
        non-negative number, a known name and kind) go into the columns in this one loop,
        anything else through :meth:`add`. tests/test_profile_reader.py checks that the end
        state is that of ``add``."""
        add = self.add
        processes = self.processes
        ids_get = self.intern.ids.get
        kind_get, cat_get = self._kind_ids.get, self._cat_ids.get
        s_id, s_ts = self._s_id.append, self._s_ts.append
        f_id, f_ts, f_pid, f_tid = self._f_id.append, self._f_ts.append, self._f_pid.append, self._f_tid.append
        base = self.base
        last_pid: Optional[int] = None
        cols = Columns()
        done = 0
        fracs = self._fracs
        for e in events:
            if base is None or type(e) is not dict:
                add(e)
                base = self.base
                continue
            ph = e.get("ph")
            if ph == "X":
                pid, tid, ts, dur = e.get("pid"), e.get("tid"), e.get("ts"), e.get("dur")
                if type(pid) is int and type(tid) is int and type(ts) is str and (type(dur) is float or type(dur) is int) \
                        and -(1 << 62) < tid < (1 << 62):
                    whole_text, _, frac_text = ts.partition(".")
                    try:
                        whole = int(whole_text)
                        frac = fracs.get(frac_text)
                        if frac is None:
                            frac = float("." + frac_text) if frac_text else 0.0
                            if len(fracs) < 4096:
                                fracs[frac_text] = frac
                        rel = float(whole - base) + frac
                        dur = float(dur)
                    except (ValueError, OverflowError):
                        whole = -1
                    if whole >= 0 and 0 <= dur < 1e15 and -1e15 < rel < 1e15:
                        args = e.get("args")
                        kind = args.get("Task Type") if type(args) is dict else None
                        if kind is None:
                            kind = e.get("cat")
                            k = cat_get(kind) if type(kind) is str or kind is None else None
                        else:
                            k = kind_get(kind) if type(kind) is str else None
                        name = e.get("name")
                        n = ids_get(name) if type(name) is str else None
                        if k is not None and n is not None:
                            if pid != last_pid:
                                got = processes.get(pid)
                                if got is None:
                                    got = processes[pid] = Columns()
                                cols, last_pid = got, pid
                            cols.ts.append(rel)
                            cols.dur.append(dur)
                            cols.name.append(n)
                            cols.tid.append(tid)
                            cols.kind.append(k)
                            done += 1
                            continue
            elif (ph == "s" or ph == "f") and e.get("cat") == "HostToDevice":
                fid, pid, ts = e.get("id"), e.get("pid"), e.get("ts")
                if type(pid) is int and type(ts) is str and (type(fid) is str or type(fid) is int) \
                        and -(1 << 62) < pid < (1 << 62):
                    whole_text, _, frac_text = ts.partition(".")
                    try:
                        whole = int(whole_text)
                        frac = fracs.get(frac_text)
                        if frac is None:
                            frac = float("." + frac_text) if frac_text else 0.0
                            if len(fracs) < 4096:
                                fracs[frac_text] = frac
                        rel = float(whole - base) + frac
                        key = int(fid) & 0x7FFFFFFFFFFFFFFF  # an int stays itself
                    except (ValueError, OverflowError):
                        whole = -1
                    if whole >= 0:
                        if ph == "s":
                            s_id(key)
                            s_ts(rel)
                            done += 1
                            continue
                        tid = e.get("tid")
                        if type(tid) is int and -(1 << 62) < tid < (1 << 62):
                            f_id(key)
                            f_ts(rel)
                            f_pid(pid)
                            f_tid(tid)
                            done += 1
                            continue
            add(e)
        self.events += done

    def _pid(self, event: Dict[str, Any]) -> Optional[int]:
        pid = event.get("pid")
        if isinstance(pid, bool):
            return None
        if isinstance(pid, int):
            return pid
        if isinstance(pid, str):
            try:
                return int(pid)
            except ValueError:
                return hash(pid) & 0x7FFFFFFF
        return None

    def _tid(self, event: Dict[str, Any]) -> int:
        tid = event.get("tid")
        if isinstance(tid, int) and not isinstance(tid, bool) and -(1 << 62) < tid < (1 << 62):
            return tid
        if isinstance(tid, str):
            try:
                v = int(tid)
            except ValueError:
                return hash(tid) & 0x7FFFFFFF
            return v if -(1 << 62) < v < (1 << 62) else hash(tid) & 0x7FFFFFFF  # kept in a 64-bit column
        return 0

    def _complete(self, event: Dict[str, Any]) -> None:
        pid = self._pid(event)
        ts = self._ts(event.get("ts"))
        dur = _num(event.get("dur"))
        if pid is None or ts is None or dur is None or dur < 0:
            self.skipped += 1
            return
        cols = self.processes.get(pid)
        if cols is None:
            cols = self.processes[pid] = Columns()
        args = event.get("args")
        kind: Any = None
        if isinstance(args, dict):
            kind = args.get("Task Type")
        if kind is None:
            kind = event.get("cat")
            ids = self._cat_ids
        else:
            ids = self._kind_ids
        key = kind if isinstance(kind, str) else None
        k = ids.get(key)
        if k is None:
            k = ids[key] = self.intern(key or "")
        cols.ts.append(ts)
        cols.dur.append(dur)
        cols.name.append(self.intern(event.get("name")))
        cols.tid.append(self._tid(event))
        cols.kind.append(k)

    def _meta(self, event: Dict[str, Any]) -> None:
        pid = self._pid(event)
        args = event.get("args")
        if pid is None or not isinstance(args, dict):
            return
        what = event.get("name")
        if what == "process_name" and isinstance(args.get("name"), str):
            self.process_names[pid] = args["name"][:MAX_NAME]
        elif what == "process_labels" and isinstance(args.get("labels"), str):
            self.process_labels[pid] = args["labels"][:MAX_NAME]
        elif what == "thread_name" and isinstance(args.get("name"), str):
            if len(self.thread_names) < 100_000:
                self.thread_names[(pid, self._tid(event))] = args["name"][:MAX_NAME]

    def _flow(self, event: Dict[str, Any], ph: str) -> None:
        if event.get("cat") != "HostToDevice":
            return
        fid = event.get("id")
        if not isinstance(fid, (str, int)) or isinstance(fid, bool):
            return
        ts = self._ts(event.get("ts"))
        pid = self._pid(event)
        if ts is None or pid is None or not -(1 << 62) < pid < (1 << 62):  # kept in 64-bit columns
            return
        key = _flow_key(fid)
        if ph == "s":
            self._s_id.append(key)
            self._s_ts.append(ts)
        else:
            self._f_id.append(key)
            self._f_ts.append(ts)
            self._f_pid.append(pid)
            self._f_tid.append(self._tid(event))

    # -- the result ---------------------------------------------------------------------------

    def _launches(self) -> Tuple[Dict[int, array], int]:
        """Join the flow starts (host) and finishes (device) by id, then the finishes to the
        device events they point at by (process, thread, ts); by sorting, not dictionaries."""
        s_order = sorted(range(len(self._s_id)), key=self._s_id.__getitem__)
        f_order = sorted(range(len(self._f_id)), key=self._f_id.__getitem__)
        start_of = array("d", [math.nan]) * len(self._f_id)
        i = 0
        for j in f_order:
            key = self._f_id[j]
            while i < len(s_order) and self._s_id[s_order[i]] < key:
                i += 1
            if i < len(s_order) and self._s_id[s_order[i]] == key:
                start_of[j] = self._s_ts[s_order[i]]
        del s_order, f_order
        self._s_id, self._s_ts = array("q"), array("d")
        by_pid: Dict[int, List[int]] = {}
        for j in range(len(self._f_id)):
            if start_of[j] == start_of[j]:  # not nan
                by_pid.setdefault(self._f_pid[j], []).append(j)
        out: Dict[int, array] = {}
        pairs = 0
        for pid, flows in by_pid.items():
            cols = self.processes.get(pid)
            if cols is None:
                continue
            flows.sort(key=lambda j: (self._f_tid[j], self._f_ts[j]))
            rows = sorted(range(len(cols)), key=lambda r: (cols.tid[r], cols.ts[r]))
            got = array("d", [math.nan]) * len(cols)
            k = 0
            for r in rows:
                key2 = (cols.tid[r], cols.ts[r])
                while k < len(flows) and (self._f_tid[flows[k]], self._f_ts[flows[k]]) < key2:
                    k += 1
                if k < len(flows) and (self._f_tid[flows[k]], self._f_ts[flows[k]]) == key2:
                    got[r] = start_of[flows[k]]
                    pairs += 1
            out[pid] = got
        self._f_id, self._f_ts, self._f_pid, self._f_tid = array("q"), array("d"), array("q"), array("q")
        return out, pairs

    def finish(self) -> Trace:
        lanes: Dict[int, str] = {}
        names = self.intern.names
        for pid, cols in self.processes.items():
            pname = self.process_names.get(pid)
            if pname is not None:
                lanes[pid] = lane_of(pname)
            else:
                # a Kineto CPU trace names no process "Python": its ops say what they are
                cats = {names[k] for k in set(cols.kind[:1000])}
                lanes[pid] = PYTHON if cats & set(HOST_CATS) else OTHER
        launches, pairs = self._launches()
        return Trace(names=names, processes=self.processes, process_names=self.process_names,
                     thread_names=self.thread_names, lanes=lanes, launches=launches, base_us=self.base or 0,
                     events=self.events, skipped=self.skipped, container=self.container, flows_h2d=pairs,
                     memory_events=self.memory_events)


def _flow_key(fid: Any) -> int:
    """A flow id as a 63-bit integer (ids are numeric strings in torch_npu's traces)."""
    if isinstance(fid, int):
        return fid & 0x7FFFFFFFFFFFFFFF
    try:
        return int(fid) & 0x7FFFFFFFFFFFFFFF
    except ValueError:
        return hash(fid) & 0x7FFFFFFFFFFFFFFF


def build(events: Any) -> Trace:
    """A trace from decoded events (a list, or a Kineto ``{"traceEvents": [...]}`` object)."""
    b = TraceBuilder()
    if isinstance(events, dict):
        b.container = "object"
        events = events.get("traceEvents", [])
    for e in events if isinstance(events, list) else []:
        b.add(e)
    return b.finish()
