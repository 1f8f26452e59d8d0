"""The tuning rules on plain facts: each finding raised and not raised, on releases where the
advice differs (the release rows and facts come from matrices/tuning.toml)."""
from typing import Dict, List, Optional
import copy
import dataclasses

import pytest

from doctor.facts import (CannFacts, DeviceNode, DevicesFacts, Facts, HostFacts, ModelFacts, MooncakeFacts, MountFact,
                          ShardFact, TuningFacts)
from doctor.findings import FAIL, INFO, OK, WARN
from doctor.parse.npusmi import parse_npu_smi
from doctor.parse.serving import read_command
from doctor.rules import tuning, tuning_model, tuning_serve
from doctor.rules.engine import make_context, run_rules
from fakehost import fixture
from shipped import matrix as shipped_matrix

RULES = tuning.RULES + tuning_serve.RULES + tuning_model.RULES


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


def host(**kw) -> TuningFacts:
    base = dict(governors={"performance": 192}, cpus_online=192, thp="always", kernel="5.10.0-182.0.0.95.oe2203sp3.aarch64",
                swappiness=0, numa_balancing=0, numa_nodes={str(n): f"{n * 24}-{n * 24 + 23}" for n in range(8)},
                npu_numa={"0000:C1:00.0": 6, "0000:01:00.0": 0}, cpus_allowed="0-191",
                meminfo_kb={"MemTotal": 1 << 30, "SwapTotal": 0, "HugePages_Total": 0, "HugePages_Free": 0,
                            "Hugepagesize": 2048},
                limits={"nofile": [1048576, 1048576], "memlock": [8388608, 8388608]},
                shm=MountFact(path="/dev/shm", fstype="tmpfs", size_bytes=1 << 30))
    base.update(kw)
    return TuningFacts(**base)


def facts(*, tuning_facts: Optional[TuningFacts] = None, serve: Optional[str] = None, env: Optional[Dict[str, str]] = None,
          npu: str = "npu-smi-910b4-32g.txt", machine: str = "aarch64", container: bool = False,
          model: Optional[ModelFacts] = None, mooncake: Optional[MooncakeFacts] = None, davinci: int = 8) -> Facts:
    f = Facts(tool_version="t", collected_at="now", host=HostFacts(root="/", cwd="/", uid=0, gids=[0], machine=machine,
                                                                    in_container=container))
    f.env = dict(env or {})
    info = parse_npu_smi(fixture(npu))
    f.devices = DevicesFacts(davinci=[DeviceNode(path=f"/dev/davinci{i}", exists=True) for i in range(davinci)],
                             npu_smi_info=info)
    f.cann = CannFacts(found=False)
    f.tuning = tuning_facts or host()
    if serve is not None:
        f.tuning.serve = read_command(serve, {}, "--serve-args")
    f.model, f.mooncake = model, mooncake
    return f


def judge(f: Facts, release: str, matrix) -> List:
    ctx = make_context(f, matrix, "runtime", release)
    return [x for x in run_rules(ctx, RULES).findings if x.layer == "tuning"]


def by_id(findings, fid: str) -> List:
    return [f for f in findings if f.id == fid]


def status(findings, fid: str) -> Optional[str]:
    hits = by_id(findings, fid)
    assert len({h.status for h in hits}) <= 1, hits
    return hits[0].status if hits else None


def test_no_rule_crashes_on_a_bare_host(matrix):
    for release in ("0.9.1", "0.13.0", "0.25.1rc1"):
        found = judge(facts(tuning_facts=TuningFacts()), release, matrix)
        assert not [f for f in found if f.id.endswith("rule_error")], found
        assert not found  # nothing readable, nothing configured: no noise


# -- host ----------------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["0.11.0rc3", "0.13.0"])
def test_governor(matrix, release):
    slow = judge(facts(tuning_facts=host(governors={"ondemand": 190, "performance": 2})), release, matrix)
    f = by_id(slow, "tuning.cpu_governor")[0]
    assert f.status == WARN and "190 of 192" in f.title.text() and f.commands[0].argv[0] == "sh"
    assert "v0.13.0rc1" in f.source
    assert status(judge(facts(), release, matrix), "tuning.cpu_governor") == OK


def test_sysctls_only_where_they_matter(matrix):
    noisy = judge(facts(tuning_facts=host(swappiness=60, numa_balancing=1,
                                          meminfo_kb={"SwapTotal": 8 << 20})), "0.13.0", matrix)
    assert status(noisy, "tuning.swappiness") == WARN and status(noisy, "tuning.numa_balancing") == WARN
    assert by_id(noisy, "tuning.swappiness")[0].commands[0].shell() == "sysctl -w vm.swappiness=0"
    quiet = judge(facts(tuning_facts=host(swappiness=60, numa_balancing=1, numa_nodes={"0": "0-63"},
                                          meminfo_kb={"SwapTotal": 0})), "0.13.0", matrix)
    assert status(quiet, "tuning.swappiness") is None and status(quiet, "tuning.numa_balancing") is None


def test_thp_kernel_and_vm_are_information(matrix):
    found = judge(facts(tuning_facts=host(thp="madvise", kernel="4.19.90-24.4.v2101.ky10.aarch64", hypervisor=True)),
                  "0.13.0", matrix)
    assert (status(found, "tuning.thp"), status(found, "tuning.kernel"), status(found, "tuning.virtual_machine")) == \
        (INFO, INFO, INFO)
    assert "msprechecker" in by_id(found, "tuning.kernel")[0].title.text()
    fine = judge(facts(tuning_facts=host(kernel="5.10.0", hypervisor=False)), "0.13.0", matrix)
    assert not by_id(fine, "tuning.thp") + by_id(fine, "tuning.kernel") + by_id(fine, "tuning.virtual_machine")


def test_numa_affinity(matrix):
    # NPU 0 (bus C1) is on node 6 (144-167); a cpuset of 0-23 holds none of its CPUs
    far = judge(facts(tuning_facts=host(cpus_allowed="0-23")), "0.13.0", matrix)
    f = by_id(far, "tuning.numa_affinity")[0]
    assert f.status == WARN and "node 6" in f.evidence[0]
    near = judge(facts(tuning_facts=host(cpus_allowed="0-23,144-167")), "0.13.0", matrix)
    assert status(near, "tuning.numa_affinity") == OK


def test_cpu_binding_per_release(matrix):
    # 32 CPUs for 8 NPUs: enough for v0.15.0rc1 (3 per NPU), not for v0.16.0rc1 (5 per NPU)
    f = facts(tuning_facts=host(cpus_allowed="0-31"))
    assert status(judge(f, "0.14.0rc1", matrix), "tuning.cpu_binding") is None  # opt-in there
    assert status(judge(f, "0.15.0rc1", matrix), "tuning.cpu_binding") == OK
    short = by_id(judge(f, "0.16.0rc1", matrix), "tuning.cpu_binding")[0]
    assert short.status == WARN and "needs 40" in short.title.text()
    assert status(judge(facts(tuning_facts=host(cpus_allowed="0-31"), machine="x86_64"), "0.16.0rc1", matrix),
                  "tuning.cpu_binding") is None  # ARM only
    off = facts(tuning_facts=host(cpus_allowed="0-31"), serve="vllm serve m --additional-config '{\"enable_cpu_binding\": false}'")
    assert status(judge(off, "0.16.0rc1", matrix), "tuning.cpu_binding") is None
    # nineteenth sample (seed 44), #32: from v0.22.1rc1 Ascend 950 (A5) reserves no IRQ CPUs (3 per NPU,
    # then its own CPU-cluster allocation), so the 5-per-NPU minimum is not judged there
    def on_a5(release):
        ctx = make_context(f, matrix, "runtime", release)
        ctx.hardware = "A5"
        return [x for x in run_rules(ctx, RULES).findings if x.id == "tuning.cpu_binding"]
    assert [x.status for x in on_a5("0.21.0rc1")] == [WARN]
    assert on_a5("0.22.1rc1") == [] and on_a5("0.30.0rc2") == []


def test_shm(matrix):
    tiny = host(shm=MountFact(path="/dev/shm", fstype="tmpfs", size_bytes=64 << 20))
    assert status(judge(facts(tuning_facts=tiny, serve="vllm serve m -tp 2", container=True), "0.13.0", matrix),
                  "tuning.shm") == FAIL
    single = by_id(judge(facts(tuning_facts=host(shm=tiny.shm), serve="vllm serve m", container=True), "0.13.0", matrix),
                   "tuning.shm")[0]
    assert single.status == WARN and not single.commands  # a container is recreated, not remounted
    host_side = by_id(judge(facts(tuning_facts=host(shm=tiny.shm)), "0.13.0", matrix), "tuning.shm")[0]
    assert host_side.commands[0].shell() == "mount -o remount,size=1g /dev/shm"
    assert status(judge(facts(), "0.13.0", matrix), "tuning.shm") == OK


def test_limits(matrix):
    low = by_id(judge(facts(tuning_facts=host(limits={"nofile": [1024, 4096]})), "0.13.0", matrix), "tuning.nofile")[0]
    assert low.status == WARN and low.commands[0].shell() == "ulimit -n 65535"
    assert status(judge(facts(tuning_facts=host(limits={"nofile": [1024, 1048576]})), "0.13.0", matrix), "tuning.nofile") == OK
    rdma = MooncakeFacts(config_text='{"protocol": "rdma", "master_server_address": "127.0.0.1:50051"}')
    assert status(judge(facts(mooncake=rdma), "0.13.0", matrix), "tuning.memlock") == WARN
    ascend = MooncakeFacts(config_text='{"protocol": "ascend"}')
    assert status(judge(facts(mooncake=ascend), "0.13.0", matrix), "tuning.memlock") is None


def test_hugepages_for_mooncake(matrix):
    store = MooncakeFacts(config_text='{"protocol": "ascend", "global_segment_size": "4GB"}')
    none = host(meminfo_kb={"HugePages_Total": 0, "HugePages_Free": 0, "Hugepagesize": 2048})
    short = by_id(judge(facts(tuning_facts=none, env={"MC_STORE_USE_HUGEPAGE": "1"}, mooncake=store), "0.13.0", matrix),
                  "tuning.hugepages")[0]
    assert short.status == WARN and short.commands[0].shell() == "sysctl -w vm.nr_hugepages=2048"
    enough = host(meminfo_kb={"HugePages_Total": 4096, "HugePages_Free": 4096, "Hugepagesize": 2048})
    assert status(judge(facts(tuning_facts=enough, env={"MC_STORE_USE_HUGEPAGE": "1"}, mooncake=store), "0.13.0", matrix),
                  "tuning.hugepages") == OK
    assert status(judge(facts(tuning_facts=none, mooncake=store), "0.13.0", matrix), "tuning.hugepages") is None


# -- environment ---------------------------------------------------------------------------

TP2 = "vllm serve /models/qwen --tensor-parallel-size 2"


def bad_model() -> ModelFacts:
    """A model directory with a short shard, a missing one and one that lacks a tensor."""
    return ModelFacts(path="/m", exists=True, is_dir=True, files=["config.json"], config={"num_hidden_layers": 4},
                      index_layers=2, index_file="model.safetensors.index.json",
                      shards=[ShardFact(name="a.safetensors", exists=True, size=90, expected_size=100),
                              ShardFact(name="b.safetensors"),
                              ShardFact(name="c.safetensors", exists=True, size=10, expected_size=10, missing_count=1,
                                        missing_tensors=["x.weight"])],
                      verify_requested=True)


def test_recommendations_follow_the_release(matrix):
    old = judge(facts(serve=TP2, machine="x86_64"), "0.13.0", matrix)
    rec = {f.observed or "": f for f in by_id(old, "tuning.env_recommended")}
    titles = " | ".join(f.title.text() for f in by_id(old, "tuning.env_recommended"))
    assert "PYTORCH_NPU_ALLOC_CONF" in titles  # recommended before v0.14.0rc1 ...
    new = judge(facts(serve=TP2, machine="x86_64"), "0.14.0rc1", matrix)
    assert "PYTORCH_NPU_ALLOC_CONF" not in " | ".join(f.title.text() for f in by_id(new, "tuning.env_recommended"))
    # ... which sets it itself. AIV: the code's own warning (warn, with its effect) to v0.20.2rc1,
    # the tuning guide only (info) after.
    aiv_old = [f for f in by_id(old, "tuning.env_recommended") if "HCCL_OP_EXPANSION_MODE" in f.title.text()][0]
    assert aiv_old.status == WARN and "capture sizes are cut" in aiv_old.title.text()
    assert aiv_old.edits[0].to_json() == {"action": "export", "name": "HCCL_OP_EXPANSION_MODE", "value": "AIV"}
    late = judge(facts(serve=TP2, machine="x86_64"), "0.21.0rc1", matrix)
    aiv_new = [f for f in by_id(late, "tuning.env_recommended") if "HCCL_OP_EXPANSION_MODE" in f.title.text()][0]
    assert aiv_new.status == INFO
    assert rec  # observed is None for unset variables


def test_disagreeing_sources_are_shown_and_not_patched(matrix):
    found = by_id(judge(facts(serve=TP2, machine="x86_64"), "0.13.0", matrix), "tuning.env_recommended")
    tq = [f for f in found if f.title.text().startswith("TASK_QUEUE_ENABLE")][0]
    assert tq.status == INFO and "disagree" in tq.title.text() and not tq.edits  # unset = 1 = the tutorials
    assert "2 (vllm-ascend's tuning guide" in tq.title.text()
    omp = [f for f in found if f.title.text().startswith("OMP_NUM_THREADS")][0]
    assert "1 (" in omp.title.text() and "10 (" in omp.title.text() and not omp.edits
    assert "不一致" in omp.hint.text("zh")
    agreed = judge(facts(serve=TP2, env={"TASK_QUEUE_ENABLE": "2", "OMP_NUM_THREADS": "10"}, machine="x86_64"), "0.13.0", matrix)
    tq2 = [f for f in by_id(agreed, "tuning.env_recommended") if f.title.text().startswith("TASK_QUEUE_ENABLE")]
    assert tq2 and "1 (vllm-ascend's model tutorials" in tq2[0].title.text()  # the other side is still named


def test_cpu_affinity_is_not_asked_where_vllm_ascend_binds(matrix):
    arm = by_id(judge(facts(serve=TP2, machine="aarch64"), "0.15.0rc1", matrix), "tuning.env_recommended")
    assert not [f for f in arm if "CPU_AFFINITY_CONF" in f.title.text()]
    x86 = by_id(judge(facts(serve=TP2, machine="x86_64"), "0.15.0rc1", matrix), "tuning.env_recommended")
    assert [f for f in x86 if "CPU_AFFINITY_CONF" in f.title.text()]


def test_no_recommendations_without_a_serve_command(matrix):
    assert not by_id(judge(facts(), "0.13.0", matrix), "tuning.env_recommended")


def test_ignored_variables(matrix):
    env = {"VLLM_USE_V1": "1", "VLLM_ASCEND_ENABLE_FLASHCOMM": "1", "VLLM_ASCEND_ENABLE_FLASHCOM1": "1"}
    old = by_id(judge(facts(env=env), "0.11.0", matrix), "tuning.env_ignored")
    assert [f.observed for f in old] == ["VLLM_ASCEND_ENABLE_FLASHCOM1=1"]  # the typo; both others are read
    new = by_id(judge(facts(env=env), "0.21.0rc1", matrix), "tuning.env_ignored")
    assert sorted(f.observed for f in new) == ["VLLM_ASCEND_ENABLE_FLASHCOM1=1", "VLLM_ASCEND_ENABLE_FLASHCOMM=1", "VLLM_USE_V1=1"]
    assert all(f.status == INFO and f.edits[0].action == "unset" for f in new)
    # beyond the newest tag read for the matrix, an unknown name proves nothing
    newer = copy.copy(matrix)  # a release after checked_through (0.30.0rc2), as `matrix sync` adds one
    newer.releases = list(matrix.releases) + [dataclasses.replace(matrix.releases[-1], vllm_ascend="0.31.0", curated=False)]
    assert [f.observed for f in by_id(judge(facts(env=env), "0.31.0", newer), "tuning.env_ignored")] == \
        ["VLLM_ASCEND_ENABLE_FLASHCOMM=1", "VLLM_USE_V1=1"]
    # 0.30.0rc1 was read: the typo is reported there too
    assert "VLLM_ASCEND_ENABLE_FLASHCOM1=1" in [f.observed for f in by_id(judge(facts(env=env), "0.30.0rc1", matrix),
                                                                          "tuning.env_ignored")]
    # vllm-ascend 0.7.1rc1 does not read VLLM_USE_V1, but its vLLM may: not called ignored
    assert not by_id(judge(facts(env={"VLLM_USE_V1": "1"}), "0.7.1rc1", matrix), "tuning.env_ignored")
    # 0.9.0rc1/rc2 overwrite ACL_OP_INIT_MODE at import; 0.9.1rc1 leaves a user's value alone
    over = by_id(judge(facts(env={"ACL_OP_INIT_MODE": "1"}), "0.9.0rc2", matrix), "tuning.env_ignored")
    assert [f.observed for f in over] == ["ACL_OP_INIT_MODE=1"] and "overwrites" in over[0].title.text()
    assert "VLLM_ASCEND_ACL_OP_INIT_MODE" in over[0].hint.text()
    assert not by_id(judge(facts(env={"ACL_OP_INIT_MODE": "1"}), "0.9.1rc1", matrix), "tuning.env_ignored")
    # moved into --additional-config in 0.27.1rc1
    mla = by_id(judge(facts(env={"VLLM_ASCEND_MLA": "1"}), "0.9.1", matrix), "tuning.env_ignored")  # a backend's name
    assert len(mla) == 1 and "no vllm-ascend release reads" in str(mla[0].title) and "没有任何" in mla[0].title.text("zh") and "get_name()" in mla[0].evidence[0]
    # setup.py reads it and passes it to CMake; no module of the server does: read only when compiling
    memcpy = by_id(judge(facts(env={"VLLM_ASCEND_ENABLE_BATCH_MEMCPY": "1"}), "0.30.0rc2", matrix), "tuning.env_ignored")
    assert len(memcpy) == 1 and "only while it is compiled from source" in memcpy[0].title.text()
    assert "编译" in memcpy[0].title.text("zh") and memcpy[0].edits == [] and "setup.py" in memcpy[0].source
    older = by_id(judge(facts(env={"VLLM_ASCEND_ENABLE_BATCH_MEMCPY": "1"}), "0.18.0", matrix), "tuning.env_ignored")
    assert "not even when compiled" in older[0].title.text() and older[0].edits[0].action == "unset"
    nz = by_id(judge(facts(env={"VLLM_ASCEND_ENABLE_NZ": "0"}), "0.27.1rc1", matrix), "tuning.env_ignored")
    assert [f.observed for f in nz] == ["VLLM_ASCEND_ENABLE_NZ=0"] and "weight_nz_mode" in nz[0].hint.text()
    assert not by_id(judge(facts(env={"VLLM_ASCEND_ENABLE_NZ": "0"}), "0.26.0rc1", matrix), "tuning.env_ignored")


def test_a_renamed_variable_names_the_one_the_release_reads(matrix):
    # v0.9.1rc2 to v0.10.0rc1 read VLLM_LLMDD_RPC_PORT; v0.10.1rc1 renamed it VLLM_ASCEND_LLMDD_RPC_PORT
    new = by_id(judge(facts(env={"VLLM_ASCEND_LLMDD_RPC_PORT": "6000"}), "0.10.0rc1", matrix), "tuning.env_ignored")
    assert [f.observed for f in new] == ["VLLM_ASCEND_LLMDD_RPC_PORT=6000"]
    assert "reads the older name VLLM_LLMDD_RPC_PORT" in new[0].hint.text() and "VLLM_LLMDD_RPC_PORT" in new[0].hint.text("zh")
    old = by_id(judge(facts(env={"VLLM_LLMDD_RPC_PORT": "6000"}), "0.10.1rc1", matrix), "tuning.env_ignored")
    assert [f.observed for f in old] == ["VLLM_LLMDD_RPC_PORT=6000"]
    assert "in this release: VLLM_ASCEND_LLMDD_RPC_PORT" in old[0].hint.text()
    for version, name in (("0.9.1rc2", "VLLM_LLMDD_RPC_PORT"), ("0.9.1", "VLLM_LLMDD_RPC_PORT"),
                          ("0.10.0rc1", "VLLM_LLMDD_RPC_PORT"), ("0.11.0", "VLLM_ASCEND_LLMDD_RPC_PORT")):
        assert not by_id(judge(facts(env={name: "6000"}), version, matrix), "tuning.env_ignored"), (version, name)
    # before the variable existed neither name is read: the hint names no replacement
    early = by_id(judge(facts(env={"VLLM_LLMDD_RPC_PORT": "6000"}), "0.9.1rc1", matrix), "tuning.env_ignored")
    assert early[0].hint.text() == "remove VLLM_LLMDD_RPC_PORT from the launch script"
    flash = by_id(judge(facts(env={"VLLM_ASCEND_ENABLE_FLASHCOMM": "1"}), "0.10.0rc1", matrix), "tuning.env_ignored")
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1" not in flash[0].hint.text()  # read from 0.11.0rc1 only


def test_harmful_variables(matrix):
    eager = "vllm serve m --enforce-eager"
    found = judge(facts(serve=eager, env={"ASCEND_LAUNCH_BLOCKING": "1", "TASK_QUEUE_ENABLE": "0",
                                          "PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250,expandable_segments:True",
                                          "PYTORCH_ALLOC_CONF": "expandable_segments:True"}), "0.13.0", matrix)
    harm = by_id(found, "tuning.env_harmful")
    assert [f.status for f in harm] == [WARN, WARN, WARN, WARN]
    assert status(found, "tuning.rejected") is None  # eager: launch blocking is slow, not refused
    unknown = by_id(judge(facts(env={"ASCEND_LAUNCH_BLOCKING": "1"}), "0.13.0", matrix), "tuning.env_harmful")[0]
    assert "--enforce-eager" in unknown.title.text()
    split = by_id(judge(facts(env={"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250"}), "0.14.0rc1", matrix), "tuning.env_harmful")
    assert [f.status for f in split] == [INFO]
    assert not by_id(judge(facts(env={"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250"}), "0.13.0", matrix), "tuning.env_harmful")


def test_rejected_combinations_per_release(matrix):
    assert status(judge(facts(env={"VLLM_USE_V1": "0"}), "0.11.0", matrix), "tuning.rejected") == FAIL
    assert status(judge(facts(env={"VLLM_USE_V1": "0"}), "0.9.1", matrix), "tuning.rejected") is None
    graph = "vllm serve m"
    assert status(judge(facts(serve=graph, env={"ASCEND_LAUNCH_BLOCKING": "1"}), "0.11.0rc1", matrix), "tuning.rejected") == FAIL
    before = judge(facts(serve=graph, env={"ASCEND_LAUNCH_BLOCKING": "1"}), "0.10.2rc1", matrix)
    assert status(before, "tuning.rejected") is None and status(before, "tuning.env_harmful") == WARN
    fc = {"VLLM_ASCEND_ENABLE_FLASHCOMM1": "1"}
    tp1 = by_id(judge(facts(serve="vllm serve m", env=fc), "0.13.0", matrix), "tuning.rejected")[0]
    assert tp1.edits[0].to_json()["name"] == "VLLM_ASCEND_ENABLE_FLASHCOMM1"
    assert status(judge(facts(serve="vllm serve m -tp 2", env=fc), "0.13.0", matrix), "tuning.rejected") is None
    assert status(judge(facts(serve="vllm serve m", env=fc), "0.11.0", matrix), "tuning.rejected") is None
    sleep = "vllm serve m --enable-sleep-mode"
    assert status(judge(facts(serve=sleep, env={"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}), "0.13.0", matrix),
                  "tuning.rejected") == FAIL
    assert status(judge(facts(serve=sleep), "0.13.0", matrix), "tuning.rejected") is None


# -- devices -------------------------------------------------------------------------------


@pytest.mark.parametrize("value,want,fixed", [
    ("0, 1", FAIL, "0,1"), ("1,0", FAIL, "0,1"), ("0,9", FAIL, "0"), ("0,1", OK, None), ("0-3", FAIL, None)])
def test_visible_devices(matrix, value, want, fixed):
    f = by_id(judge(facts(env={"ASCEND_RT_VISIBLE_DEVICES": value}), "0.13.0", matrix), "tuning.visible_devices")[0]
    assert f.status == want
    assert (f.edits[0].value if f.edits else None) == fixed


def test_parallel_size_and_busy_cards(matrix):
    assert status(judge(facts(serve="vllm serve m -tp 16"), "0.13.0", matrix), "tuning.parallel_size") == FAIL
    two = {"ASCEND_RT_VISIBLE_DEVICES": "2,3"}
    assert status(judge(facts(serve="vllm serve m -tp 4", env=two), "0.13.0", matrix), "tuning.parallel_size") == FAIL
    assert status(judge(facts(serve="vllm serve m -tp 2", env=two), "0.13.0", matrix), "tuning.parallel_size") == OK
    # the 910B4 record has processes on NPU 0 and 1
    busy = by_id(judge(facts(serve="vllm serve m -tp 2", container=True), "0.13.0", matrix), "tuning.devices_busy")[0]
    assert busy.status == FAIL and "582939" in busy.observed
    assert status(judge(facts(serve="vllm serve m -tp 2"), "0.13.0", matrix), "tuning.devices_busy") == WARN
    assert status(judge(facts(serve="vllm serve m -tp 2", env=two, container=True), "0.13.0", matrix),
                  "tuning.devices_busy") is None
    assert status(judge(facts(container=True), "0.13.0", matrix), "tuning.devices_busy") is None  # no serve: devices.busy says it


def test_kubernetes_non_first_cards(matrix):
    k8s = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "ASCEND_VISIBLE_DEVICES": "4,3"}
    f = by_id(judge(facts(env=k8s), "0.13.0", matrix), "tuning.k8s_devices")[0]
    assert f.status == WARN and "9428" in f.source
    assert status(judge(facts(env=dict(k8s, ASCEND_VISIBLE_DEVICES="0,1")), "0.13.0", matrix), "tuning.k8s_devices") is None
    assert status(judge(facts(env={"ASCEND_VISIBLE_DEVICES": "4,3"}), "0.13.0", matrix), "tuning.k8s_devices") is None


# -- serving arguments ---------------------------------------------------------------------

DUO = "npu-smi-310p-duo.txt"


def test_dtype_on_300i_duo(matrix):
    bf16 = "vllm serve m --dtype bfloat16"
    f = by_id(judge(facts(serve=bf16, npu=DUO, davinci=2), "0.13.0", matrix), "tuning.dtype")[0]
    assert f.status == FAIL and f.edits[0].to_json() == {"action": "flag", "name": "dtype", "value": "float16"}
    assert status(judge(facts(serve=bf16, npu=DUO, davinci=2), "0.9.0rc1", matrix), "tuning.dtype") is None  # no 300I docs yet
    assert status(judge(facts(serve="vllm serve m --dtype float16", npu=DUO, davinci=2), "0.13.0", matrix), "tuning.dtype") == OK
    assert status(judge(facts(serve=bf16), "0.13.0", matrix), "tuning.dtype") is None  # A2 runs bfloat16


def test_block_size_per_release(matrix):
    seed = "vllm serve Qwen2.5-14B-Instruct --tensor-parallel-size 2 --dtype bfloat16 --block-size 16 --enable-chunked-prefill"
    forced = by_id(judge(facts(serve=seed), "0.13.0", matrix), "tuning.block_size")[0]
    assert forced.status == INFO and "no effect" in forced.title.text() and forced.edits[0].action == "drop"
    assert status(judge(facts(serve=seed), "0.11.0", matrix), "tuning.block_size") == INFO
    assert status(judge(facts(serve=seed), "0.10.0rc1", matrix), "tuning.block_size") is None  # only prefix caching forced it
    prefix = seed + " --enable-prefix-caching"
    assert status(judge(facts(serve=prefix), "0.10.0rc1", matrix), "tuning.block_size") == INFO
    assert status(judge(facts(serve=prefix), "0.7.3", matrix), "tuning.block_size") == FAIL
    off = "vllm serve m --block-size 16 --no-enable-prefix-caching --no-enable-chunked-prefill"
    assert status(judge(facts(serve=off), "0.13.0", matrix), "tuning.block_size") is None


def test_graph_mode_and_max_model_len_on_300i(matrix):
    duo = dict(npu=DUO, davinci=2)
    assert status(judge(facts(serve="vllm serve m --max-model-len 4096", **duo), "0.13.0", matrix), "tuning.graph_310p") == WARN
    assert status(judge(facts(serve="vllm serve m --enforce-eager", **duo), "0.13.0", matrix), "tuning.graph_310p") is None
    assert status(judge(facts(serve="vllm serve m", **duo), "0.22.1rc1", matrix), "tuning.graph_310p") is None
    assert status(judge(facts(serve="vllm serve m", **duo), "0.25.1rc1", matrix), "tuning.graph_310p") == WARN
    off = "vllm serve m --additional-config '{\"ascend_compilation_config\": {\"enable_npugraph_ex\": false}}'"
    assert status(judge(facts(serve=off, **duo), "0.25.1rc1", matrix), "tuning.graph_310p") is None
    unset = by_id(judge(facts(serve="vllm serve m --enforce-eager", **duo), "0.18.0", matrix), "tuning.max_model_len_310p")[0]
    assert unset.status == WARN and unset.edits[0].value == "16384"
    assert status(judge(facts(serve="vllm serve m --enforce-eager", **duo), "0.13.0", matrix), "tuning.max_model_len_310p") is None


def test_removed_additional_config(matrix):
    torchair = "vllm serve m --additional-config '{\"torchair_graph_config\": {\"enabled\": true}}'"
    assert status(judge(facts(serve=torchair), "0.12.0rc1", matrix), "tuning.ignored_config") == WARN
    assert status(judge(facts(serve=torchair), "0.11.0", matrix), "tuning.ignored_config") is None


def _model(**config) -> ModelFacts:
    return ModelFacts(path="/m", exists=True, is_dir=True, config=config,
                      shards=[ShardFact(name="model.safetensors", exists=True, size=16 << 30)])


def test_quantization_schemes_and_flag(matrix):
    w4a4 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W4A4_DYNAMIC"])
    flag = "vllm serve /m --quantization ascend"
    assert status(judge(facts(serve=flag, model=w4a4), "0.13.0", matrix), "tuning.quantization") == FAIL
    assert status(judge(facts(serve=flag, model=w4a4), "0.14.0rc1", matrix), "tuning.quantization") == OK
    w8a8 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W8A8"])
    missing = by_id(judge(facts(serve="vllm serve /m", model=w8a8), "0.16.0rc1", matrix), "tuning.quantization")[0]
    assert missing.status == FAIL and missing.edits[0].value == "ascend"
    assert status(judge(facts(serve="vllm serve /m", model=w8a8), "0.17.0rc1", matrix), "tuning.quantization") == OK


def test_quantization_schemes_bound_to_the_310p(matrix):
    """W8A8S / W8A8SC: only vllm_ascend/_310p/quantization registers them, and platform.py imports that
    package only if is_310p() (v0.16.0rc1 on); elsewhere the ModelSlim config raises NotImplementedError."""
    quant = {q.scheme: q for q in matrix.tuning_quant}
    assert quant["W8A8S"].hardware == ("310P",) and quant["W8A8SC"].hardware == ("310P",)
    assert quant["W8A8"].hardware == () and quant["W8A8_DYNAMIC"].hardware == ()
    flag = "vllm serve /m --quantization ascend"
    for scheme in ("W8A8S", "W8A8SC"):
        model = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=[scheme])
        duo = by_id(judge(facts(serve=flag, model=model, npu=DUO, davinci=2), "0.18.0", matrix), "tuning.quantization")
        assert [f.status for f in duo] == [OK], duo
        assert duo[0].title.text("en") == f"ModelSlim quantization {scheme} is supported by vllm-ascend 0.18.0"
        a2 = by_id(judge(facts(serve=flag, model=model), "0.18.0", matrix), "tuning.quantization")
        assert [f.status for f in a2] == [FAIL], a2
        en, zh = a2[0].title.text("en"), a2[0].title.text("zh")
        assert f"quantized as {scheme}, which vllm-ascend 0.18.0 registers only for 310P" in en and "on A2 has no such" in en
        assert f"模型的量化类型为 {scheme}，vllm-ascend 0.18.0 只为 310P 注册该方案" in zh and "A2 上加载的量化包没有此方案" in zh
        assert "supported by" not in en and a2[0].expected == "310P" and "_310p/quantization" in a2[0].source
        assert "310P" in a2[0].hint.text("en") and "310P" in a2[0].hint.text("zh")
        # before the window the release itself lacks it, on any chip: the window's FAIL, not the chip's
        old = by_id(judge(facts(serve=flag, model=model), "0.15.0rc1", matrix), "tuning.quantization")
        assert [f.status for f in old] == [FAIL] and "does not implement" in old[0].title.text("en")
        # the chip unknown: said, not judged, and not called supported
        bare = facts(serve=flag, model=model)
        bare.devices.npu_smi_info = None
        unknown = by_id(judge(bare, "0.18.0", matrix), "tuning.quantization")
        assert [f.status for f in unknown] == [INFO] and "not known" in unknown[0].title.text("en")
        assert "本机芯片未知" in unknown[0].title.text("zh")
    # a scheme every registry has stays OK on the A2
    w8a8 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W8A8"])
    assert [f.status for f in by_id(judge(facts(serve=flag, model=w8a8), "0.18.0", matrix), "tuning.quantization")] == [OK]


def test_heads_and_tensor_parallel(matrix):
    m = _model(num_attention_heads=40, num_key_value_heads=8, num_hidden_layers=48, hidden_size=5120)
    assert status(judge(facts(serve="vllm serve /m -tp 3", model=m), "0.13.0", matrix), "tuning.heads_tp") == FAIL
    assert status(judge(facts(serve="vllm serve /m -tp 4", model=m), "0.13.0", matrix), "tuning.heads_tp") is None


def test_kv_cache_estimate_warns_never_fails(matrix):
    # Qwen3-32B-like: 64 layers, 8 KV heads of 128 at TP 4 = 64 KiB per token per rank
    m = _model(num_hidden_layers=64, num_attention_heads=64, num_key_value_heads=8, head_dim=128, torch_dtype="bfloat16",
               max_position_embeddings=40960)
    m.shards = [ShardFact(name=f"s{i}", exists=True, size=4 << 30) for i in range(16)]  # 64 GiB of weights
    fits = by_id(judge(facts(serve="vllm serve /m -tp 4 --max-model-len 32768", model=m), "0.13.0", matrix), "tuning.kv_cache")[0]
    assert fits.status == OK and "65536 bytes" in fits.evidence[1]
    # 32 GiB chips at TP 2 leave nothing for a 32K sequence
    none = by_id(judge(facts(serve="vllm serve /m -tp 2 --max-model-len 32768", model=m), "0.13.0", matrix), "tuning.kv_cache")[0]
    assert none.status == WARN
    for length in ("131072", "400000"):
        found = by_id(judge(facts(serve=f"vllm serve /m -tp 4 --max-model-len {length}", model=m), "0.13.0", matrix),
                      "tuning.kv_cache")
        assert found and found[0].status in (INFO, WARN)


def test_model_rules_on_plain_facts(matrix):
    good = ModelFacts(path="/m", exists=True, is_dir=True, files=["config.json", "tokenizer.json"],
                      config={"model_type": "llama", "num_hidden_layers": 2}, index_layers=2,
                      index_file="model.safetensors.index.json",
                      shards=[ShardFact(name="a.safetensors", exists=True, size=100, expected_size=100, tensors=3)])
    found = judge(facts(model=good), "0.13.0", matrix)
    assert [status(found, i) for i in ("tuning.model_config", "tuning.model_weights", "tuning.model_index",
                                       "tuning.model_tokenizer", "tuning.model_checksums")] == [OK, OK, OK, OK, None]
    found = judge(facts(model=bad_model()), "0.13.0", matrix)
    assert [f.status for f in by_id(found, "tuning.model_weights")] == [FAIL, FAIL, FAIL]
    assert (status(found, "tuning.model_index"), status(found, "tuning.model_tokenizer"),
            status(found, "tuning.model_checksums")) == (FAIL, FAIL, INFO)
    assert status(judge(facts(model=ModelFacts(path="/nope")), "0.13.0", matrix), "tuning.model_config") == FAIL


def test_ascend_visible_devices_inside_a_container(matrix):
    f = by_id(judge(facts(env={"ASCEND_VISIBLE_DEVICES": "6,7"}, container=True, davinci=2), "0.13.0", matrix),
              "tuning.visible_devices")[0]
    assert f.status == WARN and "/dev/davinci{0,1}" in f.title.text() and "6942" in f.source
    assert not by_id(judge(facts(env={"ASCEND_VISIBLE_DEVICES": "0,1"}, container=True, davinci=2), "0.13.0", matrix),
                     "tuning.visible_devices")
    assert not by_id(judge(facts(env={"ASCEND_VISIBLE_DEVICES": "6,7"}, davinci=2), "0.13.0", matrix),
                     "tuning.visible_devices")  # on the host it selects nothing either way


def test_option_lists_keep_what_is_set(matrix):
    def alloc(env):
        found = by_id(judge(facts(serve=TP2, env=env, machine="x86_64"), "0.13.0", matrix), "tuning.env_recommended")
        return [f for f in found if f.title.text().startswith("PYTORCH_NPU_ALLOC_CONF")]

    assert not alloc({"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True,base_addr_aligned_kb:16"})
    assert not alloc({"PYTORCH_NPU_ALLOC_CONF": "max_split_size_mb:250"})  # the guide's alternative
    [f] = alloc({"PYTORCH_NPU_ALLOC_CONF": "page_size:1g"})
    assert f.edits[0].value == "page_size:1g,expandable_segments:True"
    debian = host(os_family="apt", jemalloc="/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", jemalloc_looked=True)
    preload = [f for f in by_id(judge(facts(tuning_facts=debian, serve=TP2, env={"LD_PRELOAD": "/opt/libfoo.so"},
                                            machine="x86_64"), "0.13.0", matrix),
                                "tuning.env_recommended") if f.title.text().startswith("LD_PRELOAD")][0]
    assert preload.edits[0].value == "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2:/opt/libfoo.so"
    assert preload.commands[0].shell() == "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2:/opt/libfoo.so"
    assert not [f for f in by_id(judge(facts(serve=TP2, env={"LD_PRELOAD": "/usr/lib64/libjemalloc.so.2"}, machine="x86_64"),
                                       "0.13.0", matrix), "tuning.env_recommended") if f.title.text().startswith("LD_PRELOAD")]


def _preload(tuning_facts, matrix, machine="aarch64", env=None):
    found = by_id(judge(facts(tuning_facts=tuning_facts, serve=TP2, env=env or {}, machine=machine), "0.13.0", matrix),
                  "tuning.env_recommended")
    return [f for f in found if f.title.text().startswith("LD_PRELOAD")]


def test_jemalloc_is_exported_where_the_judged_root_has_it(matrix):
    """openEuler keeps it in /usr/lib64/: the export names the file that exists, not the guide's path."""
    [f] = _preload(host(os_family="yum", jemalloc="/usr/lib64/libjemalloc.so.2", jemalloc_looked=True), matrix)
    assert [c.shell() for c in f.commands] == ["export LD_PRELOAD=/usr/lib64/libjemalloc.so.2"]
    assert f.edits[0].value == "/usr/lib64/libjemalloc.so.2"


@pytest.mark.parametrize("family, install, path", [
    ("apt", "apt-get install -y libjemalloc2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"),
    ("yum", "yum install -y jemalloc", "/usr/lib64/libjemalloc.so.2")])
def test_jemalloc_absent_installs_it_first_and_exports_nothing_now(matrix, family, install, path):
    [f] = _preload(host(os_family=family, jemalloc=None, jemalloc_looked=True), matrix, env={"LD_PRELOAD": "/opt/a.so"})
    assert [c.shell() for c in f.commands] == [install]  # no export of a file that is not there
    assert not f.edits  # nor one written into the launch script
    for lang in ("en", "zh"):
        assert f"LD_PRELOAD={path}:/opt/a.so" in f.hint.text(lang) and install not in f.hint.text(lang)


def test_jemalloc_absent_on_an_unknown_distribution_or_not_looked_for_prints_no_command(matrix):
    for facts_ in (host(os_family="", jemalloc=None, jemalloc_looked=True), host()):
        [f] = _preload(facts_, matrix)
        assert f.commands == [] and not f.edits
        assert "libjemalloc.so.2" in f.hint.text("en") and "libjemalloc.so.2" in f.hint.text("zh")


@pytest.mark.parametrize("where", ["host", "launch script", "both"])
def test_one_finding_per_variable_whichever_environment_sets_it(matrix, where):
    """VLLM_USE_V1=0 is one cause: every rule reads one environment (the host's with the launch
    script's exports), so on every release it is reported once at most, wherever it is set."""
    from doctor.rules.engine import all_rules

    env = {"VLLM_USE_V1": "0"} if where != "launch script" else {}
    serve = "export VLLM_USE_V1=0\nvllm serve m" if where != "host" else "vllm serve m"
    reported = {}
    for row in matrix.releases:
        ctx = make_context(facts(env=env, serve=serve), matrix, "runtime", row.vllm_ascend)
        named = [f.id for f in run_rules(ctx, all_rules()).findings if "VLLM_USE_V1" in str(f.observed)]
        assert len(named) <= 1, (row.vllm_ascend, named)
        reported[row.vllm_ascend] = named
    assert reported["0.11.0"] == ["tuning.rejected"] and reported["0.13.0"] == ["tuning.env_ignored"]


def test_a_kv_cache_scheme_no_release_reads_is_a_warning_not_a_load_failure(matrix):
    """C8 is a top-level kv_quant_type / kv_cache_type, read by 0.9.2rc1 to 0.12.0rc1, 0.18.0 and
    0.19.1rc1 on: elsewhere the weights still load and only the KV cache is not quantized."""
    c8 = ModelFacts(path="/m", exists=True, is_dir=True, quant_types=["W8A8"], kv_quant_types=["C8"])
    serve = "vllm serve /m --quantization ascend"
    unread = by_id(judge(facts(serve=serve, model=c8), "0.15.0rc1", matrix), "tuning.quantization")
    assert [f.status for f in unread] == [WARN] and "KV cache" in unread[0].title.text() and "C8" in unread[0].observed
    assert "0.19.1rc1" in unread[0].hint.text() and "KV cache" in unread[0].title.text("zh")
    assert [f.status for f in by_id(judge(facts(serve=serve, model=c8), "0.19.1rc1", matrix), "tuning.quantization")] == [OK]
    assert [f.status for f in by_id(judge(facts(serve=serve, model=c8), "0.18.0rc1", matrix), "tuning.quantization")] == [WARN]
