"""What the KV pool can hold, from what the servers and files say (pure): the KV calculator, the
HBM prefix cache of a vllm server, its cache counters, the Mooncake config's pool, the size of
the eviction dataset and the capacity knee the configuration predicts.

Sources:
- bytes per token: layers x KV heads x head dim x 2 (K and V) x dtype bytes, as LMCache's KV
  cache calculator computes it (https://docs.lmcache.ai/getting_started/kv_cache_calculator.html);
  an MLA model (DeepSeek: ``kv_lora_rank``) caches one latent of kv_lora_rank + qk_rope_head_dim
  per layer and token (vllm's MLA backends);
- the HBM cache: ``vllm:cache_config_info`` (an info gauge whose labels are CacheConfig's fields,
  vllm/v1/metrics/loggers.py ``log_metrics_info``): num_gpu_blocks x block_size per engine, or the
  engine's log line ``GPU KV cache size: 369,280 tokens`` (vllm/v1/core/kv_cache_utils.py);
- the counters, by release: ``vllm:prefix_cache_queries_total``/``_hits_total`` (HBM, from
  v0.9.2; vllm PR #18354), before that and until their removal ``vllm:gpu_prefix_cache_*_total``
  (vllm PR #29330), and the KV connector's ``vllm:external_prefix_cache_queries_total``/
  ``_hits_total`` (from v0.11.1; vllm PR #26245): a Mooncake pool hit is an external hit;
- the pool: ``global_segment_size`` per mounting rank, read as vllm-ascend reads it
  (doctor.parse.sizes); the master evicts ``eviction_ratio`` (5 %) of the pool once usage passes
  its high watermark (0.90 or 0.95 by default, mooncake_master flags), so the pool holds between
  85 % and 100 % of its bytes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from doctor.smoke.promtext import Sample, total

DTYPE_BYTES = {"bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2, "float32": 4, "fp32": 4, "float": 4,
               "float8": 1, "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "int8": 1}
EVICTION_MARGIN = 1.25        # dataset B holds this many times the HBM cache: every block of A is evicted
POOL_FILL = (0.85, 1.0)       # share of the pool's bytes it holds before the master evicts
MAX_SEGMENT_BYTES = 1 << 50   # a size beyond this is a typo, not a pool
MAX_HBM_TOKENS = 10 ** 9      # no accelerator holds a billion tokens of KV: a server saying so is not believed


# -- bytes per token ---------------------------------------------------------------------------


@dataclass(frozen=True)
class KvBytes:
    bytes_per_token: Optional[int]
    formula: str = ""                 # how it was computed, for the report
    error: Optional[str] = None


def _int(cfg: Mapping[str, Any], *keys: str) -> Optional[int]:
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def kv_bytes_per_token(config: Mapping[str, Any], kv_dtype: Optional[str] = None) -> KvBytes:
    """The KV cache bytes one token takes, from a Hugging Face config.json (``text_config`` of a
    multimodal model when there is one); ``kv_dtype`` overrides the model's dtype."""
    cfg: Mapping[str, Any] = config
    if isinstance(config.get("text_config"), Mapping) and "num_hidden_layers" not in config:
        cfg = config["text_config"]
    dtype = str(kv_dtype or cfg.get("torch_dtype") or cfg.get("dtype") or config.get("torch_dtype")
                or config.get("dtype") or "").lower().replace("torch.", "")
    size = DTYPE_BYTES.get(dtype)
    if size is None:
        return KvBytes(None, error=f"dtype {dtype or '(none)'!r} in config.json is not a known KV dtype")
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    if layers is None:
        return KvBytes(None, error="config.json has no num_hidden_layers")
    rank = _int(cfg, "kv_lora_rank")
    if rank is not None:  # MLA: one compressed latent + the rope part per layer
        rope = _int(cfg, "qk_rope_head_dim") or 0
        n = layers * (rank + rope) * size
        return KvBytes(n, f"{layers} layers × ({rank} kv_lora_rank + {rope} qk_rope_head_dim) × {size} bytes "
                          f"({dtype}) = {n:,}")
    heads = _int(cfg, "num_attention_heads", "n_head")
    kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "multi_query_group_num") or heads
    head_dim = _int(cfg, "head_dim")
    hidden = _int(cfg, "hidden_size", "n_embd")
    if head_dim is None and hidden and heads:
        head_dim = hidden // heads
    if not kv_heads or not head_dim:
        return KvBytes(None, error="config.json has no num_key_value_heads/num_attention_heads or head size")
    n = layers * kv_heads * head_dim * 2 * size
    return KvBytes(n, f"{layers} layers × {kv_heads} KV heads × {head_dim} head dim × 2 (K, V) × {size} bytes "
                      f"({dtype}) = {n:,}")


# -- the server's HBM prefix cache -------------------------------------------------------------


@dataclass(frozen=True)
class HbmCache:
    tokens: int                       # all engines together
    blocks: Optional[int] = None      # per engine
    block_size: Optional[int] = None
    engines: int = 1
    source: str = ""
    cache_dtype: Optional[str] = None  # the label of vllm:cache_config_info ("auto": the model's dtype)


def _label_int(labels: Mapping[str, str], key: str) -> Optional[int]:
    try:
        v = int(str(labels.get(key, "")).strip())
    except ValueError:
        return None
    return v if v > 0 else None


def hbm_from_metrics(samples: Sequence[Sample]) -> Optional[HbmCache]:
    """num_gpu_blocks x block_size from ``vllm:cache_config_info``, one series per engine (data
    parallel); None when the server does not say (not vllm, or before its KV cache exists)."""
    engines: Dict[str, Tuple[int, int]] = {}
    dtype: Optional[str] = None
    for s in samples:
        if s.name != "vllm:cache_config_info":
            continue
        blocks, size = _label_int(s.labels, "num_gpu_blocks"), _label_int(s.labels, "block_size")
        if blocks and size:
            engines[s.labels.get("engine", str(len(engines)))] = (blocks, size)
            dtype = s.labels.get("cache_dtype") or dtype
    if not engines:
        return None
    tokens = sum(b * z for b, z in engines.values())
    if tokens > MAX_HBM_TOKENS:
        return None
    blocks, size = next(iter(engines.values()))
    src = f"vllm:cache_config_info num_gpu_blocks={blocks} × block_size={size}"
    if len(engines) > 1:
        src += f" × {len(engines)} engines"
    return HbmCache(tokens, blocks, size, len(engines), src, dtype)


_KV_LINE = re.compile(r"KV cache size:\s*([\d,]+)\s*tokens")
_ENGINE_TAG = re.compile(r"\((EngineCore(?:_DP\d+)?)\s+pid=\d+\)")


def hbm_from_log(lines: Iterable[str]) -> Optional[HbmCache]:
    """``GPU KV cache size: N tokens`` from a vllm log: the last line of each engine (a data
    parallel server prints one per ``EngineCore_DPn``)."""
    per: Dict[str, int] = {}
    for line in lines:
        m = _KV_LINE.search(line)
        if m:
            tag = _ENGINE_TAG.search(line)
            per[tag.group(1) if tag else "engine"] = int(m.group(1).replace(",", ""))
    if not per:
        return None
    tokens = sum(per.values())
    if tokens > MAX_HBM_TOKENS or tokens <= 0:
        return None
    src = f"log: GPU KV cache size: {next(iter(per.values())):,} tokens"
    if len(per) > 1:
        src += f" × {len(per)} engines"
    return HbmCache(tokens, engines=len(per), source=src)


# -- the server's cache counters -----------------------------------------------------------------

COUNTER_NAMES: Dict[str, Tuple[str, ...]] = {
    "hbm_queries": ("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
    "hbm_hits": ("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
    "pool_queries": ("vllm:external_prefix_cache_queries_total",),
    "pool_hits": ("vllm:external_prefix_cache_hits_total",),
    "prompt_tokens": ("vllm:prompt_tokens_total",),
}


@dataclass(frozen=True)
class Counters:
    values: Dict[str, float] = field(default_factory=dict)  # the COUNTER_NAMES keys found
    names: Dict[str, str] = field(default_factory=dict)     # key -> the metric name the server used


def counters(samples: Sequence[Sample]) -> Counters:
    values: Dict[str, float] = {}
    names: Dict[str, str] = {}
    for key, candidates in COUNTER_NAMES.items():
        for name in candidates:  # the newest name first: a server with both counts the same tokens
            v = total(samples, name)
            if v is not None:
                values[key], names[key] = v, name
                break
    return Counters(values, names)


def counter_delta(before: Optional[Counters], after: Optional[Counters]) -> Optional[Dict[str, float]]:
    """What each counter grew by (keys both readings have); None when either reading is missing."""
    if before is None or after is None:
        return None
    return {k: round(after.values[k] - before.values[k], 3) for k in after.values if k in before.values}


# -- the Mooncake config -------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolConfig:
    segment_bytes: Optional[int] = None     # global_segment_size (per mounting rank)
    segment_source: str = ""
    protocol: Optional[str] = None
    metadata_server: Optional[str] = None
    master_address: Optional[str] = None
    use_ascend_direct: Optional[bool] = None
    path: str = ""
    error: Optional[str] = None


def pool_config(data: Any, path: str, env: Mapping[str, str]) -> PoolConfig:
    """The keys of a Mooncake JSON that decide what the pool holds and how it moves;
    MOONCAKE_GLOBAL_SEGMENT_SIZE and MOONCAKE_MASTER override the file (vllm-ascend >= v0.20.2rc1)."""
    from doctor.parse.sizes import parse_size

    if not isinstance(data, Mapping):
        return PoolConfig(path=path, error="not a JSON object")
    raw, source = data.get("global_segment_size"), "global_segment_size"
    if env.get("MOONCAKE_GLOBAL_SEGMENT_SIZE"):
        raw, source = env["MOONCAKE_GLOBAL_SEGMENT_SIZE"], "MOONCAKE_GLOBAL_SEGMENT_SIZE"
    seg = parse_size(raw).value if raw is not None else None
    if seg is not None and not 0 < seg < MAX_SEGMENT_BYTES:
        seg = None
    direct = data.get("use_ascend_direct")
    master = env.get("MOONCAKE_MASTER") or data.get("master_server_address")
    return PoolConfig(segment_bytes=seg, segment_source=source if seg is not None else "",
                      protocol=str(data["protocol"]) if isinstance(data.get("protocol"), str) else None,
                      metadata_server=str(data["metadata_server"]) if isinstance(data.get("metadata_server"), str) else None,
                      master_address=str(master) if isinstance(master, str) and master.strip() else None,
                      use_ascend_direct=direct if isinstance(direct, bool) else None, path=path)


# -- dataset B and the knee ----------------------------------------------------------------------


def eviction_requests(hbm_tokens: int, tokens_per_request: float, margin: float = EVICTION_MARGIN) -> int:
    """Requests of ``tokens_per_request`` prompt tokens that fill the HBM cache ``margin`` times
    over: with LRU eviction every block of the data set sent before them is then evicted."""
    per = max(1.0, float(tokens_per_request))
    return max(1, math.ceil(hbm_tokens * margin / per))


@dataclass(frozen=True)
class Prediction:
    docs_low: float                   # documents that fit, at the least and at the most
    docs_high: float
    tokens_low: float
    tokens_high: float
    bound: str                        # "hbm" or "pool": which tier decides
    inputs: List[str] = field(default_factory=list)   # what it was computed from, for the report

    def to_json(self) -> Dict[str, Any]:
        return {"docs_low": round(self.docs_low, 2), "docs_high": round(self.docs_high, 2),
                "tokens_low": int(self.tokens_low), "tokens_high": int(self.tokens_high), "bound": self.bound,
                "inputs": list(self.inputs)}


def predict_knee(doc_tokens: float, hbm: Optional[HbmCache], bytes_per_token: Optional[int],
                 pool_bytes: Optional[int]) -> Optional[Prediction]:
    """How many documents of ``doc_tokens`` stay cached. The pool keeps a copy of every block it
    is given (the connector writes through), so the documents that survive are those of the larger
    tier: max(HBM, pool); seed 001's table shows it (HBM 20 GB + pool 20 GB bends where HBM 20 GB
    alone does, + pool 40 GB near 70 documents of 10,000 tokens)."""
    if doc_tokens <= 0 or (hbm is None and not (bytes_per_token and pool_bytes)):
        return None
    inputs: List[str] = []
    hbm_tokens = float(hbm.tokens) if hbm else 0.0
    if hbm:
        inputs.append(f"HBM {hbm.tokens:,} tokens ({hbm.source})")
    lo = hi = hbm_tokens
    bound = "hbm"
    if bytes_per_token and pool_bytes:
        pool_tokens = pool_bytes / bytes_per_token
        inputs.append(f"pool {pool_bytes:,} bytes / {bytes_per_token:,} bytes per token = {pool_tokens:,.0f} tokens, "
                      f"{POOL_FILL[0]:.0%}-{POOL_FILL[1]:.0%} of it kept")
        if pool_tokens * POOL_FILL[1] > hbm_tokens:
            lo, hi, bound = max(hbm_tokens, pool_tokens * POOL_FILL[0]), pool_tokens * POOL_FILL[1], "pool"
    return Prediction(lo / doc_tokens, hi / doc_tokens, lo, hi, bound, inputs)


def pool_bytes(config: Optional[PoolConfig], master_capacity: Optional[float],
               clients: Optional[int] = None) -> Tuple[Optional[int], str]:
    """The pool the configuration asks for: global_segment_size times the segments, one per
    client of the master (every rank that joins the pool mounts one); without the master's
    client count, its capacity divided by one segment (rounded), else one segment."""
    seg = config.segment_bytes if config else None
    if not seg or config is None:
        return None, ""
    if clients and clients > 0:
        segments, why = clients, f"{clients} master clients"
    elif master_capacity and master_capacity > 0:
        segments = max(1, round(master_capacity / seg))
        why = "the master's capacity"
    else:
        segments, why = 1, "assumed: the master was not read"
    return seg * segments, f"{config.segment_source} {seg:,} bytes × {segments} segments ({why})"
