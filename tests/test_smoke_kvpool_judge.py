"""The kvpool stage's judgement on plain data: the KV calculator, what vllm's /metrics and the
Mooncake master say, the size of dataset B, the knee finder and the verdict. The recorded lines
and tables are the field reports' (seed 001: Qwen2.5-7B on vllm-ascend 0.11.0rc3 + Mooncake;
seed 003: Qwen2.5-72B on two Atlas 800T A2)."""
import pytest

from doctor.smoke import kvpool_calc as calc
from doctor.smoke import kvpool_master as master
from doctor.smoke import kvpool_sweep as sweep
from doctor.smoke.kvpool_report import inert
from doctor.smoke.kvpool_verdict import Phase, PoolFacts, judge, judge_tier
from doctor.smoke.promtext import parse, parse_line

GIB = 1 << 30
# Qwen2.5-7B-Instruct's config.json (the fields the calculator reads)
QWEN25_7B = {"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584,
             "torch_dtype": "bfloat16"}
# seed 001, section 3.1: mean TTFT (s) of the second ask for 10..110 documents of 10,000 tokens
SEED001 = {
    "HBM-20GB": [0.4104, 0.3742, 0.3371, 3.0918, 3.1023, 2.9289, 2.8651, 2.8182, 2.7941, 2.7379, 2.6827],
    "HBM-40GB": [0.4176, 0.3368, 0.2921, 0.3228, 0.3171, 0.2584, 0.2509, 2.7229, 2.7128, 2.6875, 2.6654],
    "HBM-20GB+mooncake-20GB": [0.5016, 0.4471, 0.4231, 3.6502, 3.158, 3.1518, 3.0134, 3.1044, 2.9536, 2.9289, 2.9066],
    "HBM-20GB+mooncake-40GB": [0.5126, 0.5122, 0.4367, 0.5718, 0.5514, 0.5507, 3.027, 3.1057, 2.8675, 2.8953, 2.8716],
    "HBM-20GB+mooncake-60GB": [0.5043, 0.4528, 0.425, 0.5332, 0.5146, 0.5031, 0.5487, 0.5292, 0.5367, 0.5358, 2.8285],
}


def test_kv_bytes_per_token_of_qwen25_7b_matches_seed_001():
    """Seed 001: '20G ... 370K tokens': 20 GiB / 57,344 bytes = 374,491 tokens."""
    kv = calc.kv_bytes_per_token(QWEN25_7B)
    assert kv.bytes_per_token == 28 * 4 * 128 * 2 * 2 == 57344
    assert "28 layers × 4 KV heads × 128 head dim" in kv.formula
    assert int(20 * GIB / kv.bytes_per_token) == 374491


def test_kv_bytes_variants():
    mla = {"num_hidden_layers": 61, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "num_attention_heads": 128,
           "torch_dtype": "bfloat16"}
    assert calc.kv_bytes_per_token(mla).bytes_per_token == 61 * 576 * 2
    nested = {"text_config": dict(QWEN25_7B, head_dim=128), "torch_dtype": "bfloat16"}
    assert calc.kv_bytes_per_token(nested).bytes_per_token == 57344
    assert calc.kv_bytes_per_token(QWEN25_7B, kv_dtype="int8").bytes_per_token == 28672
    no_kv_heads = {k: v for k, v in QWEN25_7B.items() if k != "num_key_value_heads"}
    assert calc.kv_bytes_per_token(no_kv_heads).bytes_per_token == 28 * 28 * 128 * 4
    assert calc.kv_bytes_per_token({"torch_dtype": "bfloat16"}).error == "config.json has no num_hidden_layers"
    assert "not a known KV dtype" in calc.kv_bytes_per_token(dict(QWEN25_7B, torch_dtype="complex64")).error


CACHE_INFO = ('vllm:cache_config_info{block_size="128",cache_dtype="auto",enable_prefix_caching="True",engine="0",'
              'gpu_memory_utilization="0.59",num_cpu_blocks="None",num_gpu_blocks="2885",swap_space="4"} 1.0')


def test_hbm_cache_from_vllm_metrics_labels():
    text = "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n" \
           "# TYPE vllm:cache_config_info gauge\n" + CACHE_INFO + "\n"
    hbm = calc.hbm_from_metrics(parse(text))
    assert (hbm.tokens, hbm.blocks, hbm.block_size, hbm.engines) == (369280, 2885, 128, 1)
    assert hbm.source == "vllm:cache_config_info num_gpu_blocks=2885 × block_size=128" and hbm.cache_dtype == "auto"
    fp8 = calc.hbm_from_metrics(parse(CACHE_INFO.replace('cache_dtype="auto"', 'cache_dtype="fp8"')))
    assert calc.kv_bytes_per_token(QWEN25_7B, fp8.cache_dtype).bytes_per_token == 28672
    two = text + CACHE_INFO.replace('engine="0"', 'engine="1"') + "\n"
    assert calc.hbm_from_metrics(parse(two)).tokens == 2 * 369280
    before_profiling = CACHE_INFO.replace('num_gpu_blocks="2885"', 'num_gpu_blocks="None"')
    assert calc.hbm_from_metrics(parse(before_profiling)) is None


def test_hbm_cache_from_the_log_line_seed_001_recorded():
    lines = ["(EngineCore_DP0 pid=2392) INFO 12-08 14:01:39 [worker_v1.py:256] Available memory: 21181885132",
             "(EngineCore_DP0 pid=2392) INFO 12-08 14:01:39 [kv_cache_utils.py:1087] GPU KV cache size: 369,280 tokens",
             "(EngineCore_DP0 pid=2392) INFO 12-08 14:01:39 [kv_cache_utils.py:1091] Maximum concurrency for "
             "32,768 tokens per request: 11.27x"]
    hbm = calc.hbm_from_log(lines)
    assert hbm.tokens == 369280 and hbm.source == "log: GPU KV cache size: 369,280 tokens"
    dp = lines + [lines[1].replace("DP0 pid=2392", "DP1 pid=2400")]
    assert calc.hbm_from_log(dp).tokens == 2 * 369280 and calc.hbm_from_log(dp).engines == 2
    assert calc.hbm_from_log(["nothing here"]) is None


def test_prometheus_labels_with_escapes_and_junk():
    s = parse_line('m{a="x\\"y",b="c\\\\d",c="l\\n2"} 3.5 1700000000')
    assert s.labels == {"a": 'x"y', "b": "c\\d", "c": "l\n2"} and s.value == 3.5
    assert parse_line("m{a=unquoted} 1") is None and parse_line("m{a=\"1\"} x") is None
    assert parse_line("# TYPE m counter") is None and parse_line("m_total 2").value == 2.0


def test_counters_by_release():
    """The newest name wins; 0.10-era servers export both, older V1 only the gpu_ twins; the
    connector's counters exist from vllm 0.11.1."""
    new = parse('vllm:prefix_cache_queries_total{engine="0"} 100\nvllm:prefix_cache_hits_total{engine="0"} 30\n'
                'vllm:gpu_prefix_cache_queries_total{engine="0"} 100\nvllm:gpu_prefix_cache_hits_total{engine="0"} 30\n'
                'vllm:external_prefix_cache_queries_total 70\nvllm:external_prefix_cache_hits_total 60\n')
    c = calc.counters(new)
    assert c.values == {"hbm_queries": 100, "hbm_hits": 30, "pool_queries": 70, "pool_hits": 60}
    assert c.names["hbm_hits"] == "vllm:prefix_cache_hits_total"
    old = calc.counters(parse("vllm:gpu_prefix_cache_queries_total 5\nvllm:gpu_prefix_cache_hits_total 1\n"))
    assert old.names["hbm_hits"] == "vllm:gpu_prefix_cache_hits_total" and "pool_hits" not in old.values
    assert calc.counter_delta(calc.counters(parse("vllm:prefix_cache_hits_total 1\n")), c) == {"hbm_hits": 29}
    assert calc.counter_delta(None, c) is None


SEED001_MASTER = ("I20251208 14:01:36.541100   484 rpc_service.cpp:40] Master Metrics: Mem Storage: 0 B / 98.23 GB (0.0%) "
                  "| SSD Storage: 0 B / 0 B | Keys: 0 (soft-pinned: 0) | Requests (Success/Total): PutStart=0/0, "
                  "PutEnd=0/0, PutRevoke=0/0, Get=0/0, Exist=0/0, Del=0/0, DelAll=0/0,  | Batch Requests "
                  "(Req=Success/PartialSuccess/Total, Item=Success/Total): PutStart:(Req=0/0/0, Item=0/0), "
                  "PutEnd:(Req=0/0/0, Item=0/0), PutRevoke:(Req=0/0/0, Item=0/0), Get:(Req=0/0/0, Item=0/0), "
                  "ExistKey:(Req=0/0/0, Item=0/0),  | Eviction: Success/Attempts=0/0, keys=0, size=0 B")


def test_master_summary_line_as_recorded_and_after_v0_3_11():
    line = SEED001_MASTER.split("Master Metrics: ", 1)[1]
    zero = master.read_master(None, line)
    assert (zero.keys, zero.puts, zero.gets, zero.source) == (0, 0.0, 0.0, "summary")
    assert zero.capacity == pytest.approx(98.23 * GIB)
    busy = line.replace("Keys: 0", "Keys: 120").replace("PutStart:(Req=0/0/0, Item=0/0)", "PutStart:(Req=9/0/9, Item=120/120)") \
        .replace("Get:(Req=0/0/0, Item=0/0)", "Get:(Req=3/0/3, Item=40/41)").replace("Get=0/0", "Get=2/2")
    counts = master.read_master(None, busy)
    assert (counts.keys, counts.puts, counts.gets) == (120, 120.0, 43.0)
    assert master.master_delta(zero, counts) == {"keys": 120, "puts": 120.0, "gets": 43.0, "allocated": 0.0}
    # from v0.3.11 the requests are rates per second of the last window: not counts
    rates = ("Mem Storage: 1.00 GB / 98.23 GB (1.0%) | NVMe-oF SSD: 0 B / 0 B | SSD Storage: 0 B / 0 B | Keys: 7 "
             "(soft-pinned: 0) | Clients: 2 | Requests (Success/Total per sec): PutStart=3.00/3.00, Get=1.00/1.00")
    r = master.read_master(None, rates)
    assert (r.keys, r.puts, r.gets, r.clients) == (7, None, None, 2)


def test_master_prometheus_counts_batch_items():
    text = ("# TYPE master_key_count gauge\nmaster_key_count 12\nmaster_total_capacity_bytes 2147483648\n"
            "master_active_clients 4\nmaster_put_start_requests_total 1\nmaster_batch_put_start_items_total 11\n"
            "master_get_replica_list_requests_total 0\nmaster_batch_get_replica_list_items_total 5\n")
    c = master.read_master(text, None)
    assert (c.keys, c.puts, c.gets, c.capacity, c.clients, c.source) == (12, 12.0, 5.0, 2 * GIB, 4, "metrics")


def test_dataset_b_fills_hbm_with_a_margin():
    assert calc.eviction_requests(369280, 1030.0) == 449  # ceil(1.25 * 369,280 / 1030)
    assert calc.eviction_requests(1000, 0) == 1250
    assert calc.eviction_requests(1, 5000) == 1


def test_pool_config_as_vllm_ascend_reads_it():
    data = {"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "global_segment_size": "20GB",
            "master_server_address": "2.2.2.2:50058", "use_ascend_direct": True}
    cfg = calc.pool_config(data, "/etc/mooncake.json", {})
    assert (cfg.segment_bytes, cfg.segment_source, cfg.master_address) == (20 * GIB, "global_segment_size", "2.2.2.2:50058")
    env = calc.pool_config(data, "m.json", {"MOONCAKE_GLOBAL_SEGMENT_SIZE": "1GB", "MOONCAKE_MASTER": "h:1"})
    assert (env.segment_bytes, env.segment_source, env.master_address) == (GIB, "MOONCAKE_GLOBAL_SEGMENT_SIZE", "h:1")
    assert calc.pool_config(dict(data, global_segment_size="10G"), "m", {}).segment_bytes is None  # vllm-ascend rejects it
    assert calc.pool_config([1], "m", {}).error == "not a JSON object"
    assert calc.pool_bytes(cfg, None, 4) == (80 * GIB, "global_segment_size 21,474,836,480 bytes × 4 segments "
                                                        "(4 master clients)")
    assert calc.pool_bytes(cfg, 41 * GIB, None)[0] == 40 * GIB
    assert calc.pool_bytes(cfg, None, None)[0] == 20 * GIB
    assert calc.pool_bytes(None, None, 2) == (None, "")


def _points(row):
    return [sweep.Point(10 * (i + 1), None, v * 1000) for i, v in enumerate(row)]


@pytest.mark.parametrize("row, hbm_gib, pool_gib, knee", [
    ("HBM-20GB", 20, None, (30, 40)),
    ("HBM-40GB", 40, None, (70, 80)),
    ("HBM-20GB+mooncake-20GB", 20, 20, (30, 40)),
    ("HBM-20GB+mooncake-40GB", 20, 40, (60, 70)),
    ("HBM-20GB+mooncake-60GB", 20, 60, (100, 110)),
])
def test_seed_001_knees_are_found_and_agree_with_the_calculator(row, hbm_gib, pool_gib, knee):
    """Every row of seed 001's table bends where its configuration predicts: HBM alone at its
    size, with Mooncake at the larger of HBM and the pool (the pool keeps a copy of everything)."""
    bpt = calc.kv_bytes_per_token(QWEN25_7B).bytes_per_token
    hbm = calc.HbmCache(int(hbm_gib * GIB / bpt), source=f"{hbm_gib} GiB")
    k = sweep.find_knee(_points(SEED001[row]))
    assert (k.last_fit, k.first_miss) == knee and k.visible
    prediction = calc.predict_knee(10000, hbm, bpt, pool_gib * GIB if pool_gib else None)
    assert sweep.agree(k, prediction).state == "agree", prediction


def test_a_pool_half_the_configured_size_disagrees():
    bpt = calc.kv_bytes_per_token(QWEN25_7B).bytes_per_token
    hbm = calc.HbmCache(int(20 * GIB / bpt))
    measured = sweep.find_knee(_points(SEED001["HBM-20GB+mooncake-20GB"]))
    assert sweep.agree(measured, calc.predict_knee(10000, hbm, bpt, 40 * GIB)).state == "below"
    assert sweep.agree(sweep.find_knee(_points(SEED001["HBM-20GB+mooncake-60GB"])),
                       calc.predict_knee(10000, hbm, bpt, 20 * GIB)).state == "above"


def test_knee_edges():
    flat = [sweep.Point(n, 3000.0, 400.0) for n in (10, 20, 30)]
    assert sweep.find_knee(flat) == sweep.Knee(30, None, 1700.0, False)  # everything fits
    misses = [sweep.Point(n, 3000.0, 2900.0) for n in (10, 20)]
    assert (sweep.find_knee(misses).last_fit, sweep.find_knee(misses).first_miss) == (None, 10)
    # a straggler-free miss level but no cold reference: the top of the curve stands in
    assert sweep.find_knee([sweep.Point(5, None, 300.0), sweep.Point(10, None, 3000.0)]).first_miss == 10
    assert sweep.agree(sweep.Knee(None, None, None, False), None).state == "unknown"


def test_the_hit_counters_decide_the_knee_where_the_server_counts():
    """TTFT moves with whatever else loads the server; what the server counted as cache hits does
    not. A busy server (every TTFT near the cold one) and a straggler (one slow second ask) would
    each move a knee read from TTFT alone."""
    busy = [sweep.Point(3, 2080.0, 1990.0, hit_share=0.96), sweep.Point(6, 2100.0, 2000.0, hit_share=0.95),
            sweep.Point(9, 2090.0, 2085.0, hit_share=0.2)]
    k = sweep.find_knee(busy)
    assert (k.last_fit, k.first_miss, k.by) == (6, 9, "counters")
    ttft_only = [sweep.Point(p.docs, p.cold_ms, p.hit_ms) for p in busy]
    assert sweep.find_knee(ttft_only).first_miss == 3 and sweep.find_knee(ttft_only).by == "ttft"  # what it would say
    straggler = [sweep.Point(3, 2300.0, 300.0, hit_share=1.0), sweep.Point(6, 2300.0, 2250.0, hit_share=0.9),
                 sweep.Point(9, 2300.0, 2200.0, hit_share=0.1)]
    assert (sweep.find_knee(straggler).last_fit, sweep.find_knee(straggler).first_miss) == (6, 9)
    # a point whose counters could not be read falls back on its TTFT; the knee says it was mixed
    mixed = [sweep.Point(3, 2300.0, 300.0), sweep.Point(6, 2300.0, 310.0, hit_share=0.9),
             sweep.Point(9, 2300.0, 2250.0)]
    assert (sweep.find_knee(mixed).last_fit, sweep.find_knee(mixed).first_miss, sweep.find_knee(mixed).by) == (6, 9, "both")
    assert sweep.find_knee(mixed).to_json()["by"] == "both" and busy[0].to_json()["second_hit_share"] == 0.96


def test_hit_share_counts_hbm_and_pool_hits_of_the_prompt_tokens():
    assert sweep.hit_share({"hbm_queries": 1280.0, "hbm_hits": 128.0, "pool_hits": 1024.0}, 1280) == 0.9
    assert sweep.hit_share({"hbm_queries": 1280.0, "hbm_hits": 0.0}, 1280) == 0.0  # counted: no hit at all
    assert sweep.hit_share({"hbm_queries": 1280.0}, 1280) is None  # no hit counter: TTFT decides
    assert sweep.hit_share(None, 1280) is None and sweep.hit_share({"hbm_hits": 5.0}, 0) is None
    assert sweep.hit_share({"hbm_hits": 900.0, "pool_hits": 900.0}, 1000) == 1.0  # never more than all of them
    assert sweep.hit_share({"hbm_hits": -3.0}, 1000) == 0.0  # a counter reset is not a negative share


def test_sweep_document_counts():
    assert sweep.parse_docs("10-110:10") == list(range(10, 111, 10))
    assert sweep.parse_docs("40, 10,20,20") == [10, 20, 40]
    for bad in ("0", "x", "20-10", "1-100000:1", ""):
        with pytest.raises(sweep.SweepError):
            sweep.parse_docs(bad)
    pred = calc.Prediction(37.4, 37.4, 0, 0, "hbm")
    assert sweep.plan_docs(pred) == [9, 18, 27, 36, 45, 54, 63, 72]
    assert sweep.plan_docs(None) == sweep.DEFAULT_DOCS


def phase(name, p50, tokens=1000, counters=None, master=None, failed=0):
    return Phase(name, "http://x", 10, 10 - failed, failed, {"mean": p50, "p50": p50, "p90": p50, "p99": p50}, tokens,
                 counters, master, {"http": failed} if failed else {}, {"http": "HTTP 500: boom"} if failed else {})


SEED003 = {"cold": 2322.0, "local": 739.0, "remote": 948.0}


def test_tier_states():
    cold = phase("cold", 2322.0)
    hit = {"hbm_hits": 0, "pool_hits": 875}
    assert judge_tier("local", cold, phase("local", 739.0, counters=hit)).state == "delivered"
    assert judge_tier("local", cold, phase("local", 2300.0, counters=hit)).state == "not_faster"
    assert judge_tier("local", cold, phase("local", 300.0, counters={"hbm_hits": 875, "pool_hits": 0})).state == "hbm"
    assert judge_tier("local", cold, phase("local", 2300.0, counters={"hbm_hits": 0, "pool_hits": 0})).state == "missed"
    assert judge_tier("local", cold, phase("local", 700.0, counters={"hbm_hits": 0, "pool_hits": 0})).state == "contradicts"
    # an older vllm without the connector's counters: the master's Gets confirm
    old = {"hbm_hits": 0}
    assert judge_tier("local", cold, phase("local", 739.0, counters=old, master={"gets": 90})).state == "delivered"
    assert judge_tier("local", cold, phase("local", 739.0, counters=old, master={"gets": 0})).state == "contradicts"
    assert judge_tier("local", cold, phase("local", 739.0)).state == "unconfirmed"
    assert judge_tier("remote", cold, None).state == "not_measured"


def _judged(local_counters, remote_counters, facts=None, **kw):
    phases = {"cold": phase("cold", SEED003["cold"], master={"puts": 800, "gets": 0}),
              "evict": phase("evict", 2300.0),
              "local": phase("local", kw.pop("local", SEED003["local"]), counters=local_counters, master={"gets": 80}),
              "remote": phase("remote", kw.pop("remote", SEED003["remote"]), counters=remote_counters,
                              master={"gets": kw.pop("remote_gets", 80)})}
    return judge(phases, facts or PoolFacts(master_url="http://m:9003"), [], 1.0, {}, **kw)


HIT = {"hbm_hits": 0, "pool_hits": 875}
MISS = {"hbm_hits": 0, "pool_hits": 0}


def test_verdict_seed_003_table_passes():
    r = _judged(HIT, HIT)
    assert r.status == "ok"
    assert r.title.text("en") == ("the KV pool delivers: TTFT p50 cold 2322 ms, local DRAM hit 739 ms (-68%), "
                                  "cross-node hit 948 ms (-59%)")
    assert "KV 池生效" in r.title.text("zh")


def test_verdict_names_the_tier_that_did_not_deliver():
    local = _judged(MISS, MISS, local=2300.0, remote=2310.0)
    assert local.status == "fail" and local.title.text("en").startswith("no local DRAM hit: the pool is not used")
    assert "kv_role kv_both" in local.hint.text("en")
    tcp = calc.PoolConfig(protocol="tcp", path="/etc/mooncake.json")
    remote = _judged(HIT, MISS, PoolFacts(config=tcp, master_url="http://m:9003"), remote=2310.0, remote_gets=0)
    assert remote.status == "fail" and remote.title.text("en").startswith("no cross-node hit: transport or metadata server")
    hint = remote.hint.text("en")
    assert "/etc/mooncake.json sets protocol tcp" in hint and "PYTHONHASHSEED=0" in hint
    assert "实例 2" in remote.hint.text("zh")


def test_verdict_causes_from_the_configuration_and_the_master():
    facts = PoolFacts(master_url="http://m:9003", bytes_per_token=57344, pool_bytes=GIB)
    phases = {"cold": phase("cold", 2322.0, tokens=102400, master={"puts": 0, "gets": 0}),
              "evict": phase("evict", 2300.0, tokens=461600),
              "local": phase("local", 2300.0, counters=MISS)}
    r = judge(phases, facts, [], 1.0, {})
    hint = r.hint.text("en")
    assert "recorded no Put while dataset A was served" in hint
    assert "holds about 18,725 tokens and datasets A and B need 564,000" in hint
    unread = judge(phases, PoolFacts(master_url="http://m:9003", master_error="Connection refused"), [], 1.0, {})
    assert "could not be read (Connection refused)" in unread.hint.text("en")


def test_verdict_warnings():
    slow = _judged(HIT, {"hbm_hits": 0, "pool_hits": 875}, remote=2200.0)
    assert slow.status == "warn" and "not faster than recomputing" in slow.title.text("en")
    same = _judged(HIT, {"hbm_hits": 875, "pool_hits": 0}, remote=300.0)
    assert same.status == "warn" and "probably the same instance" in same.hint.text("en")
    no_peer = judge({"cold": phase("cold", 2322.0), "local": phase("local", 739.0, counters=HIT)}, PoolFacts(), [], 1.0, {})
    assert no_peer.status == "ok" and "cross-node not measured" in no_peer.title.text("en")


def test_verdict_failed_requests_and_timeout_come_first():
    phases = {"cold": phase("cold", 2322.0, failed=3)}
    r = judge(phases, PoolFacts(), [], 1.0, {})
    assert r.status == "fail" and "3 of 10 requests failed in dataset A to instance 1 (cold) (http 3)" in r.title.text("en")
    t = judge({"cold": phase("cold", 2322.0)}, PoolFacts(), [], 1.0, {}, timed_out="evict")
    assert t.status == "fail" and "during dataset B to instance 1 (eviction)" in t.title.text("en")


def test_verdict_knee_off_the_configuration():
    metrics = {"sweep": {"prediction": {"docs_low": 63.7, "docs_high": 74.9}}}
    facts = PoolFacts(pool_bytes=40 * GIB, master_capacity=20 * GIB)
    phases = {"cold": phase("cold", 2322.0), "local": phase("local", 739.0, counters=HIT)}
    r = judge(phases, facts, [], 1.0, metrics, sweep.Knee(30, 40, 1500.0, True), sweep.Agreement("below"))
    assert r.status == "warn"
    assert r.title.text("en") == ("the cache holds fewer documents than configured: the second ask's TTFT jumps at 30-40 "
                                  "documents, the configuration predicts 64-75")
    assert "the master reports 20.00 GB mounted, less than the 40.00 GB configured" in r.hint.text("en")
    counted = judge(phases, facts, [], 1.0, metrics, sweep.Knee(30, 40, 1500.0, True, by="counters"),
                    sweep.Agreement("below"))
    assert counted.title.text("en").startswith("the cache holds fewer documents than configured: the second ask stops "
                                               "hitting the cache (by the server's hit counters) at 30-40 documents")
    assert "依据服务器的命中计数器" in counted.title.text("zh")
    assert any("told by the server's hit counters" in e for e in counted.evidence)
    assert any("told by TTFT alone" in e for e in r.evidence)


def test_server_strings_are_made_inert():
    assert inert("qwen\x1b]0;owned\x07") == "qwen\\x1b]0;owned\\x07"
    assert inert("a\u202eb") == "a\\u202eb"


def test_verdict_slo_on_the_hit_sends():
    from doctor.smoke.slo import evaluate, parse_slo

    objectives = parse_slo("ttft=800ms")
    checks = [(name, c) for name, p50 in (("local", 739.0), ("remote", 948.0))
              for c in evaluate(objectives, {"ttft_ms": {"p99": p50}})]
    phases = {"cold": phase("cold", 2322.0), "local": phase("local", 739.0, counters=HIT),
              "remote": phase("remote", 948.0, counters=HIT)}
    r = judge(phases, PoolFacts(), checks, 1.0, {})
    assert r.status == "fail" and r.title.text("en") == "SLO missed on the cache hits: remote: ttft p99 948 ms > 800 ms"


def test_implausible_sizes_are_not_believed():
    huge = CACHE_INFO.replace('num_gpu_blocks="2885"', 'num_gpu_blocks="99999999999"')
    assert calc.hbm_from_metrics(parse(huge)) is None
    assert calc.hbm_from_log(["GPU KV cache size: 99,999,999,999 tokens"]) is None


@pytest.mark.parametrize("flags, words", [
    ({"kv_requests": 10 ** 9}, "requests 1000000000: at most 100,000"),
    ({"doc_len": 10 ** 8, "sweep": True}, "doc_len 100000000: at most 2,000,000"),
    ({"sweep_docs": "1-100000:1", "sweep": True}, "at most 40 points"),
    ({"peer_endpoint": "http://a:1/"}, "--peer-endpoint must be another instance"),
    ({"master": "not an address"}, "write HOST:PORT[:METRICS_PORT]"),
])
def test_kvpool_options_refused(flags, words):
    from doctor.smoke.config import ConfigError, merge

    with pytest.raises(ConfigError, match=None) as e:
        merge({}, dict({"endpoint": "http://a:1", "stages": ["kvpool"]}, **flags))
    assert words in str(e.value)


def test_the_html_report_escapes_what_servers_say_and_draws_without_a_sweep():
    """A model name or error from a server is text in the page, never markup; without a sweep
    the page has the bars only; the Chinese page is Chinese."""
    import xml.etree.ElementTree as ET

    from doctor.smoke.kvpool_report import html_report

    evil = '<img src=x onerror=alert(1)>"'
    stage = {"name": "kvpool", "status": "fail", "title": f"no local DRAM hit {evil}", "hint": evil,
             "metrics": {"model": evil, "url": "http://a:1", "peer_url": None, "ttft_cold_p50_ms": 2322.0,
                         "ttft_cold_p90_ms": 2400.0, "ttft_local_hit_p50_ms": 2300.0, "ttft_local_hit_p90_ms": None,
                         "ttft_remote_hit_p50_ms": None,
                         "phases": {"cold": {"url": evil, "requests": 10, "completed": 10, "prompt_tokens": 10240,
                                             "ttft_ms": {"mean": 2322.0, "p50": 2322.0, "p90": 2400.0, "p99": 2500.0},
                                             "counters": None, "master": None}},
                         "mooncake_config": {"path": evil, "error": None, "protocol": evil, "global_segment_size": 1}}}
    page = html_report(stage, "en")
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;&quot;" in page
    svgs = [page[i:page.index("</svg>", i) + 6] for i in range(len(page)) if page.startswith("<svg", i)]
    assert len(svgs) == 1 and ET.fromstring(svgs[0]) is not None  # the bars; no sweep, no curve
    assert "not measured" in page and "-1%" in page  # TTFT3 missing, TTFT2 barely below cold
    zh = html_report(stage, "zh")
    assert '<html lang="zh">' in zh and "未测量" in zh and "TTFT2 本地命中" in zh


def test_the_reports_say_what_told_hits_from_misses():
    from doctor.smoke.kvpool_report import html_report, text_lines

    pts = [sweep.Point(3, 580.0, 190.0, hit_share=1.0), sweep.Point(6, 580.0, 200.0, hit_share=0.9),
           sweep.Point(9, 580.0, 570.0, hit_share=0.1)]
    swept = {"doc_len": 128, "doc_tokens": 128.0, "points": [p.to_json() for p in pts],
             "knee": sweep.find_knee(pts).to_json(), "agreement": "agree", "prediction": None}
    tiers = {"ttft_cold_p50_ms": 580.0, "ttft_local_hit_p50_ms": 190.0, "ttft_remote_hit_p50_ms": None}
    stage = {"name": "kvpool", "status": "ok", "title": "ok", "hint": None, "metrics": dict(tiers, sweep=swept)}
    assert "knee: 6-9 documents (agrees with the configuration; hits told by the server's counters)" in \
        html_report(stage, "en").replace("&#x27;", "'")
    assert any("命中依据服务器计数器判断" in line for line in text_lines(stage["metrics"], "zh"))
    older = dict(swept, knee={k: v for k, v in swept["knee"].items() if k != "by"})  # a report from before "by"
    assert any("hits told by TTFT alone" in line for line in text_lines(dict(tiers, sweep=older), "en"))


def test_a_huge_sweep_range_is_refused_before_it_is_made():
    """--sweep-docs 1-1000000000:1 took 24 GB and the OOM killer: the range was made (and sorted)
    before its length was judged."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(sweep.SweepError):
            sweep.parse_docs("1-2000000:1")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak  # made first: about 150 MB for these 2 M counts
    with pytest.raises(sweep.SweepError):
        sweep.parse_docs("1-100000000000000000000:1000000000")
