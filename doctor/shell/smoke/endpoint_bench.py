"""The endpoint benchmark client: OpenAI-compatible streaming requests (SSE) with requests.

It measures what `vllm bench serve` measures (doctor.smoke.endpoint has the definitions) and is
built never to hang: every blocking read is bounded by the stall timeout (requests' read
timeout: no byte for that long), and every request by a TOTAL deadline checked after each
read, so a server that trickles bytes forever is cut off too. A request that fails is a record
with the kind of failure (connect, no_answer, http, server, stall, deadline, malformed, empty,
truncated) and the first words of the reason.
"""
from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from doctor.shell.runtime.net import cut_off, watch, watched
from doctor.smoke.endpoint import RequestRecord

CONNECT_TIMEOUT = 10.0
MAX_ERROR_BODY = 2048
MAX_EVENT_BYTES = 1024 * 1024  # one SSE event longer than this is not a completion chunk
DRAIN_TIMEOUT = 0.2            # after [DONE]: the end of the body is due at once (else: closed, as before)
DRAIN_BYTES = 64 * 1024
WORDS = ("the", "of", "and", "to", "in", "is", "it", "that", "for", "on", "was", "with", "as", "at", "by", "be")


class EndpointError(Exception):
    """The endpoint cannot be benchmarked at all (it does not answer /v1/models)."""


@dataclass
class BenchConfig:
    base_url: str
    api: str = "completions"           # or chat
    model: Optional[str] = None        # served model name; None: the first of /v1/models
    requests: int = 20
    concurrency: int = 4
    input_len: int = 128
    output_len: int = 64
    warmup: int = 2
    prefix_cache: bool = False
    stall_timeout: float = 30.0
    request_timeout: float = 600.0
    duration: Optional[float] = None   # soak: keep sending until this many seconds have passed
    api_key: Optional[str] = None
    ignore_eos: bool = True


@dataclass
class BenchResult:
    model: str
    records: List[RequestRecord]           # the measured requests (the warm pass with --prefix-cache)
    duration: float
    warmup: List[RequestRecord] = field(default_factory=list)
    cold: List[RequestRecord] = field(default_factory=list)  # --prefix-cache: the first pass
    cold_duration: float = 0.0


def base(url: str) -> str:
    url = url.rstrip("/")
    return url[:-3] if url.endswith("/v1") else url


def _headers(cfg: BenchConfig) -> Dict[str, str]:
    h = {"Content-Type": "application/json"}
    if cfg.api_key:
        h["Authorization"] = f"Bearer {cfg.api_key}"
    return h


def _timeout(cfg: BenchConfig, deadline: float) -> Tuple[float, float]:
    left = max(0.5, deadline - time.monotonic())
    return (min(CONNECT_TIMEOUT, left), min(cfg.stall_timeout, left))


def list_models(cfg: BenchConfig, session: Any = None) -> List[str]:
    """GET /v1/models within CONNECT_TIMEOUT + stall timeout in all; EndpointError when it fails."""
    return [str(card["id"]) for card in model_cards(cfg, session)]


def model_cards(cfg: BenchConfig, session: Any = None) -> List[Dict[str, Any]]:
    """The model cards of GET /v1/models (``id``; vllm adds ``root``, the model's path, and
    ``max_model_len``); EndpointError when the server does not answer with a model list."""
    body = get_text(cfg, "/v1/models", 1024 * 1024, session)
    try:
        data = json.loads(body)
        cards = [m for m in data["data"] if isinstance(m, dict) and "id" in m]
        if len(cards) != len(data["data"]):
            raise KeyError("id")
    except (ValueError, KeyError, TypeError, RecursionError):
        raise EndpointError("GET /v1/models: the answer is not an OpenAI model list") from None
    if not cards:
        raise EndpointError("GET /v1/models: the server serves no model")
    return cards


def get_text(cfg: BenchConfig, path: str, cap: int, session: Any = None) -> str:
    """GET ``path`` of the server, at most ``cap`` bytes, within a total deadline (the connect
    and the stall timeouts: a server that drips its answer is cut off like one that never
    answers); EndpointError when it cannot be had (no server, HTTP error, the deadline)."""
    import requests

    s = watched(session or requests.Session())
    total = min(CONNECT_TIMEOUT, cfg.stall_timeout) + cfg.stall_timeout
    deadline = time.monotonic() + total
    try:
        with watch(deadline):  # headers a line at a time are cut off at the deadline too
            resp = s.get(base(cfg.base_url) + path, headers=_headers(cfg), timeout=_timeout(cfg, deadline), stream=True)
        body, complete = _read_capped(resp, deadline, cap)
    except requests.exceptions.RequestException as e:
        if time.monotonic() >= deadline:
            raise EndpointError(f"GET {path}: no complete answer within {total:g}s") from None
        raise EndpointError(f"GET {path}: {_reason(e)}") from None
    if resp.status_code != 200:
        raise EndpointError(f"GET {path}: HTTP {resp.status_code} {body[:200].decode('utf-8', 'replace').strip()}")
    if not complete:
        raise EndpointError(f"GET {path}: no complete answer within {total:g}s ({len(body)} bytes)")
    return body.decode("utf-8", "replace")


def _read_capped(resp: Any, deadline: float, cap: int) -> Tuple[bytes, bool]:
    """(at most ``cap`` bytes of the body, whether it ended or reached the cap before the
    deadline). One socket read at a time (read1), so the deadline is checked between reads
    however slowly the bytes come; a broken or timed-out read ends it, incomplete."""
    out = bytearray()  # appending to bytes would copy the whole body at every chunk
    raw = resp.raw
    read1 = getattr(raw, "read1", None)
    cancel = cut_off(resp, deadline)
    try:
        while len(out) < cap:
            if time.monotonic() > deadline:
                return bytes(out), False
            data = read1(16384, decode_content=True) if read1 is not None else raw.read(1024, decode_content=True)
            if not data:
                return bytes(out), True
            out += data
        return bytes(out[:cap]), True
    except Exception:  # noqa: BLE001 - urllib3's read errors are not requests'; what was read stands
        return bytes(out), False
    finally:
        cancel()
        resp.close()


def _reason(e: BaseException) -> str:
    text = str(e)
    for marker in ("Read timed out", "Connection refused", "Max retries exceeded", "Connection aborted"):
        if marker in text:
            return marker.lower() if marker != "Max retries exceeded" else text.split("(Caused by", 1)[-1].strip(" )")[:160]
    return (type(e).__name__ + ": " + text)[:200]


def make_prompt(tag: str, input_len: int) -> str:
    """A prompt of about ``input_len`` words after a prefix of its own (``tag``), so that prefix
    caching cannot serve one request from another's cache."""
    words = [WORDS[i % len(WORDS)] for i in range(max(1, input_len - 4))]
    return f"[{tag}] " + " ".join(words)


def payload(cfg: BenchConfig, model: str, prompt: str) -> Dict[str, Any]:
    body: Dict[str, Any] = {"model": model, "stream": True, "stream_options": {"include_usage": True},
                            "temperature": 0.0}
    if cfg.api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
        body["max_completion_tokens"] = cfg.output_len
    else:
        body["prompt"] = prompt
        body["max_tokens"] = cfg.output_len
    if cfg.ignore_eos:
        body["ignore_eos"] = True  # vllm's extension: exactly output_len tokens, as vllm bench serve --ignore-eos
    return body


class _SSE:
    """Split a byte stream into SSE events (blank-line separated); yields each event's data."""

    def __init__(self) -> None:
        self.buf = b""

    def feed(self, chunk: bytes) -> List[str]:
        self.buf += chunk.replace(b"\r\n", b"\n")
        out = []
        while b"\n\n" in self.buf:
            raw, self.buf = self.buf.split(b"\n\n", 1)
            data = [line[5:].strip() for line in raw.split(b"\n") if line.startswith(b"data:")]
            if data:
                out.append(b"\n".join(data).decode("utf-8", "replace"))
        if len(self.buf) > MAX_EVENT_BYTES:
            raise ValueError(f"an SSE event longer than {MAX_EVENT_BYTES} bytes")
        return out


def stream_request(session: Any, cfg: BenchConfig, model: str, prompt: str, started: float,
                   deadline: Optional[float] = None) -> RequestRecord:
    """One streaming request, measured; never raises for the server's failures."""
    import requests

    url = base(cfg.base_url) + ("/v1/chat/completions" if cfg.api == "chat" else "/v1/completions")
    sent = time.perf_counter()
    mono = time.monotonic()
    end = mono + cfg.request_timeout if deadline is None else min(deadline, mono + cfg.request_timeout)
    rec = RequestRecord(ok=False, sent_at=round(mono - started, 4))

    def fail(kind: str, why: str) -> RequestRecord:
        rec.ok, rec.error_kind, rec.error = False, kind, why[:300]
        rec.done_at = round(time.monotonic() - started, 4)
        return rec

    try:
        # the watch ends the request at its deadline however the headers come (a line at a
        # time, each within the stall timeout, never ends a read timeout)
        with watch(end):
            resp = watched(session).post(url, json=payload(cfg, model, prompt), headers=_headers(cfg), stream=True,
                                         timeout=_timeout(cfg, end))
    except requests.exceptions.ConnectTimeout as e:
        return fail("connect", _reason(e))
    except requests.exceptions.ReadTimeout:
        if time.monotonic() >= end:
            return fail("deadline", f"no complete response headers within {cfg.request_timeout:g}s")
        return fail("no_answer", f"no response within {cfg.stall_timeout:g}s")
    except requests.exceptions.ConnectionError as e:
        return fail("connect", _reason(e))
    except requests.exceptions.RequestException as e:
        return fail("connect", _reason(e))
    # a read blocks at most the stall timeout: past that after the request's deadline (and its
    # drain), only a read without end (an endless trailer) is left, and the socket is shut
    cancel = cut_off(resp, end + cfg.stall_timeout + DRAIN_TIMEOUT)
    try:
        if resp.status_code != 200:
            body, _ = _read_capped(resp, min(end, time.monotonic() + cfg.stall_timeout), MAX_ERROR_BODY)
            return fail("http", f"HTTP {resp.status_code}: {_error_text(body)}")
        sse, last, done = _SSE(), sent, False
        # chunked responses are handed over chunk by chunk; others byte by byte (a larger read
        # would wait for the whole amount and spoil the timing)
        size = None if getattr(resp.raw, "chunked", False) else 1
        stream = resp.iter_content(chunk_size=size)
        for chunk in stream:
            now = time.perf_counter()
            if time.monotonic() > end:
                return fail("deadline", f"still streaming after {cfg.request_timeout:g}s "
                                        f"({rec.chunks} chunks received)")
            for data in sse.feed(chunk):
                if data == "[DONE]":
                    done = True
                    continue
                try:
                    obj = json.loads(data)
                except (ValueError, RecursionError):
                    return fail("malformed", f"chunk {rec.chunks + 1} is not JSON: {data[:80]!r}")
                if not isinstance(obj, dict):
                    return fail("malformed", f"chunk {rec.chunks + 1} is not a JSON object: {data[:80]!r}")
                if obj.get("error"):
                    return fail("server", f"error in the stream: {_error_text(json.dumps(obj['error']).encode())}")
                if obj.get("choices"):
                    if rec.ttft is None:
                        rec.ttft = now - sent
                    else:
                        rec.itl.append(now - last)
                    last = now
                    rec.chunks += 1
                usage = obj.get("usage")
                if isinstance(usage, dict):
                    if isinstance(usage.get("completion_tokens"), int):
                        rec.output_tokens = usage["completion_tokens"]
                    if isinstance(usage.get("prompt_tokens"), int):
                        rec.prompt_tokens = usage["prompt_tokens"]
            if done:
                break
        if done:
            done_at = time.monotonic()
            _drain(resp, stream)
    except requests.exceptions.ConnectionError as e:
        if "timed out" in str(e).lower():
            return fail("stall", f"no data for {cfg.stall_timeout:g}s after {rec.chunks} chunks")
        return fail("truncated", f"the connection broke after {rec.chunks} chunks: {_reason(e)}")
    except requests.exceptions.ChunkedEncodingError as e:
        return fail("truncated", f"the connection broke after {rec.chunks} chunks: {_reason(e)}")
    except requests.exceptions.RequestException as e:
        return fail("truncated", _reason(e))
    except ValueError as e:
        return fail("malformed", str(e))
    finally:
        cancel()
        resp.close()
    if rec.ttft is None:
        return fail("empty", "the stream ended without a token")
    if not done:
        return fail("truncated", f"the stream ended without [DONE] after {rec.chunks} chunks")
    rec.ok = True
    rec.latency = last - sent
    rec.done_at = round(done_at - started, 4)
    return rec


def _drain(resp: Any, stream: Any) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body) so that the connection goes
    back to the session's pool instead of being closed: the next request then does not pay for
    a new connection inside its TTFT. Bounded: DRAIN_TIMEOUT in all and DRAIN_BYTES; a server
    that keeps sending gets its connection closed, as before."""
    sock = getattr(getattr(getattr(resp, "raw", None), "connection", None), "sock", None)
    if sock is None:
        return
    try:
        sock.settimeout(DRAIN_TIMEOUT)  # the pool sets its own timeouts again on the next request
        left, until = DRAIN_BYTES, time.monotonic() + DRAIN_TIMEOUT
        for data in stream:  # the same iterator: it knows where the chunked body stands
            left -= len(data)
            if left <= 0 or time.monotonic() > until:  # a drip after [DONE]: the connection is closed
                return
    except Exception:  # noqa: BLE001 - a connection we could not drain is closed; the figures stand
        return


def _error_text(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            err = obj.get("error", obj)
            if isinstance(err, dict):
                return str(err.get("message") or err)[:200]
            return str(err)[:200]
    except (ValueError, RecursionError):
        pass
    return text[:200] or "(no body)"


Progress = Callable[[int, Optional[int], str], None]  # done, total (None: a soak), phase


def run_bench(cfg: BenchConfig, progress: Optional[Progress] = None,
              every: Optional[Tuple[float, Callable[[float], None]]] = None) -> BenchResult:
    """GET /v1/models, the warm-up requests (not measured), then the measured requests with
    ``concurrency`` in flight (for ``duration`` seconds in a soak); ``every`` = (seconds, fn)
    is called on that period while the run lasts (the soak's memory sampler)."""
    import requests

    models = list_models(cfg)
    model = cfg.model or models[0]
    if cfg.model and cfg.model not in models:
        raise EndpointError(f"the server does not serve {cfg.model!r} (it serves {', '.join(models[:5])})")
    run_id = uuid.uuid4().hex[:8]
    local = threading.local()

    def session() -> Any:
        if not hasattr(local, "s"):
            local.s = watched(requests.Session())
        return local.s

    t0 = time.monotonic()
    warm = []
    for i in range(cfg.warmup):
        warm.append(stream_request(session(), cfg, model, make_prompt(f"warmup {run_id} {i}", cfg.input_len), t0))
        if progress:
            progress(i + 1, cfg.warmup, "warmup")
    if warm and not any(r.ok for r in warm):
        return BenchResult(model=model, records=[], duration=0.0, warmup=warm)
    if cfg.prefix_cache:
        tags = [f"shared {run_id} {i}" for i in range(cfg.requests)]
        cold, cold_s = _measure(cfg, model, tags, session, progress, every, "cold")
        hot, hot_s = _measure(cfg, model, tags, session, progress, every, "warm")
        return BenchResult(model=model, records=hot, duration=hot_s, warmup=warm, cold=cold, cold_duration=cold_s)
    tags = [f"{run_id} {i}" for i in range(cfg.requests)]
    records, seconds = _measure(cfg, model, tags, session, progress, every, "run")
    return BenchResult(model=model, records=records, duration=seconds, warmup=warm)


class Sessions:
    """Keep-alive connections to one server, shared by the passes sent to it (as a benchmark
    client's connection pool): a worker takes one for its life and gives it back, so a pass does
    not pay for connecting, and the first pass need not either once :meth:`open` made them."""

    def __init__(self) -> None:
        self.free: List[Any] = []
        self.lock = threading.Lock()

    def take(self) -> Any:
        import requests

        with self.lock:
            if self.free:
                return self.free.pop()
        return watched(requests.Session())

    def give(self, session: Any) -> None:
        with self.lock:
            self.free.append(session)

    def open(self, cfg: BenchConfig, n: int) -> None:
        """``n`` connections, made at once by GET /v1/models (nothing is computed, nothing cached)."""
        taken = [self.take() for _ in range(n)]

        def touch(s: Any) -> None:
            try:
                get_text(cfg, "/v1/models", 1024 * 1024, s)
            except EndpointError:
                pass

        threads = [threading.Thread(target=touch, args=(s,), daemon=True) for s in taken]
        for t in threads:
            t.start()
        for t in threads:
            t.join(CONNECT_TIMEOUT + cfg.stall_timeout)
        for s in taken:
            self.give(s)


def run_pass(cfg: BenchConfig, model: str, tags: List[str], progress: Optional[Progress] = None, phase: str = "run",
             deadline: Optional[float] = None, sessions: Optional[Sessions] = None) -> Tuple[List[RequestRecord], float]:
    """One measured pass: a prompt of ``cfg.input_len`` words per tag, ``cfg.concurrency`` in
    flight; no request starts after ``deadline`` (monotonic) and none runs past it."""
    pool = sessions or Sessions()
    local = threading.local()
    taken: List[Any] = []

    def session() -> Any:
        if not hasattr(local, "s"):
            local.s = pool.take()
            taken.append(local.s)
        return local.s

    try:
        return _measure(cfg, model, tags, session, progress, None, phase, deadline)
    finally:
        for s in taken:
            pool.give(s)


def _measure(cfg: BenchConfig, model: str, tags: List[str], session: Callable[[], Any],
             progress: Optional[Progress], every: Optional[Tuple[float, Callable[[float], None]]],
             phase: str, deadline: Optional[float] = None) -> Tuple[List[RequestRecord], float]:
    started = time.monotonic()
    soak_end = started + cfg.duration if cfg.duration else None
    records: List[RequestRecord] = []
    counter = [0]
    lock = threading.Lock()

    def next_tag() -> Optional[str]:
        with lock:
            i = counter[0]
            counter[0] += 1
        if deadline is not None and time.monotonic() >= deadline:
            return None
        if soak_end is None:
            return tags[i] if i < len(tags) else None
        if time.monotonic() >= soak_end:
            return None
        return f"{tags[0].rsplit(' ', 1)[0]} soak {i}"

    def worker() -> None:
        while True:
            tag = next_tag()
            if tag is None:
                return
            end = None if soak_end is None else soak_end + cfg.request_timeout
            if deadline is not None:
                end = deadline if end is None else min(end, deadline)
            rec = stream_request(session(), cfg, model, make_prompt(tag, cfg.input_len), started, deadline=end)
            with lock:
                records.append(rec)
                done = len(records)
            if progress:
                progress(done, None if soak_end else len(tags), phase)

    workers = cfg.concurrency if soak_end else min(cfg.concurrency, len(tags))
    next_sample = started
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="smoke-endpoint") as pool:
        futures: List[Future] = [pool.submit(worker) for _ in range(workers)]
        pending = set(futures)
        while pending:
            if every and time.monotonic() >= next_sample:
                every[1](time.monotonic() - started)
                next_sample = time.monotonic() + every[0]
            # wake for the next sample too: a period under 0.5 s was otherwise stretched to 0.5 s
            wake = 0.5 if not every else max(0.0, min(0.5, next_sample - time.monotonic()))
            _, pending = wait(pending, timeout=wake, return_when=FIRST_COMPLETED)
        for f in futures:
            f.result()  # a bug in the worker is the doctor's failure, not the server's
    if every:
        every[1](time.monotonic() - started)
    return records, time.monotonic() - started
