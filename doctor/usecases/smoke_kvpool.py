"""The kvpool stage of `ascend-doctor smoke` (docs/smoke.md#kvpool): seed 003's proof that a
Mooncake KV pool serves hits, locally and across nodes, and with --sweep seed 001's capacity
knee, against running OpenAI-compatible servers.

The order of sends is the protocol: dataset A to instance 1 (TTFT1, cold); dataset B, sized from
the server's own HBM cache, to instance 1 (A leaves HBM, stays in the pool); A to instance 1
(TTFT2, local DRAM hit); A to instance 2 (TTFT3, cross-node hit). The judgement is pure
(doctor.smoke.kvpool_verdict, kvpool_sweep, kvpool_calc); this module only drives the sends
and the readings around them.
"""
from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from doctor.errors import UsageError
from doctor.findings import FAIL, WARN
from doctor.i18n import T
from doctor.smoke.kvpool_report import inert
from doctor.smoke.result import StageResult

# Seed 003 (AISBench): random prompts, 1024 tokens in, 10 out, 100 requests, 25 at a time.
SEED_REQUESTS, SEED_CONCURRENCY, SEED_INPUT, SEED_OUTPUT = 100, 25, 1024, 10
SWEEP_OUTPUT = 50        # seed 001 (LMCache long-doc-qa): 10,000 tokens in, 50 out
PROMPT_SLACK = 32        # the tag and the tokenizer's extras on top of the words
MAX_B_REQUESTS = 1_000_000
PHASE_LABELS = {"cold": "A → 1 cold", "evict": "B → 1 evict", "local": "A → 1 local hit", "remote": "A → 2 remote hit"}


@dataclass
class Shape:
    requests: int
    concurrency: int
    input_len: int
    output_len: int


def shape_of(opts: Any) -> Shape:
    return Shape(opts.kv_requests or SEED_REQUESTS, opts.kv_concurrency or SEED_CONCURRENCY,
                 opts.kv_input_len or SEED_INPUT, opts.kv_output_len or SEED_OUTPUT)


def _fail(seconds: float, metrics: Dict[str, Any], title: Any, hint: Any, observed: str) -> StageResult:
    return StageResult("kvpool", FAIL, seconds, metrics, title, hint=hint, observed=observed)


def _card(cards: List[Dict[str, Any]], model: str) -> Dict[str, Any]:
    return next((c for c in cards if str(c.get("id")) == model), {})


def _max_len(*cards: Dict[str, Any]) -> Optional[int]:
    lens = [c["max_model_len"] for c in cards if isinstance(c.get("max_model_len"), int) and c["max_model_len"] > 0]
    return min(lens) if lens else None


def _model_dir(opts: Any, card: Dict[str, Any]) -> Optional[str]:
    """--model, else the server's model path (vllm's ``root``) when it is a directory here."""
    if opts.model:
        return str(opts.model)
    root = card.get("root")
    if isinstance(root, str) and root.startswith("/") and os.path.isfile(os.path.join(root, "config.json")):
        return root
    return None


def kvpool_stage(ctx: Any, prompts: str) -> StageResult:
    from doctor.shell.smoke import kvpool_bench as io
    from doctor.shell.smoke.endpoint_bench import BenchConfig, EndpointError, Sessions, model_cards, run_pass
    from doctor.smoke import kvpool_calc as calc
    from doctor.smoke import kvpool_sweep as sweep
    from doctor.smoke.endpoint import metrics as figures_of
    from doctor.smoke.kvpool_master import master_delta
    from doctor.smoke.kvpool_verdict import Phase, PoolFacts, judge
    from doctor.smoke.slo import evaluate, parse_slo

    o = ctx.opts
    began = time.monotonic()
    deadline = began + o.timeout
    shape = shape_of(o)
    objectives = parse_slo(o.slo) if o.slo else []
    api_key = ctx.host.env.get("OPENAI_API_KEY")
    run_id = uuid.uuid4().hex[:8]

    def bench(url: str, input_len: int, output_len: int) -> BenchConfig:
        return BenchConfig(base_url=url, api=o.api, model=o.served_model, requests=shape.requests,
                           concurrency=shape.concurrency, input_len=input_len, output_len=output_len, warmup=0,
                           stall_timeout=o.stall_timeout, request_timeout=o.request_timeout, api_key=api_key)

    one = bench(o.endpoint or "", shape.input_len, shape.output_len)
    two = bench(o.peer_endpoint, shape.input_len, shape.output_len) if o.peer_endpoint else None
    metrics: Dict[str, Any] = {"url": one.base_url, "peer_url": two.base_url if two else None, "api": o.api}

    def elapsed() -> float:
        return time.monotonic() - began

    # -- the servers: reachable, the same model, long enough contexts --------------------------
    try:
        cards = model_cards(one)
    except EndpointError as e:
        why = inert(e)
        return _fail(elapsed(), dict(metrics, error=why), T("smoke.kvpool.unreachable", url=inert(one.base_url), error=why),
                     T("smoke.hint.endpoint"), why)
    model = o.served_model or str(cards[0]["id"])
    if o.served_model and not _card(cards, model):
        served = inert(", ".join(str(c["id"]) for c in cards[:5]))
        return _fail(elapsed(), metrics, T("smoke.kvpool.not_served", url=inert(one.base_url), model=inert(model),
                                           served=served), T("smoke.hint.endpoint"), served)
    metrics["model"] = inert(model)
    _check_lengths(o, shape, _max_len(_card(cards, model)))
    peer_cards: List[Dict[str, Any]] = []
    if two is not None:
        try:
            peer_cards = model_cards(two)
        except EndpointError as e:
            why = inert(e)
            return _fail(elapsed(), dict(metrics, error=why), T("smoke.kvpool.unreachable", url=inert(two.base_url),
                                                                 error=why), T("smoke.hint.endpoint"), why)
        if not _card(peer_cards, model):
            served = inert(", ".join(str(c["id"]) for c in peer_cards[:5]))
            return _fail(elapsed(), metrics, T("smoke.kvpool.peer_model", url=inert(two.base_url), model=inert(model),
                                               served=served), T("smoke.kvpool.hint.peer_model"), served)
    card = _card(cards, model)
    max_len = _max_len(card, _card(peer_cards, model)) if peer_cards else _max_len(card)
    _check_lengths(o, shape, max_len)
    metrics["max_model_len"] = max_len

    # -- what the configuration says: HBM cache, bytes per token, the pool, the master ----------
    first = io.read_server(one)
    hbm = calc.hbm_from_metrics(first.samples)
    log_error = None
    if hbm is None and o.server_log:
        hbm, log_error = io.read_log_hbm(o.server_log)
    if hbm is None:
        why = inert(log_error or first.error or "no vllm:cache_config_info with num_gpu_blocks in /metrics")
        return _fail(elapsed(), dict(metrics, error=why), T("smoke.kvpool.no_hbm", url=inert(one.base_url), error=why),
                     T("smoke.kvpool.hint.no_hbm"), why)
    metrics["hbm_cache"] = {"tokens": hbm.tokens, "blocks": hbm.blocks, "block_size": hbm.block_size,
                            "engines": hbm.engines, "source": hbm.source}
    kv = _kv_bytes(o, card, io, calc, hbm.cache_dtype)
    metrics["kv_bytes_per_token"] = kv
    pool_cfg = _pool_config(o, ctx.host.env, io, calc)
    metrics["mooncake_config"] = None if pool_cfg is None else {
        "path": pool_cfg.path, "error": pool_cfg.error, "global_segment_size": pool_cfg.segment_bytes,
        "segment_source": pool_cfg.segment_source, "protocol": pool_cfg.protocol,
        "metadata_server": pool_cfg.metadata_server, "master_server_address": pool_cfg.master_address}
    master_url, master_source = _master_url(o, ctx.host.env, pool_cfg)
    master0, master_error = io.read_master_counts(master_url) if master_url else (None, None)
    metrics["master"] = {"metrics_url": master_url, "from": master_source, "error": master_error,
                         "at_start": master0.to_json() if master0 else None}

    def master_now() -> Any:
        """The master's counts now; after one failed read it is not asked again (each read may
        take its whole timeout), and the loss is recorded."""
        if not master_url or master_error or metrics["master"].get("lost"):
            return None
        counts, error = io.read_master_counts(master_url)
        if counts is None:
            metrics["master"]["lost"] = inert(error or "no answer")
        return counts

    # -- warm-up, then the four sends ------------------------------------------------------------
    pools: Dict[str, Sessions] = {}
    for cfg in [c for c in (one, two) if c is not None]:
        pools[cfg.base_url] = Sessions()
        pools[cfg.base_url].open(cfg, max(shape.concurrency, o.sweep_concurrency if o.sweep else 0))
        if o.warmup:
            tags = [f"kvpool {run_id} warmup {i}" for i in range(o.warmup)]
            recs, _ = run_pass(cfg, model, tags, ctx.progress.count, "warmup", deadline, pools[cfg.base_url])
            if recs and not any(r.ok for r in recs):
                first_error = inert(next((r.error for r in recs if r.error), "") or "")
                return _fail(elapsed(), metrics, T("smoke.kvpool.warmup", url=inert(cfg.base_url), first=first_error),
                             T("smoke.hint.endpoint"), first_error)

    phases: Dict[str, Phase] = {}
    figures: Dict[str, Dict[str, Any]] = {}   # each send's endpoint figures, for --slo
    counter_names: Dict[str, str] = {}

    def send(name: str, cfg: Any, tags: List[str]) -> Phase:
        before = io.read_server(cfg)
        m0 = master_now()
        recs, secs = run_pass(cfg, model, tags, ctx.progress.count, PHASE_LABELS.get(name, name), deadline,
                              pools[cfg.base_url])
        figs = figures_of(recs, secs)
        after = io.settled(cfg, before.counters if not before.error else None, figs["input_tokens"])
        counter_names.update(after.counters.names)
        delta = calc.counter_delta(before.counters if not before.error else None,
                                   after.counters if not after.error else None)
        moved = master_delta(m0, master_now())
        for _ in range(io.SETTLE_TRIES):  # the connector stores after the forward pass: Puts trail the answers
            if moved is None or not figs["completed"] or (moved.get("puts") or 0) > 0 or name not in ("cold", "evict"):
                break
            time.sleep(io.SETTLE_WAIT)
            moved = master_delta(m0, master_now())
        phase = Phase(name, cfg.base_url, len(tags), figs["completed"], figs["failed"] + (len(tags) - len(recs)),
                      figs["ttft_ms"], figs["input_tokens"], delta or None, moved, figs["errors"], figs["first_errors"],
                      seconds=secs)
        phases[name] = phase
        figures[name] = figs
        return phase

    def timed_out() -> bool:
        return time.monotonic() >= deadline

    a_tags = [f"kvpool {run_id} A {i}" for i in range(shape.requests)]
    stop: Optional[str] = None
    cold = send("cold", one, a_tags)
    per_prompt = cold.prompt_tokens / cold.completed if cold.completed and cold.prompt_tokens else float(shape.input_len)
    b_requests = calc.eviction_requests(hbm.tokens, per_prompt)
    estimate = cold.seconds * b_requests / max(1, shape.requests)
    metrics["datasets"] = {
        "a": {"requests": shape.requests, "concurrency": shape.concurrency, "input_len": shape.input_len,
              "output_len": shape.output_len, "prompt_tokens": cold.prompt_tokens},
        "b": {"requests": b_requests, "input_len": shape.input_len, "output_len": shape.output_len,
              "sized_from": f"{calc.EVICTION_MARGIN:g} × HBM {hbm.tokens:,} tokens ({hbm.source}) / "
                            f"{per_prompt:,.0f} tokens per prompt"}}
    if timed_out():
        stop = "cold"
    elif not cold.failed and (time.monotonic() + estimate > deadline or b_requests > MAX_B_REQUESTS):
        need = elapsed() + estimate * 1.5 + 3 * cold.seconds
        return _fail(elapsed(), _finish(metrics, phases, counter_names),
                     T("smoke.kvpool.b_too_long", requests=b_requests, seconds=f"{estimate:.0f}",
                       timeout=f"{o.timeout:g}"),
                     T("smoke.kvpool.hint.raise_timeout", seconds=f"{need:.0f}"), f"{b_requests} requests")
    if stop is None and not cold.failed:
        evict = send("evict", one, [f"kvpool {run_id} B {i}" for i in range(b_requests)])
        metrics["datasets"]["b"]["prompt_tokens"] = evict.prompt_tokens
        if timed_out():
            stop = "evict"
        elif not evict.failed:
            send("local", one, a_tags)
            if timed_out():
                stop = "local"
            elif two is not None and not phases["local"].failed:
                send("remote", two, a_tags)
                if timed_out():
                    stop = "remote"

    # -- the capacity sweep ---------------------------------------------------------------------
    knee = agreement = None
    bpt = kv.get("bytes")
    pool, pool_how = calc.pool_bytes(pool_cfg, master0.capacity if master0 else None,
                                     master0.clients if master0 else None)
    if o.sweep and stop is None and not any(p.failed for p in phases.values()):
        doc = bench(one.base_url, o.doc_len, SWEEP_OUTPUT)
        doc.concurrency = o.sweep_concurrency
        guess = calc.predict_knee(o.doc_len, hbm, bpt, pool)
        docs = sweep.parse_docs(o.sweep_docs) if o.sweep_docs else sweep.plan_docs(guess)
        points: List[sweep.Point] = []
        doc_tokens: List[float] = []
        for n in docs:
            tags = [f"kvpool {run_id} doc{n} {i}" for i in range(n)]
            pair = []
            share: Optional[float] = None
            for ask in (1, 2):
                before = io.read_server(doc) if ask == 2 else None
                recs, secs = run_pass(doc, model, tags, ctx.progress.count, f"sweep {n} docs, ask {ask}", deadline,
                                      pools[doc.base_url])
                figs = figures_of(recs, secs)
                if before is not None and not before.error and figs["completed"] and not figs["failed"]:
                    after = io.settled(doc, before.counters, figs["input_tokens"])
                    share = sweep.hit_share(calc.counter_delta(before.counters, None if after.error else after.counters),
                                            figs["input_tokens"])
                if figs["failed"] or len(recs) < n:
                    phases[f"sweep{n}"] = Phase("sweep", doc.base_url, n, figs["completed"],
                                                figs["failed"] + n - len(recs), figs["ttft_ms"], figs["input_tokens"],
                                                errors=figs["errors"], first_errors=figs["first_errors"])
                    break
                if figs["completed"]:
                    doc_tokens.append(figs["input_tokens"] / figs["completed"])
                pair.append((figs["ttft_ms"]["p50"], figs["ttft_ms"]["mean"]))
            if len(pair) < 2:
                stop = "sweep" if timed_out() else None
                break
            points.append(sweep.Point(n, pair[0][0], pair[1][0], pair[0][1], pair[1][1], share))
        per_doc = sum(doc_tokens) / len(doc_tokens) if doc_tokens else float(o.doc_len)
        prediction = calc.predict_knee(per_doc, hbm, bpt, pool)
        knee = sweep.find_knee(points)
        agreement = sweep.agree(knee, prediction)
        if pool_how and prediction is not None:
            prediction.inputs.append(pool_how)
        metrics["sweep"] = {"doc_len": o.doc_len, "doc_tokens": round(per_doc, 1), "output_len": SWEEP_OUTPUT,
                            "concurrency": o.sweep_concurrency,
                            "docs": docs, "points": [p.to_json() for p in points], "knee": knee.to_json(),
                            "prediction": prediction.to_json() if prediction else None,
                            "agreement": agreement.state}

    _finish(metrics, phases, counter_names)
    evaluated = [(name, check) for name in ("local", "remote") if name in figures
                 for check in evaluate(objectives, figures[name])]
    if objectives:
        metrics["slo"] = [dict(c.to_json(), phase=name) for name, c in evaluated]
    facts = PoolFacts(config=pool_cfg, master_url=master_url, master_error=master_error, bytes_per_token=bpt,
                      pool_bytes=pool, master_capacity=master0.capacity if master0 else None)
    result = judge(phases, facts, evaluated, elapsed(), metrics, knee, agreement, timed_out=stop)
    tiers = metrics.get("tiers") or {}
    if any(t.get("state") == "missed" for t in tiers.values()):  # only then is the config check worth its time
        facts.config_problems = _config_problems(pool_cfg, ctx.host.env, io)
        result = judge(phases, facts, evaluated, elapsed(), metrics, knee, agreement, timed_out=stop)
    return result


def _check_lengths(o: Any, shape: Shape, max_len: Optional[int]) -> None:
    """The prompts must fit the servers' context (vllm's max_model_len): else exit 2."""
    if not max_len:
        return
    if shape.input_len + shape.output_len + PROMPT_SLACK > max_len:
        raise UsageError(T("smoke.error.kvpool_shape_too_long", input_len=shape.input_len, output_len=shape.output_len,
                           max_len=max_len))
    if o.sweep and o.doc_len + SWEEP_OUTPUT + PROMPT_SLACK > max_len:
        raise UsageError(T("smoke.error.kvpool_doc_too_long", doc_len=o.doc_len, max_len=max_len,
                           most=max_len - SWEEP_OUTPUT - PROMPT_SLACK))


def _finish(metrics: Dict[str, Any], phases: Dict[str, Any], names: Dict[str, str]) -> Dict[str, Any]:
    for key, phase in (("cold", "cold"), ("local_hit", "local"), ("remote_hit", "remote")):
        p = phases.get(phase)
        for stat in ("p50", "p90", "p99"):
            metrics[f"ttft_{key}_{stat}_ms"] = p.ttft_ms.get(stat) if p else None
    metrics["phases"] = {k: v.to_json() for k, v in phases.items()}
    metrics["counter_names"] = dict(names)
    return metrics


def _kv_bytes(o: Any, card: Dict[str, Any], io: Any, calc: Any, cache_dtype: Optional[str]) -> Dict[str, Any]:
    """Bytes per token from the model's config.json, in the server's KV cache dtype when it is
    not the model's own (vllm:cache_config_info cache_dtype, e.g. fp8)."""
    directory = _model_dir(o, card)
    if directory is None:
        return {"bytes": None, "model_dir": None, "error": "no model directory (give --model DIR)"}
    data, error = io.read_model_config(directory)
    if data is None:
        return {"bytes": None, "model_dir": inert(directory), "error": inert(error)}
    kv_dtype = cache_dtype if cache_dtype and cache_dtype.lower() not in ("auto", "none") else None
    kv = calc.kv_bytes_per_token(data, kv_dtype)
    return {"bytes": kv.bytes_per_token, "formula": kv.formula, "model_dir": inert(directory), "error": kv.error,
            "cache_dtype": inert(cache_dtype) if cache_dtype else None}


def _pool_config(o: Any, env: Dict[str, str], io: Any, calc: Any) -> Any:
    path = o.mooncake_config or env.get("MOONCAKE_CONFIG_PATH")
    if not path:
        return None
    data, error = io.read_json(path)
    if error:
        return calc.PoolConfig(path=path, error=error)
    return calc.pool_config(data, path, env)


def _config_problems(cfg: Any, env: Dict[str, str], io: Any) -> List[Any]:
    """The failures and warnings `ascend-doctor check` finds in the Mooncake config (the same
    pure check, without the installed versions: the servers' environment is not this one)."""
    if cfg is None or cfg.error:
        return []
    from doctor.shell.host.files import read_text

    text = read_text(cfg.path, io.CONFIG_CAP)
    if text is None:
        return []
    try:
        from doctor.matrix import load_matrix
        from doctor.rules.mooncake import config_knowledge

        knowledge = config_knowledge(load_matrix())
    except Exception:  # noqa: BLE001 - a broken matrix overlay must not hide the stage's result
        knowledge = {}
    from doctor.rules.mooncake_config import ConfigContext, check_text

    issues = check_text(text, ConfigContext(env=env, path=cfg.path, **knowledge))
    return [i.title for i in issues if i.status in (FAIL, WARN)]


def _master_url(o: Any, env: Dict[str, str], cfg: Any) -> Tuple[Optional[str], Optional[str]]:
    """The master's metrics address: --master, else MOONCAKE_MASTER, else the config's
    master_server_address (metrics on 9003 unless HOST:PORT:METRICS_PORT says otherwise)."""
    from doctor.shell.mooncake.master import parse_address

    for value, source in ((o.master, "--master"), (env.get("MOONCAKE_MASTER"), "MOONCAKE_MASTER"),
                          (cfg.master_address if cfg else None, "master_server_address")):
        if value:
            addr = parse_address(str(value))
            if addr.error:
                if source == "--master":
                    raise UsageError(T("option.error.detail", option="--master", value=value, error=addr.error))
                continue
            return addr.metrics_url, source
    return None, None


def check_inputs(opts: Any) -> None:
    """Before any request: the files the options name can be read, the report can be written
    (a regular file or a new one in an existing directory); else one line and exit 2."""
    import stat

    for name, path in (("--server-log", opts.server_log), ("--mooncake-config", opts.mooncake_config)):
        if path is None:
            continue
        try:
            st = os.stat(path)
        except OSError as e:
            raise UsageError(T("option.error.detail", option=name, value=path, error=e.strerror or str(e))) from None
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(T("option.error.not_regular", option=name, path=path))
        if not os.access(path, os.R_OK):
            raise UsageError(T("option.error.not_readable", option=name, path=path))
    if opts.report:
        path = str(opts.report)
        if os.path.lexists(path):
            try:
                st = os.stat(path)
            except OSError:
                raise UsageError(T("option.error.dangling", option="--report", path=path)) from None
            if not stat.S_ISREG(st.st_mode):
                raise UsageError(T("smoke.error.report_not_file", path=path))
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise UsageError(T("option.error.no_parent", option="--report", path=path, parent=parent))
        if not os.access(parent, os.W_OK):
            raise UsageError(T("option.error.parent_not_writable", option="--report", path=path, parent=parent))


def write_report(report: Any, path: str, lang: str) -> None:
    """The kvpool stage's HTML report; the outcome is recorded in the stage's metrics."""
    from doctor import __version__
    from doctor.shell.host.files import write_atomic
    from doctor.smoke.kvpool_report import html_report

    stage = next((s for s in report.stages if s.name == "kvpool"), None)
    if stage is None or stage.status == "skip":
        return
    try:
        write_atomic(path, html_report(stage.to_json(lang), lang, __version__))
        stage.metrics["report"] = path
    except OSError as e:
        stage.metrics["report_error"] = f"{path}: {e.strerror or e}"
