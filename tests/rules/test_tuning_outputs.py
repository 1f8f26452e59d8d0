"""Every tuning finding word for word in both languages (title, hint, commands, the launch-script
edits), on the plain facts of tests/rules/test_tuning.py and the shipped matrices/tuning.toml.

Each case is kept as its difference from the untouched host judged against the same release
(``healthy <release>``, kept in full). ``UPDATE_GOLDENS=1 pytest tests/rules/test_tuning_outputs.py``
rewrites tuning_outputs.json; review its diff (a tuning.toml change shows up here too).
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

from doctor.facts import ModelFacts, MooncakeFacts, MountFact, ShardFact, TuningFacts, WeightCheck
from doctor.rules.engine import make_context, run_rules

from doctor.findings import FAIL, INFO, OK, WARN

from .test_tuning import DUO, RULES, TP2, bad_model, facts, host, judge, status

from .test_outputs import _render
from goldens import match
from shipped import matrix as shipped_matrix

EXPECTED = Path(__file__).with_name("tuning_outputs.json")

TINY_SHM = MountFact(path="/dev/shm", fstype="tmpfs", size_bytes=64 << 20)
STORE = MooncakeFacts(config_text='{"protocol": "ascend", "global_segment_size": "4GB"}')
RDMA = MooncakeFacts(config_text='{"protocol": "rdma", "master_server_address": "127.0.0.1:50051"}')
NO_HUGEPAGES = {"HugePages_Total": 0, "HugePages_Free": 0, "Hugepagesize": 2048}
DUO_HOST = dict(npu=DUO, davinci=2)
HARMFUL = {"ASCEND_LAUNCH_BLOCKING": "1", "TASK_QUEUE_ENABLE": "0",
           "PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250,expandable_segments:True",
           "PYTORCH_ALLOC_CONF": "expandable_segments:True"}
SEED = "vllm serve Qwen2.5-14B-Instruct --tensor-parallel-size 2 --dtype bfloat16 --block-size 16 --enable-chunked-prefill"


def _qwen3() -> ModelFacts:
    m = ModelFacts(path="/m", exists=True, is_dir=True,
                   config=dict(num_hidden_layers=64, num_attention_heads=64, num_key_value_heads=8, head_dim=128,
                               torch_dtype="bfloat16", max_position_embeddings=40960))
    m.shards = [ShardFact(name=f"s{i}", exists=True, size=4 << 30) for i in range(16)]
    return m


def _good_model() -> ModelFacts:
    return ModelFacts(path="/m", exists=True, is_dir=True, files=["config.json", "tokenizer.json"],
                      config={"model_type": "llama", "num_hidden_layers": 2}, index_layers=2,
                      index_file="model.safetensors.index.json",
                      shards=[ShardFact(name="a.safetensors", exists=True, size=3 << 30, expected_size=3 << 30,
                                        tensors=3)])


def _verified(*checks: WeightCheck) -> ModelFacts:
    m = _good_model()
    m.verify_requested, m.verified = True, list(checks)
    m.shards[0].sha256 = "aa" * 32
    return m


def cases() -> Dict[str, Tuple[dict, str]]:
    """name -> (keywords of test_tuning.facts(), release)."""
    w4a4 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W4A4_DYNAMIC"])
    w8a8 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W8A8"])
    heads = ModelFacts(path="/m", exists=True, is_dir=True, config=dict(num_attention_heads=40, num_key_value_heads=8,
                                                                        num_hidden_layers=48, hidden_size=5120))
    return {
        "governor": (dict(tuning_facts=host(governors={"ondemand": 190, "performance": 2})), "0.13.0"),
        "sysctls": (dict(tuning_facts=host(swappiness=60, numa_balancing=1, meminfo_kb={"SwapTotal": 8 << 20})), "0.13.0"),
        "thp, old kernel, vm": (dict(tuning_facts=host(thp="madvise", kernel="4.19.90-24.4.v2101.ky10.aarch64",
                                                       hypervisor=True)), "0.13.0"),
        "numa far": (dict(tuning_facts=host(cpus_allowed="0-23")), "0.13.0"),
        "cpu binding short": (dict(tuning_facts=host(cpus_allowed="0-31")), "0.16.0rc1"),
        "cpu binding enough": (dict(tuning_facts=host(cpus_allowed="0-31")), "0.15.0rc1"),
        "shm tiny, tp 2, container": (dict(tuning_facts=host(shm=TINY_SHM), serve="vllm serve m -tp 2", container=True),
                                      "0.13.0"),
        "shm tiny on the host": (dict(tuning_facts=host(shm=TINY_SHM)), "0.13.0"),
        "nofile low": (dict(tuning_facts=host(limits={"nofile": [1024, 4096]})), "0.13.0"),
        "memlock for rdma": (dict(mooncake=RDMA), "0.13.0"),
        "memlock unlimited": (dict(mooncake=RDMA, tuning_facts=host(limits={"nofile": [1048576, 1048576],
                                                                            "memlock": [None, None]})), "0.13.0"),
        "memlock soft limit under an unlimited hard one": (dict(mooncake=RDMA, tuning_facts=host(limits={
            "nofile": [1048576, 1048576], "memlock": [65536, None]})), "0.13.0"),
        "swappiness 0 with swap": (dict(tuning_facts=host(meminfo_kb={"SwapTotal": 8 << 20})), "0.13.0"),
        "hugepages none": (dict(tuning_facts=host(meminfo_kb=NO_HUGEPAGES), env={"MC_STORE_USE_HUGEPAGE": "1"},
                                mooncake=STORE), "0.13.0"),
        "hugepages short": (dict(tuning_facts=host(meminfo_kb={"HugePages_Total": 1024, "HugePages_Free": 512,
                                                               "Hugepagesize": 2048}),
                                 env={"MC_STORE_USE_HUGEPAGE": "1"}, mooncake=STORE), "0.13.0"),
        "recommendations on x86": (dict(serve=TP2, machine="x86_64"), "0.13.0"),
        "recommendations, agreed values": (dict(serve=TP2, machine="x86_64", env={
            "TASK_QUEUE_ENABLE": "2", "OMP_NUM_THREADS": "10", "PYTORCH_NPU_ALLOC_CONF": "page_size:1g",
            "LD_PRELOAD": "/opt/libfoo.so"}), "0.13.0"),
        "recommendations late": (dict(serve=TP2, machine="x86_64"), "0.21.0rc1"),
        "ignored variables": (dict(env={"VLLM_USE_V1": "1", "VLLM_ASCEND_ENABLE_FLASHCOMM": "1",
                                        "VLLM_ASCEND_ENABLE_FLASHCOM1": "1"}), "0.21.0rc1"),
        "harmful variables": (dict(serve="vllm serve m --enforce-eager", env=HARMFUL), "0.13.0"),
        "launch blocking, mode unknown": (dict(env={"ASCEND_LAUNCH_BLOCKING": "1"}), "0.13.0"),
        "alloc split on 0.14": (dict(env={"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250"}), "0.14.0rc1"),
        "rejected v0 engine": (dict(env={"VLLM_USE_V1": "0"}), "0.11.0"),
        "rejected launch blocking in graph mode": (dict(serve="vllm serve m", env={"ASCEND_LAUNCH_BLOCKING": "1"}),
                                                   "0.11.0rc1"),
        "rejected flashcomm at tp 1": (dict(serve="vllm serve m", env={"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}), "0.13.0"),
        "rejected sleep mode": (dict(serve="vllm serve m --enable-sleep-mode",
                                     env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}), "0.13.0"),
        "visible devices spaced": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "0, 1"}), "0.13.0"),
        "visible devices out of order": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "1,0"}), "0.13.0"),
        "visible devices absent card": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "0,9"}), "0.13.0"),
        "visible devices ok": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "0,1"}), "0.13.0"),
        "visible devices range": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "0-3"}), "0.13.0"),
        "visible devices beyond the container's cards": (dict(env={"ASCEND_RT_VISIBLE_DEVICES": "0,3"}, container=True,
                                                               davinci=2), "0.13.0"),
        "visible devices in a container": (dict(env={"ASCEND_VISIBLE_DEVICES": "6,7"}, container=True, davinci=2),
                                           "0.13.0"),
        "parallel size too big": (dict(serve="vllm serve m -tp 4", env={"ASCEND_RT_VISIBLE_DEVICES": "2,3"}), "0.13.0"),
        "busy cards in a container": (dict(serve="vllm serve m -tp 2", container=True), "0.13.0"),
        "busy cards on the host": (dict(serve="vllm serve m -tp 2"), "0.13.0"),
        "kubernetes cards": (dict(env={"KUBERNETES_SERVICE_HOST": "10.96.0.1", "ASCEND_VISIBLE_DEVICES": "4,3"}), "0.13.0"),
        "bfloat16 on 300I Duo": (dict(serve="vllm serve m --dtype bfloat16", **DUO_HOST), "0.13.0"),
        "auto dtype on 300I Duo": (dict(serve="vllm serve /m", model=ModelFacts(
            path="/m", exists=True, is_dir=True, config={"torch_dtype": "bfloat16"}), **DUO_HOST), "0.13.0"),
        "block size forced": (dict(serve=SEED), "0.13.0"),
        "block size with prefix caching": (dict(serve=SEED + " --enable-prefix-caching"), "0.7.3"),
        "block size forced by prefix caching": (dict(serve=SEED + " --enable-prefix-caching"), "0.10.0rc1"),
        "graph mode on 300I": (dict(serve="vllm serve m --max-model-len 4096", **DUO_HOST), "0.13.0"),
        "max model len on 300I": (dict(serve="vllm serve m --enforce-eager", **DUO_HOST), "0.18.0"),
        "torchair config removed": (dict(serve="vllm serve m --additional-config "
                                               "'{\"torchair_graph_config\": {\"enabled\": true}}'"), "0.12.0rc1"),
        "w4a4 too early": (dict(serve="vllm serve /m --quantization ascend", model=w4a4), "0.13.0"),
        "quantization flag missing": (dict(serve="vllm serve /m", model=w8a8), "0.16.0rc1"),
        "heads and tp": (dict(serve="vllm serve /m -tp 3", model=heads), "0.13.0"),
        "kv cache fits": (dict(serve="vllm serve /m -tp 4 --max-model-len 32768", model=_qwen3()), "0.13.0"),
        "kv cache none left": (dict(serve="vllm serve /m -tp 2 --max-model-len 32768", model=_qwen3()), "0.13.0"),
        "kv cache beyond the model": (dict(serve="vllm serve /m -tp 4 --max-model-len 131072", model=_qwen3()), "0.13.0"),
        "model good": (dict(model=_good_model()), "0.13.0"),
        "model broken": (dict(model=bad_model()), "0.13.0"),
        "model missing": (dict(model=ModelFacts(path="/nope")), "0.13.0"),
        "model checksums match": (dict(model=_verified(WeightCheck("a.safetensors", "aa" * 32, "aa" * 32, seconds=1.5))),
                                  "0.13.0"),
        "model checksums differ": (dict(model=_verified(WeightCheck("a.safetensors", "aa" * 32, "bb" * 32),
                                                        WeightCheck("b.safetensors", "cc" * 32, error="unreadable"))),
                                   "0.13.0"),
        "bare host": (dict(tuning_facts=TuningFacts()), "0.13.0"),
    }


def _judge(kw: dict, release: str, matrix) -> Dict[str, str]:
    ctx = make_context(facts(**kw), matrix, "runtime", release)
    return _render([f for f in run_rules(ctx, RULES).findings if f.layer == "tuning"])


def outputs() -> Dict[str, Dict[str, str]]:
    matrix = shipped_matrix()
    table = cases()
    out: Dict[str, Dict[str, str]] = {}
    for release in sorted({r for _, r in table.values()}):
        out[f"healthy {release}"] = _judge({}, release, matrix)
    for name, (kw, release) in table.items():
        base, got = out[f"healthy {release}"], _judge(kw, release, matrix)
        out[name] = {k: v for k, v in got.items() if base.get(k) != v}
        out[name].update({k: "(absent)" for k in base if k not in got})
    return out


def test_every_tuning_finding_word_for_word():
    match(outputs(), EXPECTED)


def _judged(name: str):
    kw, release = cases()[name]
    return judge(facts(**kw), release, shipped_matrix())


def test_each_tuning_id_is_produced_by_a_case_and_absent_from_the_bare_host():
    """The table's cases, judged: each id with its status (the ones no other test names that
    way), and none of them on a host with nothing readable or configured."""
    assert status(_judged('ignored variables'), "tuning.env_ignored") == INFO
    assert status(_judged('recommendations late'), "tuning.env_recommended") == INFO
    assert status(_judged('kubernetes cards'), "tuning.k8s_devices") == WARN
    assert status(_judged('thp, old kernel, vm'), "tuning.kernel") == INFO
    assert status(_judged('kv cache fits'), "tuning.kv_cache") == OK
    assert status(_judged('max model len on 300I'), "tuning.max_model_len_310p") == WARN
    assert status(_judged('model broken'), "tuning.model_checksums") == INFO
    assert status(_judged('model good'), "tuning.model_index") == OK
    assert status(_judged('auto dtype on 300I Duo'), "tuning.model_tokenizer") == FAIL
    assert status(_judged('auto dtype on 300I Duo'), "tuning.model_weights") == FAIL
    assert status(_judged('thp, old kernel, vm'), "tuning.thp") == INFO
    assert status(_judged('thp, old kernel, vm'), "tuning.virtual_machine") == INFO
    assert status(_judged('visible devices spaced'), "tuning.visible_devices") == FAIL
    bare = _judged("bare host")
    assert status(bare, "tuning.block_size") is None
    assert status(bare, "tuning.cpu_binding") is None
    assert status(bare, "tuning.cpu_governor") is None
    assert status(bare, "tuning.devices_busy") is None
    assert status(bare, "tuning.dtype") is None
    assert status(bare, "tuning.env_harmful") is None
    assert status(bare, "tuning.env_ignored") is None
    assert status(bare, "tuning.env_recommended") is None
    assert status(bare, "tuning.graph_310p") is None
    assert status(bare, "tuning.heads_tp") is None
    assert status(bare, "tuning.hugepages") is None
    assert status(bare, "tuning.ignored_config") is None
    assert status(bare, "tuning.k8s_devices") is None
    assert status(bare, "tuning.kernel") is None
    assert status(bare, "tuning.kv_cache") is None
    assert status(bare, "tuning.max_model_len_310p") is None
    assert status(bare, "tuning.memlock") is None
    assert status(bare, "tuning.model_checksums") is None
    assert status(bare, "tuning.model_config") is None
    assert status(bare, "tuning.model_index") is None
    assert status(bare, "tuning.model_tokenizer") is None
    assert status(bare, "tuning.model_weights") is None
    assert status(bare, "tuning.nofile") is None
    assert status(bare, "tuning.numa_affinity") is None
    assert status(bare, "tuning.numa_balancing") is None
    assert status(bare, "tuning.parallel_size") is None
    assert status(bare, "tuning.quantization") is None
    assert status(bare, "tuning.rejected") is None
    assert status(bare, "tuning.shm") is None
    assert status(bare, "tuning.swappiness") is None
    assert status(bare, "tuning.thp") is None
    assert status(bare, "tuning.virtual_machine") is None
    assert status(bare, "tuning.visible_devices") is None
