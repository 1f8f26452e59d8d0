"""The `smoke` command (docs/smoke.md): prove that serving works, stage by stage."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, Mapping

import typer

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt
from doctor.errors import UsageError
from doctor.i18n import T

if TYPE_CHECKING:
    from doctor.smoke.config import SmokeOptions


SMOKE = (
    p.PYTHON,
    Opt("device", ("--device",), "str", None, "npu (default) or cpu (the harness without an NPU)."),
    Opt("timeout", ("--timeout",), "seconds", None, "Seconds each stage may take (default 600)."),
    Opt("config", ("--config",), "str", None,
        "Stage configuration (TOML; default $ASCEND_DOCTOR_SMOKE_CONFIG or ~/.config/ascend-doctor/smoke.toml); "
        "flags override it."),
    Opt("stages", ("--stages",), "str", None,
        "Comma-separated: model,vllm,endpoint,kvpool,collective (default: what the other options ask for)."),
    Opt("model", ("--model",), "str", None, "A local Hugging Face model directory (never downloaded)."),
    Opt("tokens", ("--tokens",), "int", None, "Greedy tokens per prompt (default 8)."),
    Opt("dtype", ("--dtype",), "str", None, "Model dtype for the model stage (default: the model's own)."),
    Opt("golden", ("--golden",), "str", None, "Compare outputs with this golden file instead of the CPU."),
    Opt("record_golden", ("--record-golden",), "str", None, "Write the outputs of a good run as a golden file."),
    Opt("vllm", ("--vllm",), "flag", None, "Run the vllm stage (implied by the vllm options)."),
    Opt("serve_args", ("--serve-args",), "str", None, "Your `vllm serve ...` command: its engine arguments are used."),
    Opt("serve_args_file", ("--serve-args-file",), "str", None,
        "A file with the `vllm serve` command (a launch script is fine)."),
    Opt("vllm_arg", ("--vllm-arg",), "list", [], "One more engine argument, KEY=VALUE (repeatable)."),
    Opt("eager", ("--eager",), "flag", None, "Also run vllm with --enforce-eager and compare (diagnostic)."),
    Opt("endpoint", ("--endpoint",), "str", None, "Benchmark a running OpenAI-compatible server (http://host:port)."),
    Opt("api", ("--api",), "str", None, "completions (default) or chat."),
    Opt("served_model", ("--served-model",), "str", None, "Model name on the server (default: its first)."),
    Opt("requests", ("--requests",), "int", None, "Measured requests (default 20)."),
    Opt("concurrency", ("--concurrency",), "int", None, "Requests in flight (default 4)."),
    Opt("input_len", ("--input-len",), "int", None, "Prompt length in words, about tokens (default 128)."),
    Opt("output_len", ("--output-len",), "int", None, "Tokens to generate per request (default 64)."),
    Opt("warmup", ("--warmup",), "int", None, "Warm-up requests, not measured (default 2)."),
    Opt("prefix_cache", ("--prefix-cache",), "flag", None, "Send every prompt twice and measure cache hits."),
    Opt("slo", ("--slo",), "str", None, "Objectives, e.g. ttft=500ms,tpot=50ms (p99; ttft:p50=300ms)."),
    Opt("duration", ("--duration",), "str", None, "Soak: keep the load for this long (2h, 30m) and watch memory."),
    Opt("sample_every", ("--sample-every",), "seconds", None, "Soak: seconds between memory samples (default 60)."),
    Opt("server_pid", ("--server-pid",), "int", None, "Soak: the server's PID (default: found by its port)."),
    Opt("peer_endpoint", ("--peer-endpoint",), "str", None,
        "kvpool: the second instance (another node) sharing the KV pool."),
    Opt("master", ("--master", "--mooncake-master"), "str", None,
        "kvpool: the Mooncake master, HOST:PORT[:METRICS_PORT] or http://HOST:METRICS_PORT."),
    Opt("mooncake_config", ("--mooncake-config",), "str", None,
        "kvpool: the servers' Mooncake JSON (default $MOONCAKE_CONFIG_PATH)."),
    Opt("server_log", ("--server-log",), "str", None,
        "kvpool: the vllm log with 'GPU KV cache size: N tokens' (when /metrics lacks it)."),
    Opt("sweep", ("--sweep",), "flag", None, "kvpool: also find the capacity knee (N documents, each sent twice)."),
    Opt("sweep_docs", ("--sweep-docs",), "str", None,
        "kvpool: document counts, e.g. 10-110:10 (default: around the predicted knee)."),
    Opt("doc_len", ("--doc-len",), "int", None, "kvpool: words per sweep document (default 10000)."),
    Opt("sweep_concurrency", ("--sweep-concurrency",), "int", None, "kvpool: sweep documents in flight (default 4)."),
    Opt("report_file", ("--report",), "str", None,
        "kvpool: write the pictures and figures as a self-contained HTML file."),
    Opt("devices", ("--devices",), "str", None, "Collective stage across these devices: 0-7, 0,1 or all."),
    p.JSON,
    p.LANG,
    p.VERBOSE.but(help="Show evidence and every figure."),
)
# the options that are SmokeOptions flags of the same name (doctor/smoke/config.py)
SAME_NAME = ("device", "timeout", "model", "tokens", "dtype", "golden", "record_golden", "vllm", "serve_args",
             "serve_args_file", "eager", "endpoint", "api", "served_model", "requests", "concurrency", "input_len",
             "output_len", "warmup", "prefix_cache", "slo", "sample_every", "server_pid", "devices", "peer_endpoint",
             "master", "mooncake_config", "server_log", "sweep", "sweep_docs", "doc_len", "sweep_concurrency")


@takes(*SMOKE)
def smoke_command(**params: Any) -> None:
    """Prove that serving works: the model, vllm, the endpoint and the collectives, stage by stage."""
    from doctor.cli.smoke_render import show_report
    from doctor.probes.python_env import target_python
    from doctor.shell.host.root import Host
    from doctor.usecases.smoke import run

    out = p.output(params)
    host = Host()
    opts = smoke_options(params, host.env)
    found = target_python(host, params["python"])  # the interpreter check judges on this machine
    target = found.executable or "python3"
    report = run(opts, target, host, progress=_progress(out.lang))
    code = report.exit_code()
    if opts.report and "kvpool" in opts.wanted():
        from doctor.usecases.smoke_kvpool import write_report

        write_report(report, opts.report, out.lang)
    show_report(report, out)
    raise typer.Exit(code)


def smoke_options(params: Mapping[str, Any], env: Mapping[str, str]) -> "SmokeOptions":
    """The options checked (each bad one: a one-line error) and merged over the configuration file."""
    from doctor.smoke.config import ConfigError, parse_duration
    from doctor.usecases.smoke import options

    python, duration, slo, stages = params["python"], params["duration"], params["slo"], params["stages"]
    if python:
        from doctor.usecases.check import validate_python

        validate_python(python, dict(os.environ))
    try:
        seconds = parse_duration(duration) if duration is not None else None
    except ConfigError as e:
        raise UsageError(T("option.error.detail_bare", option="--duration", error=e.args[0] if len(e.args) == 1 else str(e))) from None
    if slo is not None:
        from doctor.smoke.slo import SloError, parse_slo

        try:
            parse_slo(slo)
        except SloError as e:
            raise UsageError(f"--slo {e}") from None
    flags: Dict[str, Any] = {k: params[k] for k in SAME_NAME}
    flags.update({
        "vllm_args": list(params["vllm_arg"]) or None, "duration": seconds, "report": params["report_file"],
        # the request shape flags are the kvpool stage's too (a file's [endpoint] table is not)
        "kv_requests": params["requests"], "kv_concurrency": params["concurrency"], "kv_input_len": params["input_len"],
        "kv_output_len": params["output_len"],
        "stages": [s.strip() for s in stages.split(",") if s.strip()] if stages is not None else None,
    })
    opts = options(flags, params["config"], env)
    if opts.model and not os.path.isdir(opts.model):
        raise UsageError(T("smoke.error.model_not_dir", path=opts.model))
    if "kvpool" in opts.wanted():
        from doctor.usecases.smoke_kvpool import check_inputs

        check_inputs(opts)
    return opts


def _progress(lang: str):
    """A rich progress display on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from doctor.i18n import tr
    from doctor.shell.host.progress import TerminalProgress

    return TerminalProgress(lambda stage: tr("smoke.cli.stage", lang, stage=stage),
                            ("spinner", "text", "bar", "of", "elapsed"))
