"""`ascend-doctor smoke`: run the stages the options ask for (model, vllm, endpoint, collective),
in that order, each with its own timeout, stopping at the first failure.

Results are StageResults (doctor.smoke.result) and findings of layer ``smoke``
(smoke.model, smoke.vllm, smoke.endpoint, smoke.collective) that set the exit code.
``run_configured_stages`` is what `fix --apply` calls after a repair.
"""
from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from doctor import __version__
from doctor.errors import UsageError
from doctor.findings import FAIL, OK, Finding, Message, Msg, Verdict, judge
from doctor.i18n import T, tr
from doctor.progress import Progress, Silent
from doctor.shell.smoke.files import weights_bytes
from doctor.smoke import golden
from doctor.smoke.config import ConfigError, SmokeOptions, from_file, merge, parse_devices, vllm_arg_words
from doctor.smoke.result import Outcome, StageResult, compare_text, failure, skipped, wrong_output

PROMPTS = ["The capital of France is", "1, 2, 3, 4, 5,", "def add(a, b):\n    return"]
CPU_REFERENCE_MAX_BYTES = 4 << 30  # weights above this are not re-run on the CPU (minutes, RAM)
CONFIG_ENV = "ASCEND_DOCTOR_SMOKE_CONFIG"
MAX_CONFIG = 256 * 1024


@dataclass
class SmokeReport:
    python: str
    device: str
    stages: List[StageResult]
    verdict: Verdict
    golden_written: Optional[str] = None

    @property
    def findings(self) -> List[Finding]:
        return self.verdict.findings

    def exit_code(self) -> int:
        return self.verdict.exit_code()

    def to_json(self, lang: str = "en") -> Dict[str, Any]:
        counts = self.verdict.counts()
        return {"schema_version": 1, "tool_version": __version__, "python": self.python, "device": self.device,
                "stages": [s.to_json(lang) for s in self.stages],
                "summary": {**counts, "root_cause": self.verdict.root_cause},
                "findings": [f.to_json(lang) for f in self.verdict.findings],
                "golden_written": self.golden_written}


# ---------------------------------------------------------------------------------------------
# configuration


def default_config_path(env: Mapping[str, str]) -> Path:
    from doctor import xdg

    return xdg.config_dir(env) / "smoke.toml"


def config_path(explicit: Optional[str], env: Mapping[str, str]) -> Optional[Path]:
    """--config FILE, else $ASCEND_DOCTOR_SMOKE_CONFIG, else ~/.config/ascend-doctor/smoke.toml
    when it exists."""
    if explicit:
        return Path(explicit)
    if env.get(CONFIG_ENV):
        return Path(env[CONFIG_ENV])
    from doctor.shell.smoke import files

    path = default_config_path(env)
    return path if files.is_file(path) else None


def read_config(path: Optional[Path]) -> Dict[str, Any]:
    from doctor.shell.smoke import files

    if path is None:
        return {}
    try:
        if not files.is_file(path):
            raise UsageError(T("smoke.error.config_missing", path=path))
        raw = files.read_capped(str(path), MAX_CONFIG + 1)
    except OSError as e:
        raise UsageError(T("smoke.error.config_unreadable", path=path, error=e.strerror or str(e))) from None
    if len(raw) > MAX_CONFIG:
        raise UsageError(T("smoke.error.config_too_large", path=path, kib=MAX_CONFIG // 1024))
    try:
        from doctor.i18n import toml_loads

        data = toml_loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(T("smoke.error.config_not_toml", path=path, error=str(e))) from None
    except RecursionError:  # '[' * 100000: tomllib recurses once per level
        raise UsageError(T("smoke.error.config_not_toml", path=path, error="nested too deeply")) from None
    try:
        return from_file(data, str(path))
    except ConfigError as e:
        raise UsageError(e.args[0] if len(e.args) == 1 else str(e)) from None  # a catalogue Text stays one


def options(flags: Mapping[str, Any], config: Optional[str], env: Mapping[str, str]) -> SmokeOptions:
    try:
        return merge(read_config(config_path(config, env)), flags)
    except ConfigError as e:
        raise UsageError(e.args[0] if len(e.args) == 1 else str(e)) from None  # a catalogue Text stays one


# ---------------------------------------------------------------------------------------------
# explain: error text -> the cause and fix of a known signature


def make_explain() -> Callable[[str], Optional[Message]]:
    cache: Dict[str, Any] = {}

    def explain(text: str) -> Optional[Message]:
        from doctor.usecases.explain import match_log

        if "signatures" not in cache:
            try:
                from doctor.matrix import load_matrix

                cache["signatures"] = load_matrix().signatures
            except Exception:  # noqa: BLE001 - a broken overlay must not hide the smoke result
                cache["signatures"] = []
        en = [m for m in match_log(text, cache["signatures"], "en") if not m.benign]
        zh = [m for m in match_log(text, cache["signatures"], "zh") if not m.benign]
        if not en:
            return None
        return Msg(tr("smoke.hint.explain", "en", cause=en[0].cause, fix=en[0].fix, id=en[0].id),
                   tr("smoke.hint.explain", "zh", cause=zh[0].cause, fix=zh[0].fix, id=zh[0].id))

    return explain


# ---------------------------------------------------------------------------------------------
# the runner


@dataclass
class Context:
    host: Any
    python: str
    opts: SmokeOptions
    env: Dict[str, str]
    workdir: str
    progress: Progress
    explain: Callable[[str], Optional[Message]]
    golden: Optional[Dict[str, Any]] = None
    outputs: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)  # for --record-golden
    reference: Optional[List[Dict[str, Any]]] = None                        # CPU reference, shared


def run(opts: SmokeOptions, python: str, host: Any, progress: Optional[Progress] = None,
        explain: Optional[Callable[[str], Optional[Message]]] = None) -> SmokeReport:
    from doctor.shell.smoke.files import workdir
    from doctor.shell.smoke.scripts import target_env

    progress = progress or Silent()
    if os.sep in python:
        python = os.path.abspath(python)  # the scripts run in a directory of their own
    loaded_golden = _load_golden(opts.golden) if opts.golden else None
    wanted = opts.wanted()
    stages: List[StageResult] = []
    with workdir(loaded_golden["prompts"] if loaded_golden else PROMPTS) as (tmp, prompts):
        ctx = Context(host=host, python=python, opts=opts, env=target_env(host.env, opts.device), workdir=tmp,
                      progress=progress, explain=explain or make_explain(), golden=loaded_golden)
        blocker: Optional[str] = None
        try:
            for name in wanted:
                if blocker:
                    stages.append(skipped(name, blocker))
                    continue
                progress.stage(name)
                result = RUNNERS[name](ctx, prompts)
                stages.append(result)
                if result.status == FAIL:
                    blocker = f"smoke.{name}"
        finally:
            progress.close()
    written = None
    if opts.record_golden and not blocker:
        written = _write_golden(opts.record_golden, opts, ctx)
    verdict = judge([s.finding() for s in stages])
    return SmokeReport(python=python, device=opts.device, stages=stages, verdict=verdict, golden_written=written)


def _outcome(res: Any, timeout: float) -> Outcome:
    f = res.finished
    start_error = None if f.found and not f.error else f"{f.argv[0]}: {f.error or 'not found'}"
    return Outcome(run=res.run, seconds=f.duration_s, timed_out=f.timed_out, returncode=f.returncode,
                   start_error=start_error, log=res.log, timeout=timeout)


def _run(ctx: Context, name: str, args: List[str]) -> Any:
    from doctor.shell.smoke.scripts import run_script

    seen: Dict[str, Any] = {"last": 0.0}

    def tick() -> None:
        now = time.monotonic()
        if now - seen["last"] > 1.0:
            seen["last"] = now
            ctx.progress.step(name)

    return run_script(ctx.python, name, args, env=ctx.env, timeout=ctx.opts.timeout, tick=tick, workdir=ctx.workdir)


def _model_identity(path: Optional[str]) -> Dict[str, Any]:
    """What makes a golden file belong to a model: config.json's hash and the weight files' sizes."""
    from doctor.shell.smoke import files

    if not path:
        return {"name": "tiny"}
    ident: Dict[str, Any] = {"name": os.path.basename(os.path.normpath(path))}
    digest = files.config_sha256(path, MAX_CONFIG)
    if digest is not None:
        ident["config_sha256"] = digest
    ident["weights_bytes"] = files.weights_bytes(path)
    return ident


def _load_golden(path: str) -> Dict[str, Any]:
    from doctor.shell.host.files import NotRegularFile
    from doctor.shell.smoke.files import read_capped

    try:
        raw = read_capped(path, 64 * 1024 * 1024)
        return golden.check_golden(json.loads(raw))
    except NotRegularFile:
        raise UsageError(T("option.error.not_regular", option="--golden", path=path)) from None
    except RecursionError:  # a document nested deeper than the parser's stack
        raise UsageError(T("option.error.too_deep", option="--golden", path=path)) from None
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--golden", value=path, error=e.strerror or str(e))) from None
    except ValueError as e:
        raise UsageError(T("option.error.detail", option="--golden", value=path, error=str(e))) from None


def _write_golden(path: str, opts: SmokeOptions, ctx: Context) -> Optional[str]:
    if not ctx.outputs:
        return None
    doc = golden.golden_doc(_model_identity(opts.model), PROMPTS if not ctx.golden else ctx.golden["prompts"],
                            opts.tokens, 5, ctx.outputs,
                            {"host": platform.node(), "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                             "device": opts.device, "python": ctx.python})
    from doctor.shell.host.files import write_atomic

    try:
        write_atomic(path, json.dumps(doc, indent=1))
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--record-golden", value=path, error=e.strerror or str(e))) from None
    return path


def _reference_for(ctx: Context, stage: str) -> Tuple[str, Optional[List[Dict[str, Any]]]]:
    """(name, outputs) of what a stage's output is compared with: the golden file's when given,
    else the CPU run."""
    if ctx.golden is not None:
        outs = ctx.golden["outputs"].get(stage)
        if ctx.opts.model and ctx.golden.get("model", {}).get("config_sha256") not in (
                None, _model_identity(ctx.opts.model).get("config_sha256")):
            raise UsageError(T("smoke.error.golden_other_model", path=ctx.opts.golden, model=ctx.golden["model"].get("name")))
        return "golden", outs
    return "cpu", ctx.reference


# -- model ------------------------------------------------------------------------------------


def model_stage(ctx: Context, prompts: str) -> StageResult:
    o = ctx.opts
    args = ["--device", o.device, "--tokens", str(o.tokens), "--dtype", o.dtype, "--prompts", prompts]
    if o.model:
        args += ["--model", o.model]
    small = not o.model or weights_bytes(o.model) <= CPU_REFERENCE_MAX_BYTES
    if small and ctx.golden is None:
        args.append("--reference")
    res = _run(ctx, "smoke_model", args)
    out = _outcome(res, o.timeout)
    metrics = res.run.metrics()
    metrics.pop("model", None)
    metrics["model"] = o.model or "tiny"
    fail = failure("model", out, ctx.explain, metrics)
    if fail:
        return fail
    device_out = res.run.outputs.get("device", [])
    ctx.outputs["model"] = device_out
    if "reference" in res.run.outputs:
        ctx.reference = res.run.outputs["reference"]
    ref_name, ref = _reference_for(ctx, "model")
    cmp = golden.compare(ref, device_out) if ref else None
    if cmp is not None:
        metrics["comparison"] = cmp.to_json()
        if not cmp.ok:
            return wrong_output("model", out.seconds, metrics, ref_name, cmp)
    gen = res.run.step("generate") or {}
    gm = gen.get("metrics") or {}
    load = res.run.step("load") or {}
    title = T("smoke.model.ok", model=loaded_model_words(load, metrics["model"]), device=o.device,
              tokens=gm.get("tokens", 0), tps=gm.get("tokens_per_s"), load=f"{load.get('seconds', 0):.1f}",
              compared=compare_text(ref_name, cmp) if cmp is not None else T("smoke.compared.none"))
    return StageResult("model", OK, out.seconds, metrics, title)


def loaded_model_words(load: Dict[str, Any], model: str) -> Any:
    """What the target's load step loaded, in the report's language: the script in the target
    reports facts (metrics), the words come from the catalogue."""
    m = load.get("metrics") or {}
    if m.get("model") == "tiny":
        return T("smoke.model.tiny")
    if isinstance(m.get("parameters"), (int, float)) and m.get("model"):
        return T("smoke.model.hf", name=os.path.basename(os.path.normpath(str(m["model"]))),
                 params=f"{m['parameters'] / 1e6:.1f}", dtype=str(m.get("dtype") or "?"))
    return load.get("detail") or model


# -- vllm -------------------------------------------------------------------------------------


def serve_words(opts: SmokeOptions, host: Any) -> Tuple[Optional[str], List[str]]:
    """(model, engine argument words) from --serve-args/--serve-args-file and --vllm-arg."""
    from doctor.parse.serveargs import parse_command

    text = opts.serve_args
    if opts.serve_args_file:
        from doctor.shell.host.files import NotRegularFile
        from doctor.shell.smoke.files import read_capped

        try:
            text = read_capped(opts.serve_args_file, MAX_CONFIG).decode("utf-8", "replace")
        except NotRegularFile:
            raise UsageError(T("option.error.not_regular", option="--serve-args-file",
                               path=opts.serve_args_file)) from None
        except OSError as e:
            raise UsageError(T("option.error.detail", option="--serve-args-file", value=opts.serve_args_file,
                                   error=e.strerror or str(e))) from None
    model: Optional[str] = None
    words: List[str] = []
    if text:
        cmd = parse_command(text, host.env)
        if cmd.error:
            raise UsageError(f"--serve-args: {cmd.error}")
        argv = list(cmd.argv)
        if "serve" in argv:
            argv = argv[argv.index("serve") + 1:]
            if argv and not argv[0].startswith("-"):
                model = argv.pop(0)
        else:
            while argv and not argv[0].startswith("-"):
                argv.pop(0)  # python -m vllm.entrypoints.openai.api_server
        words = argv
        for i, w in enumerate(words):
            if w == "--model" and i + 1 < len(words):
                model = words[i + 1]
            elif w.startswith("--model="):
                model = w.split("=", 1)[1]
    words += vllm_arg_words(opts.vllm_args)
    return opts.model or model, words


def _eager_in(words: List[str]) -> bool:
    return any(w in ("--enforce-eager", "--enforce_eager") or w.startswith("--enforce-eager=true") for w in words)


def _vllm_run(ctx: Context, model: str, words: List[str], prompts: str, eager: bool) -> Tuple[Any, Outcome]:
    args = ["--model", model, "--engine-args", json.dumps(words), "--prompts", prompts, "--tokens", str(ctx.opts.tokens)]
    if eager:
        args.append("--eager")
    res = _run(ctx, "smoke_vllm", args)
    return res, _outcome(res, ctx.opts.timeout)


def _vllm_metrics(res: Any) -> Dict[str, Any]:
    m = res.run.metrics()
    m.update(res.figures)
    return m


def vllm_stage(ctx: Context, prompts: str) -> StageResult:
    o = ctx.opts
    model, words = serve_words(o, ctx.host)
    if not model:
        raise UsageError(T("smoke.error.vllm_needs_model"))
    res, out = _vllm_run(ctx, model, words, prompts, eager=False)
    metrics = _vllm_metrics(res)
    metrics["mode"] = "eager" if metrics.get("enforce_eager") or _eager_in(words) else "graph"
    eager_res = eager_out = None
    if o.eager and metrics["mode"] == "graph":
        ctx.progress.stage("vllm (eager)")
        eager_res, eager_out = _vllm_run(ctx, model, words, prompts, eager=True)
        metrics["eager"] = _vllm_metrics(eager_res)
    fail = vllm_failure(out, metrics, eager_out, ctx.explain)
    if fail:
        return fail
    outs = res.run.outputs.get("vllm", [])
    ctx.outputs["vllm"] = outs
    ref_name, ref = _reference_for(ctx, "vllm")
    if ref is None and ref_name == "cpu" and weights_bytes(model) <= CPU_REFERENCE_MAX_BYTES:
        ref = _cpu_reference(ctx, model, prompts)
    return vllm_result(out, metrics, eager_out, ctx.explain, ref_name, ref, outs)


def vllm_failure(out: Outcome, metrics: Dict[str, Any], eager_out: Optional[Outcome],
                 explain: Callable[[str], Optional[Message]]) -> Optional[StageResult]:
    """The vllm stage's failure from its run(s), or None: a graph-mode failure that the eager
    run (``eager_out``, when --eager asked for one) does not have is said as such."""
    fail = failure("vllm", out, explain, metrics)
    if not fail:
        return None
    if eager_out is not None:
        eager_fail = failure("vllm", eager_out, explain, {})
        fail.metrics["eager_ok"] = eager_fail is None
        if eager_fail is None:
            fail.title = T("smoke.vllm.graph_only", failure=fail.title)
            fail.hint = T("smoke.hint.graph")
        else:
            fail.title = T("smoke.vllm.both_modes", failure=fail.title)
    elif metrics["mode"] == "graph":
        fail.hint = T("smoke.hint.try_eager", hint=fail.hint or T("smoke.hint.check"))
    return fail


def vllm_result(out: Outcome, metrics: Dict[str, Any], eager_out: Optional[Outcome],
                explain: Callable[[str], Optional[Message]], ref_name: str,
                ref: Optional[List[Dict[str, Any]]], outs: List[Dict[str, Any]]) -> StageResult:
    """A vllm run that finished, judged: its outputs against the reference (wrong output is a
    failure), else its figures."""
    cmp = golden.compare(ref, outs) if ref else None
    if cmp is not None:
        metrics["comparison"] = cmp.to_json()
        if not cmp.ok:
            return wrong_output("vllm", out.seconds, metrics, ref_name, cmp)
    versions = metrics.get("versions") or {}
    capture = T("smoke.vllm.capture", seconds=f"{metrics['graph_capture_s']:g}") if "graph_capture_s" in metrics else ""
    eager_note: Any = ""
    if eager_out is not None:
        eager_fail = failure("vllm", eager_out, explain, {})
        eager_note = T("smoke.vllm.eager_note", tps=(metrics["eager"].get("tokens_per_s") if eager_fail is None else "-"))
    title = T("smoke.vllm.ok", version=versions.get("vllm", "?"), mode=metrics["mode"],
              load=f"{metrics.get('load_s', 0):.1f}", capture=capture,
              ttft=f"{(metrics.get('ttft_s') or 0) * 1000:.0f}", tps=metrics.get("tokens_per_s"),
              compared=compare_text(ref_name, cmp), eager=eager_note)
    return StageResult("vllm", OK, out.seconds, metrics, title)


def _cpu_reference(ctx: Context, model: str, prompts: str) -> Optional[List[Dict[str, Any]]]:
    res = _run(ctx, "smoke_model", ["--reference-only", "--model", model, "--prompts", prompts,
                                    "--tokens", str(ctx.opts.tokens)])
    ctx.reference = res.run.outputs.get("reference") or None
    return ctx.reference


# -- endpoint ---------------------------------------------------------------------------------


def endpoint_stage(ctx: Context, prompts: str) -> StageResult:
    from doctor.shell.smoke.endpoint_bench import BenchConfig, EndpointError, run_bench
    from doctor.smoke import result, soak
    from doctor.smoke.endpoint import metrics as figures_of
    from doctor.smoke.slo import evaluate, parse_slo

    o = ctx.opts
    objectives = parse_slo(o.slo) if o.slo else []
    cfg = BenchConfig(base_url=o.endpoint or "", api=o.api, model=o.served_model, requests=o.requests,
                      concurrency=o.concurrency, input_len=o.input_len, output_len=o.output_len, warmup=o.warmup,
                      prefix_cache=o.prefix_cache, stall_timeout=o.stall_timeout, request_timeout=o.request_timeout,
                      duration=o.duration, api_key=ctx.host.env.get("OPENAI_API_KEY"))
    sampler = None
    if o.duration:
        from doctor.shell.smoke.soak import Sampler, server_pid

        sampler = Sampler(ctx.host, o.server_pid or server_pid(cfg.base_url))
    began = time.monotonic()
    try:
        bench = run_bench(cfg, progress=ctx.progress.count,
                          every=(o.sample_every, sampler) if sampler else None)
    except EndpointError as e:
        return result.endpoint_unreachable(time.monotonic() - began, cfg.base_url, str(e))
    seconds = time.monotonic() - began
    if not bench.records and bench.warmup:
        figs = figures_of(bench.warmup, 0.0)
        figs["model"] = bench.model
        return result.endpoint_warmup_failed(seconds, figs)
    figs = figures_of(bench.records, bench.duration)
    figs.update({"model": bench.model, "url": cfg.base_url, "api": cfg.api, "concurrency": cfg.concurrency,
                 "input_len": cfg.input_len, "output_len": cfg.output_len, "warmup": len(bench.warmup),
                 "prefix_cache": cfg.prefix_cache})
    if bench.cold:
        cold = figures_of(bench.cold, bench.cold_duration)
        figs["cold"] = {k: cold[k] for k in ("ttft_ms", "completed", "failed", "errors", "first_errors")}
        if cold["failed"]:
            figs["failed"] += cold["failed"]
            figs["requests"] += cold["requests"]
            for k, v in cold["errors"].items():
                figs["errors"][k] = figs["errors"].get(k, 0) + v
            for k, v in cold["first_errors"].items():
                figs["first_errors"].setdefault(k, v)
    climbing = []
    if sampler is not None:
        trends = soak.trends(sampler.series, sampler.capacity)
        figs["soak"] = {"duration_s": o.duration, "server_pid": sampler.pid,
                        "samples": {k: len(v) for k, v in sampler.series.items()},
                        "trends": [t.to_json() for t in trends]}
        climbing = [t for t in trends if t.climbing]
    return result.endpoint_result(seconds, figs, evaluate(objectives, figs), climbing)


# -- collective -------------------------------------------------------------------------------

NPU_SIZES = [1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20]
CPU_SIZES = [4 << 10, 64 << 10, 1 << 20]


def _npu_count(host: Any) -> int:
    from doctor.parse.npusmi import parse_npu_smi

    exe = host.which("npu-smi")
    if not exe:
        return 0
    out = host.run([exe, "info"], timeout=10)
    info = parse_npu_smi(out.stdout) if out.returncode == 0 else None
    return len({c.phy_id if c.phy_id is not None else c.npu for c in info.chips}) if info else 0


def collective_stage(ctx: Context, prompts: str) -> StageResult:
    from doctor.shell.smoke.scripts import run_collective
    from doctor.smoke.collective import bandwidth_rows
    from doctor.smoke.result import collective_result

    o = ctx.opts
    available = (min(4, os.cpu_count() or 2) if o.device == "cpu" else _npu_count(ctx.host))
    try:
        ids = parse_devices(o.devices or "", available)
    except ConfigError as e:
        raise UsageError(e.args[0] if len(e.args) == 1 else str(e)) from None  # a catalogue Text stays one
    sizes = CPU_SIZES if o.device == "cpu" else NPU_SIZES

    def tick(done: int, total: int) -> None:
        ctx.progress.count(done, total, "ranks")

    run = run_collective(ctx.python, o.device, ids, sizes, env=ctx.env, timeout=o.timeout, tick=tick)
    rows = bandwidth_rows(run.sizes, len(ids))
    return collective_result(run.seconds, o.device, run.ranks, rows, o.timeout, run.logs, ctx.explain, len(sizes))


def kvpool_stage(ctx: Context, prompts: str) -> StageResult:
    from doctor.usecases.smoke_kvpool import kvpool_stage as run_kvpool

    return run_kvpool(ctx, prompts)


RUNNERS: Dict[str, Callable[[Context, str], StageResult]] = {
    "model": model_stage, "vllm": vllm_stage, "endpoint": endpoint_stage, "kvpool": kvpool_stage,
    "collective": collective_stage,
}


# ---------------------------------------------------------------------------------------------
# for `fix --apply`


def run_configured_stages(python: str, *, env: Optional[Mapping[str, str]] = None, config: Optional[str] = None,
                          device: Optional[str] = None, progress: Optional[Progress] = None) -> SmokeReport:
    """Run the stages configured in the smoke configuration file (``config``, else
    $ASCEND_DOCTOR_SMOKE_CONFIG, else ~/.config/ascend-doctor/smoke.toml; without one: the
    model stage with the seeded tiny model) against ``python``. Raises UsageError for a bad
    configuration file; the stages' own failures are in the report's findings."""
    from doctor.shell.host.root import Host

    env = dict(os.environ if env is None else env)
    flags = {"device": device} if device else {}
    opts = options(flags, config, env)
    opts.record_golden = None
    return run(opts, python, Host(env=env), progress)
