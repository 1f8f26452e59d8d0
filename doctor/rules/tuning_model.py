"""The tuning layer, the model directory (--model PATH or the serve command's local model):
config.json, every weight shard present and complete, the index consistent with the config,
sampled checksums (--verify-weights) and the tokenizer files."""
from __future__ import annotations

from typing import Iterable, List

from doctor.findings import Fixable, FAIL, INFO, OK, Finding
from doctor.i18n import T
from doctor.rules.base import Context, rule
from doctor.rules.tuning_common import GIB, view

HF_CONFIG = "https://huggingface.co/docs/transformers/main_classes/configuration"
HF_SHARDS = "https://huggingface.co/docs/transformers/big_models"
SAFETENSORS = "https://github.com/huggingface/safetensors#format"
HF_DOWNLOAD = "https://huggingface.co/docs/huggingface_hub/guides/download#download-files-to-a-local-folder"
HF_TOKENIZER = "https://huggingface.co/docs/transformers/fast_tokenizers"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model", "qwen.tiktoken",
                   "tiktoken.model")


def model_config(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    if m is None:
        return []
    if not m.is_dir:
        return [Finding("tuning.model_config", FAIL, T("tuning.model_config.no_dir", path=m.path),
                        observed="missing" if not m.exists else "not a directory", fixable=Fixable.MANUAL, source=HF_CONFIG)]
    if m.config_error:
        return [Finding("tuning.model_config", FAIL, T("tuning.model_config.unreadable", path=m.path, error=m.config_error),
                        observed=m.config_error, fixable=Fixable.MANUAL, hint=T("tuning.model_config.hint"), source=HF_CONFIG)]
    c = m.config
    return [Finding("tuning.model_config", OK, T("tuning.model_config.ok", path=m.path, model_type=c.get("model_type", "?"),
                                                layers=c.get("num_hidden_layers", "?")),
                    observed=str(c.get("model_type")), source=HF_CONFIG)]


def model_weights(ctx: Context) -> Iterable[Finding]:
    m = view(ctx).model
    if m is None or not m.is_dir:
        return []
    if m.index_error:
        return [Finding("tuning.model_weights", FAIL, T("tuning.model_weights.index", file=m.index_file, error=m.index_error),
                        observed=m.index_error, fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"), source=HF_SHARDS)]
    if not m.shards:
        return [Finding("tuning.model_weights", FAIL, T("tuning.model_weights.none", path=m.path), observed="no weights",
                        fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"), source=HF_SHARDS)]
    out: List[Finding] = []
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
            out.append(Finding("tuning.model_weights", FAIL, T("tuning.model_weights.header", name=s.name, error=s.header_error),
                               observed=s.header_error, fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"),
                               source=SAFETENSORS))
        elif s.exists and s.missing_count:
            out.append(Finding("tuning.model_weights", FAIL, T("tuning.model_weights.tensors", name=s.name, n=s.missing_count,
                                                               first=s.missing_tensors[0]),
                               observed=f"{s.missing_count} tensors", evidence=s.missing_tensors, fixable=Fixable.MANUAL,
                               hint=T("tuning.model_weights.hint"), source=HF_SHARDS))
    if not out:
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
    if not m.verified:
        return [Finding("tuning.model_checksums", INFO, T("tuning.model_checksums.no_hashes"), observed="no published hashes",
                        source=HF_DOWNLOAD)]
    bad = [c for c in m.verified if c.error or c.actual != c.expected]
    if bad:
        return [Finding("tuning.model_checksums", FAIL, T("tuning.model_checksums.mismatch", n=len(bad), total=len(m.verified),
                                                          names=", ".join(c.name for c in bad[:3])),
                        observed="; ".join(f"{c.name}: {c.error or c.actual}" for c in bad[:3]),
                        evidence=[f"{c.name}: expected {c.expected}, got {c.error or c.actual}" for c in bad],
                        fixable=Fixable.MANUAL, hint=T("tuning.model_weights.hint"), source=HF_DOWNLOAD)]
    return [Finding("tuning.model_checksums", OK, T("tuning.model_checksums.ok", n=len(m.verified),
                                                    total=sum(1 for s in m.shards if s.sha256)),
                    observed=", ".join(c.name for c in m.verified), evidence=[f"{c.name}: {c.actual} ({c.seconds} s)"
                                                                             for c in m.verified], source=HF_DOWNLOAD)]


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
