"""The `smoke` command (docs/smoke.md): prove that serving works, stage by stage."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional

import typer

from doctor.cli.options import JSON, LANG, PYTHON, float_option, pick_language
from doctor.errors import UsageError

Opt = typer.Option


def smoke_command(
    python: Optional[str] = PYTHON,
    device: Optional[str] = Opt(None, "--device", help="npu (default) or cpu (the harness without an NPU)."),
    timeout: Optional[float] = float_option(None, "--timeout", help="Seconds each stage may take (default 600)."),
    config: Optional[str] = Opt(None, "--config", help="Stage configuration (TOML; default $ASCEND_DOCTOR_SMOKE_CONFIG "
                                                     "or ~/.config/ascend-doctor/smoke.toml); flags override it."),
    stages: Optional[str] = Opt(None, "--stages", help="Comma-separated: model,vllm,endpoint,kvpool,collective "
                                                     "(default: what the other options ask for)."),
    model: Optional[str] = Opt(None, "--model", help="A local Hugging Face model directory (never downloaded)."),
    tokens: Optional[int] = Opt(None, "--tokens", help="Greedy tokens per prompt (default 8)."),
    dtype: Optional[str] = Opt(None, "--dtype", help="Model dtype for the model stage (default: the model's own)."),
    golden: Optional[str] = Opt(None, "--golden", help="Compare outputs with this golden file instead of the CPU."),
    record_golden: Optional[str] = Opt(None, "--record-golden", help="Write the outputs of a good run as a golden file."),
    vllm: Optional[bool] = Opt(None, "--vllm", help="Run the vllm stage (implied by the vllm options)."),
    serve_args: Optional[str] = Opt(None, "--serve-args", help="Your `vllm serve ...` command: its engine arguments are used."),
    serve_args_file: Optional[str] = Opt(None, "--serve-args-file", help="A file with the `vllm serve` command (a launch script is fine)."),
    vllm_arg: List[str] = Opt([], "--vllm-arg", help="One more engine argument, KEY=VALUE (repeatable)."),
    eager: Optional[bool] = Opt(None, "--eager", help="Also run vllm with --enforce-eager and compare (diagnostic)."),
    endpoint: Optional[str] = Opt(None, "--endpoint", help="Benchmark a running OpenAI-compatible server (http://host:port)."),
    api: Optional[str] = Opt(None, "--api", help="completions (default) or chat."),
    served_model: Optional[str] = Opt(None, "--served-model", help="Model name on the server (default: its first)."),
    requests: Optional[int] = Opt(None, "--requests", help="Measured requests (default 20)."),
    concurrency: Optional[int] = Opt(None, "--concurrency", help="Requests in flight (default 4)."),
    input_len: Optional[int] = Opt(None, "--input-len", help="Prompt length in words, about tokens (default 128)."),
    output_len: Optional[int] = Opt(None, "--output-len", help="Tokens to generate per request (default 64)."),
    warmup: Optional[int] = Opt(None, "--warmup", help="Warm-up requests, not measured (default 2)."),
    prefix_cache: Optional[bool] = Opt(None, "--prefix-cache", help="Send every prompt twice and measure cache hits."),
    slo: Optional[str] = Opt(None, "--slo", help="Objectives, e.g. ttft=500ms,tpot=50ms (p99; ttft:p50=300ms)."),
    duration: Optional[str] = Opt(None, "--duration", help="Soak: keep the load for this long (2h, 30m) and watch memory."),
    sample_every: Optional[float] = float_option(None, "--sample-every", help="Soak: seconds between memory samples (default 60)."),
    server_pid: Optional[int] = Opt(None, "--server-pid", help="Soak: the server's PID (default: found by its port)."),
    peer_endpoint: Optional[str] = Opt(None, "--peer-endpoint", help="kvpool: the second instance (another node) sharing the KV pool."),
    master: Optional[str] = Opt(None, "--master", "--mooncake-master", help="kvpool: the Mooncake master, HOST:PORT[:METRICS_PORT] or http://HOST:METRICS_PORT."),
    mooncake_config: Optional[str] = Opt(None, "--mooncake-config", help="kvpool: the servers' Mooncake JSON (default $MOONCAKE_CONFIG_PATH)."),
    server_log: Optional[str] = Opt(None, "--server-log", help="kvpool: the vllm log with 'GPU KV cache size: N tokens' (when /metrics lacks it)."),
    sweep: Optional[bool] = Opt(None, "--sweep", help="kvpool: also find the capacity knee (N documents, each sent twice)."),
    sweep_docs: Optional[str] = Opt(None, "--sweep-docs", help="kvpool: document counts, e.g. 10-110:10 (default: around the predicted knee)."),
    doc_len: Optional[int] = Opt(None, "--doc-len", help="kvpool: words per sweep document (default 10000)."),
    sweep_concurrency: Optional[int] = Opt(None, "--sweep-concurrency", help="kvpool: sweep documents in flight (default 4)."),
    report_file: Optional[str] = Opt(None, "--report", help="kvpool: write the pictures and figures as a self-contained HTML file."),
    devices: Optional[str] = Opt(None, "--devices", help="Collective stage across these devices: 0-7, 0,1 or all."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
    verbose: bool = Opt(False, "-v", "--verbose", help="Show evidence and every figure."),
) -> None:
    """Prove that serving works: the model, vllm, the endpoint and the collectives, stage by stage."""
    from doctor.shell.host import Host
    from doctor.shell.prefetch import default_python
    from doctor.smoke.config import ConfigError, parse_duration
    from doctor.usecases.smoke import options, run

    language = pick_language(lang)
    if python:
        from doctor.usecases.check import validate_python

        validate_python(python, dict(os.environ))
    try:
        seconds = parse_duration(duration) if duration is not None else None
    except ConfigError as e:
        raise UsageError(f"--duration: {e}") from None
    if slo is not None:
        from doctor.smoke.slo import SloError, parse_slo

        try:
            parse_slo(slo)
        except SloError as e:
            raise UsageError(f"--slo {e}") from None
    flags: Dict[str, Any] = {
        "device": device, "timeout": timeout, "model": model, "tokens": tokens, "dtype": dtype, "golden": golden,
        "record_golden": record_golden, "vllm": vllm, "serve_args": serve_args, "serve_args_file": serve_args_file,
        "vllm_args": list(vllm_arg) or None, "eager": eager, "endpoint": endpoint, "api": api,
        "served_model": served_model, "requests": requests, "concurrency": concurrency, "input_len": input_len,
        "output_len": output_len, "warmup": warmup, "prefix_cache": prefix_cache, "slo": slo, "duration": seconds,
        "sample_every": sample_every, "server_pid": server_pid, "devices": devices,
        "peer_endpoint": peer_endpoint, "master": master, "mooncake_config": mooncake_config, "server_log": server_log,
        "sweep": sweep, "sweep_docs": sweep_docs, "doc_len": doc_len, "report": report_file,
        "sweep_concurrency": sweep_concurrency,
        # the request shape flags are the kvpool stage's too (a file's [endpoint] table is not)
        "kv_requests": requests, "kv_concurrency": concurrency, "kv_input_len": input_len, "kv_output_len": output_len,
        "stages": [s.strip() for s in stages.split(",") if s.strip()] if stages is not None else None,
    }
    host = Host()
    opts = options(flags, config, host.env)
    if opts.model and not os.path.isdir(opts.model):
        raise UsageError(f"--model {opts.model}: not a directory (a local Hugging Face model directory)")
    if "kvpool" in opts.wanted():
        from doctor.usecases.smoke_kvpool import check_inputs

        check_inputs(opts)
    target = python or default_python(host.env)
    report = run(opts, target, host, progress=_progress(language))
    code = report.exit_code()
    if opts.report and "kvpool" in opts.wanted():
        from doctor.usecases.smoke_kvpool import write_report

        write_report(report, opts.report, language)
    if as_json:
        from doctor.render import print_json

        print_json(report.to_json(language))
    else:
        from doctor.cli.smoke_render import print_report

        print_report(report, language, verbose)
    raise typer.Exit(code)


def _progress(lang: str):
    """A rich progress display on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from doctor.cli.smoke_render import RichProgress

    return RichProgress(lang)
