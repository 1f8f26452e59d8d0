"""Prometheus text exposition (format 0.0.4) with labels, as vllm's /metrics writes it (pure).

``vllm:cache_config_info`` carries its figures in labels (``num_gpu_blocks="2885"``), so the
plain name -> value reading of doctor.parse.master_http is not enough here. Label values may hold
escaped quotes, backslashes and newlines (``\\"``, ``\\\\``, ``\\n``); a line that does not parse is
skipped, as a Prometheus scraper would.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|(?=\}))')
MAX_LINES = 200_000


@dataclass(frozen=True)
class Sample:
    name: str
    value: float
    labels: Dict[str, str] = field(default_factory=dict)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def parse_line(line: str) -> Optional[Sample]:
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    m = _NAME.match(line)
    if not m:
        return None
    name, rest = m.group(0), line[m.end():]
    labels: Dict[str, str] = {}
    if rest.startswith("{"):
        pos = 1
        while True:
            if rest[pos:].lstrip().startswith("}"):
                pos = rest.index("}", pos) + 1
                break
            lm = _LABEL.match(rest, pos)
            if not lm:
                return None
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
        rest = rest[pos:]
    parts = rest.split()
    if not parts or len(parts) > 2:
        return None
    try:
        value = float(parts[0])
    except ValueError:
        return None
    return Sample(name, value, labels)


def parse(text: str) -> List[Sample]:
    out: List[Sample] = []
    for i, line in enumerate(text.splitlines()):
        if i >= MAX_LINES:
            break
        s = parse_line(line)
        if s is not None:
            out.append(s)
    return out


def total(samples: Iterable[Sample], name: str) -> Optional[float]:
    """The sum of every series of ``name`` (None when the server does not export it)."""
    values = [s.value for s in samples if s.name == name and math.isfinite(s.value)]
    return sum(values) if values else None
