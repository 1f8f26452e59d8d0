"""Serving figures from per-request records, with the definitions of `vllm bench serve`
(vllm-project/vllm, vllm/benchmarks/serve.py ``calculate_metrics`` and
vllm/benchmarks/lib/endpoint_request_func.py):

- TTFT: from sending the request to the first streamed chunk that carries a choice;
- ITL: the gaps between successive such chunks (one gap per chunk, however many tokens it holds);
- TPOT: (end-to-end latency - TTFT) / (output tokens - 1), for requests with more than one token,
  so it excludes the first token; the output tokens come from the server's usage report
  (``stream_options.include_usage``), because speculative decoding sends several per chunk;
- E2EL: from sending the request to the last chunk with a choice;
- throughputs: completed requests and output tokens divided by the benchmark's wall time
  (warm-up requests are not part of it).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

from doctor.smoke.stats import summary

# Why a request failed; each is reported by count with the first message of its kind.
ERROR_KINDS = ("connect", "no_answer", "http", "server", "stall", "deadline", "malformed", "empty", "truncated")


@dataclass
class RequestRecord:
    ok: bool
    ttft: Optional[float] = None           # seconds
    itl: List[float] = field(default_factory=list)
    latency: Optional[float] = None        # seconds, request sent -> last chunk with a choice
    output_tokens: Optional[int] = None    # from usage (include_usage); None when not reported
    prompt_tokens: Optional[int] = None
    chunks: int = 0                        # chunks that carried a choice
    error_kind: Optional[str] = None
    error: Optional[str] = None
    sent_at: float = 0.0                   # seconds since the benchmark started
    done_at: float = 0.0

    @property
    def tokens(self) -> int:
        """Output tokens: the server's count when it gave one, else one per chunk."""
        return self.output_tokens if self.output_tokens is not None else self.chunks


def tpot(record: RequestRecord) -> Optional[float]:
    n = record.tokens
    if not record.ok or record.ttft is None or record.latency is None or n <= 1:
        return None
    return (record.latency - record.ttft) / (n - 1)


def metrics(records: Sequence[RequestRecord], duration: float) -> Dict[str, Any]:
    """The stage's figures: latencies in milliseconds (mean, p50, p90, p99), throughputs per
    second over ``duration`` (seconds of the measured run), errors by kind."""
    done = [r for r in records if r.ok]
    failed = [r for r in records if not r.ok]
    out_tokens = sum(r.tokens for r in done)
    in_tokens = sum(r.prompt_tokens or 0 for r in done)
    errors = Counter(r.error_kind or "other" for r in failed)
    first_error: Dict[str, str] = {}
    for r in failed:
        first_error.setdefault(r.error_kind or "other", r.error or "")
    without_usage = sum(1 for r in done if r.output_tokens is None)
    return {
        "requests": len(records),
        "completed": len(done),
        "failed": len(failed),
        "errors": dict(errors),
        "first_errors": first_error,
        "duration_s": round(duration, 3),
        "input_tokens": in_tokens,
        "output_tokens": out_tokens,
        "tokens_counted_from": "usage" if not without_usage else ("chunks" if without_usage == len(done) else "mixed"),
        "request_throughput": round(len(done) / duration, 3) if duration > 0 else None,
        "output_throughput": round(out_tokens / duration, 2) if duration > 0 else None,
        "total_token_throughput": round((in_tokens + out_tokens) / duration, 2) if duration > 0 else None,
        "ttft_ms": summary([r.ttft for r in done if r.ttft is not None]),
        "tpot_ms": summary([t for t in (tpot(r) for r in done) if t is not None]),
        "itl_ms": summary([g for r in done for g in r.itl]),
        "e2el_ms": summary([r.latency for r in done if r.latency is not None]),
    }
