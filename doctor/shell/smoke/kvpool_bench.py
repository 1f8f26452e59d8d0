"""The I/O of the kvpool stage: the servers' /metrics, the Mooncake master's metrics port, the
vllm log, the Mooncake config and the model's config.json. Every read is bounded (bytes and a
total deadline); what it says is judged in doctor.smoke.kvpool_* (pure).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from doctor.shell.smoke.endpoint_bench import BenchConfig, EndpointError, get_text
from doctor.smoke import promtext
from doctor.smoke.kvpool_calc import Counters, HbmCache, counters, hbm_from_log
from doctor.smoke.kvpool_master import MasterCounts, read_master

METRICS_CAP = 16 * 1024 * 1024   # a vllm /metrics with many engines and histograms stays far below
MASTER_TIMEOUT = 5.0
LOG_CAP = 512 * 1024 * 1024      # the start-up lines are near the top; a restart's further down
LINE_CAP = 64 * 1024
CONFIG_CAP = 1024 * 1024
SETTLE_TRIES = 6                 # vllm's counters follow the engine's steps: let them catch up
SETTLE_WAIT = 0.25


@dataclass
class ServerReading:
    samples: List[promtext.Sample]
    counters: Counters
    error: Optional[str] = None


def read_server(cfg: BenchConfig) -> ServerReading:
    try:
        text = get_text(cfg, "/metrics", METRICS_CAP)
    except EndpointError as e:
        return ServerReading([], Counters(), str(e))
    samples = promtext.parse(text)
    return ServerReading(samples, counters(samples))


def settled(cfg: BenchConfig, before: Optional[Counters], prompt_tokens: int) -> ServerReading:
    """The server's counters once they count the tokens just sent (the HBM queries grow by every
    prompt token), or after a few tries when they never do (another counting, or no counters)."""
    reading = read_server(cfg)
    for _ in range(SETTLE_TRIES):
        if reading.error or before is None or "hbm_queries" not in reading.counters.values \
                or "hbm_queries" not in before.values:
            return reading
        grown = reading.counters.values["hbm_queries"] - before.values["hbm_queries"]
        if grown >= 0.9 * prompt_tokens:
            return reading
        time.sleep(SETTLE_WAIT)
        reading = read_server(cfg)
    return reading


def read_master_counts(metrics_url: str, timeout: float = MASTER_TIMEOUT) -> Tuple[Optional[MasterCounts], Optional[str]]:
    """The master's counts from /metrics (and /metrics/summary when /metrics has none)."""
    from doctor.shell.mooncake.master import http_get

    metrics = http_get(metrics_url.rstrip("/") + "/metrics", timeout)
    if metrics.status is None:
        return None, metrics.error or "no answer"
    text = metrics.body if metrics.status == 200 else None
    counts = read_master(text, None)
    if counts is None or counts.puts is None:
        summary = http_get(metrics_url.rstrip("/") + "/metrics/summary", timeout)
        if summary.status == 200:
            counts = read_master(text, summary.body) if counts is None else counts
            if counts is not None and counts.puts is None:
                alt = read_master(None, summary.body)
                if alt is not None and alt.puts is not None:
                    counts = alt
    if counts is None:
        return None, f"HTTP {metrics.status}: no master counters in /metrics or /metrics/summary"
    return counts, None


def read_log_hbm(path: str) -> Tuple[Optional[HbmCache], Optional[str]]:
    """``GPU KV cache size: N tokens`` from a vllm log, streamed (at most LOG_CAP bytes, lines
    cut at LINE_CAP)."""
    from doctor.shell.host.files import open_binary

    def lines() -> Any:
        fh = open_binary(path)
        with fh:
            left, pending = LOG_CAP, b""
            while left > 0:
                block = fh.read(min(1 << 20, left))
                if not block:
                    break
                left -= len(block)
                pending += block
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    yield raw[:LINE_CAP].decode("utf-8", "replace")
                pending = pending[-LINE_CAP:]
            if pending:
                yield pending.decode("utf-8", "replace")

    try:
        hbm = hbm_from_log(lines())
    except OSError as e:
        return None, f"{path}: {e.strerror or e}"
    if hbm is None:
        return None, f"{path}: no 'GPU KV cache size: N tokens' line"
    return hbm, None


def read_json(path: str) -> Tuple[Any, Optional[str]]:
    """A JSON file (strict, else lenient as doctor.parse.jsontext reads a Mooncake config)."""
    from doctor.parse import jsontext
    from doctor.shell.host.files import read_text

    text = read_text(path, CONFIG_CAP)
    if text is None:
        return None, f"{path}: cannot be read"
    res = jsontext.parse(text)
    if res.ok:
        return res.value, None
    if res.lenient is not None:
        return res.lenient, None
    return None, f"{path}: not JSON"


def read_model_config(directory: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    import os

    from doctor.shell.host.files import read_text

    path = os.path.join(directory, "config.json")
    text = read_text(path, CONFIG_CAP)
    if text is None:
        return None, f"{path}: cannot be read"
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None, f"{path}: not JSON"
    if not isinstance(data, dict):
        return None, f"{path}: not a JSON object"
    return data, None
