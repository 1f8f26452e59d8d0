"""The pure core of smoke (doctor/smoke) with plain data."""
import pytest

from doctor.smoke import golden
from doctor.smoke.collective import RankState, bandwidth_rows, bus_factor, culprits
from doctor.smoke.config import ConfigError, SmokeOptions, from_file, merge, parse_devices, parse_duration, vllm_arg_words
from doctor.smoke.endpoint import RequestRecord, metrics, tpot
from doctor.smoke.events import read_run
from doctor.smoke.slo import Objective, SloError, evaluate, parse_slo
from doctor.smoke.soak import trend
from doctor.smoke.stats import percentile, summary
from doctor.smoke.vllmlog import read_vllm_log


def test_percentile_interpolates_like_numpy():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 90) == pytest.approx(7.6)  # numpy.percentile(values, 90)
    assert percentile(values, 99) == pytest.approx(9.76)
    assert percentile([], 50) is None
    assert summary([0.1, 0.3]) == {"mean": 200.0, "p50": 200.0, "p90": 280.0, "p99": 298.0}


def test_tpot_excludes_the_first_token_and_uses_the_usage_count():
    r = RequestRecord(ok=True, ttft=0.2, latency=0.2 + 0.02 * 9, output_tokens=10, chunks=4)
    assert tpot(r) == pytest.approx(0.02)
    r.output_tokens = None  # no usage: one token per chunk
    assert tpot(r) == pytest.approx(0.18 / 3)
    assert tpot(RequestRecord(ok=True, ttft=0.2, latency=0.2, output_tokens=1)) is None


def test_metrics_counts_errors_and_throughput():
    ok = RequestRecord(ok=True, ttft=0.1, itl=[0.01] * 4, latency=0.14, output_tokens=5, prompt_tokens=20)
    bad = RequestRecord(ok=False, error_kind="stall", error="no data")
    m = metrics([ok, ok, bad], duration=2.0)
    assert m["completed"] == 2 and m["failed"] == 1 and m["errors"] == {"stall": 1}
    assert m["first_errors"] == {"stall": "no data"}
    assert m["output_throughput"] == 5.0 and m["request_throughput"] == 1.0 and m["total_token_throughput"] == 25.0
    assert m["ttft_ms"]["p50"] == 100.0 and m["itl_ms"]["mean"] == 10.0 and m["tokens_counted_from"] == "usage"


def test_slo_parse_and_evaluate():
    objs = parse_slo("ttft=500ms, tpot:p50=0.05s,e2el=2")
    assert objs == [Objective("ttft", "p99", 500.0), Objective("tpot", "p50", 50.0), Objective("e2el", "p99", 2.0)]
    checks = evaluate(objs[:2], {"ttft_ms": {"p99": 499.0}, "tpot_ms": {"p50": 51.0}})
    assert [c.ok for c in checks] == [True, False]
    assert evaluate([objs[0]], {})[0].ok is False  # nothing measured: not met
    for bad in ("ttft", "ttft=fast", "foo=1ms", "ttft:p42=1ms", ""):
        with pytest.raises(SloError):
            parse_slo(bad)


def out(tokens, tops):
    return {"prompt": [1, 2], "tokens": tokens, "top": tops}


def test_golden_same_tokens_and_close_logprobs():
    ref = [out([5, 6], [[[5, -0.1], [9, -3.0]], [[6, -0.2], [7, -2.0]]])]
    got = [out([5, 6], [[[5, -0.15]], [[6, -0.3]]])]
    cmp = golden.compare(ref, got)
    assert cmp.ok and cmp.prompts[0].max_logprob_diff == pytest.approx(0.1)


def test_golden_divergence_at_a_near_tie_is_accepted_elsewhere_not():
    ref = [out([5, 6, 1], [[[5, -0.1]], [[6, -0.70], [7, -0.72]], [[1, -0.1]]])]
    tie = golden.compare(ref, [out([5, 7, 3], [[[5, -0.1]], [[7, -0.7]], [[3, -0.1]]])])
    assert tie.ok and tie.prompts[0].diverged_at == 1 and tie.prompts[0].tie
    wrong = golden.compare([out([5, 6], [[[5, -0.1], [8, -4.0]], [[6, -0.1]]])], [out([8, 6], [[[8, -0.1]], [[6, -0.1]]])])
    assert not wrong.ok and wrong.first_bad.diverged_at == 0 and not wrong.first_bad.tie


def test_golden_logprob_drift_and_other_prompts():
    ref = [out([5], [[[5, -0.1]]])]
    assert not golden.compare(ref, [out([5], [[[5, -0.9]]])]).ok  # 0.8 nats > 0.5
    other = golden.compare(ref, [{"prompt": [3], "tokens": [5], "top": []}])
    assert not other.ok and other.problem == "the reference was made for other prompts"
    assert not golden.compare(ref, [out([], [])]).ok  # stopped early


def test_golden_file_validation():
    doc = golden.golden_doc({"name": "m"}, ["p"], 8, 5, {"model": [out([1], [])]}, {})
    assert golden.check_golden(doc) is doc
    for broken in ({}, {**doc, "schema": 2}, {**doc, "outputs": {"model": "x"}}, {**doc, "tokens": 0}):
        with pytest.raises(golden.GoldenError):
            golden.check_golden(broken)


def test_soak_climb_and_sawtooth():
    climb = [(t * 600.0, 30000.0 + 400.0 * t) for t in range(12)]
    t = trend("hbm.npu0.chip0", climb, capacity=65536.0)
    assert t.climbing and t.hours_to_full == pytest.approx((65536 - climb[-1][1]) / 2400.0, rel=1e-6)
    saw = [(t * 600.0, 30000.0 + (3000.0 if t % 2 else 0.0)) for t in range(12)]
    assert not trend("hbm", saw, capacity=65536.0).climbing
    flat_small = [(t * 600.0, 30000.0 + t) for t in range(12)]
    assert not trend("hbm", flat_small, capacity=65536.0).climbing  # steady but tiny
    assert trend("x", climb[:4]) is None


def test_bandwidths_as_nccl_tests_define_them():
    per_rank = {0: [{"size": 1 << 20, "seconds": 0.001, "wrong": 0}], 1: [{"size": 1 << 20, "seconds": 0.002, "wrong": 0}]}
    (row,) = bandwidth_rows(per_rank, 2)
    assert row["time_us"] == 2000.0  # the slowest rank
    assert row["algbw_gbps"] == pytest.approx((1 << 20) / 0.002 / 1e9, rel=1e-5)
    assert row["busbw_gbps"] == pytest.approx(row["algbw_gbps"] * 1.0, rel=1e-5)
    assert bus_factor(2) == 1.0 and bus_factor(4) == 1.5 and bus_factor(8) == 1.75
    (four,) = bandwidth_rows({r: per_rank[0] for r in range(4)}, 4)
    assert four["busbw_gbps"] == pytest.approx(four["algbw_gbps"] * 1.5, rel=1e-3)
    assert bandwidth_rows({0: per_rank[0], 1: []}, 2) == []  # a size not every rank finished


def test_culprits():
    waiting = RankState(0, "0", started_sizes=1, steps=["import", "init"], error="RuntimeError: Timed out waiting 15000ms",
                        exit_code=3)
    hung = RankState(1, "1", started_sizes=1, steps=["import", "init"], killed=True)
    assert culprits([waiting, hung]) == [hung]
    own = RankState(1, "1", steps=["import"], error="RuntimeError: HCCL init failed, error code 7", exit_code=3)
    assert culprits([waiting, own]) == [own]
    behind = RankState(1, "1", steps=["import"], killed=True)
    ahead = RankState(0, "0", steps=["import", "init"], started_sizes=1, killed=True)
    assert culprits([ahead, behind]) == [behind]


def test_config_file_and_flags():
    values = from_file({"smoke": {"timeout": 900}, "model": {"path": "/m"}, "endpoint": {"url": "http://h:1", "duration": "1h30m"}})
    opts = merge(values, {"timeout": None, "requests": 5})
    assert opts.timeout == 900 and opts.model == "/m" and opts.requests == 5 and opts.duration == 5400.0
    assert opts.wanted() == ["model", "endpoint"]
    assert SmokeOptions().wanted() == ["model"]
    assert SmokeOptions(endpoint="http://x").wanted() == ["endpoint"]
    assert SmokeOptions(devices="0-1", model="/m", vllm=True).wanted() == ["model", "vllm", "collective"]
    assert SmokeOptions(stages=["collective", "model"]).wanted() == ["model", "collective"]
    for bad in ({"modle": {}}, {"model": {"paht": "/m"}}, {"model": "x"}):
        with pytest.raises(ConfigError):
            from_file(bad)
    for flags in ({"device": "gpu"}, {"requests": 0}, {"vllm": True}, {"stages": ["gpu"]}, {"vllm_args": ["=x"]},
                  {"endpoint": "127.0.0.1:8000"}):
        with pytest.raises(ConfigError):
            merge({}, flags)


def test_durations_devices_and_vllm_args():
    assert parse_duration("2h") == 7200 and parse_duration("90m") == 5400 and parse_duration("45s") == 45
    assert parse_duration("600") == 600
    with pytest.raises(ConfigError):
        parse_duration("soon")
    assert parse_devices("0-3") == [0, 1, 2, 3] and parse_devices("0,2") == [0, 2] and parse_devices("0-1") == [0, 1]
    assert parse_devices("0,1,2,3") == [0, 1, 2, 3] and parse_devices("all", 8) == list(range(8))
    for bad in ("0", "3-1", "x", "all"):
        with pytest.raises(ConfigError):
            parse_devices(bad)
    assert parse_devices("0-63") == list(range(64))


def test_a_huge_device_range_is_refused_before_it_is_made():
    """--devices 0-99999999 hung: the ids were gathered one by one (each looked up in the list so
    far) before anything judged them; one node's ids end below MAX_DEVICES."""
    import time

    started = time.process_time()
    for bad in ("0-64", "0-99999999", "0,1,99999999999999999999"):
        with pytest.raises(ConfigError) as e:
            parse_devices(bad)
        assert "from 0 to 63" in e.value.args[0].text("en") and "0 到 63" in e.value.args[0].text("zh")
    assert time.process_time() - started < 1.0
    assert vllm_arg_words(["max-model-len=4096", "enforce_eager", "kv-transfer-config={\"a\": 1}"]) == \
        ["--max-model-len", "4096", "--enforce-eager", "--kv-transfer-config", "{\"a\": 1}"]


def test_vllm_log_figures():
    log = ["(EngineCore_DP0 pid=212) INFO 10-06 12:00:40 [gpu_model_runner.py:3480] Graph capturing finished in 8 secs, took 0.31 GiB",
           "INFO 11-03 15:47:45 [llm_engine.py:428] init engine (profile, create kv cache, warmup model) took 28.44 seconds",
           "INFO [gpu_worker.py:298] GPU KV cache size: 49,152 tokens", "Model loading took 15.3 GiB and 20.3 seconds"]
    assert read_vllm_log(log) == {"graph_capture_s": 8.0, "graph_memory_gib": 0.31, "init_engine_s": 28.44,
                                  "kv_cache_tokens": 49152, "weights_gib": 15.3}


def test_events_ignore_other_output_and_track_the_running_step():
    run = read_run(['{"event": "begin", "step": "import"}',
                    '{"event": "step", "step": "import", "ok": true, "seconds": 1, "metrics": {"a": 1}}',
                    "W1201 some library warning {not json",
                    '{"event": "begin", "step": "load"}', '{"event": "step", "step": "load", "ok"'])  # cut by a kill
    assert [s["step"] for s in run.steps] == ["import"] and run.running == "load" and run.failed is None
    assert run.metrics() == {"import_s": 1, "a": 1}
