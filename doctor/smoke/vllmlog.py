"""Figures from vllm's start-up log (vllm and vllm-ascend print them at INFO level):

- ``Graph capturing finished in 8 secs, took 0.31 GiB`` (vllm gpu_model_runner, and the NPU
  model runner of vllm-ascend) -> graph capture seconds and memory;
- ``init engine (profile, create kv cache, warmup model) took 28.44 seconds``;
- ``Model loading took 15.3 GiB and 20.3 seconds`` / ``Loading model weights took 15.3 GB``;
- ``GPU KV cache size: 49,152 tokens``.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable

_PATTERNS = (
    ("graph_capture_s", re.compile(r"Graph capturing finished in\s+([\d.]+)\s*secs?"), float),
    ("graph_memory_gib", re.compile(r"Graph capturing finished in\s+[\d.]+\s*secs?,\s*took\s+([\d.]+)\s*GiB"), float),
    ("init_engine_s", re.compile(r"init engine \(.*?\) took\s+([\d.]+)\s*s"), float),
    ("weights_gib", re.compile(r"(?:Model loading|Loading model weights) took\s+([\d.]+)\s*G[i]?B"), float),
    ("kv_cache_tokens", re.compile(r"KV cache size:\s*([\d,]+)\s*tokens"), lambda s: int(s.replace(",", ""))),
)


def read_vllm_log(lines: Iterable[str]) -> Dict[str, Any]:
    """The figures found (the last of each kind wins: the engine may restart a step)."""
    out: Dict[str, Any] = {}
    for line in lines:
        if "took" not in line and "KV cache" not in line:
            continue
        for key, pattern, convert in _PATTERNS:
            m = pattern.search(line)
            if m:
                out[key] = convert(m.group(1))
    return out
