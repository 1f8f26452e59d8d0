"""The tuning layer, devices and serving arguments: what the process will see (visible devices,
cards held elsewhere, the Kubernetes device plugin) and what the serve command asks of this
release and this chip (parallel size, dtype, block size, graph mode, quantization, KV cache).
Only judged when the user gives the serve command (or the variables are set)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Tuple

from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Edit, Finding, Status, cmd
from doctor.i18n import Join, T, Text, join
from doctor.matrix.model import TuningQuant
from doctor.rules.base import Context, rule
from doctor.rules.tuning_common import GIB, View, joined, used_chips, view, visible_ids
from doctor.versions import pep440, satisfies, specifier

MIB = 1 << 20
HCCL_BUFFSIZE_DEFAULT = 200  # MB (CANN's HCCL_BUFFSIZE default)
DTYPE_BYTES = {"float16": 2, "half": 2, "bfloat16": 2, "bf16": 2, "float32": 4, "float": 4, "fp8": 1, "int8": 1}


def _source(v: View, fid: str) -> Optional[str]:
    row = v.fact(fid) or v.any_fact(fid)
    return row.source if row else None


# -- devices -------------------------------------------------------------------------------


def visible_devices(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    out = list(_container_devices(ctx, v))
    raw = v.env.get("ASCEND_RT_VISIBLE_DEVICES")
    count = v.device_count()
    if not v.runtime or raw is None or count is None:
        return out
    return out + _rt_visible(v, raw, count)


def _container_devices(ctx: Context, v: View) -> Iterable[Finding]:
    """ASCEND_VISIBLE_DEVICES is read by the Ascend container runtime when it creates the
    container; exported inside a running one it selects nothing (vllm-ascend #6942)."""
    given = v.env.get("ASCEND_VISIBLE_DEVICES")
    d = ctx.facts.devices
    nodes = sorted(int(n.path.rsplit("davinci", 1)[1]) for n in d.davinci if n.exists) if d else []
    if not v.runtime or not given or not nodes or not ctx.facts.host.in_container:
        return []
    ids = sorted({int(p) for p in given.replace(" ", "").split(",") if p.isdigit()})
    if not ids or ids == nodes:
        return []
    return [Finding("tuning.visible_devices", WARN, T("tuning.visible_devices.container", value=given,
                                                      nodes=joined(nodes)),
                    observed=f"/dev/davinci{{{joined(nodes)}}}", expected=given, fixable=Fixable.MANUAL,
                    hint=T("tuning.visible_devices.container_hint"),
                    source="https://github.com/vllm-project/vllm-ascend/issues/6942")]


def _rt_visible(v: View, raw: str, count: int) -> List[Finding]:
    source = _source(v, "visible_devices_rules")
    ids = visible_ids(raw)
    if ids is None:
        good = []
        for part in raw.split(","):
            if not part.isdigit():
                break
            good.append(part)
        fixed = sorted({int(p.strip()) for p in raw.split(",") if p.strip().isdigit() and int(p.strip()) < count})
        return [_visible(FAIL, T("tuning.visible_devices.malformed", value=raw, seen=joined(good) or "none"), raw, fixed, source)]
    if ids != sorted(set(ids)):
        fixed = sorted({i for i in ids if i < count})
        return [_visible(FAIL, T("tuning.visible_devices.order", value=raw), raw, fixed, source)]
    outside = [i for i in ids if i >= count]
    if outside:
        fixed = [i for i in ids if i < count]
        return [_visible(FAIL, T("tuning.visible_devices.range", value=raw, count=count, last=count - 1, outside=joined(outside)),
                         raw, fixed, source)]
    return [Finding("tuning.visible_devices", OK, T("tuning.visible_devices.ok", value=raw, n=len(ids), count=count),
                    observed=raw, source=source)]


def _visible(status: Status, title: Text, raw: str, fixed: List[int], source: Optional[str]) -> Finding:
    value = joined(fixed)
    return Finding("tuning.visible_devices", status, title, observed=raw, expected=value or None, fixable=Fixable.MANUAL,
                   hint=T("tuning.visible_devices.hint"), source=source,
                   commands=[cmd("export", f"ASCEND_RT_VISIBLE_DEVICES={value}")] if value else [],
                   edits=[Edit("export", "ASCEND_RT_VISIBLE_DEVICES", value)] if value else [])


def _visible_count(v: View) -> Optional[int]:
    raw = v.env.get("ASCEND_RT_VISIBLE_DEVICES")
    count = v.device_count()
    if raw:
        ids = visible_ids(raw)
        if ids is not None and count is not None:
            return len([i for i in ids if i < count])
    return count


def parallel_size(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    visible = _visible_count(v)
    if not v.runtime or sp is None or visible is None:
        return []
    shape = f"tp {sp.tp} x pp {sp.pp} x dp {sp.dp_local}"
    if sp.ranks > visible:
        return [Finding("tuning.parallel_size", FAIL, T("tuning.parallel_size.short", ranks=sp.ranks, shape=shape, visible=visible),
                        observed=f"{visible} visible", expected=f">={sp.ranks}", fixable=Fixable.MANUAL,
                        hint=T("tuning.parallel_size.hint"), source="https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html")]
    return [Finding("tuning.parallel_size", OK, T("tuning.parallel_size.ok", ranks=sp.ranks, shape=shape, visible=visible),
                    observed=shape, source="https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html")]


def devices_busy(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    d = ctx.facts.devices
    info = d.npu_smi_info if d else None
    if not v.runtime or v.spec is None or info is None or not info.processes:
        return []
    chips = v.chips()
    used = {(chips[i].npu, chips[i].chip) for i in used_chips(v)}
    busy = [p for p in info.processes if (p.npu, p.chip) in used]
    if not busy:
        return []
    container = ctx.facts.host.in_container
    where = [f"NPU {p.npu} chip {p.chip}: pid {p.pid} {p.name} {p.memory} MB".replace("  ", " ") for p in busy]
    return [Finding("tuning.devices_busy", FAIL if container else WARN,
                    T("tuning.devices_busy.container" if container else "tuning.devices_busy.host",
                      npus=joined(sorted({p.npu for p in busy}))),
                    observed="; ".join(where[:4]), evidence=where, fixable=Fixable.MANUAL,
                    hint=T("tuning.devices_busy.hint"), source=_source(v, "card_held_elsewhere"))]


def k8s_devices(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    env = v.env
    given = env.get("ASCEND_VISIBLE_DEVICES")
    if not v.runtime or "KUBERNETES_SERVICE_HOST" not in env or not given or env.get("ASCEND_RT_VISIBLE_DEVICES"):
        return []
    ids = sorted(int(p) for p in given.replace(" ", "").split(",") if p.isdigit())
    if not ids or ids == list(range(len(ids))):
        return []  # the first cards: reported to work
    return [Finding("tuning.k8s_devices", WARN, T("tuning.k8s_devices.non_first", value=given), observed=given,
                    fixable=Fixable.MANUAL, hint=T("tuning.k8s_devices.hint"), source=_source(v, "k8s_non_first_cards"))]


# -- serving arguments ---------------------------------------------------------------------


def _config(v: View) -> dict:
    return v.model.config if v.model is not None else {}


def dtype(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    row = v.fact("310p_dtype")
    if sp is None or ctx.hardware != "310P" or row is None:
        return []
    want = row.value or "float16"
    model_dtype = str(_config(v).get("torch_dtype") or _config(v).get("dtype") or "")
    edits = [Edit("flag", "dtype", want)]
    if sp.dtype in ("bfloat16", "bf16"):
        return [Finding("tuning.dtype", FAIL, T("tuning.dtype.bf16", dtype=sp.dtype, version=v.version), observed=sp.dtype,
                        expected=want, fixable=Fixable.MANUAL, hint=T("tuning.hint.flag", flag=f"--dtype {want}"),
                        source=row.source, evidence=[row.note or ""], edits=edits)]
    if sp.dtype == "auto" and model_dtype == "bfloat16":
        return [Finding("tuning.dtype", WARN, T("tuning.dtype.auto_bf16"), observed="auto (bfloat16)", expected=want,
                        fixable=Fixable.MANUAL, hint=T("tuning.hint.flag", flag=f"--dtype {want}"), source=row.source,
                        evidence=[row.note or ""], edits=edits)]
    return [Finding("tuning.dtype", OK, T("tuning.dtype.ok", dtype=sp.dtype), observed=sp.dtype, source=row.source)]


def _effective(v: View, value: Optional[bool]) -> Optional[bool]:
    if value is not None:
        return value
    return True if v.fact("prefix_chunked_default_on") else None


def block_size(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    if sp is None or sp.block_size is None or sp.block_size == 128 or v.version is None:
        return []
    prefix, chunked = _effective(v, sp.prefix_caching), _effective(v, sp.chunked_prefill)
    model_type = str(_config(v).get("model_type", ""))
    row = v.fact("block_size_prefix_rejected")
    if row and prefix:
        return [Finding("tuning.block_size", FAIL, T("tuning.block_size.rejected", size=sp.block_size, version=v.version),
                        observed=str(sp.block_size), expected="128", fixable=Fixable.MANUAL, source=row.source,
                        hint=T("tuning.block_size.hint"), edits=[Edit("drop", "block-size")])]
    forced: Optional[Tuple[Text, Optional[str]]] = None  # (why, source)
    if v.fact("block_size_forced_prefix") and prefix:
        forced = (T("tuning.block_size.why_prefix"), _source(v, "block_size_forced_prefix"))
    elif v.fact("block_size_forced_any") and model_type != "qwen3_next":
        scheduler = sp.additional_config.get("ascend_scheduler_config")
        on = isinstance(scheduler, dict) and scheduler.get("enabled") is True
        if prefix or chunked or not on:
            forced = (T("tuning.block_size.why_any"), _source(v, "block_size_forced_any"))
    elif v.fact("block_size_forced_chunked") and (prefix or chunked) and model_type not in ("qwen3_next", "deepseek_v4"):
        forced = (T("tuning.block_size.why_chunked"), _source(v, "block_size_forced_chunked"))
    if forced is None:
        return []
    why, source = forced
    return [Finding("tuning.block_size", INFO, T("tuning.block_size.forced", size=sp.block_size, version=v.version, why=why),
                    observed=str(sp.block_size), expected="128", source=source, hint=T("tuning.block_size.hint"),
                    edits=[Edit("drop", "block-size")])]


def graph_310p(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    if sp is None or ctx.hardware != "310P":
        return []
    row = v.fact("310p_eager_only")
    if row and sp.graph_mode:
        return [Finding("tuning.graph_310p", WARN, T("tuning.graph_310p.eager", version=v.version), observed="graph mode",
                        expected="--enforce-eager", fixable=Fixable.MANUAL, hint=T("tuning.hint.flag", flag="--enforce-eager"),
                        source=row.source, edits=[Edit("flag", "enforce-eager")])]
    row = v.fact("310p_no_npugraph_ex")
    compile_cfg = sp.additional_config.get("ascend_compilation_config")
    off = isinstance(compile_cfg, dict) and compile_cfg.get("enable_npugraph_ex") is False
    if row and sp.graph_mode and not off:
        return [Finding("tuning.graph_310p", WARN, T("tuning.graph_310p.npugraph_ex", version=v.version),
                        observed="enable_npugraph_ex", expected="false", fixable=Fixable.MANUAL, source=row.source,
                        hint=T("tuning.hint.flag", flag="--additional-config '{\"ascend_compilation_config\": {\"enable_npugraph_ex\": false}}'"))]
    return []


def max_model_len_310p(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    row = v.fact("310p_max_model_len")
    if sp is None or ctx.hardware != "310P" or row is None or sp.max_model_len is not None:
        return []
    limit = _config(v).get("max_position_embeddings")
    value = str(min(16384, limit) if isinstance(limit, int) and limit > 0 else 16384)
    return [Finding("tuning.max_model_len_310p", WARN, T("tuning.max_model_len_310p.unset", version=v.version),
                    observed="auto", expected=f"--max-model-len {value}", fixable=Fixable.MANUAL,
                    hint=T("tuning.hint.flag", flag=f"--max-model-len {value}"), source=row.source,
                    edits=[Edit("flag", "max-model-len", value)])]


def ignored_config(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    row = v.fact("removed_additional_config")
    if sp is None or row is None or not row.value:
        return []
    stale = [k for k in row.value.split(",") if k in sp.additional_config]
    if not stale:
        return []
    return [Finding("tuning.ignored_config", WARN, T("tuning.ignored_config.removed", keys=", ".join(stale), version=v.version),
                    observed=", ".join(stale), fixable=Fixable.MANUAL, hint=T("tuning.ignored_config.hint", config="'{\"cudagraph_mode\": \"FULL_DECODE_ONLY\"}'"), source=row.source,
                    evidence=[row.note or ""])]


def quantization(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    m = v.model
    if m is None or not (m.quant_types or m.kv_quant_types) or v.version is None:
        return []
    out: List[Finding] = []
    known = {q.scheme: q for q in ctx.matrix.tuning_quant}
    unread = [t for t in m.kv_quant_types if t in known and not any(satisfies(v.version, r) for r in known[t].releases)]
    if unread:  # not read is not a load failure: the weights load, the KV cache is not quantized
        out.append(Finding("tuning.quantization", WARN, T("tuning.quantization.kv_scheme", schemes=", ".join(unread),
                                                          version=v.version),
                           observed=", ".join(unread), fixable=Fixable.MANUAL, hint=T("tuning.quantization.scheme_hint",
                           windows="; ".join(f"{t}: {' | '.join(known[t].releases)}" for t in unread)),
                           source=known[unread[0]].source))
    if not m.quant_types:
        return out
    missing = [t for t in m.quant_types if t in known and not any(satisfies(v.version, r) for r in known[t].releases)]
    if missing:
        first = known[missing[0]]
        out.append(Finding("tuning.quantization", FAIL, T("tuning.quantization.scheme", schemes=", ".join(missing), version=v.version),
                           observed=", ".join(missing), fixable=Fixable.MANUAL, hint=T("tuning.quantization.scheme_hint",
                           windows="; ".join(f"{t}: {' | '.join(known[t].releases)}" for t in missing)),
                           source=first.source))
    # a scheme some chips' registry alone has (W8A8S / W8A8SC: the 310P's): in the window, but not on other chips
    bound = [t for t in m.quant_types if t in known and t not in missing and known[t].hardware]
    chips = " / ".join(sorted({c for t in bound for c in known[t].hardware}))
    other = [t for t in bound if ctx.hardware is not None and ctx.hardware not in known[t].hardware]
    if other:
        out.append(Finding("tuning.quantization", FAIL, T("tuning.quantization.chip", schemes=", ".join(other),
                                                          version=v.version, chips=chips, hardware=ctx.hardware),
                           observed=f"{', '.join(other)} on {ctx.hardware}", expected=chips, fixable=Fixable.MANUAL,
                           hint=T("tuning.quantization.chip_hint", chips=chips), source=known[other[0]].source))
    elif bound and ctx.hardware is None:
        out.append(Finding("tuning.quantization", INFO, T("tuning.quantization.chip_unknown", schemes=", ".join(bound),
                                                          version=v.version, chips=chips),
                           observed=", ".join(bound), expected=chips, source=known[bound[0]].source))
    present = [t for t in m.quant_types if t in known and t not in missing and not known[t].hardware]
    out.extend(_chip_registry(v, ctx.hardware, present, known))
    sp = v.spec
    if sp is not None and (sp.quantization or "").lower() != "ascend" and v.fact("quant_auto_detect") is None:
        row = v.any_fact("quant_auto_detect")
        out.append(Finding("tuning.quantization", FAIL, T("tuning.quantization.flag", version=v.version,
                                                          given=sp.quantization or "none"),
                           observed=sp.quantization or "none", expected="ascend", fixable=Fixable.MANUAL,
                           hint=T("tuning.hint.flag", flag="--quantization ascend"), source=row.source if row else None,
                           edits=[Edit("flag", "quantization", "ascend")]))
    if not out and sp is not None:
        out.append(Finding("tuning.quantization", OK, T("tuning.quantization.ok", schemes=", ".join(m.quant_types), version=v.version),
                           observed=", ".join(m.quant_types)))
    return out


def _within(version: str, windows: Tuple[str, ...]) -> bool:
    return any(satisfies(version, r) for r in windows)


def _later(version: str, windows: Tuple[str, ...]) -> Optional[str]:
    """The first release after ``version`` a window opens at (its ">=X" bound), or None."""
    now = pep440(version)
    if now is None:
        return None
    starts = [(at, s.version) for w in windows for s in (specifier(w) or ())
              if s.operator == ">=" and (at := pep440(s.version)) is not None and at > now]
    return min(starts)[1] if starts else None


def _chip_registry(v: View, chip: Optional[str], schemes: List[str], known: Dict[str, TuningQuant]) -> List[Finding]:
    """Schemes the release has in its shared registry, judged against the registry a chip loads instead
    (the 310P's own from v0.15.0rc1: a [[tuning_quant.chips]] window); the chip unknown: said, not judged."""
    assert v.version is not None
    version = v.version
    if chip is None:
        depends = [t for t in schemes if any(not _within(version, c.releases) for c in known[t].chips)]
        if not depends:
            return []
        chips = " / ".join(sorted({h for t in depends for c in known[t].chips for h in c.hardware
                                   if not _within(version, c.releases)}))
        first = next(c for c in known[depends[0]].chips if not _within(version, c.releases))
        return [Finding("tuning.quantization", INFO, T("tuning.quantization.chip_depends", schemes=", ".join(depends),
                                                       version=version, chips=chips),
                        observed=", ".join(depends), source=first.source)]
    windows = {t: w for t in schemes if (w := known[t].window(chip)) is not None}
    lacking = [t for t, w in windows.items() if not _within(version, w.releases) and not _within(version, w.moe_only)]
    partial = [t for t, w in windows.items() if not _within(version, w.releases) and _within(version, w.moe_only)]
    if not lacking and not partial:
        return []
    have: List[Any] = []
    for q in known.values():
        w = q.window(chip)
        if (w is not None and _within(version, w.releases)) or (chip in q.hardware and _within(version, q.releases)):
            have.append(q.scheme)
        elif w is not None and _within(version, w.moe_only):
            have.append(T("tuning.quantization.moe_only_scheme", scheme=q.scheme))
    fact = v.fact(f"{chip.lower()}_quant_unsupported")
    error = fact.value if fact is not None and fact.value else "NotImplementedError"
    checked = v.any_fact("checked_through")

    def later(names: List[str]) -> Join:
        parts = []
        for t in names:
            start = _later(version, windows[t].releases)
            parts.append(T("tuning.quantization.chip_from", scheme=t, release=start) if start else
                         T("tuning.quantization.chip_never", scheme=t, checked=checked.value if checked else version))
        return join(parts, "sep.semi")

    def spans(names: List[str]) -> str:
        return "; ".join(f"{t}: {' | '.join(windows[t].releases) or '-'}" for t in names)

    out: List[Finding] = []
    if lacking:
        out.append(Finding("tuning.quantization", FAIL, T("tuning.quantization.chip_window", schemes=", ".join(lacking),
                                                          version=version, hardware=chip, have=join(have),
                                                          error=error, later=later(lacking)),
                           observed=f"{', '.join(lacking)} on {chip}", expected=join(have), fixable=Fixable.MANUAL,
                           hint=T("tuning.quantization.chip_window_hint", hardware=chip, have=join(have),
                                  windows=spans(lacking)),
                           source=windows[lacking[0]].source))
    if partial:
        out.append(Finding("tuning.quantization", WARN, T("tuning.quantization.chip_moe_only", schemes=", ".join(partial),
                                                          version=version, hardware=chip, error=error,
                                                          later=later(partial)),
                           observed=f"{', '.join(partial)} on {chip}", fixable=Fixable.MANUAL,
                           hint=T("tuning.quantization.chip_moe_only_hint", hardware=chip, schemes=", ".join(partial),
                                  windows=spans(partial)),
                           source=windows[partial[0]].source))
    return out


def heads_tp(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp = v.spec
    heads = _config(v).get("num_attention_heads")
    if sp is None or not isinstance(heads, int) or heads <= 0 or heads % sp.tp == 0:
        return []
    return [Finding("tuning.heads_tp", FAIL, T("tuning.heads_tp.indivisible", heads=heads, tp=sp.tp), observed=f"tp {sp.tp}",
                    expected=f"a divisor of {heads}", fixable=Fixable.MANUAL, hint=T("tuning.heads_tp.hint"),
                    source=_source(v, "heads_divisible_by_tp"))]


def _hbm_mb(v: View) -> Optional[int]:
    sizes = [s for s in (c.hbm_total_mb or c.memory_total_mb for c in v.chips()) if s]
    return min(sizes) if sizes else None


def kv_bytes_per_token(config: dict, tp: int, pp: int, dtype_bytes: int) -> Optional[int]:
    """Per rank and token: layers of this pipeline stage x the KV entries of one token."""
    layers = config.get("num_hidden_layers")
    if not isinstance(layers, int) or layers <= 0:
        return None
    per_stage = math.ceil(layers / pp)
    lora, rope = config.get("kv_lora_rank"), config.get("qk_rope_head_dim")
    if isinstance(lora, int) and isinstance(rope, int):  # MLA: one latent vector, every rank a full copy
        return per_stage * (lora + rope) * dtype_bytes
    heads = config.get("num_attention_heads")
    kv_heads = config.get("num_key_value_heads", heads)
    hidden = config.get("hidden_size")
    head_dim = config.get("head_dim") or (hidden // heads if isinstance(hidden, int) and isinstance(heads, int) and heads else None)
    if not isinstance(kv_heads, int) or not isinstance(head_dim, int) or kv_heads <= 0:
        return None
    return per_stage * 2 * max(1, kv_heads // tp) * head_dim * dtype_bytes


def kv_budget(hbm_bytes: float, util: float, weights_rank: float, hccl_bytes: float) -> Tuple[float, float]:
    """(low, high) bytes left for the KV cache on one rank. The high end takes only the weights
    and HCCL buffers off; the low end also keeps 15 % of HBM for activations, graph capture,
    MLA/MoE workspaces and transfer-engine registration, which vLLM measures itself at start."""
    high = hbm_bytes * util - weights_rank - hccl_bytes
    low = high - 0.15 * hbm_bytes
    return max(low, 0.0), max(high, 0.0)


def kv_cache(ctx: Context) -> Iterable[Finding]:
    v = view(ctx)
    sp, m = v.spec, v.model
    hbm_mb = _hbm_mb(v)
    if sp is None or m is None or not m.config or hbm_mb is None:
        return []
    kv_dtype = sp.kv_cache_dtype if sp.kv_cache_dtype != "auto" else (
        sp.dtype if sp.dtype != "auto" else str(m.config.get("torch_dtype") or m.config.get("dtype") or "bfloat16"))
    per_token = kv_bytes_per_token(m.config, sp.tp, sp.pp, DTYPE_BYTES.get(kv_dtype.lower(), 2))
    length = sp.max_model_len or m.config.get("max_position_embeddings")
    weights = sum(s.size or 0 for s in m.shards)
    if per_token is None or not isinstance(length, int) or length <= 0 or not weights:
        return []
    raw_buff = v.env.get("HCCL_BUFFSIZE", "")
    buff = int(raw_buff) if raw_buff.isdigit() else HCCL_BUFFSIZE_DEFAULT  # MB per communicator, CANN default
    hccl = 2 * buff * MIB if sp.tp * sp.pp > 1 else 0
    low, high = kv_budget(hbm_mb * MIB, sp.gpu_memory_utilization, weights / (sp.tp * sp.pp), hccl)
    need = length * per_token
    lo_tokens, hi_tokens = int(low // per_token), int(high // per_token)
    row = v.any_fact("kv_cache_estimate")
    evidence = [
        f"per rank: HBM {hbm_mb} MB x {sp.gpu_memory_utilization} - weights {weights / GIB:.1f} GiB / {sp.tp * sp.pp} ranks"
        f" - HCCL {hccl // MIB} MB - 0..15 % of HBM for activations and graphs",
        f"KV per token per rank: {per_token} bytes ({kv_dtype}); one {length}-token sequence: {need / GIB:.2f} GiB",
        f"estimated KV cache: {low / GIB:.1f}-{high / GIB:.1f} GiB = {lo_tokens}-{hi_tokens} tokens",
    ]
    source = row.source if row else None

    def finding(status: Status, title: Text, **more: Any) -> Finding:
        return Finding("tuning.kv_cache", status, title, observed=f"{lo_tokens}-{hi_tokens} tokens",
                       expected=f">={length} tokens", evidence=evidence, source=source, **more)

    if need > high:
        return [finding(WARN, T("tuning.kv_cache.none", length=length, lo=lo_tokens, hi=hi_tokens),
                        fixable=Fixable.MANUAL, hint=T("tuning.kv_cache.hint"))]
    if need > low:
        return [finding(INFO, T("tuning.kv_cache.tight", length=length, lo=lo_tokens, hi=hi_tokens),
                        hint=T("tuning.kv_cache.hint"))]
    return [finding(OK, T("tuning.kv_cache.ok", length=length, lo=lo_tokens, hi=hi_tokens,
                          seqs_lo=lo_tokens // length, seqs_hi=hi_tokens // length))]


VA = "https://github.com/vllm-project/vllm-ascend"
RULES = (
    rule("tuning.visible_devices", visible_devices,
         "https://www.hiascend.com/document/detail/en/canncommercial/850/maintenref/envvar/envref_07_0028.html"),
    rule("tuning.parallel_size", parallel_size,
         "https://docs.vllm.ai/en/latest/serving/parallelism_scaling.html"),
    rule("tuning.devices_busy", devices_busy, f"{VA}/issues/632"),
    rule("tuning.k8s_devices", k8s_devices, f"{VA}/issues/9428"),
    rule("tuning.dtype", dtype, f"{VA}/blob/v0.25.1rc1/docs/source/quick_start.md"),
    rule("tuning.block_size", block_size, f"{VA}/blob/v0.13.0/vllm_ascend/utils.py"),
    rule("tuning.graph_310p", graph_310p,
         f"{VA}/blob/v0.18.0rc1/docs/source/tutorials/hardwares/310p.md"),
    rule("tuning.max_model_len_310p", max_model_len_310p,
         f"{VA}/blob/v0.18.0/docs/source/tutorials/hardwares/310p.md"),
    rule("tuning.ignored_config", ignored_config,
         f"{VA}/blob/v0.25.1rc1/docs/source/user_guide/release_notes.md"),
    rule("tuning.quantization", quantization, "matrices/tuning.toml"),
    rule("tuning.heads_tp", heads_tp, "https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py"),
    rule("tuning.kv_cache", kv_cache,
         "https://github.com/vllm-project/vllm/blob/main/vllm/v1/kv_cache_interface.py"),
)
