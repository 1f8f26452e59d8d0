"""mooncake_master: its address, its HTTP endpoints on the metrics port, and what they say.

The RPC port (``--port``/``--rpc_port``, 50051 by default, 50088 in vllm-ascend's docs) speaks
coro_rpc, so it only gets a TCP connect. The metrics port (``--metrics_port``, 9003) serves
``/health`` (plain ``OK`` up to v0.3.10, JSON from v0.3.10.post2), ``/metrics`` (Prometheus text)
and ``/metrics/summary`` (one line, "Mem Storage: used / capacity (x%) | ..."). Parsing is pure;
:func:`probe` is the I/O edge: every network call has a total deadline (shell/runtime/net.py).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Optional, Tuple

from doctor.facts import HttpFact, MasterFacts
from doctor.shell.runtime import net

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


# Pure parsing of what the endpoints say lives in doctor.parse.master_http (the rules use it).
from doctor.parse.master_http import Health, Storage, parse_health, parse_metrics, storage  # noqa: E402,F401
