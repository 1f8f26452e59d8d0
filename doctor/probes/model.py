"""The model directory (``--model PATH``, or the local path the serve command names).

Reads config.json, the weight index, the header of every safetensors shard (a few KB each: a
truncated or half-copied shard shows without hashing), the tokenizer file names and the published
hashes that sit next to the weights (Hugging Face download metadata, the Hugging Face cache's
blob names, a sha256sum file). Only ``--verify-weights`` reads whole shards, and only a sample.
"""
from __future__ import annotations

import errno
import os
import re
import stat
import time
from typing import IO, Callable, Dict, List, Optional, Tuple

from doctor.facts import ModelFacts, ModelLimit, ModelRefusal, ShardFact, WeightCheck
from doctor.parse import jsonshape, safetensors
from doctor.textsafe import is_clean

CHUNK = 8 * 1024 * 1024
SHA256 = re.compile(r"^[0-9a-f]{64}$")
INDEX_FILES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
SINGLE_FILES = ("model.safetensors", "pytorch_model.bin")
CONFIG_KEYS = ("model_type", "architectures", "torch_dtype", "dtype", "num_hidden_layers", "num_attention_heads",
               "num_key_value_heads", "head_dim", "hidden_size", "kv_lora_rank", "qk_rope_head_dim",
               "max_position_embeddings", "sliding_window", "num_experts", "n_routed_experts")
SUMS = re.compile(r"(?i)^(sha256sums?|checksums?)(\.txt|\.sha256)?$|\.sha256$")
LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")

# Bounds on what the files of a model directory (state: anyone may have written them) make the
# probe do. Past one, the file is not read on and a finding names the bound.
MAX_FILES = 500  # names kept of the directory listing
# distinct files the weight index names: published models have < 200 (Llama-3.1-405B: 191,
# DeepSeek-V3: 163); each costs an open and a header read
MAX_SHARDS = 500
# config.json of a real model is < 100 KB (a quantization config listing every module: a few
# hundred KB), a few hundred objects nested < 10 deep
CONFIG_BYTES = 16 * 1024 * 1024
CONFIG_SHAPE = jsonshape.Shape(depth=64, containers=100_000, values=1_000_000)
# the weight index (and ModelSlim's quant_model_description.json) is one flat object of tensor
# -> file: ~140k tensors, ~15 MB for the biggest published 1T-parameter models
MAX_JSON = 64 * 1024 * 1024
INDEX_SHAPE = jsonshape.Shape(depth=16, containers=10_000, values=2_000_000)
MAX_SUMS_BYTES = 1024 * 1024  # a sha256sum file: ~100 bytes a line
MAX_REFUSED = 20  # refused names kept (all are counted)
# seconds for reading the metadata (config, index, every shard's header, hashes): a cold network
# filesystem reads the headers of a 200-shard model in a few seconds
READ_SECONDS = 60.0
# seconds for --verify-weights: hashing is as long as the shards (1 TB at 1 GB/s: 17 min); the
# same file under two names is hashed once
VERIFY_SECONDS = 3600.0

_O_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO must not block the open
_O_DIR = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC

Progress = Optional[Callable[[str, int, int], None]]


class Refused(Exception):
    """A name the doctor does not read: ``reason`` is a ModelRefusal reason."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class _OutOfTime(Exception):
    pass


def plain_name(name: object) -> Tuple[Optional[str], str]:
    """(the file name, "") when ``name`` names a file of the model directory itself (``./x`` is
    ``x``), else (None, the reason it is refused)."""
    if not isinstance(name, str) or not name:
        return None, "subdir"
    if not is_clean(name):  # NUL, ESC and the other controls, bidi, lone surrogates
        return None, "control"
    if name.startswith("/"):
        return None, "absolute"
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None, "parent"
    if len(parts) != 1:
        return None, "subdir"
    return parts[0], ""


def cache_root(real: str) -> Optional[str]:
    """The Hugging Face cache directory of a model (``models--org--name``, holding ``blobs/`` and
    ``snapshots/``) when ``real`` (resolved) lies in its snapshots/: the nearest such ancestor."""
    parts = real.split(os.sep)
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "snapshots":
            root = os.sep.join(parts[:i]) or os.sep
            blobs = os.path.join(root, "blobs")
            if os.path.isdir(blobs) and not os.path.islink(blobs):
                return root
    return None


class ModelDir:
    """The model directory, opened once: every file is opened relative to it without following a
    symlink, except a symlink whose target (resolved) lies in the directory itself or in its Hugging
    Face cache (snapshots/<rev>/x -> ../../blobs/<sha256>), whose path is then walked down from
    there without following any further one. Nothing outside is opened."""

    def __init__(self, real: str, seconds: float):
        self.real = os.path.realpath(real)
        self.fd = os.open(self.real, _O_DIR)
        self.root = cache_root(self.real)
        self.deadline = time.monotonic() + seconds

    def close(self) -> None:
        os.close(self.fd)

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _OutOfTime()

    def open(self, name: str) -> Tuple[IO[bytes], os.stat_result]:
        """A regular file of the directory (Refused, OSError)."""
        try:
            fd = os.open(name, _O_FILE, dir_fd=self.fd)
        except OSError as e:
            if e.errno != errno.ELOOP:
                raise
            fd = self._through_link(name)
        return _regular(fd)

    def open_below(self, parts: List[str]) -> Tuple[IO[bytes], os.stat_result]:
        """A regular file in a subdirectory, no symlink followed on the way."""
        return _regular(_walk(self.fd, parts))

    def _through_link(self, name: str) -> int:
        target = os.path.realpath(os.path.join(self.real, name))
        for root in (self.real, self.root):
            if root and target.startswith(root.rstrip(os.sep) + os.sep):
                parts = os.path.relpath(target, root).split(os.sep)
                if root == self.real:
                    return _walk(self.fd, parts)
                top = os.open(root, _O_DIR)
                try:
                    return _walk(top, parts)
                finally:
                    os.close(top)
        raise Refused("outside")


def _walk(top: int, parts: List[str]) -> int:
    fd = top
    try:
        for part in parts[:-1]:
            step = os.open(part, _O_DIR, dir_fd=fd)
            if fd != top:
                os.close(fd)
            fd = step
        return os.open(parts[-1], _O_FILE, dir_fd=fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Refused("outside") from None  # a symlink further down, or one swapped in
        raise
    finally:
        if fd != top:
            os.close(fd)


def _regular(fd: int) -> Tuple[IO[bytes], os.stat_result]:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise Refused("not_regular")
    return os.fdopen(fd, "rb"), st


def _refuse(m: ModelFacts, name: str, source: str, reason: str) -> None:
    m.refused_count += 1
    if len(m.refused) < MAX_REFUSED:
        m.refused.append(ModelRefusal(name=name, source=source, reason=reason))


def _limit(m: ModelFacts, file: str, bound: str, limit: int) -> None:
    m.limits.append(ModelLimit(file=file, bound=bound, limit=limit))


def _read_json(d: ModelDir, m: ModelFacts, name: str, max_bytes: int,
               shape: jsonshape.Shape) -> Tuple[Optional[object], Optional[str]]:
    d.tick()
    try:
        fh, st = d.open(name)
    except FileNotFoundError:
        return None, "missing"
    except Refused as e:
        _refuse(m, name, name, e.reason)
        return None, "not read: " + ("not a regular file" if e.reason == "not_regular" else "a symlink out of the directory")
    except OSError as e:
        return None, f"{type(e).__name__}: {e.strerror or e}"
    with fh:
        try:
            if st.st_size > max_bytes:
                _limit(m, name, "json_bytes", max_bytes)
                return None, f"larger than {max_bytes // (1024 * 1024)} MB"
            data = fh.read(max_bytes + 1)
            if len(data) > max_bytes:
                _limit(m, name, "json_bytes", max_bytes)
                return None, f"larger than {max_bytes // (1024 * 1024)} MB"
            return jsonshape.loads(data, shape), None
        except jsonshape.ShapeError as e:
            _limit(m, name, "json_" + e.bound, e.limit)
            return None, str(e)
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
        d = ModelDir(real, READ_SECONDS)
    except OSError as e:
        m.config_error = f"cannot open the directory: {e.strerror or e}"
        return m
    try:
        try:
            m.files = sorted(os.listdir(d.fd))[:MAX_FILES]
        except OSError as e:
            m.config_error = f"cannot list the directory: {e.strerror or e}"
            return m
        headers: Dict[Tuple[int, int], tuple] = {}  # (st_dev, st_ino) -> _header(): a hard link is read once
        try:
            _config(d, m)
            _weights(d, m, headers)
            _hashes(d, m)
            _quant(d, m)
        except _OutOfTime:
            _limit(m, "", "seconds", int(READ_SECONDS))
        if verify:
            d.deadline = time.monotonic() + VERIFY_SECONDS
            _verify(d, m, sample, progress)
    finally:
        d.close()
    return m


def _config(d: ModelDir, m: ModelFacts) -> None:
    data, err = _read_json(d, m, "config.json", CONFIG_BYTES, CONFIG_SHAPE)
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


def _weights(d: ModelDir, m: ModelFacts, headers: Dict) -> None:
    index_name = next((n for n in INDEX_FILES if n in m.files), None)
    mapping: Dict[str, List[str]] = {}
    if index_name:
        m.index_file = index_name
        data, err = _read_json(d, m, index_name, MAX_JSON, INDEX_SHAPE)
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if err or not isinstance(weight_map, dict):
            m.index_error = err or "no weight_map"
            return
        meta = data.get("metadata") if isinstance(data, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("total_size"), int):
            m.index_total_size = meta["total_size"]
        layers = -1
        refused: set = set()
        for tensor, file in weight_map.items():
            if isinstance(file, str):
                name, why = plain_name(file)
                if name is not None:
                    mapping.setdefault(name, []).append(tensor)
                elif file not in refused:  # each name once, however many tensors it holds
                    refused.add(file)
                    _refuse(m, file, index_name, why)
            hit = LAYER.search(tensor)
            if hit:
                layers = max(layers, int(hit.group(1)))
        m.index_layers = layers + 1 if layers >= 0 else None
    else:
        single = next((n for n in SINGLE_FILES if n in m.files), None)
        if single is None:
            return
        mapping[single] = []
    names = sorted(mapping)
    if len(names) > MAX_SHARDS:
        _limit(m, index_name or "", "shards", MAX_SHARDS)
        names = names[:MAX_SHARDS]
    for name in names:
        shard = _shard(d, m, name, mapping[name], headers)
        if shard is not None:
            m.shards.append(shard)


def _shard(d: ModelDir, m: ModelFacts, name: str, tensors: List[str], headers: Dict) -> Optional[ShardFact]:
    """The facts of one weight file; None when it is refused (a symlink out, not a regular file).
    The same file under a second name (a hard link) is read once."""
    d.tick()
    s = ShardFact(name=name, tensors=len(tensors))
    try:
        fh, st = d.open(name)
    except Refused as e:
        _refuse(m, name, m.index_file or name, e.reason)
        return None
    except FileNotFoundError:
        return s
    except OSError as e:
        s.exists, s.header_error = True, e.strerror or str(e)
        return s
    s.exists, s.size = True, st.st_size
    with fh:
        if not name.endswith(".safetensors"):
            return s
        key = (st.st_dev, st.st_ino)
        if key not in headers:
            headers[key] = _header(fh, name)
    s.expected_size, present, s.header_error, bound = headers[key]
    if bound is not None:
        _limit(m, name, *bound)
    if present is not None:
        missing = [t for t in tensors if t not in present]
        s.missing_count, s.missing_tensors = len(missing), missing[:20]
        if not tensors:
            s.tensors = len(present)
    return s


def _header(fh: IO[bytes], name: str) -> Tuple[Optional[int], Optional[set], Optional[str], Optional[Tuple[str, int]]]:
    """(expected file size, tensor names, error, the bound it went past)"""
    try:
        n = safetensors.header_length(fh.read(8))
        header = safetensors.parse_header(n, fh.read(n))
    except jsonshape.ShapeError as e:
        return None, None, f"header: {e}", ("json_" + e.bound, e.limit)
    except (OSError, safetensors.HeaderError) as e:
        return None, None, str(e), None
    return header.file_size, set(header.tensors), None, None


def _hashes(d: ModelDir, m: ModelFacts) -> None:
    """sha256 of a shard as published by where it came from, when that is known here."""
    by_name = {s.name: s for s in m.shards}
    for sums in [n for n in m.files if SUMS.search(n)]:
        d.tick()
        try:
            fh, st = d.open(sums)
        except Refused as e:
            _refuse(m, sums, sums, e.reason)
            continue
        except OSError:
            continue
        with fh:
            if st.st_size > MAX_SUMS_BYTES:
                continue
            text = fh.read(MAX_SUMS_BYTES).decode("utf-8", errors="replace")
        refused: set = set()
        for line in text.splitlines():
            parts = line.strip().split(None, 1)
            if len(parts) == 2 and SHA256.match(parts[0].lower()):
                written = parts[1].lstrip("*").strip()
                file, why = plain_name(written)
                if file is None:
                    if why != "subdir" and written not in refused:  # a file in a subdirectory: no shard
                        refused.add(written)
                        _refuse(m, written, sums, why)
                    continue
                if file in by_name and by_name[file].sha256 is None:
                    by_name[file].sha256, by_name[file].hash_source = parts[0].lower(), sums
    for s in m.shards:
        if s.sha256:
            continue
        d.tick()
        try:
            fh, _ = d.open_below([".cache", "huggingface", "download", s.name + ".metadata"])
            with fh:
                lines = fh.read(4096).decode("utf-8", errors="replace").splitlines()
            if len(lines) >= 2 and SHA256.match(lines[1].strip().lower()):
                s.sha256, s.hash_source = lines[1].strip().lower(), "huggingface download metadata"
                continue
        except (OSError, Refused):
            pass
        try:
            target = os.path.basename(os.readlink(s.name, dir_fd=d.fd))
        except OSError:
            continue
        if SHA256.match(target):
            s.sha256, s.hash_source = target, "huggingface cache blob"


# a KV-cache scheme is a top-level key, not a tensor's: kv_quant_type (vllm-ascend 0.9.2rc1 to
# 0.12.0rc1, quantizer.py) and kv_cache_type (0.18.0 and 0.19.1rc1 on, modelslim_config.py)
KV_QUANT_KEYS = ("kv_quant_type", "kv_cache_type")


def _quant(d: ModelDir, m: ModelFacts) -> None:
    name = "quant_model_description.json"
    if name not in m.files:
        return
    data, err = _read_json(d, m, name, MAX_JSON, INDEX_SHAPE)
    if err or not isinstance(data, dict):
        m.quant_error = err or "not a JSON object"
        return
    kinds, kv = set(), set()
    for key, value in data.items():
        if isinstance(value, str) and re.match(r"^[A-Z][A-Za-z0-9_]*$", value) and value != "FLOAT":
            if key == "model_quant_type" or key.endswith((".weight", ".bias")) or "." in key:
                kinds.add(value)
            elif key in KV_QUANT_KEYS:
                kv.add(value)
    m.quant_types, m.kv_quant_types = sorted(kinds), sorted(kv)


def _sample(shards: List[ShardFact], n: int) -> List[ShardFact]:
    known = [s for s in shards if s.sha256 and s.exists]
    if n <= 0 or len(known) <= n:
        return known
    picks = {0, len(known) - 1} | {round(i * (len(known) - 1) / (n - 1)) for i in range(n)} if n > 1 else {0}
    return [known[i] for i in sorted(picks)][:n]


def _verify(d: ModelDir, m: ModelFacts, sample: int, progress: Progress) -> None:
    import hashlib  # here: only --verify-weights hashes (check imports no hashlib otherwise)

    chosen = _sample(m.shards, sample)
    total = sum(s.size or 0 for s in chosen)
    done = 0
    digests: Dict[Tuple[int, int], str] = {}  # the same file under two names is hashed once
    out_of_time = False
    for s in chosen:
        start = time.perf_counter()
        check = WeightCheck(name=s.name, expected=str(s.sha256))
        digest = hashlib.sha256()
        try:
            if out_of_time or time.monotonic() > d.deadline:
                raise _OutOfTime()
            fh, st = d.open(s.name)
            with fh:
                key = (st.st_dev, st.st_ino)
                if key in digests:
                    check.actual = digests[key]
                else:
                    while True:
                        block = fh.read(CHUNK)
                        if not block:
                            break
                        digest.update(block)
                        done += len(block)
                        if progress is not None:
                            progress(s.name, done, total)
                        if time.monotonic() > d.deadline:
                            raise _OutOfTime()
                    check.actual = digests[key] = digest.hexdigest()
        except _OutOfTime:
            if not out_of_time:
                _limit(m, s.name, "verify_seconds", int(VERIFY_SECONDS))
            out_of_time = True
            check.error, check.skipped = "not hashed: past the time bound", True
        except Refused as e:
            check.error = f"not read: {e.reason}"
        except OSError as e:
            check.error = e.strerror or str(e)
        check.seconds = round(time.perf_counter() - start, 3)
        m.verified.append(check)
