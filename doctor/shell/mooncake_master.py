"""mooncake_master: its address, its HTTP endpoints on the metrics port, and what they say.

The RPC port (``--port``/``--rpc_port``, 50051 by default, 50088 in vllm-ascend's docs) speaks
coro_rpc, so it only gets a TCP connect. The metrics port (``--metrics_port``, 9003) serves
``/health`` (plain ``OK`` up to v0.3.10, JSON from v0.3.10.post2), ``/metrics`` (Prometheus text)
and ``/metrics/summary`` (one line, "Mem Storage: used / capacity (x%) | ..."). Parsing is pure;
:func:`probe` is the I/O edge: every network call has a short timeout.
"""
from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass
from typing import Optional, Tuple

from doctor.facts import HttpFact, MasterFacts

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
    """(ok, error, timed_out, milliseconds)."""
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
        return True, None, False, round((time.monotonic() - start) * 1000, 1)
    except socket.timeout:
        return False, f"no answer within {timeout:g}s", True, round((time.monotonic() - start) * 1000, 1)
    except OSError as e:
        return False, e.strerror or str(e), False, round((time.monotonic() - start) * 1000, 1)


def http_get(url: str, timeout: float) -> HttpFact:
    import requests  # only when a master is named: it costs ~80 ms to import

    fact = HttpFact(url=url)
    start = time.monotonic()
    try:
        # A server that accepts and never answers must not hold us beyond the timeout:
        # (connect, read) timeouts plus a deadline while reading the body.
        with requests.get(url, timeout=(timeout, timeout), stream=True, allow_redirects=False,
                          headers={"User-Agent": "ascend-doctor"}) as resp:
            fact.status = resp.status_code
            fact.content_type = resp.headers.get("Content-Type", "")
            body = b""
            deadline = start + 2 * timeout
            for chunk in resp.iter_content(8192):
                body += chunk
                if len(body) >= MAX_BODY or time.monotonic() > deadline:
                    break
            fact.body = body[:MAX_BODY].decode("utf-8", errors="replace")
    except requests.exceptions.Timeout:
        fact.error, fact.timed_out = f"no answer within {timeout:g}s", True
    except requests.exceptions.ConnectionError as e:
        fact.error = _short(e)
    except requests.exceptions.RequestException as e:
        fact.error = _short(e)
    fact.elapsed_ms = round((time.monotonic() - start) * 1000, 1)
    return fact


def _short(e: Exception) -> str:
    text = str(e)
    m = re.search(r"\[Errno -?\d+\] ([^'\"\)]+)", text)
    if m:
        return m.group(1).strip()
    if "Read timed out" in text:
        return "read timed out"
    if "RemoteDisconnected" in text or "Connection aborted" in text:
        return "connection closed without a response"
    return text[:200]


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
