"""mooncake_master: its address, its HTTP endpoints on the metrics port, and what they say.

The RPC port (``--port``/``--rpc_port``, 50051 by default, 50088 in vllm-ascend's docs) speaks
coro_rpc, so it only gets a TCP connect. The metrics port (``--metrics_port``, 9003) serves
``/health`` (plain ``OK`` up to v0.3.10, JSON from v0.3.10.post2), ``/metrics`` (Prometheus text)
and ``/metrics/summary`` (one line, "Mem Storage: used / capacity (x%) | ..."). Parsing is pure;
:func:`probe` is the I/O edge: every network call has a total deadline (shell/net.py).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

from doctor.facts import HttpFact, MasterFacts
from doctor.shell import net

DEFAULT_METRICS_PORT = 9003
MAX_BODY = 256 * 1024


@dataclass
class Address:
    host: str = ""
    port: int = 0
    metrics_url: str = ""
    error: Optional[str] = None


def parse_address(text: str) -> Address:
    """``HOST:RPC_PORT`` (metrics on 9003), ``HOST:RPC_PORT:METRICS_PORT``, or ``http://HOST:METRICS_PORT``
    (metrics only)."""
    value = (text or "").strip()
    if not value:
        return Address(error="empty address")
    m = re.match(r"^https?://(\[[^\]]+\]|[^/:]+)(?::(\d+))?/?$", value)
    if m:
        host = m.group(1).strip("[]")
        port = int(m.group(2) or DEFAULT_METRICS_PORT)
        if not 0 < port < 65536:
            return Address(error=f"port {port} out of range")
        return Address(host=host, port=0, metrics_url=f"http://{_fmt_host(host)}:{port}")
    m = re.match(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):(\d{1,5})(?::(\d{1,5}))?$", value)
    if not m:
        return Address(error=f"{value!r} is not host:port[:metrics_port] or http://host:metrics_port")
    host, port = m.group(1).strip("[]"), int(m.group(2))
    metrics = int(m.group(3) or DEFAULT_METRICS_PORT)
    for p in (port, metrics):
        if not 0 < p < 65536:
            return Address(error=f"port {p} out of range")
    return Address(host=host, port=port, metrics_url=f"http://{_fmt_host(host)}:{metrics}")


def _fmt_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


# -- I/O edge ----------------------------------------------------------------------------------


def tcp_connect(host: str, port: int, timeout: float) -> Tuple[bool, Optional[str], bool, float]:
    """(ok, error, timed_out, milliseconds); ``timeout`` bounds the lookup and the connect together."""
    start = time.monotonic()
    try:
        net.tcp_probe(host, port, timeout)
        return True, None, False, _ms(start)
    except net.Timeout:
        return False, f"no answer within {timeout:g}s", True, _ms(start)
    except OSError as e:
        return False, _short(e), False, _ms(start)


def http_get(url: str, timeout: float) -> HttpFact:
    """One GET with a total deadline: a server that drips one byte at a time is cut off at
    ``timeout`` seconds like one that never answers."""
    fact = HttpFact(url=url)
    start = time.monotonic()
    try:
        resp = net.http_get(url, timeout, MAX_BODY, headers={"User-Agent": "ascend-doctor"})
        fact.status = resp.status
        fact.content_type = resp.headers.get("content-type", "")
        fact.body = resp.body.decode("utf-8", errors="replace")
    except net.Timeout:
        fact.error, fact.timed_out = f"no answer within {timeout:g}s", True
    except (OSError, ValueError) as e:
        fact.error = _short(e)
    fact.elapsed_ms = _ms(start)
    return fact


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 1)


def _short(e: Exception) -> str:
    if isinstance(e, ConnectionResetError):
        return "connection closed without a response"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e)[:200] or type(e).__name__


def probe(address: str, source: str, timeout: float) -> MasterFacts:
    facts = MasterFacts(address=address, source=source, timeout_s=timeout)
    addr = parse_address(address)
    if addr.error:
        facts.error = addr.error
        return facts
    facts.host, facts.port, facts.metrics_url = addr.host, addr.port, addr.metrics_url
    if addr.port:
        facts.tcp_ok, facts.tcp_error, facts.tcp_timed_out, facts.tcp_ms = tcp_connect(addr.host, addr.port, timeout)
    facts.health = http_get(addr.metrics_url + "/health", timeout)
    if facts.health.timed_out or (facts.health.error and facts.health.status is None):
        return facts  # the same server: do not wait for it twice more
    facts.metrics = http_get(addr.metrics_url + "/metrics", timeout)
    if facts.metrics.timed_out:
        return facts
    facts.summary = http_get(addr.metrics_url + "/metrics/summary", timeout)
    return facts


# -- pure parsing --------------------------------------------------------------------------------


@dataclass
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
        h.detail = fact.error if fact else "not probed"
        return h
    h.reachable = True
    body = fact.body.strip()
    if fact.status != 200:
        h.format, h.detail = "other", f"HTTP {fact.status}"
        return h
    if body.startswith("{"):
        try:
            data = json.loads(body)
        except ValueError:
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


_PROM = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+([-+0-9.eEnaNInf]+)(?:\s+\d+)?$")


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


@dataclass
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
