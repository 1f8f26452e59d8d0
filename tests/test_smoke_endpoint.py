"""The endpoint stage against a real HTTP server on loopback that streams on a script
(smoke_fixtures/openai_server.py) on a script: its first token after a delay, then one per gap."""
import json
import statistics
import sys
import time
from pathlib import Path

import pytest
from smoke_fixtures.openai_server import ProcessServer, Server

from doctor.shell.smoke.endpoint_bench import BenchConfig, run_bench
from doctor.shell.host.root import Host
from doctor.smoke.config import SmokeOptions
from doctor.usecases.smoke import run
import doctor_fork

REPO = Path(__file__).resolve().parents[1]
OUT = 16  # tokens per request


def stage(url, **kw):
    opts = SmokeOptions(device="cpu", endpoint=url, requests=kw.pop("requests", 6), concurrency=kw.pop("concurrency", 3),
                        output_len=kw.pop("output_len", OUT), warmup=kw.pop("warmup", 1),
                        stall_timeout=kw.pop("stall_timeout", 1.0), request_timeout=kw.pop("request_timeout", 10.0),
                        **kw)
    report = run(opts, sys.executable, Host(env={"PATH": "/usr/bin:/bin"}), explain=lambda text: None)
    assert [s.name for s in report.stages] == ["endpoint"]
    return report.stages[0], report


def within(value, want, rel=0.10):
    return abs(value - want) <= rel * want


FIRST, GAP = 0.5, 0.05  # the script: first token after 500 ms, then one every 50 ms


@pytest.mark.parametrize("per_chunk", [1, 3])
def test_ttft_and_tpot_match_the_script(per_chunk):
    """TTFT from request sent to the first chunk; TPOT = (latency - TTFT) / (tokens - 1) with the
    tokens from the usage report, so several tokens per chunk do not triple it.

    The server records when it really sent each chunk (CLOCK_MONOTONIC, shared by both
    processes). The client's figures are never below what was sent, and within half the script of
    it: a TTFT counted from the warm-up (+1.25 s) or a TPOT per chunk (3x) is far outside that. A
    tighter band would measure the scheduler. With 6 busy loops on 2 cores, the client read the
    first chunk 104 ms after the server sent it, on time."""
    import requests

    script_ttft, script_tpot = FIRST * 1000, GAP * 1000
    with ProcessServer(first=FIRST, gap=GAP, per_chunk=per_chunk) as srv:
        result, report = stage(srv.url, concurrency=1, requests=5)
        truth = requests.get(srv.url + "/debug/timings", timeout=10).json()[1:]  # without the warm-up
    m = result.metrics
    assert result.status == "ok", result.title
    assert m["completed"] == 5 and m["failed"] == 0 and m["tokens_counted_from"] == "usage"
    assert m["output_tokens"] == 5 * OUT
    sent_ttft = statistics.median(t["first"] - t["read"] for t in truth) * 1000
    sent_tpot = statistics.median((t["last"] - t["first"]) / (t["tokens"] - 1) for t in truth) * 1000
    assert sent_ttft >= script_ttft - 1 and sent_tpot >= script_tpot * 0.98  # never ahead of its script
    assert abs(m["ttft_ms"]["p50"] - sent_ttft) <= 0.5 * script_ttft, (m["ttft_ms"], sent_ttft)
    assert abs(m["tpot_ms"]["p50"] - sent_tpot) <= 0.5 * script_tpot, (m["tpot_ms"], sent_tpot)
    assert m["ttft_ms"]["p50"] >= script_ttft and m["tpot_ms"]["p50"] >= script_tpot * 0.9
    assert within(m["ttft_ms"]["mean"], script_ttft, 0.5) and within(m["tpot_ms"]["mean"], script_tpot, 0.5)
    assert m["ttft_ms"]["mean"] >= script_ttft and m["tpot_ms"]["mean"] >= script_tpot * 0.9
    # one ITL per chunk: per_chunk tokens arrive every per_chunk * GAP (1x and 3x are told apart)
    assert within(m["itl_ms"]["p50"], sent_tpot * per_chunk, 0.5)
    assert m["warmup"] == 1 and m["requests"] == 5  # warm-up requests are not measured
    assert report.exit_code() == 0


def test_counting_chunks_would_be_wrong_without_usage():
    """Without include_usage data the count falls back to chunks, and says so."""
    with Server(mode="no_usage", per_chunk=3, first=0.01, gap=0.002) as srv:
        result, _ = stage(srv.url, requests=2, concurrency=2)
    assert result.metrics["tokens_counted_from"] == "chunks"
    assert result.metrics["output_tokens"] == 2 * (1 + (OUT - 1) // 3 + (1 if (OUT - 1) % 3 else 0))


def test_unique_prefix_per_prompt_unless_prefix_cache():
    with Server(first=0.01, gap=0.001) as srv:
        stage(srv.url, requests=5, warmup=1)
        prompts = list(srv.script.prompts)
    assert len(set(prompts)) == 6  # warm-up + 5, all different
    assert len({p.split("]")[0] for p in prompts}) == 6  # ... in their prefix
    with Server(first=0.01, gap=0.001) as srv:
        result, _ = stage(srv.url, requests=3, warmup=0, prefix_cache=True)
        prompts = list(srv.script.prompts)
    assert len(prompts) == 6 and sorted(prompts[:3]) == sorted(prompts[3:])  # the same prompts twice: cache hits
    assert result.metrics["cold"]["completed"] == 3 and result.metrics["completed"] == 3


def test_chat_api():
    with Server(first=0.1, gap=0.01) as srv:
        result, _ = stage(srv.url, api="chat", requests=2, output_len=8)
    assert result.status == "ok" and result.metrics["ttft_ms"]["p50"] >= 100.0


def test_stall_mid_stream_is_reported_not_hung():
    with Server(mode="stall", first=0.01, gap=0.002) as srv:
        began = time.monotonic()
        result, report = stage(srv.url, requests=2, warmup=0, stall_timeout=1.0)
    assert time.monotonic() - began < 6
    assert result.status == "fail" and result.metrics["errors"] == {"stall": 2}
    assert "no data for 1s after 3 chunks" in result.title.text("en")
    assert report.exit_code() == 3


def test_malformed_json_chunk():
    with Server(mode="malformed", first=0.01, gap=0.002) as srv:
        result, _ = stage(srv.url, requests=2, warmup=0)
    assert result.status == "fail" and result.metrics["errors"] == {"malformed": 2}
    assert "chunk 3 is not JSON" in result.title.text("en")


def test_http_500_in_warmup_stops_the_stage():
    with Server(mode="error500") as srv:
        result, _ = stage(srv.url)
    assert result.status == "fail"
    assert "HTTP 500: engine core died" in result.title.text("en")


def test_http_500_without_warmup_counts_every_request():
    with Server(mode="error500") as srv:
        result, _ = stage(srv.url, warmup=0, requests=3)
    assert result.metrics["errors"] == {"http": 3}


def test_server_that_never_answers():
    with Server(mode="never") as srv:
        began = time.monotonic()
        result, _ = stage(srv.url, warmup=0, requests=2, stall_timeout=1.0)
    assert time.monotonic() - began < 6
    assert result.metrics["errors"] == {"no_answer": 2}


def test_models_list_that_never_answers():
    with Server(mode="never_models") as srv:
        began = time.monotonic()
        result, _ = stage(srv.url, stall_timeout=1.0)
    assert time.monotonic() - began < 6
    assert result.status == "fail" and "GET /v1/models" in result.title.text("en")


def test_nothing_listening():
    with Server() as srv:
        url = srv.url
    result, _ = stage(url)
    assert result.status == "fail" and "connection refused" in result.title.text("en")


def test_total_deadline_cuts_a_trickling_stream():
    """A server that keeps sending, slower than the script but never stalling, is cut off by the
    request's total deadline."""
    with Server(first=0.05, gap=0.3) as srv:
        began = time.monotonic()
        result, _ = stage(srv.url, warmup=0, requests=1, stall_timeout=1.0, request_timeout=1.0)
    assert time.monotonic() - began < 4
    assert result.metrics["errors"] == {"deadline": 1}


def test_slo_pass_and_fail():
    """The server never runs ahead of its script (TTFT >= 100 ms, tokens >= 10 ms apart) but a
    loaded machine makes it late: the limits that must pass are far above the script, the ones that
    must fail below it, so neither outcome depends on the load. The client's TPOT has no floor of
    its own: a client that reads the first token late gets the next ones at once (a fast loop at
    load 23 measured under 5 ms against the server's 10). So the TPOT that must fail is against
    tokens 250 ms apart: only a client late by about half a second on most requests could hide it."""
    with Server(first=0.1, gap=0.01) as srv:
        ok, _ = stage(srv.url, requests=3, output_len=8, slo="ttft=5s,tpot=1s")
        bad, report = stage(srv.url, requests=3, output_len=8, slo="ttft:p50=50ms")
    with Server(first=0.05, gap=0.25) as srv:
        slow_tokens, _ = stage(srv.url, requests=3, output_len=3, slo="ttft=5s,tpot=5ms")
    assert ok.status == "ok" and all(c["ok"] for c in ok.metrics["slo"])
    assert bad.status == "fail" and "ttft p50" in bad.title.text("en") and report.exit_code() == 3
    assert slow_tokens.status == "fail" and [c["ok"] for c in slow_tokens.metrics["slo"]] == [True, False]


def test_soak_samples_the_server_rss(monkeypatch):
    """--duration keeps the load for that long; the sampler finds the server by its port (here:
    this process) and reads its RSS."""
    import doctor.shell.smoke.soak as soak

    with Server(first=0.01, gap=0.002) as srv:
        result, _ = stage(srv.url, duration=1.5, sample_every=0.25, warmup=0)
    m = result.metrics
    assert m["completed"] > 6  # more than --requests: the soak runs by time
    assert m["soak"]["server_pid"] == __import__("os").getpid()
    assert m["soak"]["samples"].get("server.rss", 0) >= 5
    assert soak.server_pid(srv.url) is None  # closed now


@pytest.mark.slow  # ~0.5 s of CPU or more: a real HTTP server on loopback
def test_cli_json_shape_and_progress_is_not_on_stdout():
    with Server() as srv:
        proc = doctor_fork.run([sys.executable, "-m", "doctor", "smoke", "--endpoint", srv.url, "--requests", "2",
                               "--output-len", "4", "--warmup", "0", "--json"], capture_output=True, text=True, timeout=60, cwd=REPO)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    (st,) = doc["stages"]
    assert set(st) >= {"name", "status", "seconds", "metrics"} and st["name"] == "endpoint" and st["status"] == "ok"
    assert {f["id"] for f in doc["findings"]} == {"smoke.endpoint"}
    assert proc.stderr == ""  # stderr is not a terminal: no progress bar


def test_bench_client_directly_reports_model_and_durations():
    with Server(first=0.05, gap=0.005) as srv:
        res = run_bench(BenchConfig(base_url=srv.url + "/v1", requests=4, concurrency=2, output_len=10, warmup=0))
    assert res.model == "tiny-llama" and len(res.records) == 4 and all(r.ok for r in res.records)
    assert res.duration > 0.05


@pytest.mark.slow  # ~1 s of CPU or more: a soak of seconds
def test_soak_reports_hbm_that_climbs(tmp_path):
    """npu-smi stands in as a script that prints a recorded 910B4 table (tests/fakehost/data)
    with chip 0's HBM growing by 1 GB at every call: a steady climb is a warning naming it."""
    recorded = Path(__file__).resolve().parent / "fakehost" / "data" / "npu-smi-910b4-32g.txt"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npu-smi").write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/count 2>/dev/null || echo 0)
echo $((n + 1)) > {tmp_path}/count
used=$((22283 + n * 1000))
sed "s/22283\\/ 32768/$used\\/ 32768/" {recorded}
""")
    (bin_dir / "npu-smi").chmod(0o755)
    with Server(first=0.01, gap=0.002) as srv:
        opts = SmokeOptions(device="cpu", endpoint=srv.url, output_len=8, warmup=0, duration=4.0, sample_every=0.1,
                            stall_timeout=1.0)
        report = run(opts, sys.executable, Host(env={"PATH": f"{bin_dir}:/usr/bin:/bin"}), explain=lambda t: None)
    st = report.stages[0]
    trends = {t["name"]: t for t in st.metrics["soak"]["trends"]}
    assert trends["hbm.npu0.chip0"]["climbing"] and not trends["hbm.npu1.chip0"]["climbing"]
    assert st.status == "warn" and "hbm.npu0.chip0 22283 -> " in st.title.text("en")
    assert report.exit_code() == 4


@pytest.mark.slow  # ~0.5 s of CPU or more: a real HTTP server on loopback
def test_an_endless_trailer_is_cut_off_at_the_deadline():
    """A chunked answer whose last chunk is followed by trailer lines without end: http.client
    reads them one by one inside a single read, so the deadline checks between reads never ran
    and `smoke --endpoint` (and `profile --collect`) waited forever."""
    import threading
    from fakehost.index_server import endless_trailer_server

    httpd = endless_trailer_server("application/json")
    done = {}
    worker = threading.Thread(target=lambda: done.update(r=stage(f"http://127.0.0.1:{httpd.server_port}",
                                                              warmup=0, requests=1)), daemon=True)
    try:
        worker.start()
        worker.join(30)  # the deadline of GET /v1/models with stall_timeout 1 s: 2 s
        assert not worker.is_alive(), "still reading the trailer"
    finally:
        httpd.shutdown()
    result, report = done["r"]
    assert result.status == "fail" and "GET /v1/models: " in result.title.text("en") and result.seconds < 10


@pytest.mark.slow  # ~0.5 s of CPU or more: a real HTTP server on loopback
def test_smoke_and_check_default_to_the_same_interpreter_behind_a_shim(tmp_path):
    """No --python, no active environment, ``python3`` on PATH a wrapper that starts another
    interpreter (a pyenv shim): smoke drives the interpreter check judges (the one the wrapper
    starts, as it names itself), not the wrapper."""
    shim = tmp_path / "shims"
    shim.mkdir()
    (shim / "python3").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (shim / "python3").chmod(0o755)
    env = {"PATH": f"{shim}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    snap = doctor_fork.run([sys.executable, "-m", "doctor", "snapshot"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    judged = json.loads(snap.stdout)["python"]["executable"]
    assert judged != str(shim / "python3") and Path(judged).exists(), judged
    smoke = doctor_fork.run([sys.executable, "-m", "doctor", "smoke", "--device", "cpu", "--stages", "endpoint",
                            "--endpoint", "http://127.0.0.1:9", "--timeout", "2", "--json"], env=env, cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert json.loads(smoke.stdout)["python"] == judged, smoke.stdout[:500] + smoke.stderr[-500:]
