"""profile --collect --endpoint URL: capture a bounded profile from a running vllm server.

vllm (and vllm-ascend's worker profiler) records between ``POST /start_profile`` and
``POST /stop_profile``; the endpoints exist only when the server was started with profiling on:
``--profiler-config '{"profiler":"torch","torch_profiler_dir":DIR}'`` from vllm-ascend v0.14.0rc1,
``VLLM_TORCH_PROFILER_DIR=DIR`` up to v0.13.0 (vllm-ascend worker.py at those tags; the service
profiling guide). A 404 means it was not. Between the two calls a fixed number of requests is
sent (the endpoint benchmark client), so the capture stays small; /stop_profile returns once
torch_npu has written (and, by default, analysed) one ``*_ascend_pt`` directory per rank.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Union

from doctor.errors import UsageError
from doctor.i18n import T, Text, tr

START_TIMEOUT = 60.0
APPEAR_TIMEOUT = 120.0  # after /stop_profile: the directories may be finished a little later


@dataclass
class CollectOptions:
    endpoint: str
    profile_dir: str
    requests: int = 8
    concurrency: int = 4
    output_len: int = 32
    stop_timeout: float = 900.0


class CollectError(UsageError):
    def __init__(self, message: Union[str, Text], settings: Optional[List[str]] = None):
        super().__init__(message)
        self.message, self.settings = message, settings or []


def _snapshot(directory: str) -> Dict[str, float]:
    out: Dict[str, float] = {}
    try:
        with os.scandir(directory) as it:
            for n, e in enumerate(it):
                if n > 20_000:
                    break
                if e.name.endswith("_ascend_pt") and e.is_dir(follow_symlinks=False):
                    out[e.name] = e.stat(follow_symlinks=False).st_mtime
    except FileNotFoundError:
        return {}
    except OSError as e:
        raise CollectError(T("option.error.detail", option="--profile-dir", value=directory, error=e.strerror or str(e))) from None
    return out


def _post(url: str, timeout: float) -> int:
    import time

    import requests

    from doctor.shell.runtime.net import watch, watched

    end = time.monotonic() + 10.0 + timeout  # the connect and the answer, in total
    try:
        # only the status counts: the body is never read (one that never ends was read whole);
        # the watch ends headers that come a line at a time at the deadline
        with watched(requests.Session()) as s, watch(end):
            with s.post(url, timeout=(10.0, timeout), stream=True) as resp:
                return resp.status_code
    except requests.exceptions.RequestException as e:
        if time.monotonic() >= end:
            raise CollectError(T("profile.error.post_deadline", url=url, seconds=f"{10.0 + timeout:g}")) from None
        raise CollectError(f"POST {url}: {type(e).__name__}: {str(e)[:160]}") from None


def not_enabled_settings(directory: str) -> List[str]:
    config = json.dumps({"profiler": "torch", "torch_profiler_dir": directory, "torch_profiler_with_stack": False},
                        separators=(",", ":"))
    return [f"--profiler-config '{config}'  (vllm-ascend v0.14.0rc1+)",
            f"VLLM_TORCH_PROFILER_DIR={directory}  (vllm-ascend up to v0.13.0)"]


def collect(opts: CollectOptions, lang: str, say: Optional[Callable[[str], None]] = None,
            progress: Optional[Callable[[str, int, int], None]] = None) -> List[str]:
    """Capture, and return the new *_ascend_pt directories (absolute paths)."""
    from doctor.shell.smoke.endpoint_bench import BenchConfig, EndpointError, base, list_models, run_bench

    url = base(opts.endpoint)
    if not url.startswith(("http://", "https://")):
        raise CollectError(T("profile.error.endpoint_not_http", endpoint=opts.endpoint))
    cfg = BenchConfig(base_url=url, requests=opts.requests, concurrency=opts.concurrency, output_len=opts.output_len,
                      input_len=64, warmup=0)
    try:
        list_models(cfg)
    except EndpointError as e:
        raise CollectError(T("option.error.detail", option="--endpoint", value=opts.endpoint, error=str(e))) from None
    directory = os.path.abspath(opts.profile_dir)
    before = _snapshot(directory)
    status = _post(url + "/start_profile", START_TIMEOUT)
    if status == 404:
        raise CollectError(tr("profile.collect_run.not_enabled", lang, endpoint=url),
                           not_enabled_settings(directory))
    if status >= 400:
        raise CollectError(T("profile.error.post_http", url=url + "/start_profile", status=status))
    if say:
        say(tr("profile.collect_run.started", lang, n=opts.requests))
    started = time.monotonic()
    failed = 0
    try:
        result = run_bench(cfg)
        failed = sum(1 for r in result.records if not r.ok)
    except EndpointError as e:
        failed = opts.requests
        if say:
            say(str(e))
    finally:
        if say:
            say(tr("profile.collect_run.stopping", lang))
        status = _post(url + "/stop_profile", opts.stop_timeout)
    if status >= 400:
        raise CollectError(T("profile.error.post_http", url=url + "/stop_profile", status=status))
    if failed == opts.requests:
        raise CollectError(tr("profile.collect_run.no_requests", lang, n=opts.requests))
    deadline = time.monotonic() + APPEAR_TIMEOUT
    while True:
        now = _snapshot(directory)
        new = sorted(n for n, m in now.items() if n not in before or m > before[n])
        if new or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if not new:
        raise CollectError(tr("profile.collect_run.nothing", lang, dir=directory,
                              seconds=round(time.monotonic() - started)))
    return [os.path.join(directory, n) for n in new]
