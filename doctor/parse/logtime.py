"""When and on which rank a log line was written: the timestamp and rank formats of the stack.

Formats (each seen in real logs):
  CANN/HCCL plog and torch_npu  ``2025-07-23-03:47:57.070.463`` / ``2025-04-08-18:07:20``
  vLLM                          ``ERROR 08-28 02:33:28 [core.py:634]`` (no year)
  torch c10 / glog              ``[E324 13:00:25.428029551 ...`` / ``E0805 09:42:09.763501`` /
                                ``E20251208 14:01:29.602919``
  Python logging, ISO 8601      ``2025-05-13 02:25:58,123`` / ``2026-07-18T22:18:02Z``
A timestamp is a tuple (year or 0, month, day, hour, minute, second, microsecond); lines without
a year compare by the rest (see :func:`comparable`).
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence, Tuple

Stamp = Tuple[int, int, int, int, int, int, int]

_FORMATS = [
    # 2025-07-23-03:47:57.070.463 (CANN) and 2025-04-08-18:07:20 (torch_npu ERR lines)
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})-(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3})(?:\.(\d{1,3}))?)?"), "cann"),
    # 2025-05-13 02:25:58,123 / 2026-07-18T22:18:02.5Z / [2025-05-13 02:25:58.64217]
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?"), "iso"),
    # glog with a year: E20251208 14:01:29.602919
    (re.compile(r"(?<![\w])[IWEF](\d{4})(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"), "glog_year"),
    # glog / torch c10 without a year: E0805 09:42:09.763501, [E324 13:00:25.428029551
    (re.compile(r"(?<![\w])[IWEF](\d{1,2})(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"), "glog"),
    # vLLM: ERROR 08-28 02:33:28
    (re.compile(r"\b(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\b"), "vllm"),
]


def _micro(frac: Optional[str]) -> int:
    return int((frac or "0")[:6].ljust(6, "0"))


def timestamp(line: str) -> Optional[Stamp]:
    """The first timestamp in ``line`` in any of the known formats, or None."""
    best: Optional[Tuple[int, Stamp]] = None
    for regex, kind in _FORMATS:
        m = regex.search(line)
        if not m or (best is not None and m.start() >= best[0]):
            continue
        g = m.groups()
        try:
            if kind == "cann":
                ms = int(g[6]) * 1000 if g[6] else 0
                us = int(g[7]) if g[7] else 0
                stamp = (int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), ms + us)
            elif kind in ("iso", "glog_year"):
                stamp = (int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), int(g[5]), _micro(g[6]))
            elif kind == "glog":
                stamp = (0, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), _micro(g[5]))
            else:
                stamp = (0, int(g[0]), int(g[1]), int(g[2]), int(g[3]), int(g[4]), 0)
        except ValueError:
            continue
        if not (1 <= stamp[1] <= 12 and 1 <= stamp[2] <= 31 and stamp[3] < 24 and stamp[4] < 60 and stamp[5] < 61):
            continue
        best = (m.start(), stamp)
    return best[1] if best else None


def comparable(stamps: Sequence[Stamp]) -> List[Tuple[int, ...]]:
    """Sort keys for stamps from different formats: the year only counts when all have one."""
    with_year = all(s[0] for s in stamps)
    return [tuple(s) if with_year else tuple(s[1:]) for s in stamps]


def format_stamp(stamp: Stamp) -> str:
    y, mo, d, h, mi, s, us = stamp
    date = f"{y:04d}-{mo:02d}-{d:02d}" if y else f"{mo:02d}-{d:02d}"
    return f"{date} {h:02d}:{mi:02d}:{s:02d}.{us // 1000:03d}"


# -- ranks --

_RANK = [
    re.compile(r"RankID:\s*(\d+)\)"),  # torch_npu ERR line; RankID:-1 means unknown
    re.compile(r"^\s*\[rank(\d+)\]:"),  # torch elastic prefix
    re.compile(r"\[Rank (\d+)\]"),  # ProcessGroupHCCL watchdog
    re.compile(r"\bWorker(?:_DP\d+)?_TP(\d+)\b"),  # vLLM >= 0.10 worker names
    re.compile(r"\bVllmWorker(?:Process)? rank=(\d+)"),
    re.compile(r"\blocal[Rr]ank\[(\d+)\]"),  # HCCL entry/trace lines
    re.compile(r"\brankId\[(\d+)\]"),  # HCCL task failure report
]


def rank(line: str) -> Optional[int]:
    """The rank that wrote ``line``, when the line says so."""
    for regex in _RANK:
        m = regex.search(line)
        if m:
            return int(m.group(1))
    return None


# Lines in which a rank names another rank it waits for or lost (HCCL's own diagnosis).
_WAITED = [
    re.compile(r"from remote rank[: ]*\[(\d+)\]"),  # EI0002 notify wait
    re.compile(r"Remote rank: \[(\d+)\]"),  # EI0012
    re.compile(r"crimer rank \[[\d.]+/(\d+)\]"),  # heartbeat: the rank that stopped
    re.compile(r"Cluster Exception Location\[IP/ID\]:\[[\d.]+/(\d+)\]"),
    re.compile(r"remoteRank\[(\d+)\]"),  # Transport init error
]


def waited_for(line: str) -> List[int]:
    """Ranks that ``line`` says this rank waited for, lost, or could not reach."""
    out: List[int] = []
    for regex in _WAITED:
        out.extend(int(x) for x in regex.findall(line))
    m = re.search(r"Failed to connect agent\[([\d,]+)", line)
    if m:
        out.extend(int(x) for x in m.group(1).split(",") if x)
    return out
