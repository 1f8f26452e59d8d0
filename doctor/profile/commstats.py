"""communication.json (torch_npu, Level1/Level2 with more than one card): the time each
communication operator spent moving data (Transit), waiting for its peer (Wait) and
synchronising, summed over the capture.

Shape (PTA ``_communication_parser.py``; keys as in MSTT's cluster_communication.json fixture):
``{"step<N>": {"collective": {"<op>@<group>": {"Communication Time Info": {"Elapse Time(ms)",
"Transit Time(ms)", "Wait Time(ms)", "Synchronization Time(ms)", ...}, ...}, "Total Op Info": {...}},
"p2p": {...}}}``. Wait ratio = Wait / (Wait + Transit) (MSPROF extended_functions.md); above 0.2
msprof-analyze's rule reads it as waiting on a slower peer.
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional

WAIT_RATIO_SLOW_PEER = 0.2
MAX_OPS = 200_000
FIELDS = (("elapse_ms", "Elapse Time(ms)"), ("transit_ms", "Transit Time(ms)"), ("wait_ms", "Wait Time(ms)"),
          ("synchronization_ms", "Synchronization Time(ms)"))


def _ms(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    v = float(value)
    return v if math.isfinite(v) and v >= 0 else 0.0


def summarise(doc: Any) -> Optional[Dict[str, Any]]:
    """Totals over every step and operator (the per-group "Total Op Info" rows left out: they
    repeat the operators); None when the file holds no operator."""
    if not isinstance(doc, dict):
        return None
    totals = {k: 0.0 for k, _ in FIELDS}
    ops = 0
    for step in doc.values():
        if not isinstance(step, dict):
            continue
        for kind in ("collective", "p2p"):
            group = step.get(kind)
            if not isinstance(group, dict):
                continue
            for op, info in group.items():
                if op == "Total Op Info" or not isinstance(info, dict) or ops >= MAX_OPS:
                    continue
                times = info.get("Communication Time Info")
                if not isinstance(times, dict):
                    continue
                ops += 1
                for ours, theirs in FIELDS:
                    totals[ours] += _ms(times.get(theirs))
    if not ops:
        return None
    moved = totals["wait_ms"] + totals["transit_ms"]
    synced = totals["synchronization_ms"] + totals["transit_ms"]
    wait_ratio = totals["wait_ms"] / moved if moved > 0 else None
    return {"ops": ops, **{k: round(v, 4) for k, v in totals.items()},
            "wait_ratio": None if wait_ratio is None else round(wait_ratio, 4),
            "synchronization_ratio": round(totals["synchronization_ms"] / synced, 4) if synced > 0 else None,
            "waits_on_slower_peer": wait_ratio is not None and wait_ratio > WAIT_RATIO_SLOW_PEER}
