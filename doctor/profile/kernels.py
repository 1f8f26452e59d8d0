"""kernel_details.csv (torch_npu) and op_summary_*.csv (msprof) as columns.

Columns are found by header name, never by position, with the aliases the two writers and their
releases use (``Name|Op Name``, ``Accelerator Core|Task Type``, ``Block Dim|Block Num``...).
Values are cleaned the way the files need: torch_npu writes start times as quoted strings with a
trailing TAB, shapes in tripled quotes (``81920,4096;8192,512`` inside three double quotes), and ``N/A`` for what was not measured.
"""
from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.profile.trace import Interner

ALIASES: Dict[str, Tuple[str, ...]] = {
    "name": ("Name", "Op Name"),
    "type": ("Type", "OP Type"),
    "core": ("Accelerator Core", "Task Type"),
    "start": ("Start Time(us)", "Task Start Time(us)"),
    "dur": ("Duration(us)", "Task Duration(us)"),
    "wait": ("Wait Time(us)", "Task Wait Time(us)"),
    "step": ("Step Id", "Step ID"),
    "device": ("Device_id",),
    "block": ("Block Dim", "Block Num"),
    "shapes": ("Input Shapes",),
    "state": ("OP State",),
}
# PMU columns (MSPROF op_summary Table 2): the ratios the verdict reads, when collected
PMU = ("aic_mac_ratio", "aic_mte2_ratio", "aic_scalar_ratio", "aic_fixpipe_ratio", "aiv_vec_ratio", "aiv_mte2_ratio",
       "aiv_mte3_ratio", "aiv_scalar_ratio", "cube_utilization(%)", "aic_mac_fp16_ratio", "aic_mac_int8_ratio",
       "aiv_vec_fp16_ratio", "aiv_vec_fp32_ratio", "aic_main_mem_read_bw(GB/s)", "aiv_main_mem_read_bw(GB/s)")
REQUIRED = ("name", "dur")
COMM_CORES = ("HCCL", "COMMUNICATION")
MAX_TEXT_IDS = 1 << 16  # raw cells remembered with their interned id (a bound on crafted files)


def clean(value: str) -> str:
    return value.strip().strip('"').strip()


def number(value: str) -> Optional[float]:
    try:  # the usual cell, a plain number (float() takes the surrounding spaces and TABs itself)
        f = float(value)
    except ValueError:
        pass
    else:
        return f if math.isfinite(f) else None
    v = clean(value)
    if not v or v.upper() in ("N/A", "NA", "NONE", "-"):
        return None
    try:
        f = float(v)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def pmu_variant(header: Sequence[str]) -> Optional[str]:
    """Which aic_metrics the PMU columns come from, or None when there are none."""
    cols = set(h.strip() for h in header)
    if "aic_mac_ratio" in cols or "aiv_vec_ratio" in cols or "cube_utilization(%)" in cols:
        return "PipeUtilization"
    if "aic_mac_fp16_ratio" in cols or "aiv_vec_fp16_ratio" in cols:
        return "ArithmeticUtilization"
    if any(c.endswith("main_mem_read_bw(GB/s)") for c in cols):
        return "Memory"
    if any(c.startswith(("aic_", "aiv_")) for c in cols):
        return "other"
    return None


def columns_of(header: Sequence[str]) -> Dict[str, int]:
    """Our column names to their positions in this header (aliases resolved)."""
    pos = {h.strip().lstrip("\ufeff"): i for i, h in enumerate(header)}
    out: Dict[str, int] = {}
    for ours, names in ALIASES.items():
        for n in names:
            if n in pos:
                out[ours] = pos[n]
                break
    for p in PMU:
        if p in pos:
            out[p] = pos[p]
    return out


@dataclass
class KernelTable:
    names: List[str]
    header: List[str]
    pmu: Optional[str]
    start: array = field(default_factory=lambda: array("d"))  # µs relative to base_us (nan: unknown)
    dur: array = field(default_factory=lambda: array("d"))
    wait: array = field(default_factory=lambda: array("d"))
    name: array = field(default_factory=lambda: array("i"))
    type: array = field(default_factory=lambda: array("i"))
    core: array = field(default_factory=lambda: array("i"))
    step: array = field(default_factory=lambda: array("q"))  # -1: none
    shapes: array = field(default_factory=lambda: array("i"))
    metrics: Dict[str, array] = field(default_factory=dict)
    base_us: int = 0
    rows: int = 0
    skipped: int = 0
    _comm_names: List[bool] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.dur)

    def text(self, i: int) -> str:
        return self.names[i] if 0 <= i < len(self.names) else ""

    def is_comm(self, i: int) -> bool:
        if len(self._comm_names) != len(self.names):
            self._comm_names = [n.upper() in COMM_CORES or n.lower().startswith("hcom_") for n in self.names]
        return self._comm_names[self.core[i]] or self._comm_names[self.type[i]]


class KernelTableBuilder:
    def __init__(self, header: Sequence[str], base_us: Optional[int] = None, intern: Optional[Interner] = None):
        self.cols = columns_of(header)
        missing = [c for c in REQUIRED if c not in self.cols]
        if missing:
            raise ValueError("no column " + " or ".join(ALIASES[missing[0]]))
        self.intern = intern or Interner()
        self.base = base_us
        self.table = KernelTable(names=self.intern.names, header=[h.strip() for h in header], pmu=pmu_variant(header))
        for p in PMU:
            if p in self.cols:
                self.table.metrics[p] = array("d")
        # positions read for every row (-1: no such column), and text cells already interned (the
        # same few hundred names, types and shapes repeat over millions of rows)
        self._at = tuple(self.cols.get(k, -1) for k in ("dur", "start", "wait", "name", "type", "core", "step", "shapes"))
        self._metric_at = [(col, self.cols[p]) for p, col in self.table.metrics.items()]
        self._ids: Dict[str, int] = {}

    def _text_id(self, raw: str) -> int:
        got = self._ids.get(raw)
        if got is None:
            got = self.intern(clean(raw))
            if len(self._ids) < MAX_TEXT_IDS:
                self._ids[raw] = got
        return got

    def _start(self, text: str) -> float:
        v = clean(text)
        dot = v.find(".")
        whole_text, frac_text = (v, "") if dot < 0 else (v[:dot], v[dot:])
        try:
            whole = int(whole_text)
            frac = float(frac_text) if frac_text not in ("", ".") else 0.0
        except ValueError:
            f = number(v)
            if f is None:
                return math.nan
            whole, frac = int(math.floor(f)), f - math.floor(f)
        if self.base is None:
            self.base = whole
        return float(whole - self.base) + frac

    def add(self, row: Sequence[str]) -> None:
        t = self.table
        t.rows += 1
        width = len(row)
        i_dur, i_start, i_wait, i_name, i_type, i_core, i_step, i_shapes = self._at
        dur = number(row[i_dur]) if 0 <= i_dur < width else None
        if dur is None or dur < 0:
            t.skipped += 1
            return
        t.dur.append(dur)
        t.start.append(self._start(row[i_start] if i_start < width else "") if i_start >= 0 else math.nan)
        w = number(row[i_wait]) if 0 <= i_wait < width else None
        t.wait.append(w if w is not None else math.nan)
        text = self._text_id
        t.name.append(text(row[i_name] if 0 <= i_name < width else ""))
        t.type.append(text(row[i_type] if 0 <= i_type < width else ""))
        t.core.append(text(row[i_core] if 0 <= i_core < width else ""))
        s = number(row[i_step]) if 0 <= i_step < width else None
        t.step.append(int(s) if s is not None and abs(s) < 1e12 else -1)
        t.shapes.append(text(row[i_shapes] if 0 <= i_shapes < width else ""))
        for col, i in self._metric_at:
            v = number(row[i]) if i < width else None
            col.append(v if v is not None else math.nan)

    def finish(self) -> KernelTable:
        self.table.base_us = self.base or 0
        self.table.names = self.intern.names
        return self.table


def table(header: Sequence[str], rows: Sequence[Sequence[str]], base_us: Optional[int] = None) -> KernelTable:
    b = KernelTableBuilder(header, base_us)
    for r in rows:
        b.add(r)
    return b.finish()


def first_dim(shapes: str) -> Optional[int]:
    """The first dimension of the first input (``"81920,4096;8192,512"`` -> 81920): the token
    count of a matmul over the hidden states."""
    first = shapes.strip().strip('"').split(";")[0].split(",")[0].strip()
    try:
        v = int(first)
    except ValueError:
        return None
    return v if v >= 0 else None
