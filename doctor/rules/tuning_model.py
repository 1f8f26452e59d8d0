"""The tuning layer, the model directory (--model PATH or the serve command's local model):
config.json, every weight shard present and complete, the index consistent with the config,
sampled checksums (--verify-weights) and the tokenizer files."""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional

from doctor.facts import ModelFacts, ModelLimit
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Finding
from doctor.i18n import T, Text
from doctor.rules.base import Context, rule
from doctor.rules.tuning_common import GIB, view
from doctor.textsafe import clean

HF_CONFIG = "https://huggingface.co/docs/transformers/main_classes/configuration"
HF_SHARDS = "https://huggingface.co/docs/transformers/big_models"
SAFETENSORS = "https://github.com/huggingface/safetensors#format"
HF_DOWNLOAD = "https://huggingface.co/docs/huggingface_hub/guides/download#download-files-to-a-local-folder"
HF_TOKENIZER = "https://huggingface.co/docs/transformers/fast_tokenizers"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model", "qwen.tiktoken",
                   "tiktoken.model")


REFUSED = {"absolute": "tuning.model_refused.absolute", "parent": "tuning.model_refused.parent",
           "control": "tuning.model_refused.control", "subdir": "tuning.model_refused.subdir",
           "outside": "tuning.model_refused.outside", "not_regular": "tuning.model_refused.not_regular"}
LIMITS = {"json_bytes": "tuning.model_limit.json_bytes", "json_depth": "tuning.model_limit.json_depth",
          "json_containers": "tuning.model_limit.json_containers", "json_values": "tuning.model_limit.json_values",
          "shards": "tuning.model_limit.shards", "seconds": "tuning.model_limit.seconds",
          "verify_seconds": "tuning.model_limit.verify_seconds"}
CONFIG = "config.json"


def _limit_text(x: ModelLimit) -> Text:
    return T(LIMITS.get(x.bound, "tuning.model_limit.json_bytes"), file=clean(x.file), limit=x.limit)


def _refused_text(name: str, source: str, reason: str) -> Text:
    why = T(REFUSED.get(reason, "tuning.model_refused.subdir"))
    if source == name or name.endswith("/" + source):  # the file itself, found in the directory
        return T("tuning.model_refused.self", name=name, why=why)
    return T("tuning.model_refused.name", name=name, source=source, why=why)


def _file_limits(m: ModelFacts) -> Dict[str, ModelLimit]:
    return {x.file: x for x in m.limits if x.bound.startswith("json_")}


def _refusals(m: ModelFacts) -> List[Finding]:
    """The names the probe did not read (escaped: a name is data), config.json's aside (its own rule)."""
    out: List[Finding] = []
    shown = 0
    for r in m.refused:
        if r.name == CONFIG and r.source == CONFIG:
            continue
        shown += 1
        weights = r.source.endswith(".json") or r.source == r.name  # the index, or a weight file itself
        out.append(Finding("tuning.model_weights", FAIL if weights else WARN,
                           _refused_text(clean(r.name), clean(r.source), r.reason),
                           observed=r.name, fixable=Fixable.MANUAL, hint=T("tuning.model_refused.hint"), source=HF_SHARDS))
    more = m.refused_count - len(m.refused)
    if more > 0 and out:
        out.append(Finding("tuning.model_weights", out[-1].status, T("tuning.model_refused.more", n=more),
                           observed=f"{more} more", fixable=Fixable.MANUAL, hint=T("tuning.model_refused.hint"),
                           source=HF_SHARDS))
    return out


def _bounds(m: ModelFacts) -> List[Finding]:
    """Bounds that stopped the reading as a whole (not one file's JSON: that is the file's finding)."""
    return [Finding("tuning.model_weights", WARN, _limit_text(x), observed=f"{x.bound} > {x.limit}", source=HF_SHARDS)
            for x in m.limits if x.bound in ("shards", "seconds")
            or (x.bound.startswith("json_") and x.file not in (CONFIG, m.index_file) and x.file not in
                {s.name for s in m.shards})]


def model_config(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    if m is None:
        return []
    if not m.is_dir:
        return [Finding("tuning.model_config", FAIL, T("tuning.model_config.no_dir", path=m.path),
                        observed="missing" if not m.exists else "not a directory", fixable=Fixable.MANUAL, source=HF_CONFIG)]
    if m.config_error:
        refused = next((r for r in m.refused if r.name == CONFIG and r.source == CONFIG), None)
        bound = _file_limits(m).get(CONFIG)
        title: Optional[Text] = None
        if refused is not None:
            title = _refused_text(f"{m.path}/{CONFIG}", CONFIG, refused.reason)
        elif bound is not None:
            title = _limit_text(ModelLimit(file=f"{m.path}/{CONFIG}", bound=bound.bound, limit=bound.limit))
        return [Finding("tuning.model_config", FAIL,
                        title or T("tuning.model_config.unreadable", path=m.path, error=m.config_error),
                        observed=m.config_error, fixable=Fixable.MANUAL, hint=T("tuning.model_config.hint"), source=HF_CONFIG)]
    c = m.config
    return [Finding("tuning.model_config", OK, T("tuning.model_config.ok", path=m.path, model_type=c.get("model_type", "?"),
                                                layers=c.get("num_hidden_layers", "?")),
                    observed=str(c.get("model_type")), source=HF_CONFIG)]


def model_weights(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    if m is None or not m.is_dir:
        return []
    first = _refusals(m) + _bounds(m)
    limits = _file_limits(m)
    if m.index_error:
        bound = limits.get(m.index_file or "")
        title = _limit_text(bound) if bound else T("tuning.model_weights.index", file=m.index_file, error=m.index_error)
        return first + [Finding("tuning.model_weights", FAIL, title, observed=m.index_error, fixable=Fixable.MANUAL,
                                hint=T("tuning.model_weights.hint"), source=HF_SHARDS)]
    if not m.shards:
        return first + [Finding("tuning.model_weights", FAIL, T("tuning.model_weights.none", path=m.path),
                                observed="no weights", fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"),
                                source=HF_SHARDS)]
    out: List[Finding] = first
    missing = [s.name for s in m.shards if not s.exists]
    if missing:
        out.append(Finding("tuning.model_weights", FAIL, T("tuning.model_weights.missing", n=len(missing), total=len(m.shards),
                                                           names=", ".join(missing[:3])),
                           observed=", ".join(missing[:5]), evidence=missing, fixable=Fixable.MANUAL,
                           hint=T("tuning.model_weights.hint"), source=HF_SHARDS))
    short = [s for s in m.shards if s.exists and s.expected_size is not None and s.size != s.expected_size]
    for s in short:
        out.append(Finding("tuning.model_weights", FAIL, T("tuning.model_weights.size", name=s.name, size=s.size,
                                                           expected=s.expected_size),
                           observed=f"{s.size} bytes", expected=f"{s.expected_size} bytes", fixable=Fixable.MANUAL,
                           hint=T("tuning.model_weights.hint"), source=SAFETENSORS))
    for s in m.shards:
        if s.exists and s.header_error:
            bound = limits.get(s.name)
            out.append(Finding("tuning.model_weights", FAIL,
                               _limit_text(bound) if bound else T("tuning.model_weights.header", name=s.name,
                                                                  error=s.header_error),
                               observed=s.header_error, fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"),
                               source=SAFETENSORS))
        elif s.exists and s.missing_count:
            out.append(Finding("tuning.model_weights", FAIL, T("tuning.model_weights.tensors", name=s.name, n=s.missing_count,
                                                               first=s.missing_tensors[0]),
                               observed=f"{s.missing_count} tensors", evidence=s.missing_tensors, fixable=Fixable.MANUAL,
                               hint=T("tuning.model_weights.hint"), source=HF_SHARDS))
    if all(f.status != FAIL for f in out):
        size = sum(s.size or 0 for s in m.shards)
        out.append(Finding("tuning.model_weights", OK, T("tuning.model_weights.ok", n=len(m.shards), size=f"{size / GIB:.1f}"),
                           observed=f"{len(m.shards)} files", source=SAFETENSORS))
    return out


def model_index(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    layers = m.config.get("num_hidden_layers") if m is not None else None
    if m is None or m.index_layers is None or not isinstance(layers, int):
        return []
    if m.index_layers < layers:
        return [Finding("tuning.model_index", FAIL, T("tuning.model_index.layers", file=m.index_file, have=m.index_layers,
                                                      layers=layers),
                        observed=f"{m.index_layers} layers", expected=f"{layers} layers", fixable=Fixable.MANUAL,
                        hint=T("tuning.model_weights.hint"), source=HF_SHARDS)]
    return [Finding("tuning.model_index", OK, T("tuning.model_index.ok", layers=layers), observed=f"{m.index_layers} layers",
                    source=HF_SHARDS)]


def model_checksums(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    if m is None or not m.verify_requested or not m.is_dir:
        return []
    late = [Finding("tuning.model_checksums", WARN, _limit_text(x), observed=f"{x.bound} > {x.limit}", source=HF_DOWNLOAD)
            for x in m.limits if x.bound == "verify_seconds"]
    done = [c for c in m.verified if not c.skipped]
    if not done:
        return late or [Finding("tuning.model_checksums", INFO, T("tuning.model_checksums.no_hashes"),
                                observed="no published hashes", source=HF_DOWNLOAD)]
    bad = [c for c in done if c.error or c.actual != c.expected]
    if bad:
        return late + [Finding("tuning.model_checksums", FAIL, T("tuning.model_checksums.mismatch", n=len(bad), total=len(done),
                                                          names=", ".join(c.name for c in bad[:3])),
                        observed="; ".join(f"{c.name}: {c.error or c.actual}" for c in bad[:3]),
                        evidence=[f"{c.name}: expected {c.expected}, got {c.error or c.actual}" for c in bad],
                        fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"), source=HF_DOWNLOAD)]
    return late + [Finding("tuning.model_checksums", OK, T("tuning.model_checksums.ok", n=len(done),
                                                    total=sum(1 for s in m.shards if s.sha256)),
                    observed=", ".join(c.name for c in done), evidence=[f"{c.name}: {c.actual} ({c.seconds} s)"
                                                                       for c in done], source=HF_DOWNLOAD)]


def model_tokenizer(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    m = v.model
    if m is None or not m.is_dir:
        return []
    found = [f for f in m.files if f in TOKENIZER_FILES or f.endswith(".tiktoken")]
    if found:
        return [Finding("tuning.model_tokenizer", OK, T("tuning.model_tokenizer.ok", files=", ".join(found)),
                        observed=", ".join(found), source=HF_TOKENIZER)]
    if v.spec is not None and (v.spec.skip_tokenizer_init or "tokenizer" in v.spec.given):
        return []
    return [Finding("tuning.model_tokenizer", FAIL, T("tuning.model_tokenizer.none", path=m.path), observed="none",
                    expected=" | ".join(TOKENIZER_FILES[:3]), fixable=Fixable.MANUAL, hint=T("tuning.model_tokenizer.hint"),
                    source=HF_TOKENIZER)]


RULES = (
    rule("tuning.model_config", model_config, HF_CONFIG),
    rule("tuning.model_weights", model_weights, SAFETENSORS),
    rule("tuning.model_index", model_index, HF_SHARDS),
    rule("tuning.model_checksums", model_checksums, HF_DOWNLOAD),
    rule("tuning.model_tokenizer", model_tokenizer, HF_TOKENIZER),
)
