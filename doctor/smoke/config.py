"""What to run: the stage options from a configuration file and the command line (pure).

The file (TOML; docs/smoke.md) has one table per stage; the command line overrides it key by
key. The stages that run are the ones the options ask for: --model alone runs the model stage,
vllm arguments add the vllm stage, --endpoint the endpoint stage (with --peer-endpoint or
--sweep: the kvpool stage instead, and --model is then only the model's config.json for it),
--devices the collective stage; with none of them, the model stage runs with the seeded tiny
model. ``stages = [...]`` (or --stages) names them explicitly.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Mapping, Optional

from doctor.i18n import T

STAGES = ("model", "vllm", "endpoint", "kvpool", "collective")
KV_MAX_REQUESTS = 100_000    # requests of one data set of the kvpool stage
KV_MAX_WORDS = 2_000_000     # words of one prompt: beyond any model's context
APIS = ("completions", "chat")


class ConfigError(ValueError):
    pass


MAX_DEVICES = 64  # device ids of one node's collective (a node has 8 or 16 NPUs)


@dataclass
class SmokeOptions:
    device: str = "npu"
    timeout: float = 600.0             # seconds per stage
    stages: Optional[List[str]] = None
    # model
    model: Optional[str] = None
    tokens: int = 8
    dtype: str = "auto"
    golden: Optional[str] = None
    record_golden: Optional[str] = None
    # vllm
    vllm: bool = False
    serve_args: Optional[str] = None
    serve_args_file: Optional[str] = None
    vllm_args: List[str] = field(default_factory=list)  # KEY=VALUE
    eager: bool = False
    # endpoint
    endpoint: Optional[str] = None
    api: str = "completions"
    served_model: Optional[str] = None
    requests: int = 20
    concurrency: int = 4
    input_len: int = 128
    output_len: int = 64
    warmup: int = 2
    prefix_cache: bool = False
    slo: Optional[str] = None
    duration: Optional[float] = None   # seconds: soak
    sample_every: float = 60.0
    stall_timeout: float = 30.0
    request_timeout: float = 600.0
    server_pid: Optional[int] = None
    # kvpool (the request shape: None takes seed 003's 100 requests x 1024 in / 10 out at 25)
    peer_endpoint: Optional[str] = None
    master: Optional[str] = None
    mooncake_config: Optional[str] = None
    server_log: Optional[str] = None
    peer_server_log: Optional[str] = None
    kv_requests: Optional[int] = None
    kv_concurrency: Optional[int] = None
    kv_input_len: Optional[int] = None
    kv_output_len: Optional[int] = None
    sweep: bool = False
    sweep_docs: Optional[str] = None
    sweep_concurrency: int = 4         # a sequential scan thrashes only with few documents in flight
    doc_len: int = 10000
    report: Optional[str] = None
    # collective
    devices: Optional[str] = None

    def wanted(self) -> List[str]:
        """The stages to run, in their fixed order."""
        if self.stages:
            return [s for s in STAGES if s in self.stages]
        out = []
        vllm = self.vllm or bool(self.serve_args or self.serve_args_file or self.vllm_args) or self.eager
        kvpool = bool(self.peer_endpoint or self.sweep)
        if (self.model and not kvpool) or not (vllm or self.endpoint or self.devices or kvpool):
            out.append("model")
        if vllm:
            out.append("vllm")
        if self.endpoint and not kvpool:
            out.append("endpoint")
        if kvpool:
            out.append("kvpool")
        if self.devices:
            out.append("collective")
        return out


# file table -> {file key: option name}
_FILE_KEYS = {
    "smoke": {"device": "device", "timeout": "timeout", "stages": "stages"},
    "model": {"path": "model", "tokens": "tokens", "dtype": "dtype", "golden": "golden"},
    "vllm": {"enabled": "vllm", "serve_args": "serve_args", "serve_args_file": "serve_args_file",
             "args": "vllm_args", "eager": "eager"},
    "endpoint": {"url": "endpoint", "api": "api", "model": "served_model", "requests": "requests",
                 "concurrency": "concurrency", "input_len": "input_len", "output_len": "output_len",
                 "warmup": "warmup", "prefix_cache": "prefix_cache", "slo": "slo", "duration": "duration",
                 "sample_every": "sample_every", "stall_timeout": "stall_timeout",
                 "request_timeout": "request_timeout", "server_pid": "server_pid"},
    "kvpool": {"peer_url": "peer_endpoint", "master": "master", "mooncake_config": "mooncake_config",
               "server_log": "server_log", "peer_server_log": "peer_server_log", "requests": "kv_requests",
               "concurrency": "kv_concurrency", "input_len": "kv_input_len", "output_len": "kv_output_len",
               "sweep": "sweep", "sweep_docs": "sweep_docs", "sweep_concurrency": "sweep_concurrency",
               "doc_len": "doc_len", "report": "report"},
    "collective": {"devices": "devices"},
}
_TYPES = {f.name: f.type for f in fields(SmokeOptions)}


def from_file(data: Mapping[str, Any], where: str = "smoke config") -> Dict[str, Any]:
    """Option values from a parsed configuration file; unknown tables or keys are errors (a typo
    must not silently drop a stage)."""
    out: Dict[str, Any] = {}
    for table, values in data.items():
        if table not in _FILE_KEYS:
            raise ConfigError(f"{where}: unknown table [{table}] (tables: {', '.join(_FILE_KEYS)})")
        if not isinstance(values, Mapping):
            raise ConfigError(f"{where}: [{table}] must be a table")
        for key, value in values.items():
            name = _FILE_KEYS[table].get(key)
            if name is None:
                raise ConfigError(f"{where}: unknown key {table}.{key} (keys: {', '.join(_FILE_KEYS[table])})")
            if name == "duration" and isinstance(value, str):
                value = parse_duration(value)
            if name == "sweep_docs" and isinstance(value, list):
                value = ",".join(str(v) for v in value)
            out[name] = value
    return out


def merge(file_values: Mapping[str, Any], flags: Mapping[str, Any]) -> SmokeOptions:
    """Options from the file, overridden by every flag that was given (not None)."""
    values = dict(file_values)
    values.update({k: v for k, v in flags.items() if v is not None})
    opts = SmokeOptions(**values)
    validate(opts)
    return opts


def validate(o: SmokeOptions) -> None:
    def positive(name: str, value: Any, integer: bool = False) -> None:
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        # not (value > 0): nan compares false with everything; inf (a TOML inf, a 400-digit
        # --duration) would never end
        if not ok or isinstance(value, bool) or not (0 < value < math.inf):
            raise ConfigError(f"{name} must be a positive {'whole ' if integer else ''}number, not {value!r}")
    if o.device not in ("npu", "cpu"):
        raise ConfigError(f"device {o.device!r}: use npu or cpu")
    if o.api not in APIS:
        raise ConfigError(f"api {o.api!r}: use completions or chat")
    for name in ("timeout", "sample_every", "stall_timeout", "request_timeout"):
        positive(name, getattr(o, name))
    for name in ("tokens", "requests", "concurrency", "input_len", "output_len"):
        positive(name, getattr(o, name), integer=True)
    if not isinstance(o.warmup, int) or isinstance(o.warmup, bool) or o.warmup < 0:
        raise ConfigError(f"warmup must be 0 or more, not {o.warmup!r}")
    if o.duration is not None:
        positive("duration", o.duration)
    for name in ("endpoint", "peer_endpoint"):
        url = getattr(o, name)
        if url is not None and not re.match(r"^https?://[^/\s]+", str(url)):
            raise ConfigError(f"{name.replace('_', '-')} {url!r}: write the server's URL, e.g. http://127.0.0.1:8000")
    for name in ("kv_requests", "kv_concurrency", "kv_input_len", "kv_output_len"):
        if getattr(o, name) is not None:
            positive(name[3:], getattr(o, name), integer=True)
    positive("doc_len", o.doc_len, integer=True)
    positive("sweep_concurrency", o.sweep_concurrency, integer=True)
    for name, most in (("kv_requests", KV_MAX_REQUESTS), ("kv_input_len", KV_MAX_WORDS), ("doc_len", KV_MAX_WORDS),
                       ("kv_concurrency", 4096), ("sweep_concurrency", 4096)):
        value = getattr(o, name)
        if value is not None and value > most:
            raise ConfigError(f"{name.replace('kv_', '')} {value}: at most {most:,} for the kvpool stage")
    if "kvpool" in o.wanted():
        _validate_kvpool(o)
    if o.stages is not None:
        bad = [s for s in o.stages if s not in STAGES]
        if bad or not o.stages:
            raise ConfigError(f"stages {bad or o.stages}: choose from {', '.join(STAGES)}")
    for item in o.vllm_args:
        if not re.match(r"^[A-Za-z][\w-]*(=.*)?$", str(item), re.DOTALL):
            raise ConfigError(f"vllm argument {item!r}: write KEY=VALUE, e.g. max-model-len=4096")
    if "vllm" in o.wanted() and not (o.model or o.serve_args or o.serve_args_file):
        raise ConfigError("the vllm stage needs a model: --model PATH or a vllm serve command with one")


def _validate_kvpool(o: SmokeOptions) -> None:
    from doctor.smoke.kvpool_sweep import SweepError, parse_docs

    if not o.endpoint:
        raise ConfigError("the kvpool stage needs --endpoint URL (instance 1; --peer-endpoint URL2 is instance 2)")
    if o.peer_endpoint and o.peer_endpoint.rstrip("/") == o.endpoint.rstrip("/"):
        raise ConfigError("--peer-endpoint must be another instance than --endpoint")
    if o.sweep_docs is not None:
        try:
            parse_docs(o.sweep_docs)
        except SweepError as e:
            raise ConfigError(f"sweep-docs {o.sweep_docs!r}: {e}") from None
    if o.master is not None and not _MASTER.match(str(o.master).strip()):
        raise ConfigError(f"master {o.master!r}: write HOST:PORT[:METRICS_PORT] or http://HOST:METRICS_PORT")


_MASTER = re.compile(r"^(https?://[^/\s]+/?|(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.\-]+):\d{1,5}(:\d{1,5})?)$")
_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)h)?\s*(?:(\d+(?:\.\d+)?)m(?!s))?\s*(?:(\d+(?:\.\d+)?)s)?\s*$")


def parse_duration(text: str) -> float:
    """2h, 90m, 1h30m, 45s or a bare number of seconds -> seconds."""
    text = str(text).strip().lower()
    if re.match(r"^\d+(\.\d+)?$", text):
        return float(text)
    m = _DURATION.match(text)
    if not text or not m or not any(m.groups()):
        raise ConfigError(T("smoke.error.bad_duration", text=repr(text)))
    h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mi * 60 + s


def vllm_arg_words(items: List[str]) -> List[str]:
    """--vllm-arg KEY=VALUE items as `vllm serve` words: --KEY VALUE (a bare KEY is a flag)."""
    out: List[str] = []
    for item in items:
        key, eq, value = str(item).partition("=")
        out.append("--" + key.lstrip("-").replace("_", "-"))
        if eq:
            out.append(value)
    return out


def parse_devices(text: str, available: Optional[int] = None) -> List[int]:
    """0-7, 0,2,4 or all (needs the number of devices) -> device ids."""
    text = str(text).strip().lower()
    if text == "all":
        if not available:
            raise ConfigError("--devices all: no devices found (give them, e.g. --devices 0-7)")
        return list(range(available))
    ids: List[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.match(r"^(\d+)(?:-(\d+))?$", part)
        if not m:
            raise ConfigError(f"--devices {text!r}: write e.g. 0-7, 0,1,2,3 or all")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise ConfigError(f"--devices {part!r}: the range runs backwards")
        if hi >= MAX_DEVICES:  # before the range is made (0-99999999 hung, one rank per id)
            from doctor.i18n import T

            raise ConfigError(T("smoke.error.devices_bound", devices=text, last=MAX_DEVICES - 1))
        ids.extend(i for i in range(lo, hi + 1) if i not in ids)
    if len(ids) < 2:
        raise ConfigError("--devices: a collective needs at least two devices")
    return ids
