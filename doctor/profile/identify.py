"""Which profiler wrote the files, which release, and what it was asked to collect.

From profiler_info*.json when there is one (torch_npu_version, cann_version, the profiler level,
aic_metrics, profile_memory: PTA profiler_interface.py ``_dump_profiler_info``), and from the
headers, which changed across torch_npu releases (Ascend/pytorch prof_view/_csv_headers.py,
_trace_step_time_parser.py; facts in docs/profile.md "What the files say about the release").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from doctor.profile.kernels import pmu_variant

# kernel_details.csv base headers -> the torch_npu releases that wrote them (and their CANN)
ERA_OLD = "torch_npu 5.0.rc3 to 7.0.0 (CANN 7.0 to 8.1.RC1)"
ERA_DEVICE_ID = "torch_npu 7.1.0 to 7.3.0 (CANN 8.2.RC1 to 8.5)"
ERA_BLOCK_NUM = "torch_npu 26.0.0 or newer (CANN 9.0 or newer)"
ERA_MSPROF = "msprof op_summary (CANN's own headers)"
STEP_OLD = "torch_npu 5.0.rc3 to 6.0.rc1"
STEP_PREPARING = "torch_npu 6.0.rc2 to 7.0.0"
STEP_DEVICE_ID = "torch_npu 7.1.0 or newer"


@dataclass
class Identity:
    producer: str  # torch_npu | msprof | torch (a Kineto CPU trace) | unknown
    torch_npu_version: Optional[str] = None
    cann_version: Optional[str] = None
    era: Optional[str] = None  # from the kernel table's header
    step_trace_era: Optional[str] = None
    level: Optional[str] = None  # Level0 | Level1 | Level2 (from profiler_info, else inferred)
    level_inferred: bool = False
    aic_metrics: Optional[str] = None
    pmu: Optional[str] = None  # what the kernel table's PMU columns are
    profile_memory: Optional[bool] = None
    with_stack: Optional[bool] = None
    rank_id: Optional[int] = None
    notes: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"producer": self.producer, "torch_npu_version": self.torch_npu_version,
                "cann_version": self.cann_version, "kernel_table_era": self.era, "step_trace_era": self.step_trace_era,
                "profiler_level": self.level, "profiler_level_inferred": self.level_inferred,
                "aic_metrics": self.aic_metrics, "pmu_columns": self.pmu, "profile_memory": self.profile_memory,
                "with_stack": self.with_stack, "rank_id": self.rank_id}


def kernel_era(header: Sequence[str]) -> Optional[str]:
    cols = {h.strip() for h in header}
    if not cols:
        return None
    if "Op Name" in cols or "Task Start Time(us)" in cols:
        return ERA_MSPROF
    if "Block Num" in cols:
        return ERA_BLOCK_NUM
    if "Device_id" in cols:
        return ERA_DEVICE_ID
    if "Block Dim" in cols or "Name" in cols:
        return ERA_OLD
    return None


def step_trace_era(header: Sequence[str]) -> Optional[str]:
    cols = {h.strip() for h in header}
    if "Step" not in cols:
        return None
    if "Device_id" in cols:
        return STEP_DEVICE_ID
    if "Preparing" in cols:
        return STEP_PREPARING
    return STEP_OLD


def _dict(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> Optional[str]:
    return value.strip()[:80] if isinstance(value, str) and value.strip() else None


def _aic(value: Any) -> Optional[str]:
    v = _text(value)
    if v is None:
        return None
    u = v.upper().replace("_", "")
    for key, name in (("PIPE", "PipeUtilization"), ("ARITHMETIC", "ArithmeticUtilization"), ("MEMORY", "Memory"),
                      ("L0B", "MemoryL0"), ("UB", "MemoryUB"), ("L2CACHE", "L2Cache"), ("NONE", "AiCoreNone")):
        if key in u:
            return name
    return v


def _level(value: Any) -> Optional[str]:
    v = _text(value)
    if v is None:
        return None
    for n in ("0", "1", "2"):
        if v.endswith(n) and "level" in v.lower():
            return f"Level{n}"
    return "Level_none" if "none" in v.lower() else v


def identify(producer: str, info: Any = None, kernel_header: Sequence[str] = (), step_header: Sequence[str] = (),
             has_cann: Optional[bool] = None) -> Identity:
    ident = Identity(producer=producer)
    if isinstance(info, dict):
        ident.torch_npu_version = _text(info.get("torch_npu_version"))
        ident.cann_version = _text(info.get("cann_version"))
        rank = info.get("rank_id")
        ident.rank_id = rank if isinstance(rank, int) and not isinstance(rank, bool) else None
        config = _dict(info.get("config"))
        common = _dict(config.get("common_config"))
        exp = _dict(config.get("experimental_config"))
        ident.level = _level(exp.get("_profiler_level", exp.get("profiler_level")))
        ident.aic_metrics = _aic(exp.get("_aic_metrics", exp.get("aic_metrics")))
        pm = common.get("profile_memory")
        ident.profile_memory = pm if isinstance(pm, bool) else None
        ws = common.get("with_stack")
        ident.with_stack = ws if isinstance(ws, bool) else None
    ident.era = kernel_era(kernel_header)
    ident.pmu = pmu_variant(kernel_header) if kernel_header else None
    ident.step_trace_era = step_trace_era(step_header)
    if ident.level is None and has_cann is not None and producer == "torch_npu":
        ident.level = "Level1" if has_cann else "Level0"
        ident.level_inferred = True
    if ident.aic_metrics == "PipeUtilization" and kernel_header and ident.pmu is None:
        ident.notes.append("aic_metrics_no_columns")
    return ident
