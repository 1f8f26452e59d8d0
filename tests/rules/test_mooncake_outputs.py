"""The pure Mooncake checks (config file, environment, serve command), word for word in both
languages on tables of inputs: their unit-level goldens. ``UPDATE_GOLDENS=1`` rewrites
mooncake_outputs.json; review its diff."""
from __future__ import annotations

import json
from pathlib import Path

from doctor.parse import serveargs
from doctor.rules import mooncake_config as config
from doctor.rules import mooncake_env as envvars
from .build import mooncake_knowledge
from goldens import match

DATA = Path(__file__).resolve().parents[1] / "data" / "mooncake"
EXPECTED = Path(__file__).with_name("mooncake_outputs.json")
GOOD = {"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "",
        "master_server_address": "10.0.0.2:50088", "global_segment_size": "64GB"}
GB_KB = 1024 * 1024
KNOWLEDGE = mooncake_knowledge()


def cfg(**changes):
    d = dict(GOOD)
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return json.dumps(d)


CONFIGS = {
    "good 0.22": (cfg(), dict(vllm_ascend="0.22.1rc1")),
    "good, unknown version": (cfg(), {}),
    "doc example": ((DATA / "kv_pool_doc_example.json").read_text(encoding="utf-8"), dict(vllm_ascend="0.22.1rc1")),
    "seed 001 first": ((DATA / "seed001_mooncake_first.json").read_text(encoding="utf-8"), dict(vllm_ascend="0.11.0rc3")),
    "seed 001 vllm": ((DATA / "seed001_mooncake_vllm.json").read_text(encoding="utf-8"), dict(vllm_ascend="0.11.0rc3")),
    "seed 003": ((DATA / "seed003_mooncake.json").read_text(encoding="utf-8"), dict(vllm_ascend="0.22.1rc1")),
    "not json at all": ("{{{", {}),
    "a list": ("[1, 2]", {}),
    "empty": ("", {}),
    "0.11 without protocol": (cfg(protocol=None), dict(vllm_ascend="0.11.0rc3")),
    "0.11 tcp": (cfg(protocol="tcp"), dict(vllm_ascend="0.11.0rc3")),
    "0.11 ascend direct": (cfg(use_ascend_direct=True, local_hostname="x"), dict(vllm_ascend="0.11.0rc3")),
    "rdma on 0.23": (cfg(protocol="rdma"), dict(vllm_ascend="0.23.0")),
    "rdma on 0.18": (cfg(protocol="rdma"), dict(vllm_ascend="0.18.0")),
    "metadata missing": (cfg(metadata_server=None), {}),
    "metadata number": (cfg(metadata_server=1), {}),
    "metadata lower case": (cfg(metadata_server="p2phandshake"), {}),
    "metadata http": (cfg(metadata_server="http://10.0.0.2:8080/metadata"), {}),
    "metadata etcd": (cfg(metadata_server="10.0.0.2:2379"), {}),
    "metadata junk": (cfg(metadata_server="what?"), {}),
    "master missing": (cfg(master_server_address=None), {}),
    "master placeholder": (cfg(master_server_address="<your_server_ip>:50088"), {}),
    "master url": (cfg(master_server_address="http://10.0.0.2:50088"), {}),
    "master no port": (cfg(master_server_address="10.0.0.2"), {}),
    "master big port": (cfg(master_server_address="10.0.0.2:99999"), {}),
    "master number": (cfg(master_server_address=5), {}),
    "env master new": (cfg(), dict(vllm_ascend="0.23.0", env={"MOONCAKE_MASTER": "10.0.0.3:50088"})),
    "env master bad": (cfg(), dict(vllm_ascend="0.23.0", env={"MOONCAKE_MASTER": "xx.xx.xx.xx:50088"})),
    "env master old": (cfg(), dict(vllm_ascend="0.18.0", env={"MOONCAKE_MASTER": "10.0.0.3:50088"})),
    "env size new": (cfg(), dict(vllm_ascend="0.23.0", env={"MOONCAKE_GLOBAL_SEGMENT_SIZE": "8GB"})),
    "env size old": (cfg(), dict(vllm_ascend="0.18.0", env={"MOONCAKE_GLOBAL_SEGMENT_SIZE": "8GB"})),
    "size string on 0.11": (cfg(), dict(vllm_ascend="0.11.0rc3")),
    "size bad unit": (cfg(global_segment_size="64 parsecs"), {}),
    "size zero": (cfg(global_segment_size=0), {}),
    "size default on 0.15": (cfg(global_segment_size=None), dict(vllm_ascend="0.15.0", mem_total_kb=GB_KB)),
    "size default on 0.17": (cfg(global_segment_size=None), dict(vllm_ascend="0.17.0", mem_total_kb=GB_KB)),
    "size not whole GB with fabric": (cfg(global_segment_size="1536MB"),
                                      dict(env={"ASCEND_ENABLE_USE_FABRIC_MEM": "1"})),
    "too big for the host": (cfg(global_segment_size="600GB"), dict(mem_total_kb=512 * GB_KB)),
    "ranks over available": (cfg(global_segment_size="64GB"), dict(mem_total_kb=512 * GB_KB, mem_available_kb=200 * GB_KB,
                                                                    ranks=4)),
    "ranks too big": (cfg(global_segment_size="64GB"), dict(mem_total_kb=200 * GB_KB, ranks=4)),
    "fits the host": (cfg(), dict(mem_total_kb=512 * GB_KB, mem_available_kb=400 * GB_KB)),
    "local buffer bad": (cfg(local_buffer_size="x"), {}),
    "local buffer zero": (cfg(local_buffer_size=0), {}),
    "local buffer with fabric": (cfg(local_buffer_size="1GB", global_segment_size="2GB"),
                                 dict(env={"ASCEND_ENABLE_USE_FABRIC_MEM": "1"})),
    "device name": (cfg(device_name="mlx5_0"), {}),
    "ssd string": (cfg(enable_ssd_offload="false", ssd_offload_path="/nvme/x"), dict(vllm_ascend="0.21.0rc1")),
    "ssd no path": (cfg(enable_ssd_offload=True), dict(vllm_ascend="0.21.0rc1")),
    "ssd relative": (cfg(enable_ssd_offload=True, ssd_offload_path="nvme"), dict(vllm_ascend="0.21.0rc1")),
    "ssd dotdot": (cfg(enable_ssd_offload=True, ssd_offload_path="/nvme/../x"), dict(vllm_ascend="0.21.0rc1")),
    "ssd old mooncake": (cfg(enable_ssd_offload=True, ssd_offload_path="/nvme"), dict(vllm_ascend="0.21.0rc1",
                                                                                     mooncake="0.3.9")),
    "ssd too early": (cfg(enable_ssd_offload=True), dict(vllm_ascend="0.20.2rc1")),
    "preferred segment": (cfg(preferred_segment="yes", prefer_alloc_in_same_node=True), dict(vllm_ascend="0.23.0")),
    "keys": (cfg(alloc_in_same_node=True, global_segement_size=1, bogus=1, use_ascend_direct=True,
                 preferred_segment=True), dict(vllm_ascend="0.18.0")),
}

ENVS = {
    "pool ok": ({"ASCEND_BUFFER_POOL": "4:8"}, dict(vllm_ascend="0.22.1rc1")),
    "pool ok, 0.23": ({"ASCEND_BUFFER_POOL": " 4 : 8 "}, dict(vllm_ascend="0.23.0")),
    "pool bad": ({"ASCEND_BUFFER_POOL": "4x8"}, {}),
    "pool off": ({"ASCEND_BUFFER_POOL": "0:0"}, {}),
    "pool zero count": ({"ASCEND_BUFFER_POOL": "0:8"}, {}),
    "pool and async": ({"ASCEND_BUFFER_POOL": "4:8", "ASCEND_USE_ASYNC_TRANSFER": "1"}, {}),
    "async off means on": ({"ASCEND_USE_ASYNC_TRANSFER": "false"}, dict(cann="8.3.RC2")),
    "async on old cann": ({"ASCEND_USE_ASYNC_TRANSFER": "1"}, dict(cann="8.3.RC2")),
    "async on new cann": ({"ASCEND_USE_ASYNC_TRANSFER": "1"}, dict(cann="8.5.0")),
    "async, odd cann": ({"ASCEND_USE_ASYNC_TRANSFER": "1"}, dict(cann="???")),
    "timeouts": ({"ASCEND_CONNECT_TIMEOUT": "x", "ASCEND_TRANSFER_TIMEOUT": "-1"}, dict(mooncake="0.3.7.post2")),
    "timeouts new mooncake": ({"ASCEND_CONNECT_TIMEOUT": "99999999999", "ASCEND_TRANSFER_TIMEOUT": "10000"},
                              dict(mooncake="0.3.11.post1")),
    "fabric off": ({"ASCEND_ENABLE_USE_FABRIC_MEM": "true"}, {}),
    "fabric on A2": ({"ASCEND_ENABLE_USE_FABRIC_MEM": "1"}, dict(hardware="A2")),
    "fabric on A3": ({"ASCEND_ENABLE_USE_FABRIC_MEM": "1"}, dict(hardware="A3")),
    "legacy": ({"ASCEND_TRANSPORT_PRINT": "1", "Ascend_TCP_TIMEOUT": "3"}, {}),
}

REGISTRY = {"MooncakeConnectorV1": "vllm_ascend.distributed.mooncake_connector",
            "MooncakeConnectorStoreV1": "vllm_ascend.distributed.kvpool.ascend_store_connector",
            "MooncakeLayerwiseConnector": "vllm_ascend.distributed.mooncake_layerwise_connector"}


def kv(obj) -> str:
    return "vllm serve /models/m --tensor-parallel-size 8 --kv-transfer-config '" + json.dumps(obj) + "'"


SERVES = {
    "seed 001": ((DATA / "seed001_launch.sh").read_text(encoding="utf-8"), dict(vllm_ascend="0.11.0rc3")),
    "seed 003": ((DATA / "seed003_launch.sh").read_text(encoding="utf-8"), dict(vllm_ascend="0.22.1rc1")),
    "no kv config": ("vllm serve m", {}),
    "unbalanced": ("vllm serve m --kv-transfer-config '{", {}),
    "twice": ("vllm serve m --kv-transfer-config '{\"kv_connector\":\"MooncakeConnectorV1\",\"kv_role\":\"kv_producer\"}' "
              "--kv-transfer-config '{\"kv_connector\":\"MooncakeConnectorV1\",\"kv_role\":\"kv_consumer\"}'", {}),
    "not json": ("vllm serve m --kv-transfer-config '{kv_connector: MooncakeConnectorV1}'", {}),
    "not an object": (kv([1]), {}),
    "store ok": (kv({"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both"}),
                 dict(env={"MOONCAKE_CONFIG_PATH": "/c.json", "PYTHONHASHSEED": "0"})),
    "store without config": (kv({"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both",
                                 "kv_connector_extra_config": {"use_layerwise": True, "load_async": True,
                                                               "mooncake_rpc_port": 1, "zzz": 1}}),
                             dict(mooncake_installed=False)),
    "store other backend": (kv({"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both",
                                "kv_connector_extra_config": {"backend": "memcache"}}), dict(vllm_ascend="0.23.0")),
    "store bad backend": (kv({"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both",
                              "kv_connector_extra_config": {"backend": "redis"}}), dict(vllm_ascend="0.23.0")),
    "p2p both roles": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_both",
                           "kv_connector_extra_config": {"prefill": {"tp_size": 4, "dp_size": 1},
                                                         "decode": {"tp_size": 8, "dp_size": 1, "pp_size": 2}}}),
                       dict(env={"MOONCAKE_CONFIG_PATH": "/c.json"})),
    "p2p missing sizes": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer",
                              "kv_connector_extra_config": {"prefill": {"tp_size": 4}, "use_ascend_direct": True,
                                                            "lookup_rpc_port": 1}}), dict(vllm_ascend="0.13.0")),
    "layerwise old": (kv({"kv_connector": "MooncakeLayerwiseConnector", "kv_role": "kv_producer",
                          "kv_connector_extra_config": {"tls_config": {}}}), dict(vllm_ascend="0.13.0rc2")),
    "no connector, bad role": (kv({"kv_role": "leader", "kv_buffer_sizes": 1}), {}),
    "no role": (kv({"kv_connector": "MooncakeConnectorV1"}), {}),
    "bad policy, extra not object": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer",
                                         "kv_load_failure_policy": "retry", "kv_connector_extra_config": [1]}), {}),
    "unknown connector": (kv({"kv_connector": "MooncakeConector", "kv_role": "kv_both"}), {}),
    "upstream connector": (kv({"kv_connector": "NixlConnector", "kv_role": "kv_both"}), {}),
    "registry unknown": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer"}), dict(connectors={})),
    "module moved": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer",
                         "kv_connector_module_path": "vllm_ascend.distributed.mooncake_connector_old"}),
                     dict(modules=["vllm_ascend.distributed.x.mooncake_connector_old"])),
    "module gone": (kv({"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer",
                        "kv_connector_module_path": "vllm_ascend.distributed.nothing"}),
                    dict(modules=["vllm_ascend.distributed.mooncake_connector"])),
    "head-only key": (kv({"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both",
                          "kv_connector_extra_config": {"layerwise_num_shared_buffers": 8}}),
                      dict(vllm_ascend="0.25.1rc1", env={"MOONCAKE_CONFIG_PATH": "/c.json"})),
}


def _issues(issues):
    out = []
    for i in issues:
        doc = {k: v for k, v in dict(status=i.status, en=i.title.text("en"), zh=i.title.text("zh"),
                                     hint_en=i.hint.text("en") if i.hint else None,
                                     hint_zh=i.hint.text("zh") if i.hint else None, observed=i.observed,
                                     expected=i.expected, evidence=list(i.evidence), fixable=i.fixable,
                                     source=i.source).items() if v not in (None, [])}
        out.append(json.dumps(doc, ensure_ascii=False, sort_keys=True))
    return out


def outputs():
    out = {}
    for name, (text, kw) in CONFIGS.items():
        out[f"config: {name}"] = _issues(config.check_text(text, config.ConfigContext(**{**KNOWLEDGE["config"], **kw})))
    for name, (env, kw) in ENVS.items():
        out[f"env: {name}"] = _issues(envvars.check_env(env, **KNOWLEDGE["env"], **kw))
    for name, (line, kw) in SERVES.items():
        cmd = serveargs.parse_command(line, {})
        kw = dict(dict(vllm_ascend="0.22.1rc1", connectors=REGISTRY, vllm_connectors={"NixlConnector": "x"},
                       mooncake_installed=True, env=dict(cmd.exports)), **KNOWLEDGE["serve"], **kw)
        out[f"serve: {name}"] = _issues(serveargs.check(cmd, serveargs.ServeContext(**kw)))
    return out


def test_every_issue_word_for_word():
    match(outputs(), EXPECTED)
