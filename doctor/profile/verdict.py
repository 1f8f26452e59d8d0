"""The verdict: what limits the steps, with the figures behind it.

Shares are of the steps' wall time (idle between requests dropped). The thresholds:

- host-bound: the device waits on the host (launched late or sync wait) for at least HOST_SHARE
  of the step. msprof-analyze's advisor flags Free time above 10 % of a step
  (overall_summary_analyzer.py); a quarter is where it is the first thing to fix, and the field
  reports that were host-bound sat far above it (vllm-ascend#9404: 71 % Free; #11967: 57 %).
- communication-bound: communication not overlapped by compute takes COMM_SHARE or more, and
  more than the host wait.
- device-bound: the device computes (or copies) for DEVICE_SHARE of the step or more; whether a
  compute or a memory limit, from the PMU columns when collected, else inferred.
- balanced: none of these; every part is there but none dominates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from doctor.profile.analyse import StepFigures

HOST, DEVICE, COMMUNICATION, BALANCED = "host", "device", "communication", "balanced"
HOST_SHARE = 0.25
COMM_SHARE = 0.20
DEVICE_SHARE = 0.70


@dataclass
class Verdict:
    bound: Optional[str]  # None: no device activity to judge
    shares: Dict[str, float]
    basis: str  # flows | idle (the cause of idle time not recorded) | none
    device_kind: Optional[str] = None
    device_kind_measured: bool = False


def shares(t: StepFigures) -> Dict[str, float]:
    wall = t.wall or 1.0
    return {
        "device_busy": t.busy / wall,
        "compute": t.compute / wall,
        "copy": t.copy / wall,
        "communication": t.comm / wall,
        "communication_exposed": t.comm_exposed / wall,
        "idle": t.idle.total / wall,
        "idle_host_late": t.idle.host_late / wall,
        "idle_sync": t.idle.sync / wall,
        "idle_kernel_wait": t.idle.kernel_wait / wall,
        "idle_other": t.idle.other / wall,
        "idle_unattributed": t.idle.unattributed / wall,
        "host_wait": t.idle.host_wait / wall,
        "idle_host_wait": t.idle.host_wait / t.idle.total if t.idle.total > 0 else 0.0,
    }


def judge(t: StepFigures, device_kind: Optional[str] = None, measured: bool = False) -> Verdict:
    if t.wall <= 0 or t.busy <= 0:
        return Verdict(None, shares(t) if t.wall > 0 else {}, "none")
    s = shares(t)
    attributed = t.idle.total - t.idle.unattributed
    basis = "flows"
    host = s["host_wait"]
    if t.idle.total > 0 and t.idle.unattributed > 0.5 * t.idle.total:
        # no flows to tell why (Level0, a kernel table alone): a device with nothing to run on a
        # single card was waiting for the host to give it work, which is the only reading left
        basis = "idle"
        host = (t.idle.host_wait + t.idle.unattributed) / t.wall
    elif attributed <= 0 and t.idle.total > 0:
        basis = "idle"
    exposed = s["communication_exposed"]
    working = (t.busy - t.comm_exposed) / t.wall
    if host >= HOST_SHARE and host >= exposed:
        bound = HOST
    elif exposed >= COMM_SHARE:
        bound = COMMUNICATION
    elif working >= DEVICE_SHARE:
        bound = DEVICE
    else:
        bound = BALANCED
    return Verdict(bound, s, basis, device_kind if bound == DEVICE else None, measured if bound == DEVICE else False)
