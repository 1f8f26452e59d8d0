"""What a ``vllm serve`` command asks for, as the tuning rules need it (pure).

``doctor.parse.serveargs`` splits the command line (or launch script) into words, exports and
``--long-option`` values; this module reads those values the way vLLM's argument parser does:
booleans as ``--flag`` / ``--no-flag`` / ``--flag false``, sizes as ``32768`` or ``32k``, and
the JSON options (``--additional-config``, ``--compilation-config``, ``--kv-transfer-config``)
with their dotted forms (``--additional-config.enable_cpu_binding=false``).
"""
from __future__ import annotations

import re
from doctor.record import field, record
from typing import Any, Dict, List, Mapping, Optional

from doctor.facts import ServeFacts
from doctor.parse import jsontext

TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off")


def flag(options: Mapping[str, str], name: str) -> Optional[bool]:
    """True / False when the command sets ``--name`` / ``--no-name`` (or a value); None if absent."""
    if f"no-{name}" in options:  # --no-name (argparse's BooleanOptionalAction)
        return options[f"no-{name}"].lower() not in TRUE
    value = options.get(name)
    if value is None:
        return None
    low = value.lower()
    if low in FALSE:
        return False
    return True


def integer(value: Optional[str]) -> Optional[int]:
    """``32768`` / ``32k`` (x1000) / ``32K`` (x1024) / ``1m`` -> int, as vLLM's size arguments."""
    if value is None:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*$", value)
    if not m:
        return None
    scale = {"": 1, "k": 1000, "K": 1024, "m": 10 ** 6, "M": 1 << 20, "g": 10 ** 9, "G": 1 << 30}[m.group(2)]
    return int(float(m.group(1)) * scale)


def number(value: Optional[str]) -> Optional[float]:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _json(options: Mapping[str, str], name: str) -> Dict[str, Any]:
    """A JSON option plus its dotted overrides; {} when absent or unreadable (the Mooncake layer
    reports broken JSON)."""
    out: Dict[str, Any] = {}
    text = options.get(name)
    if text:
        res = jsontext.parse(text)
        value = res.value if res.ok else res.lenient
        if isinstance(value, dict):
            out.update(value)
    prefix = name + "."
    for key, value in options.items():
        if key.startswith(prefix):
            path = key[len(prefix):].replace("-", "_").split(".")
            parsed = jsontext.parse(value)
            leaf = parsed.value if parsed.ok else value
            node = out
            for part in path[:-1]:
                node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
            node[path[-1]] = leaf
    return out


def _first(options: Mapping[str, str], *names: str) -> Optional[str]:
    for n in names:
        if n in options:
            return options[n]
    return None


@record
class ServeSpec:
    tp: int = 1
    pp: int = 1
    dp_local: int = 1
    dtype: str = "auto"
    kv_cache_dtype: str = "auto"
    block_size: Optional[int] = None
    enforce_eager: bool = False
    prefix_caching: Optional[bool] = None  # None: the release's default
    chunked_prefill: Optional[bool] = None
    max_model_len: Optional[int] = None
    gpu_memory_utilization: float = 0.9
    quantization: Optional[str] = None
    sleep_mode: bool = False
    expert_parallel: bool = False
    skip_tokenizer_init: bool = False
    additional_config: Dict[str, Any] = field(default_factory=dict)
    compilation_config: Dict[str, Any] = field(default_factory=dict)
    kv_role: Optional[str] = None
    model: Optional[str] = None
    given: List[str] = field(default_factory=list)  # the option names the command sets

    @property
    def ranks(self) -> int:
        """NPUs this instance uses on this host."""
        return self.tp * self.pp * self.dp_local

    @property
    def graph_mode(self) -> bool:
        """ACL graphs are captured unless the command runs eagerly."""
        mode = str(self.compilation_config.get("cudagraph_mode", "")).upper()
        return not self.enforce_eager and mode != "NONE"

    @property
    def cpu_binding(self) -> Optional[bool]:
        value = self.additional_config.get("enable_cpu_binding")
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.lower() in TRUE
        return None


def _count(options: Mapping[str, str], *names: str) -> int:
    value = integer(_first(options, *names))
    return max(value, 1) if value else 1


def spec(options: Mapping[str, str], model: Optional[str] = None) -> ServeSpec:
    out = ServeSpec(model=model or options.get("model"), given=sorted(options))
    out.tp = _count(options, "tensor-parallel-size", "tp")
    out.pp = _count(options, "pipeline-parallel-size", "pp")
    out.dp_local = _count(options, "data-parallel-size-local", "dpl") if _first(
        options, "data-parallel-size-local", "dpl") else _count(options, "data-parallel-size", "dp")
    out.dtype = (options.get("dtype") or "auto").lower()
    out.kv_cache_dtype = (options.get("kv-cache-dtype") or "auto").lower()
    out.block_size = integer(options.get("block-size"))
    out.enforce_eager = bool(flag(options, "enforce-eager"))
    out.prefix_caching = flag(options, "enable-prefix-caching")
    out.chunked_prefill = flag(options, "enable-chunked-prefill")
    out.max_model_len = integer(options.get("max-model-len"))
    util = number(options.get("gpu-memory-utilization"))
    if util is not None and 0 < util <= 1:
        out.gpu_memory_utilization = util
    out.quantization = _first(options, "quantization", "q")
    out.sleep_mode = bool(flag(options, "enable-sleep-mode"))
    out.expert_parallel = bool(flag(options, "enable-expert-parallel"))
    out.skip_tokenizer_init = bool(flag(options, "skip-tokenizer-init"))
    out.additional_config = _json(options, "additional-config")
    out.compilation_config = _json(options, "compilation-config")
    kv = _json(options, "kv-transfer-config")
    role = kv.get("kv_role")
    out.kv_role = role if isinstance(role, str) else None
    return out


def positional_model(argv: List[str]) -> Optional[str]:
    """``vllm serve MODEL ...``: the first word after ``serve`` that is not an option."""
    for i, word in enumerate(argv):
        if word == "serve" and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            return argv[i + 1]
    return None


def read_command(text: str, env: Mapping[str, str], source: str) -> ServeFacts:
    """The serve command (or launch script) as the snapshot keeps it: secrets redacted, the
    exports apart, --kv-transfer-config among the options (the Mooncake parser keeps it aside)."""
    from doctor.facts import redact_env
    from doctor.parse import serveargs

    cmd = serveargs.parse_command(serveargs.redact(text), env)
    options = dict(cmd.options)
    if cmd.kv_config is not None:
        options["kv-transfer-config"] = cmd.kv_config
    options.update({f"kv-transfer-config.{k}": v for k, v in cmd.kv_dotted.items()})
    return ServeFacts(source=source, argv=list(cmd.argv), options=options, exports=redact_env(cmd.exports),
                      error=cmd.error, model=positional_model(cmd.argv) or cmd.options.get("model"))
