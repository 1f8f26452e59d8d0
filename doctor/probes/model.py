"""The model directory (``--model PATH``, or the local path the serve command names).

Reads config.json, the weight index, the header of every safetensors shard (a few KB each: a
truncated or half-copied shard shows without hashing), the tokenizer file names and the published
hashes that sit next to the weights (Hugging Face download metadata, the Hugging Face cache's
blob names, a sha256sum file). Only ``--verify-weights`` reads whole shards, and only a sample.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Callable, Dict, List, Optional, Tuple

from doctor.facts import ModelFacts, ShardFact, WeightCheck
from doctor.parse import safetensors

MAX_JSON = 64 * 1024 * 1024  # the index of a 1T-parameter model is a few MB
MAX_FILES = 500
CHUNK = 8 * 1024 * 1024
SHA256 = re.compile(r"^[0-9a-f]{64}$")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
SINGLE_FILES = ("model.safetensors", "pytorch_model.bin")
CONFIG_KEYS = ("model_type", "architectures", "torch_dtype", "dtype", "num_hidden_layers", "num_attention_heads",
               "num_key_value_heads", "head_dim", "hidden_size", "kv_lora_rank", "qk_rope_head_dim",
               "max_position_embeddings", "sliding_window", "num_experts", "n_routed_experts")
SUMS = re.compile(r"(?i)^(sha256sums?|checksums?)(\.txt|\.sha256)?$|\.sha256$")
LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")

Progress = Optional[Callable[[str, int, int], None]]


def _regular(path: str) -> bool:
    return os.path.isfile(path)  # follows symlinks: the Hugging Face cache links shards to blobs


def _read_json(path: str) -> Tuple[Optional[object], Optional[str]]:
    if not _regular(path):
        return None, "missing" if not os.path.lexists(path) else "not a regular file"
    try:
        if os.path.getsize(path) > MAX_JSON:
            return None, f"larger than {MAX_JSON // (1024 * 1024)} MB"
        with open(path, "rb") as fh:
            return json.loads(fh.read(MAX_JSON).decode("utf-8")), None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        return None, f"{type(e).__name__}: {e}"


def model_location(host, given: Optional[str], serve) -> Optional[Tuple[str, str, str]]:
    """(shown path, path to read, source): --model as given (relative to the working directory),
    else the serve command's model when it is a directory on the host (under --root); a hub id
    like Qwen/Qwen3-8B names no directory and is left alone."""
    if given:
        return given, given if os.path.isabs(given) else os.path.join(host.cwd, given), "--model"
    model = serve.model if serve is not None else None
    if not model:
        return None
    real = str(host.path(model)) if model.startswith("/") else os.path.join(host.cwd, model)
    return (model, real, "serve-args") if os.path.isdir(real) else None


def probe_model(display: str, real: str, source: str, verify: bool = False, sample: int = 3,
                progress: Progress = None) -> ModelFacts:
    m = ModelFacts(path=display, source=source, verify_requested=verify)
    m.exists = os.path.exists(real)
    m.is_dir = os.path.isdir(real)
    if not m.is_dir:
        return m
    try:
        m.files = sorted(os.listdir(real))[:MAX_FILES]
    except OSError as e:
        m.config_error = f"cannot list the directory: {e.strerror or e}"
        return m
    _config(m, real)
    _weights(m, real)
    _hashes(m, real)
    _quant(m, real)
    if verify:
        _verify(m, real, sample, progress)
    return m


def _config(m: ModelFacts, real: str) -> None:
    data, err = _read_json(os.path.join(real, "config.json"))
    if err:
        m.config_error = err
        return
    if not isinstance(data, dict):
        m.config_error = "not a JSON object"
        return
    text_config = data.get("text_config")
    text = text_config if isinstance(text_config, dict) else {}
    for key in CONFIG_KEYS:
        value = data.get(key, text.get(key))
        if isinstance(value, (str, int, float, bool)) or (key == "architectures" and isinstance(value, list)):
            m.config[key] = value
    quant = data.get("quantization_config")
    if isinstance(quant, dict) and isinstance(quant.get("quant_method"), str):
        m.config["quant_method"] = quant["quant_method"]


def _weights(m: ModelFacts, real: str) -> None:
    index_name = next((n for n in INDEX_FILES if n in m.files), None)
    mapping: Dict[str, List[str]] = {}
    if index_name:
        m.index_file = index_name
        data, err = _read_json(os.path.join(real, index_name))
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if err or not isinstance(weight_map, dict):
            m.index_error = err or "no weight_map"
            return
        meta = data.get("metadata") if isinstance(data, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("total_size"), int):
            m.index_total_size = meta["total_size"]
        layers = -1
        for tensor, file in weight_map.items():
            if isinstance(file, str):
                mapping.setdefault(file, []).append(tensor)
            hit = LAYER.search(tensor)
            if hit:
                layers = max(layers, int(hit.group(1)))
        m.index_layers = layers + 1 if layers >= 0 else None
    else:
        single = next((n for n in SINGLE_FILES if n in m.files), None)
        if single is None:
            return
        mapping[single] = []
    for name in sorted(mapping):
        m.shards.append(_shard(real, name, mapping[name]))


def _shard(real: str, name: str, tensors: List[str]) -> ShardFact:
    path = os.path.join(real, name)
    s = ShardFact(name=name, tensors=len(tensors))
    if not _regular(path):
        return s
    s.exists = True
    try:
        s.size = os.path.getsize(path)
        if name.endswith(".safetensors"):
            with open(path, "rb") as fh:
                n = safetensors.header_length(fh.read(8))
                header = safetensors.parse_header(n, fh.read(n))
            s.expected_size = header.file_size
            present = set(header.tensors)
            missing = [t for t in tensors if t not in present]
            s.missing_count, s.missing_tensors = len(missing), missing[:20]
            if not tensors:
                s.tensors = len(header.tensors)
    except (OSError, safetensors.HeaderError) as e:
        s.header_error = str(e)
    return s


def _hashes(m: ModelFacts, real: str) -> None:
    """sha256 of a shard as published by where it came from, when that is known here."""
    by_name = {s.name: s for s in m.shards}
    for name in [n for n in m.files if SUMS.search(n)]:
        text_path = os.path.join(real, name)
        if not _regular(text_path) or os.path.getsize(text_path) > 1024 * 1024:
            continue
        with open(text_path, "r", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.strip().split(None, 1)
                if len(parts) == 2 and SHA256.match(parts[0].lower()):
                    file = parts[1].lstrip("*").strip().removeprefix("./")
                    if file in by_name and by_name[file].sha256 is None:
                        by_name[file].sha256, by_name[file].hash_source = parts[0].lower(), name
    for s in m.shards:
        if s.sha256:
            continue
        meta = os.path.join(real, ".cache", "huggingface", "download", s.name + ".metadata")
        if _regular(meta):
            with open(meta, "r", encoding="utf-8", errors="replace") as fh:
                lines = fh.read(4096).splitlines()
            if len(lines) >= 2 and SHA256.match(lines[1].strip().lower()):
                s.sha256, s.hash_source = lines[1].strip().lower(), "huggingface download metadata"
                continue
        link = os.path.join(real, s.name)
        if os.path.islink(link):
            target = os.path.basename(os.readlink(link))
            if SHA256.match(target):
                s.sha256, s.hash_source = target, "huggingface cache blob"


def _quant(m: ModelFacts, real: str) -> None:
    name = "quant_model_description.json"
    if name not in m.files:
        return
    data, err = _read_json(os.path.join(real, name))
    if err or not isinstance(data, dict):
        m.quant_error = err or "not a JSON object"
        return
    kinds = set()
    for key, value in data.items():
        if isinstance(value, str) and re.match(r"^[A-Z][A-Za-z0-9_]*$", value) and value != "FLOAT":
            if key == "model_quant_type" or key.endswith((".weight", ".bias")) or "." in key:
                kinds.add(value)
    m.quant_types = sorted(kinds)


def _sample(shards: List[ShardFact], n: int) -> List[ShardFact]:
    known = [s for s in shards if s.sha256 and s.exists]
    if n <= 0 or len(known) <= n:
        return known
    picks = {0, len(known) - 1} | {round(i * (len(known) - 1) / (n - 1)) for i in range(n)} if n > 1 else {0}
    return [known[i] for i in sorted(picks)][:n]


def _verify(m: ModelFacts, real: str, sample: int, progress: Progress) -> None:
    import hashlib  # here: only --verify-weights hashes (check imports no hashlib otherwise)

    chosen = _sample(m.shards, sample)
    total = sum(s.size or 0 for s in chosen)
    done = 0
    for s in chosen:
        start = time.perf_counter()
        check = WeightCheck(name=s.name, expected=str(s.sha256))
        digest = hashlib.sha256()
        try:
            with open(os.path.join(real, s.name), "rb") as fh:
                while True:
                    block = fh.read(CHUNK)
                    if not block:
                        break
                    digest.update(block)
                    done += len(block)
                    if progress is not None:
                        progress(s.name, done, total)
            check.actual = digest.hexdigest()
        except OSError as e:
            check.error = e.strerror or str(e)
        check.seconds = round(time.perf_counter() - start, 3)
        m.verified.append(check)
