"""memory_record.csv (torch_npu, written with ``profile_memory=True``) and msprof's
memory_record_*.csv: the device memory the framework held over time, to see it grow inside the
decode loop (facts: the allocation in the loop shows as ``Total Reserved`` rising inside the
window).

Headers (PTA ``_memory_view_parser.py`` HEADERS_RECORD; CANN's copy in KB, not MB):
``Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type``
(5.0.rc3 without Total Active and Stream Ptr);
``Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device`` (msprof).
Each component (PTA, GE, APP, PTA+GE, WORKSPACE) is a series of its own; the framework's is read.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.profile.kernels import clean, number

PREFERRED = ("PTA+GE", "PTA", "APP", "GE")  # the framework's own view first
MAX_COMPONENTS = 16
MAX_SAMPLES = 2_000_000  # rows kept of one component (24 bytes each); the rest are counted as skipped


@dataclass
class MemorySeries:
    component: str
    ts: array = field(default_factory=lambda: array("d"))  # µs relative to the trace's base
    reserved: array = field(default_factory=lambda: array("d"))  # MB
    allocated: array = field(default_factory=lambda: array("d"))  # MB (nan: not in the file)


def _column(header: Sequence[str], *names: str) -> Tuple[Optional[int], float]:
    """The position of the first of ``names`` (each with an MB or KB unit) and its factor to MB."""
    pos = {h.strip().lstrip("\ufeff"): i for i, h in enumerate(header)}
    for n in names:
        for unit, factor in (("(MB)", 1.0), ("(KB)", 1 / 1024)):
            if n + unit in pos:
                return pos[n + unit], factor
        if n in pos:
            return pos[n], 1.0
    return None, 1.0


class MemoryRecordBuilder:
    def __init__(self, header: Sequence[str], base_us: Optional[int]):
        self.ts_col, _ = _column(header, "Timestamp(us)", "Timestamp (us)")
        self.res_col, self.res_factor = _column(header, "Total Reserved")
        self.alloc_col, self.alloc_factor = _column(header, "Total Allocated")
        self.comp_col, _ = _column(header, "Component")
        if self.ts_col is None or self.res_col is None:
            raise ValueError("no Timestamp(us) or Total Reserved column")
        self.base = base_us
        self.series: Dict[str, MemorySeries] = {}
        self.rows = 0
        self.skipped = 0

    def _ts(self, text: str) -> Optional[float]:
        whole_text, _, frac_text = clean(text).partition(".")
        try:
            whole = int(whole_text)
            frac = float("." + frac_text) if frac_text else 0.0
        except ValueError:
            return None
        if self.base is None:
            self.base = whole
        return float(whole - self.base) + frac

    def add(self, row: Sequence[str]) -> None:
        self.rows += 1
        assert self.ts_col is not None and self.res_col is not None
        if len(row) <= max(self.ts_col, self.res_col):
            self.skipped += 1
            return
        ts = self._ts(row[self.ts_col])
        reserved = number(row[self.res_col])
        if ts is None or reserved is None:
            self.skipped += 1
            return
        comp = clean(row[self.comp_col])[:40] if self.comp_col is not None and self.comp_col < len(row) else ""
        s = self.series.get(comp)
        if s is None:
            if len(self.series) >= MAX_COMPONENTS:
                self.skipped += 1
                return
            s = self.series[comp] = MemorySeries(comp)
        if len(s.ts) >= MAX_SAMPLES:
            self.skipped += 1
            return
        allocated = number(row[self.alloc_col]) if self.alloc_col is not None and self.alloc_col < len(row) else None
        s.ts.append(ts)
        s.reserved.append(reserved * self.res_factor)
        s.allocated.append(math.nan if allocated is None else allocated * self.alloc_factor)

    def finish(self) -> Optional[MemorySeries]:
        """The framework's series (see PREFERRED), else the longest; None when no row was read."""
        for comp in PREFERRED:
            if comp in self.series:
                return self.series[comp]
        return max(self.series.values(), key=lambda s: len(s.ts), default=None)


def summarise(series: MemorySeries, steps: List[Tuple[float, float]]) -> Dict[str, object]:
    """Peak reserved and allocated memory, and how much the reserved memory rose after the first
    step (inside the loop) above what it was by the end of that step. ``steps``: (start, end)
    of the steps in time order; without steps, the capture is one window."""
    n = len(series.ts)
    peak_alloc = max((a for a in series.allocated if a == a), default=None)
    out: Dict[str, object] = {"component": series.component, "samples": n,
                              "peak_reserved_mb": round(max(series.reserved), 3) if n else None,
                              "peak_allocated_mb": None if peak_alloc is None else round(peak_alloc, 3),
                              "reserved_after_first_step_mb": None, "rise_in_loop_mb": None}
    if not n or len(steps) < 2:
        return out
    first_end, last_end = steps[0][1], steps[-1][1]
    before = [r for t, r in zip(series.ts, series.reserved) if t <= first_end]
    inside = [r for t, r in zip(series.ts, series.reserved) if first_end < t <= last_end]
    if not before or not inside:
        return out
    held = max(before)
    out["reserved_after_first_step_mb"] = round(held, 3)
    out["rise_in_loop_mb"] = round(max(0.0, max(inside) - held), 3)
    return out
