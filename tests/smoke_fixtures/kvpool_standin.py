"""A loopback stand-in for two vllm instances with a Mooncake KV pool between them, for the
kvpool stage (seed 003's two nodes, seed 001's capacity knee). Test infrastructure only.

- Each instance speaks vllm's OpenAI streaming completions (SSE, ``stream_options.include_usage``
  usage chunk, ``data: [DONE]``), ``/v1/models`` with vllm's ``root`` and ``max_model_len``, and
  ``/metrics`` with vllm's names: ``vllm:cache_config_info`` (labels ``num_gpu_blocks``,
  ``block_size``), ``vllm:prefix_cache_{queries,hits}_total`` and, as vllm >= 0.11.1 does,
  ``vllm:external_prefix_cache_{queries,hits}_total`` (release "0.10" instead exports the
  deprecated ``vllm:gpu_prefix_cache_*`` twins and no external counters; "none" no counters).
- Each has an HBM prefix cache of ``num_gpu_blocks`` blocks, LRU, on full blocks of the prompt
  (a prompt of n tokens can hit at most (n - 1) // block_size blocks, as vllm's scheduler).
- The pool is shared: it remembers which node stored each block (write-through after the HBM
  lookup, as the KV-pool connector with kv_role kv_both), LRU, and evicts 5 % of its capacity
  once it is fuller than its watermark (mooncake_master's eviction_ratio 0.05 and
  eviction_high_watermark_ratio). ``pool="isolated"`` keys blocks by node (the nodes compute
  different keys, as with a PYTHONHASHSEED of their own), ``pool="none"`` has no pool at all.
- The master's metrics port serves ``/health`` (``OK``), ``/metrics`` (master_key_count,
  master_total_capacity_bytes, master_allocated_bytes, master_active_clients,
  master_batch_put_start_items_total, master_batch_get_replica_list_items_total...) and
  ``/metrics/summary`` in the line format field reports recorded (seed 001, Mooncake <= v0.3.10).

Latency: seed 003's table (2322 ms cold, 739 ms local DRAM hit, 948 ms cross-node hit, 100
requests of 1024 tokens at 25) and seed 001's HBM ratio (0.337 s / 3.092 s of the cold TTFT,
so 253 ms), times ``time_factor`` to keep tests fast, plus ``busy_ms`` (a busy server's queueing). A request whose hittable blocks all come
from one tier takes that tier's figure; partial hits interpolate block by block. What the server
really did (request read, first chunk sent, the figure it aimed at) is at ``/debug/timings``.
"""
from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

SEED_MS = {"cold": 2322.0, "local": 739.0, "remote": 948.0, "hbm": 2322.0 * 0.3371 / 3.0918}


class Pool:
    def __init__(self, capacity_tokens: int, bytes_per_token: int, mode: str = "shared", watermark: float = 0.95,
                 evict_ratio: float = 0.05, clients: int = 2):
        self.capacity, self.bpt, self.mode = capacity_tokens, bytes_per_token, mode
        self.watermark, self.evict_ratio = watermark, evict_ratio
        self.reported = capacity_tokens * bytes_per_token
        self.clients = clients  # one client per mounting rank: one per instance here
        self.blocks: "OrderedDict[str, Tuple[int, int]]" = OrderedDict()  # key -> (node, tokens)
        self.used = 0
        self.puts = self.gets = self.exists = self.evicted = 0
        self.lock = threading.Lock()

    def key(self, node: int, block_hash: str) -> str:
        return f"{node}:{block_hash}" if self.mode == "isolated" else block_hash

    def lookup(self, node: int, block_hash: str) -> Optional[int]:
        """The node that stored the block, when the pool has it (an Exist, then a Get)."""
        with self.lock:
            self.exists += 1
            k = self.key(node, block_hash)
            if k not in self.blocks:
                return None
            self.blocks.move_to_end(k)
            self.gets += 1
            return self.blocks[k][0]

    def put(self, node: int, block_hash: str, tokens: int) -> None:
        with self.lock:
            k = self.key(node, block_hash)
            if k in self.blocks:
                self.blocks.move_to_end(k)
                return
            self.puts += 1
            self.blocks[k] = (node, tokens)
            self.used += tokens
            if self.used > self.watermark * self.capacity:
                target = self.used - self.evict_ratio * self.capacity
                while self.blocks and self.used > target:
                    _, (_, t) = self.blocks.popitem(last=False)
                    self.used -= t
                    self.evicted += 1


class Instance:
    def __init__(self, node: int, model: str, root: str, num_gpu_blocks: int, block_size: int, max_model_len: int,
                 pool: Optional[Pool], time_factor: float, release: str = "0.11.1", gap: float = 0.0005,
                 cache_info: bool = True, busy_ms: float = 0.0):
        self.node, self.model, self.root = node, model, root
        self.busy_ms = busy_ms  # added to every TTFT: a server so busy that queueing swamps what a hit saves
        self.num_gpu_blocks, self.block_size, self.max_model_len = num_gpu_blocks, block_size, max_model_len
        self.pool, self.factor, self.release, self.gap, self.cache_info = pool, time_factor, release, gap, cache_info
        self.hbm: "OrderedDict[str, bool]" = OrderedDict()
        self.c = {"hbm_q": 0, "hbm_h": 0, "ext_q": 0, "ext_h": 0, "prompt": 0}
        self.timings: List[Dict[str, Any]] = []
        self.posted_on: set = set()  # the connections completions came in on (keep-alive or not)
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def hashes(self, tokens: List[str]) -> List[str]:
        out, prev = [], ""
        for i in range(len(tokens) // self.block_size):
            block = " ".join(tokens[i * self.block_size:(i + 1) * self.block_size])
            prev = hashlib.sha256((prev + "|" + block).encode()).hexdigest()[:24]
            out.append(prev)
        return out

    def admit(self, prompt: str) -> Tuple[float, str, int]:
        """(TTFT seconds, the tier most blocks came from, prompt tokens): look up HBM, then the
        pool, then store every full block in both."""
        tokens = prompt.split()
        n = len(tokens)
        hashes = self.hashes(tokens)
        hittable = (n - 1) // self.block_size
        tiers: List[str] = []
        with self.lock:
            for h in hashes[:hittable]:
                if h in self.hbm:
                    self.hbm.move_to_end(h)
                    tiers.append("hbm")
                else:
                    break
        hbm_hits = len(tiers)
        if self.pool is not None:
            for h in hashes[hbm_hits:hittable]:
                owner = self.pool.lookup(self.node, h)
                if owner is None:
                    break
                tiers.append("local" if owner == self.node else "remote")
        with self.lock:
            for h in hashes:
                self.hbm[h] = True
                self.hbm.move_to_end(h)
            while len(self.hbm) > self.num_gpu_blocks:
                self.hbm.popitem(last=False)
            self.c["hbm_q"] += n
            self.c["hbm_h"] += hbm_hits * self.block_size
            self.c["ext_q"] += n - hbm_hits * self.block_size
            self.c["ext_h"] += (len(tiers) - hbm_hits) * self.block_size
            self.c["prompt"] += n
        if self.pool is not None:
            for h in hashes:
                self.pool.put(self.node, h, self.block_size)
        cold = SEED_MS["cold"]
        ms = cold - sum(cold - SEED_MS[t] for t in tiers) / hittable if hittable else cold
        tier = max(set(tiers), key=tiers.count) if len(tiers) * 2 >= max(1, hittable) else "cold"
        return (ms * self.factor + self.busy_ms) / 1000.0, tier, n

    def metrics(self) -> str:
        lab = f'engine="0",model_name="{self.model}"'
        lines = []
        if self.cache_info:
            lines += ["# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
                      "# TYPE vllm:cache_config_info gauge",
                      f'vllm:cache_config_info{{block_size="{self.block_size}",cache_dtype="auto",'
                      f'enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",'
                      f'num_cpu_blocks="None",num_gpu_blocks="{self.num_gpu_blocks}",'
                      f'num_gpu_blocks_override="None",prefix_caching_hash_algo="builtin"}} 1.0']
        c = self.c
        if self.release != "none":
            series = [("vllm:prefix_cache_queries", c["hbm_q"]), ("vllm:prefix_cache_hits", c["hbm_h"])]
            if self.release == "0.10":
                series += [("vllm:gpu_prefix_cache_queries", c["hbm_q"]), ("vllm:gpu_prefix_cache_hits", c["hbm_h"])]
            else:
                series += [("vllm:external_prefix_cache_queries", c["ext_q"]),
                           ("vllm:external_prefix_cache_hits", c["ext_h"])]
            series.append(("vllm:prompt_tokens", c["prompt"]))
            for name, value in series:
                lines += [f"# HELP {name}_total {name}", f"# TYPE {name}_total counter",
                          f"{name}_total{{{lab}}} {float(value)}", f"{name}_created{{{lab}}} 1.7e+09"]
        lines.append(f"vllm:num_requests_running{{{lab}}} 0.0")
        return "\n".join(lines) + "\n"


def master_metrics(pool: Pool) -> str:
    used = pool.used * pool.bpt
    out = [("master_total_capacity_bytes", pool.reported), ("master_allocated_bytes", used),
           ("master_key_count", len(pool.blocks)), ("master_soft_pin_key_count", 0),
           ("master_active_clients", pool.clients), ("master_put_start_requests_total", 0),
           ("master_batch_put_start_requests_total", pool.puts), ("master_batch_put_start_items_total", pool.puts),
           ("master_get_replica_list_requests_total", 0),
           ("master_batch_get_replica_list_requests_total", pool.gets),
           ("master_batch_get_replica_list_items_total", pool.gets), ("master_evicted_key_count", pool.evicted)]
    lines = []
    for name, value in out:
        lines += [f"# HELP {name} {name}", f"# TYPE {name} {'counter' if name.endswith('_total') else 'gauge'}",
                  f"{name} {value}"]
    return "\n".join(lines) + "\n"


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n} B"


def master_summary(pool: Pool) -> str:
    """The line of seed 001's master log (v0.3.7-era, running totals)."""
    used, cap = pool.used * pool.bpt, pool.reported
    return (f"Mem Storage: {_human(used)} / {_human(cap)} ({used / cap * 100 if cap else 0:.1f}%) | SSD Storage: 0 B / 0 B | "
            f"Keys: {len(pool.blocks)} (soft-pinned: 0) | Requests (Success/Total): PutStart=0/0, PutEnd=0/0, "
            f"PutRevoke=0/0, Get=0/0, Exist=0/0, Del=0/0, DelAll=0/0,  | Batch Requests (Req=Success/PartialSuccess/Total, "
            f"Item=Success/Total): PutStart:(Req={pool.puts}/0/{pool.puts}, Item={pool.puts}/{pool.puts}), "
            f"PutEnd:(Req={pool.puts}/0/{pool.puts}, Item={pool.puts}/{pool.puts}), PutRevoke:(Req=0/0/0, Item=0/0), "
            f"Get:(Req={pool.gets}/0/{pool.gets}, Item={pool.gets}/{pool.gets}), ExistKey:(Req={pool.exists}/0/"
            f"{pool.exists}, Item={pool.exists}/{pool.exists}),  | Eviction: Success/Attempts={pool.evicted}/"
            f"{pool.evicted}, keys={pool.evicted}, size=0 B\n")


def arrival(conn: socket.socket) -> Optional[float]:
    """The monotonic time the next request's first bytes arrived (SO_TIMESTAMPNS), or None."""
    if not hasattr(socket, "SO_TIMESTAMPNS"):
        return None
    try:
        data, ancillary, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(16), socket.MSG_PEEK)
    except OSError:
        return None
    for level, kind, raw in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SO_TIMESTAMPNS and len(raw) >= 16:
            sec, nsec = struct.unpack("qq", raw[:16])
            return sec + nsec / 1e9 - (time.time() - time.monotonic())
    return None


def instance_handler(inst: Instance):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def setup(self):
            super().setup()
            if hasattr(socket, "SO_TIMESTAMPNS"):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_TIMESTAMPNS, 1)

        def handle_one_request(self):
            # The server's clock for a request starts when its first bytes reached the socket (the
            # kernel's receive time, peeked), so its own wake-up, parsing and lookups are part of
            # the TTFT it serves, as in a real server under load.
            self.arrived = arrival(self.connection)
            super().handle_one_request()

        def parse_request(self):
            if self.arrived is None:
                self.arrived = time.monotonic()
            return super().parse_request()

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/v1/models":
                card = {"id": inst.model, "object": "model", "owned_by": "vllm", "root": inst.root,
                        "max_model_len": inst.max_model_len}
                self._send(200, json.dumps({"object": "list", "data": [card]}).encode(), "application/json")
            elif self.path == "/metrics":
                self._send(200, inst.metrics().encode(), "text/plain; version=0.0.4; charset=utf-8")
            elif self.path == "/debug/timings":
                with inst.lock:
                    body = json.dumps(inst.timings).encode()
                self._send(200, body, "application/json")
            elif self.path == "/debug/connections":
                with inst.lock:
                    body = json.dumps({"posted_on": len(inst.posted_on)}).encode()
                self._send(200, body, "application/json")
            else:
                self._send(404, b'{"error": {"message": "not found"}}', "application/json")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _event(self, obj: Any) -> None:
            self._chunk(b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n")

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            t0 = self.arrived
            with inst.lock:
                inst.posted_on.add(id(self.connection))
            if req.get("model") != inst.model:
                body = {"error": {"message": f"The model `{req.get('model')}` does not exist.", "type": "NotFoundError",
                                  "code": 404}}
                self._send(404, json.dumps(body).encode(), "application/json")
                return
            prompt = req.get("prompt") or " ".join(m.get("content", "") for m in req.get("messages") or [])
            ttft, tier, n = inst.admit(prompt)
            out = int(req.get("max_tokens") or req.get("max_completion_tokens") or 16)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            first = None
            for k in range(out):
                if inst.stop.wait(max(0.0, t0 + ttft + k * inst.gap - time.monotonic())):
                    return
                self._event({"object": "text_completion", "choices": [{"index": 0, "text": f" t{k}",
                                                                       "finish_reason": None}]})
                if first is None:
                    first = time.monotonic()
            self._event({"choices": [], "usage": {"prompt_tokens": n, "completion_tokens": out,
                                                  "total_tokens": n + out}})
            self._event(b"[DONE]")
            self._chunk(b"")
            with inst.lock:
                inst.timings.append({"read": t0, "first": first, "aimed": ttft, "tier": tier, "tokens": n})

    return Handler


def master_handler(pool: Pool):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            with pool.lock:
                if self.path == "/health":
                    body, ctype = b"OK", "text/plain; version=0.0.4"
                elif self.path == "/metrics":
                    body, ctype = master_metrics(pool).encode(), "text/plain; version=0.0.4"
                elif self.path == "/metrics/summary":
                    body, ctype = master_summary(pool).encode(), "text/plain; version=0.0.4"
                else:
                    body, ctype = b"not found", "text/plain"
            self.send_response(200 if body != b"not found" else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


class Server(ThreadingHTTPServer):
    request_queue_size = 1024  # as uvicorn's backlog (2048): 25 clients connecting at once are all accepted


class Cluster:
    """Two instances and a master on loopback ports, in this process."""

    def __init__(self, *, time_factor: float = 0.05, num_gpu_blocks: int = 128, block_size: int = 16,
                 pool: str = "shared", pool_tokens: int = 16384, bytes_per_token: int = 256, watermark: float = 0.95,
                 mounted_fraction: float = 1.0, release: str = "0.11.1", model: str = "qwen", peer_model: str = "",
                 root: str = "/nonexistent/model", max_model_len: int = 32768, cache_info: bool = True,
                 busy_ms: float = 0.0):
        # pool_tokens: what the two segments of the Mooncake config hold; mounted_fraction < 1 is a
        # pool smaller than configured (the master reports what is really mounted)
        held = int(pool_tokens * mounted_fraction)
        self.pool = None if pool == "none" else Pool(held, bytes_per_token, pool, watermark)
        self.instances = [Instance(i, peer_model if i == 1 and peer_model else model, root, num_gpu_blocks, block_size,
                                   max_model_len, self.pool, time_factor, release, cache_info=cache_info,
                                   busy_ms=busy_ms)
                          for i in range(2)]
        self.servers = []
        for inst in self.instances:
            self.servers.append(Server(("127.0.0.1", 0), instance_handler(inst)))
        if self.pool is not None:
            self.servers.append(Server(("127.0.0.1", 0), master_handler(self.pool)))
        for s in self.servers:
            s.daemon_threads = True
            s.handle_error = lambda request, address: None

    def urls(self) -> Dict[str, Optional[str]]:
        u = [f"http://127.0.0.1:{s.server_address[1]}" for s in self.servers]
        return {"one": u[0], "two": u[1], "master": u[2] if len(u) > 2 else None}

    def start(self) -> "Cluster":
        for s in self.servers:
            threading.Thread(target=s.serve_forever, daemon=True).start()
        return self

    def close(self) -> None:
        for inst in self.instances:
            inst.stop.set()
        for s in self.servers:
            s.shutdown()
            s.server_close()


class ProcessCluster:
    """The cluster in a process of its own (its timing shares no GIL with the client under test)."""

    def __init__(self, **kw: Any):
        import subprocess
        import sys
        from pathlib import Path

        self.proc = subprocess.Popen([sys.executable, "-m", "smoke_fixtures.kvpool_standin", json.dumps(kw)],
                                     cwd=str(Path(__file__).resolve().parents[1]), stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if not line:
            self.proc.kill()
            raise RuntimeError("the stand-in did not start")
        self.urls: Dict[str, Optional[str]] = json.loads(line)

    def timings(self, which: str) -> List[Dict[str, Any]]:
        return self._debug(which, "timings")

    def connections(self, which: str) -> int:
        """How many connections the completions to ``which`` came in on."""
        return self._debug(which, "connections")["posted_on"]

    def _debug(self, which: str, what: str) -> Any:
        import urllib.request

        with urllib.request.urlopen(f"{self.urls[which]}/debug/{what}", timeout=10) as resp:
            return json.loads(resp.read())

    def __enter__(self) -> "ProcessCluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.kill()
        self.proc.wait(10)


if __name__ == "__main__":
    import sys

    cluster = Cluster(**json.loads(sys.argv[1])).start()
    print(json.dumps(cluster.urls()), flush=True)
    threading.Event().wait()
