"""What the Mooncake master counted (pure): keys, Puts and Gets, from its metrics port.

``/metrics`` (Prometheus) has the same names from v0.3.7.post2 to today
(mooncake-store/src/master_metric_manager.cpp): ``master_key_count``,
``master_total_capacity_bytes``, ``master_allocated_bytes``, ``master_put_start_requests_total``
and, for the batch calls vllm-ascend's pool makes, ``master_batch_put_start_items_total``;
``master_get_replica_list_requests_total`` and ``master_batch_get_replica_list_items_total``.

``/metrics/summary`` is one line; up to v0.3.10.post2 its requests are running totals, as the
field reports recorded them::

    Mem Storage: 0 B / 98.23 GB (0.0%) | SSD Storage: 0 B / 0 B | Keys: 0 (soft-pinned: 0) |
    Requests (Success/Total): PutStart=0/0, ... Get=0/0, ... | Batch Requests (...):
    PutStart:(Req=0/0/0, Item=0/0), ... Get:(Req=0/0/0, Item=0/0), ...

From v0.3.11 they are rates of the last window (``Requests (Success/Total per sec):
PutStart=0.00/0.00``), which are not counts: then only the keys and the storage are read from it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Optional

from doctor.parse.master_http import storage
from doctor.smoke.promtext import parse, total

PUTS = ("master_put_start_requests_total", "master_batch_put_start_items_total")
GETS = ("master_get_replica_list_requests_total", "master_batch_get_replica_list_items_total")


@dataclass(frozen=True)
class MasterCounts:
    keys: Optional[int] = None
    puts: Optional[float] = None       # objects put (single calls + batch items), successes and failures
    gets: Optional[float] = None       # objects asked for (single calls + batch items)
    capacity: Optional[float] = None   # bytes of all mounted segments
    allocated: Optional[float] = None
    clients: Optional[int] = None      # clients alive: every rank that mounts a segment is one
    source: str = ""                   # "metrics" / "summary"

    def to_json(self) -> Dict[str, Any]:
        return {"keys": self.keys, "puts": self.puts, "gets": self.gets, "capacity_bytes": self.capacity,
                "allocated_bytes": self.allocated, "clients": self.clients, "source": self.source}


def _sum(metrics: Any, names: tuple) -> Optional[float]:
    values = [v for v in (total(metrics, n) for n in names) if v is not None]
    return sum(values) if values else None


def _pair(text: str, label: str) -> Optional[float]:
    """The total of ``Label=success/total`` (single requests)."""
    m = re.search(r"(?<![A-Za-z:])" + label + r"=(\d+)/(\d+)", text)
    return float(m.group(2)) if m else None


def _items(text: str, label: str) -> Optional[float]:
    """The item total of ``Label:(Req=a/b/c, Item=x/y)`` (batch requests)."""
    m = re.search(label + r":\(Req=[\d/]+,\s*Item=(\d+)/(\d+)\)", text)
    return float(m.group(2)) if m else None


def read_master(metrics_text: Optional[str], summary_text: Optional[str]) -> Optional[MasterCounts]:
    """The counts from /metrics when it has them, else from a summary line with running totals."""
    if metrics_text:
        samples = parse(metrics_text)
        keys = total(samples, "master_key_count")
        puts, gets = _sum(samples, PUTS), _sum(samples, GETS)
        if keys is not None or puts is not None or gets is not None:
            clients = total(samples, "master_active_clients")
            return MasterCounts(keys=int(keys) if keys is not None else None, puts=puts, gets=gets,
                                capacity=total(samples, "master_total_capacity_bytes"),
                                allocated=total(samples, "master_allocated_bytes"),
                                clients=int(clients) if clients is not None else None, source="metrics")
    if summary_text and summary_text.strip():
        line = summary_text.strip().splitlines()[0]
        st = storage({}, line)
        rates = "per sec" in line
        puts = gets = None
        if not rates:
            single_put, single_get = _pair(line, "PutStart"), _pair(line, "Get")
            batch = line.split("Batch Requests", 1)[1] if "Batch Requests" in line else ""
            batch_put, batch_get = _items(batch, "PutStart"), _items(batch, "Get")
            if single_put is not None or batch_put is not None:
                puts = (single_put or 0.0) + (batch_put or 0.0)
            if single_get is not None or batch_get is not None:
                gets = (single_get or 0.0) + (batch_get or 0.0)
        if st.keys is not None or puts is not None:
            return MasterCounts(keys=st.keys, puts=puts, gets=gets, capacity=st.capacity, allocated=st.allocated,
                                clients=st.clients, source="summary")
    return None


def master_delta(before: Optional[MasterCounts], after: Optional[MasterCounts]) -> Optional[Dict[str, Any]]:
    if before is None or after is None:
        return None
    out: Dict[str, Any] = {}
    for key in ("keys", "puts", "gets", "allocated"):
        a, b = getattr(after, key), getattr(before, key)
        out[key] = None if a is None or b is None else round(a - b, 3)
    return out
