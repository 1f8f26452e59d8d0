"""What mooncake_master's HTTP endpoints say: ``/health`` (plain ``OK`` up to v0.3.10, JSON from
v0.3.10.post2), ``/metrics`` (Prometheus text) and ``/metrics/summary`` ("Mem Storage: used /
capacity (x%) | ..."). Pure: the bodies the probe fetched (doctor.shell.mooncake.master) in,
figures out; docs/sources/mooncake.md (master) describes the endpoints.
"""
from __future__ import annotations

import json
import re
from doctor.record import field, record
from typing import Dict, Optional

from doctor.facts import HttpFact
from doctor.lazyre import lazy


@record
class Health:
    reachable: bool = False
    format: str = ""  # "plain" (<= v0.3.10) / "json" (>= v0.3.10.post2) / "other"
    ok: bool = False
    ready: Optional[bool] = None
    role: str = ""
    ha_state: str = ""
    detail: str = ""
    fields: Dict[str, object] = field(default_factory=dict)


def parse_health(fact: Optional[HttpFact]) -> Health:
    h = Health()
    if fact is None or fact.status is None:
        h.detail = (fact.error or "no response") if fact else "not probed"
        return h
    h.reachable = True
    body = fact.body.strip()
    if fact.status != 200:
        h.format, h.detail = "other", f"HTTP {fact.status}"
        return h
    if body.startswith("{"):
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            h.format, h.detail = "other", body[:120]
            return h
        h.format, h.fields = "json", data
        h.ok = data.get("status") == "ok"
        ready = data.get("service_ready")
        h.ready = ready if isinstance(ready, bool) else None
        h.role, h.ha_state = str(data.get("role", "")), str(data.get("ha_state", ""))
        h.detail = body[:200]
        return h
    if body == "OK":
        h.format, h.ok, h.ready, h.detail = "plain", True, True, "OK"
        return h
    h.format, h.detail = "other", body[:120]
    return h


_PROM = lazy(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEnaNInf]+)(?:\s+\d+)?$")


def parse_metrics(text: str) -> Dict[str, float]:
    """Prometheus text exposition: name -> value (labelled series summed)."""
    out: Dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        out[m.group(1)] = out.get(m.group(1), 0.0) + value
    return out


@record
class Storage:
    capacity: Optional[float] = None  # bytes
    allocated: Optional[float] = None
    keys: Optional[int] = None
    clients: Optional[int] = None
    ssd_capacity: Optional[float] = None
    summary: str = ""  # "Mem Storage: ... | Keys: ..." first parts, for display


_UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3, "TB": 1024 ** 4, "PB": 1024 ** 5}


def _bytes(text: str) -> Optional[float]:
    m = re.match(r"^\s*([\d.]+)\s*([KMGTP]?B)\s*$", text)
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def storage(metrics: Dict[str, float], summary: str = "") -> Storage:
    s = Storage()
    if "master_total_capacity_bytes" in metrics:
        s.capacity = metrics["master_total_capacity_bytes"]
    if "master_allocated_bytes" in metrics:
        s.allocated = metrics["master_allocated_bytes"]
    if "master_key_count" in metrics:
        s.keys = int(metrics["master_key_count"])
    if "master_active_clients" in metrics:
        s.clients = int(metrics["master_active_clients"])
    if "master_total_file_capacity_bytes" in metrics:
        s.ssd_capacity = metrics["master_total_file_capacity_bytes"]
    line = summary.strip().splitlines()[0] if summary.strip() else ""
    # "Mem Storage: 0 B / 98.23 GB (0.0%)" (v0.3.7+) or "Storage: 0 B / 0 B" (older masters).
    m = re.search(r"(?:Mem )?Storage: ([\d.]+ [KMGTP]?B) / ([\d.]+ [KMGTP]?B)", line)
    if m:
        s.allocated = s.allocated if s.allocated is not None else _bytes(m.group(1))
        s.capacity = s.capacity if s.capacity is not None else _bytes(m.group(2))
    m = re.search(r"Keys: (\d+)", line)
    if m and s.keys is None:
        s.keys = int(m.group(1))
    m = re.search(r"Clients: (\d+)", line)
    if m and s.clients is None:
        s.clients = int(m.group(1))
    s.summary = " | ".join(p.strip() for p in line.split("|")[:4]) if line else ""
    return s
