"""mooncake.json, env variables and the vllm serve command line: pure checks with plain data.

The inputs are the configs and commands of the seeds (001: vllm-ascend 0.11.0rc3 image,
003: v0.22.1rc1 guide) and the vllm-ascend kv_pool.md example (with its comments), plus broken ones.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.parse import jsontext, serveargs, sizes
from doctor.rules import mooncake_config as config
from doctor.rules import mooncake_env as envvars
from .build import mooncake_knowledge

DATA = Path(__file__).resolve().parents[1] / "data" / "mooncake"
GB = 1024 ** 3


def by_status(issues, status):
    return [i for i in issues if i.status == status]


KNOWLEDGE = mooncake_knowledge()


def ctx(va="0.22.1rc1", **kw):
    return config.ConfigContext(vllm_ascend=va, **{**KNOWLEDGE["config"], **kw})


# -- strict JSON with precise errors -----------------------------------------------------------


def test_doc_example_with_comments_is_located_precisely():
    res = jsontext.parse((DATA / "kv_pool_doc_example.json").read_text())
    assert not res.ok and (res.line, res.col, res.cause) == (6, 34, "annotation")
    assert [(s.line, s.col, s.kind) for s in res.spots] == [(6, 34, "annotation"), (9, 34, "comment"), (10, 50, "comment")]
    assert res.lenient["global_segment_size"] == "1GB" and res.lenient["ssd_offload_path"] == "/nvme/mooncake_offload"
    assert "^" in res.excerpt.splitlines()[1] and res.excerpt.splitlines()[1].index("^") == 7 + 33


@pytest.mark.parametrize("text,where,cause", [
    ('{"a": 1,\n}', (1, 8), "trailing_comma"),
    ('{\n  "a": [1, 2,],\n  "b": 2\n}', (2, 13), "trailing_comma"),
    ("{'protocol': 'ascend'}", (1, 2), "single_quote"),
    ('{"use_ascend_direct": True}', (1, 23), "python_literal"),
    ('{kv_connector:MooncakeConnectorStoreV1}', (1, 2), "unquoted"),
    ('{\u201cprotocol\u201d: "ascend"}', (1, 2), "lookalike"),
    ('{"protocol"\uff1a "ascend"}', (1, 12), "lookalike"),
    ('{"a": 1}\n{"b": 2}', (2, 1), "extra"),
    ('{"a": 1 // no comments\n}', (1, 9), "comment"),
    ('{"a": 1 /* block */ }', (1, 9), "comment"),
    ("", (1, 1), "empty"),
    ('{"a" 1}', (1, 6), "syntax"),
])
def test_json_errors(text, where, cause):
    res = jsontext.parse(text)
    assert not res.ok and ((res.line, res.col), res.cause) == (where, cause), res.describe()


def test_valid_json_passes_untouched():
    res = jsontext.parse('{"a": "x // not a comment #", "b": "(1GB)"}')
    assert res.ok and res.value == {"a": "x // not a comment #", "b": "(1GB)"} and not res.spots


# -- sizes -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value,expected", [
    (107374182400, 107374182400), ("1GB", GB), ("1gb", GB), (" 1.5 GB ", int(1.5 * GB)), ("512MB", 512 * 1024 ** 2),
    ("1073741824", GB), ("1073741824B", GB), (2.9, 2), ("64kb", 65536),
])
def test_sizes_as_vllm_ascend_parses_them(value, expected):
    assert sizes.parse_size(value).value == expected


@pytest.mark.parametrize("value,error", [
    ("1 GiB", "Invalid format: '1 GiB'"), ("10G", "Invalid format: '10G'"), ("", "global segment size cannot be empty."),
    ("1.2.3GB", "Invalid numeric value '1.2.3'"), ([1], "Unsupported type"),
])
def test_sizes_rejected(value, error):
    assert error in sizes.parse_size(value).error


def test_sizes_strings_not_parsed_before_0_12():
    assert "not parsed" in sizes.parse_size("1GB", strings_accepted=False).error


# -- mooncake.json -----------------------------------------------------------------------------


def test_seed_001_config_on_its_own_release():
    issues = config.check_text((DATA / "seed001_mooncake_vllm.json").read_text(),
                               ctx("0.11.0rc3", mem_total_kb=1536 * 1024 * 1024, mem_available_kb=1400 * 1024 * 1024))
    warns = by_status(issues, "warn")
    assert [w.observed for w in warns] == ["alloc_in_same_node"]  # shown in docs, read by no version
    infos = by_status(issues, "info")
    assert any("local_hostname" in str(i.title) and "get_ip()" in str(i.title) for i in infos)
    assert not by_status(issues, "fail")
    assert not any("use_ascend_direct" in str(i.title) for i in issues)  # read by 0.11 and set: fine


def test_seed_001_config_on_a_newer_release_ignores_use_ascend_direct():
    issues = config.check_text((DATA / "seed001_mooncake_vllm.json").read_text(), ctx("0.13.0"))
    ignored = next(i for i in issues if i.status == "info" and "ignored" in str(i.title))
    assert "use_ascend_direct (no longer read since vllm-ascend 0.12.0rc1)" in str(ignored.title)


def test_seed_001_segment_does_not_fit_a_small_host():
    issues = config.check_text((DATA / "seed001_mooncake_vllm.json").read_text(),
                               ctx("0.11.0rc3", mem_total_kb=64 * 1024 * 1024))
    f = by_status(issues, "fail")[0]
    assert "98.23 GB" in str(f.title) and "64.00 GB" in str(f.title)


def test_segments_of_all_ranks_exceed_available_memory():
    issues = config.check_text((DATA / "seed003_mooncake.json").read_text().replace("<your_server_ip>", "10.0.0.1"),
                               ctx("0.22.1rc1", mem_total_kb=512 * 1024 * 1024, mem_available_kb=300 * 1024 * 1024, ranks=4))
    w = by_status(issues, "warn")[0]
    assert "4 ranks × 100.00 GB = 400.00 GB" in str(w.title) and "300.00 GB available" in str(w.title)


def test_seed_003_template_keeps_its_placeholder():
    issues = config.check_text((DATA / "seed003_mooncake.json").read_text(), ctx("0.22.1rc1"))
    f = by_status(issues, "fail")
    assert len(f) == 1 and "placeholder" in str(f[0].title) and "<your_server_ip>:50088" in str(f[0].title)


def test_doc_example_fails_as_json_but_is_still_checked():
    issues = config.check_text((DATA / "kv_pool_doc_example.json").read_text(), ctx("0.23.0"))
    fails = by_status(issues, "fail")
    assert "line 6, column 34" in str(fails[0].title) and "JSONDecodeError" in str(fails[0].title)
    assert any("# only required when the SSD offload" in e for e in fails[0].evidence)
    assert any("xx.xx.xx.xx:50088" in str(i.title) and "placeholder" in str(i.title) for i in fails[1:])


def test_valid_head_config_is_ok():
    text = ('{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "", '
            '"master_server_address": "10.0.0.1:50088", "global_segment_size": "64GB", "preferred_segment": false, '
            '"prefer_alloc_in_same_node": true, "enable_ssd_offload": false, "ssd_offload_path": "/nvme/mooncake_offload"}')
    issues = config.check_text(text, ctx("0.23.0", mem_total_kb=1024 * 1024 * 1024))
    assert [i.status for i in issues] == ["ok"]


@pytest.mark.parametrize("va,protocol,status,words", [
    ("0.23.0", "tcp", "fail", "NotImplementedError"),
    ("0.13.0", "rdma", "fail", "only sets up the store"),
    ("0.23.0", "Ascend", "fail", "lower case"),
    ("0.11.0", "tcp", "warn", "does not use the NPU transport"),
])
def test_wrong_protocol(va, protocol, status, words):
    text = f'{{"metadata_server": "P2PHANDSHAKE", "protocol": "{protocol}", "master_server_address": "10.0.0.1:50088"}}'
    issue = next(i for i in config.check_text(text, ctx(va)) if "protocol" in str(i.title) and i.status != "ok")
    assert issue.status == status and (words in str(issue.title) or words in str(issue.hint))


def test_protocol_default_differs_by_release():
    text = '{"metadata_server": "P2PHANDSHAKE", "master_server_address": "10.0.0.1:50088", "use_ascend_direct": true}'
    assert any('uses "tcp"' in str(i.title) for i in config.check_text(text, ctx("0.11.0rc3")))
    assert not any("protocol" in str(i.title) and i.status != "ok" for i in config.check_text(text, ctx("0.23.0")))


def test_findings_read_from_broken_json_say_so():
    strict = '{"metadata_server": "P2PHANDSHAKE", "master_server_address": "10.0.0.1:50088"}'
    broken = strict[:-1] + ",}"  # a trailing comma: read leniently
    titles = [str(i.title) for i in config.check_text(broken, ctx("0.11.0rc3")) if 'uses "tcp"' in str(i.title)]
    assert titles and titles[0].endswith("(read as if the JSON errors were fixed)")
    titles = [str(i.title) for i in config.check_text(strict, ctx("0.11.0rc3")) if 'uses "tcp"' in str(i.title)]
    assert titles and not titles[0].endswith(")")


def test_v011_ascend_without_use_ascend_direct():
    text = '{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "10.0.0.1:50088"}'
    w = next(i for i in config.check_text(text, ctx("0.11.0rc3")) if i.status == "warn")
    assert "legacy HCCL hostname" in str(w.title) and '"use_ascend_direct": true' in str(w.hint)


@pytest.mark.parametrize("value,words", [
    ('"10G"', "Invalid format: '10G'"), ('"1 GiB"', "Invalid format"), ('""', "cannot be empty"),
    ("0", "not a positive size"), ("-5", "not a positive size"), ('"abc"', "Invalid format"),
])
def test_bad_segment_sizes(value, words):
    text = f'{{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "h:1", "global_segment_size": {value}}}'
    f = by_status(config.check_text(text, ctx("0.23.0")), "fail")
    assert f and words in str(f[0].title)


def test_string_size_on_0_11_is_not_parsed():
    text = ('{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "use_ascend_direct": true, '
            '"master_server_address": "h:1", "global_segment_size": "100GB"}')
    f = by_status(config.check_text(text, ctx("0.11.0rc3")), "fail")[0]
    assert "not parsed by this vllm-ascend" in str(f.title) and "68719476736" in str(f.hint)


def test_fabric_memory_needs_whole_gigabytes():
    text = '{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "h:1", "global_segment_size": "1.5GB"}'
    f = by_status(config.check_text(text, ctx("0.23.0", env={"ASCEND_ENABLE_USE_FABRIC_MEM": "1"})), "fail")[0]
    assert "multiple of 1 GB" in str(f.title)


def test_env_overrides_are_noted_and_version_gated():
    text = '{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "10.0.0.1:50088"}'
    env = {"MOONCAKE_MASTER": "10.0.0.2:50088", "MOONCAKE_GLOBAL_SEGMENT_SIZE": "8GB"}
    new = config.check_text(text, ctx("0.23.0", env=env))
    assert any("overrides \"master_server_address\"" in str(i.title) for i in new)
    assert any("MOONCAKE_GLOBAL_SEGMENT_SIZE=8GB overrides" in str(i.title) for i in new)
    old = config.check_text(text, ctx("0.13.0", env=env))
    assert any("MOONCAKE_MASTER=10.0.0.2:50088 is ignored" in str(i.title) for i in old)
    bad = config.check_text(text, ctx("0.23.0", env={"MOONCAKE_GLOBAL_SEGMENT_SIZE": "10G"}))
    assert any(i.status == "fail" and "MOONCAKE_GLOBAL_SEGMENT_SIZE" in str(i.title) for i in bad)


@pytest.mark.parametrize("addr,words", [
    ("xx.xx.xx.xx:50088", "placeholder"), ("http://10.0.0.1:50088", "is a URL"), ("10.0.0.1", "not host:port"),
    ("10.0.0.1:70000", "out of range"), ("<your_server_ip>:50088", "placeholder"),
])
def test_bad_master_addresses(addr, words):
    text = f'{{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "{addr}"}}'
    f = by_status(config.check_text(text, ctx("0.23.0")), "fail")
    assert f and words in str(f[0].title)


@pytest.mark.parametrize("meta,status", [
    ("p2phandshake", "fail"), ("http://10.0.0.1:8080/metadata", "info"), ("etcd://10.0.0.1:2379", "info"),
    ("10.0.0.1:2379", "info"), ("zookeeper", "fail"),
])
def test_metadata_server(meta, status):
    text = f'{{"metadata_server": "{meta}", "protocol": "ascend", "master_server_address": "10.0.0.1:50088"}}'
    assert any(i.status == status and "metadata_server" in str(i.title) for i in config.check_text(text, ctx("0.23.0")))


def test_ssd_offload_rules():
    base = '"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "10.0.0.1:50088"'
    relative = config.check_text(f'{{{base}, "enable_ssd_offload": true, "ssd_offload_path": "nvme/x"}}', ctx("0.23.0"))
    assert any("must be an absolute path" in str(i.title) for i in by_status(relative, "fail"))
    empty = config.check_text(f'{{{base}, "enable_ssd_offload": true}}', ctx("0.23.0"))
    assert any("ssd_offload_path is empty" in str(i.title) for i in by_status(empty, "fail"))
    old_mc = config.check_text(f'{{{base}, "enable_ssd_offload": true, "ssd_offload_path": "/nvme"}}',
                               ctx("0.23.0", mooncake="0.3.9"))
    assert any("needs Mooncake >= 0.3.10.post2" in str(i.title) for i in by_status(old_mc, "fail"))
    new_mc = config.check_text(f'{{{base}, "enable_ssd_offload": true, "ssd_offload_path": "/nvme"}}',
                               ctx("0.23.0", mooncake="0.3.10.post2"))  # setup() takes enable_ssd_offload from here
    assert not any("needs Mooncake" in str(i.title) for i in by_status(new_mc, "fail"))
    string = config.check_text(f'{{{base}, "enable_ssd_offload": "false", "ssd_offload_path": "/nvme"}}', ctx("0.23.0"))
    assert any("means True" in str(i.title) for i in by_status(string, "warn"))
    too_old = config.check_text(f'{{{base}, "enable_ssd_offload": true}}', ctx("0.20.2rc1"))
    assert not by_status(too_old, "fail") and any("read from vllm-ascend 0.21.0rc1 on" in str(i.title) for i in too_old)


def test_unknown_keys_warn_with_a_suggestion():
    text = '{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "master_server_address": "h:1", "global_segement_size": 1}'
    w = by_status(config.check_text(text, ctx("0.23.0")), "warn")[0]
    assert "global_segement_size (did you mean global_segment_size?)" in str(w.title)


def test_not_an_object():
    assert "must hold a JSON object" in config.check_text("[1, 2]", ctx())[0].title.text()


# -- environment -------------------------------------------------------------------------------


@pytest.mark.parametrize("env,status,words", [
    ({"ASCEND_BUFFER_POOL": "4:8"}, "ok", "4 buffers of 8 MB"),
    ({"ASCEND_BUFFER_POOL": "0:0"}, "info", "disables"),
    ({"ASCEND_BUFFER_POOL": "4x8"}, "fail", "not BUFFER_NUM:BUFFER_SIZE_MB"),
    ({"ASCEND_BUFFER_POOL": "4:0"}, "fail", "must be positive"),
    ({"ASCEND_BUFFER_POOL": "-1:8"}, "fail", "not BUFFER_NUM"),
    ({"ASCEND_BUFFER_POOL": "4:8", "ASCEND_USE_ASYNC_TRANSFER": "1"}, "fail", "does not support async transfer"),
    ({"ASCEND_USE_ASYNC_TRANSFER": "0"}, "warn", "still ENABLES"),
    ({"ASCEND_CONNECT_TIMEOUT": "10000"}, "ok", "10000 ms"),
    ({"ASCEND_CONNECT_TIMEOUT": "10s"}, "warn", "silently ignores it and uses 10000 ms"),
    ({"ASCEND_TRANSFER_TIMEOUT": "0"}, "warn", "positive"),
    ({"ASCEND_TRANSFER_TIMEOUT": "99999999999"}, "warn", "not an integer"),
    ({"ASCEND_ENABLE_USE_FABRIC_MEM": "true"}, "info", "only exactly"),
    ({"ASCEND_TRANSPORT_PRINT": "1"}, "info", "legacy USE_ASCEND"),
])
def test_env(env, status, words):
    issues = envvars.check_env(env, **KNOWLEDGE["env"], vllm_ascend="0.22.1rc1")
    assert any(i.status == status and words in str(i.title) for i in issues), [(i.status, str(i.title)) for i in issues]


def test_env_version_and_host_dependent():
    assert any("3000 ms" in str(i.title) for i in envvars.check_env({"ASCEND_CONNECT_TIMEOUT": "x"}, **KNOWLEDGE["env"], mooncake="0.3.7.post2"))
    assert any(i.status == "warn" and "CANN >= 8.5" in str(i.title)
               for i in envvars.check_env({"ASCEND_USE_ASYNC_TRANSFER": "1"}, **KNOWLEDGE["env"], cann="8.3.RC2"))
    assert any("calls ASCEND_BUFFER_POOL removed from 0.23.0 on (only 0.24.0rc1's still recommends it)" in str(i.title) for i in envvars.check_env({"ASCEND_BUFFER_POOL": "4:8"}, **KNOWLEDGE["env"], vllm_ascend="0.23.0"))
    assert any(i.status == "warn" and "A3" in str(i.title)
               for i in envvars.check_env({"ASCEND_ENABLE_USE_FABRIC_MEM": "1"}, **KNOWLEDGE["env"], hardware="A2"))
    assert envvars.check_env({}, **KNOWLEDGE["env"]) == []


# -- vllm serve command line -------------------------------------------------------------------

CONNECTORS_011 = {"LLMDataDistCMgrConnector": "m", "MooncakeConnectorV1": "m", "MooncakeConnectorStoreV1": "m",
                  "MooncakeLayerwiseConnector": "m"}
CONNECTORS_022 = {"MultiConnector": "m", "MooncakeConnectorV1": "m", "MooncakeHybridConnector": "m",
                  "MooncakeConnectorStoreV1": "m", "AscendStoreConnector": "m", "MooncakeLayerwiseConnector": "m",
                  "UCMConnector": "m"}


def serve_ctx(va="0.22.1rc1", connectors=CONNECTORS_022, env=None, **kw):
    return serveargs.ServeContext(vllm_ascend=va, connectors=connectors, env=env or {}, **{**KNOWLEDGE["serve"], **kw})


def test_seed_001_script_parses_exports_and_command():
    cmd = serveargs.parse_command((DATA / "seed001_launch.sh").read_text(), {"LD_LIBRARY_PATH": "/opt/lib"})
    assert cmd.error is None and cmd.argv[:2] == ["vllm", "serve"]
    assert cmd.exports["MOONCAKE_CONFIG_PATH"] == "/opt/files/src/kv-cache/conf/mooncake_vllm.json"
    assert cmd.exports["LD_LIBRARY_PATH"] == "/usr/local/Ascend/ascend-toolkit/latest/python/site-packages:/opt/lib"
    assert cmd.exports["ASCEND_BUFFER_POOL"] == "4:8" and cmd.ranks == 1
    data, res = serveargs.kv_config(cmd)
    assert res.ok and data["kv_connector"] == "MooncakeConnectorStoreV1"


def test_seed_001_serve_args_on_0_11_are_fine():
    cmd = serveargs.parse_command((DATA / "seed001_launch.sh").read_text())
    issues = serveargs.check(cmd, serve_ctx("0.11.0rc3", CONNECTORS_011, env=cmd.exports))
    assert issues[0].status == "ok" and not by_status(issues, "warn") and not by_status(issues, "fail")
    assert not any("ignored" in str(i.title) for i in issues)  # 0.11 reads register_buffer and mooncake_rpc_port


def test_seed_003_serve_args_on_0_22_flag_stale_keys():
    cmd = serveargs.parse_command((DATA / "seed003_launch.sh").read_text())
    assert cmd.ranks == 4 and cmd.exports["LD_LIBRARY_PATH"].startswith("/usr/local/Ascend/ascend-toolkit/latest/python")
    issues = serveargs.check(cmd, serve_ctx(env=cmd.exports))
    assert issues[0].status == "ok"
    infos = " | ".join(str(i.title) for i in by_status(issues, "info"))
    assert "register_buffer (no longer read since vllm-ascend 0.12.0rc1)" in infos
    assert "mooncake_rpc_port is deprecated" in infos and "PYTHONHASHSEED" in infos


def test_store_connector_needs_the_config_path():
    cmd = serveargs.parse_command("vllm serve /m --kv-transfer-config '{\"kv_connector\": \"MooncakeConnectorStoreV1\", \"kv_role\": \"kv_both\"}'")
    f = by_status(serveargs.check(cmd, serve_ctx()), "fail")
    assert "MOONCAKE_CONFIG_PATH, which is not set" in str(f[0].title)


@pytest.mark.parametrize("kv,status,words", [
    ('{"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both",}', "fail", "line 1, column 66"),
    ('{"kv_connector": "MooncakeStoreConnector", "kv_role": "kv_both"}', "fail", "not registered"),
    ('{"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "both"}', "fail", "is not one of"),
    ('{"kv_connector": "MooncakeConnectorStoreV1"}', "fail", "\"kv_role\" is missing"),
    ('{"kv_role": "kv_both"}', "fail", "no \"kv_connector\""),
    ('{"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both", "use_layerwise": true}', "warn", "unknown --kv-transfer-config field"),
    ('{"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both", "kv_connector_extra_config": {"lookup_port": 1}}', "warn", "does not read: lookup_port"),
    ('{"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both", "kv_connector_extra_config": {"backend": "redis"}}', "fail", "Unsupported KV pool backend"),
    ('{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer"}', "fail", "prefill.{tp_size, dp_size}"),
    ('{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_connector_extra_config": {"prefill": {"tp_size": 2, "dp_size": 1}, "decode": {"tp_size": 4, "dp_size": 1}}}', "fail", "must be greater than or equal"),
    ('{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_both", "kv_connector_extra_config": {"prefill": {"tp_size": 4, "dp_size": 1}, "decode": {"tp_size": 4, "dp_size": 1}}}', "warn", "prefill instance is kv_producer"),
    ('{"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_consumer", "kv_connector_module_path": "vllm_ascend.distributed.mooncake_connector", "kv_connector_extra_config": {"prefill": {"tp_size": 4, "dp_size": 1}, "decode": {"tp_size": 4, "dp_size": 1}}}', "fail", "moved to vllm_ascend.distributed.kv_transfer.kv_p2p.mooncake_connector"),
])
def test_broken_kv_transfer_configs(kv, status, words):
    cmd = serveargs.parse_command(f"vllm serve /m --kv-transfer-config '{kv}'")
    sctx = serve_ctx(env={"MOONCAKE_CONFIG_PATH": "/x.json"},
                     modules=["vllm_ascend.distributed.kv_transfer.kv_p2p.mooncake_connector"])
    issues = serveargs.check(cmd, sctx)
    assert any(i.status == status and words in str(i.title) for i in issues), [(i.status, str(i.title)) for i in issues]


def test_upstream_vllm_connector_is_not_the_ascend_one():
    cmd = serveargs.parse_command('vllm serve /m --kv-transfer-config \'{"kv_connector": "NixlConnector", "kv_role": "kv_both"}\'')
    w = by_status(serveargs.check(cmd, serve_ctx(vllm_connectors={"NixlConnector": "vllm.x"})), "warn")[0]
    assert "upstream vLLM's connector" in str(w.title) and "MooncakeConnectorStoreV1" in str(w.hint)


def test_close_connector_name_is_suggested():
    cmd = serveargs.parse_command('--kv-transfer-config=\'{"kv_connector":"MooncakeConnectorStorev1","kv_role":"kv_both"}\'')
    f = by_status(serveargs.check(cmd, serve_ctx(env={"MOONCAKE_CONFIG_PATH": "/x"})), "fail")[0]
    assert "did you mean MooncakeConnectorStoreV1?" in str(f.title)


def test_json_whose_quotes_the_shell_removed():
    # Double quotes inside double quotes (or none at all) are eaten by the shell.
    cmd = serveargs.parse_command('vllm serve m --kv-transfer-config {"kv_connector":"MooncakeConnectorStoreV1","kv_role":"kv_both"}')
    f = by_status(serveargs.check(cmd, serve_ctx()), "fail")[0]
    assert "line 1, column 2" in str(f.title) and "single quotes" in str(f.title)


def test_dotted_options_and_other_launchers():
    cmd = serveargs.parse_command("python -m vllm.entrypoints.openai.api_server --model m -tp 8 "
                                  "--kv-transfer-config.kv_connector MooncakeConnectorStoreV1 --kv-transfer-config.kv_role=kv_both")
    data, _ = serveargs.kv_config(cmd)
    assert data == {"kv_connector": "MooncakeConnectorStoreV1", "kv_role": "kv_both"} and cmd.ranks == 8


def test_serve_args_errors():
    assert "unbalanced quote" in serveargs.check(serveargs.parse_command("vllm serve m --kv-transfer-config '{"), serve_ctx())[0].title.text()
    assert "no `vllm serve` command" in serveargs.parse_command("echo hello\nls -l").error
    none = serveargs.check(serveargs.parse_command("vllm serve /m --port 8000"), serve_ctx())
    assert none[0].status == "info" and "no --kv-transfer-config" in str(none[0].title)


def test_comments_and_separators_in_scripts():
    text = "# start\nexport A=1 # trailing\nVLLM_HOST_IP=10.0.0.1 vllm serve /m --kv-transfer-config '{\"a\": 1}' && echo done"
    cmd = serveargs.parse_command(text)
    assert cmd.exports == {"A": "1", "VLLM_HOST_IP": "10.0.0.1"} and cmd.argv[0] == "vllm" and cmd.kv_config == '{"a": 1}'


def test_extra_key_table_matches_versions():
    cmd = serveargs.parse_command('vllm serve m --kv-transfer-config \'{"kv_connector": "AscendStoreConnector", "kv_role": "kv_both", '
                                  '"kv_connector_extra_config": {"save_decode_cache": true, "prefill_tp_size": 2}}\'')
    env = {"MOONCAKE_CONFIG_PATH": "/x", "PYTHONHASHSEED": "0"}
    old = " | ".join(str(i.title) for i in serveargs.check(cmd, serve_ctx("0.22.1rc1", env=env)))
    assert "save_decode_cache (read from vllm-ascend 0.23.0rc1 on)" in old
    new = serveargs.check(cmd, serve_ctx("0.23.0", env=env))
    assert "save_decode_cache" not in " ".join(str(i.title) for i in new)
    # facts audit, third sample (seed 27): the store connector reads prefill_tp_size from v0.24.0rc1
    # (config_data.py infer_tp_mismatch_info), not only on main
    assert "prefill_tp_size (read from vllm-ascend 0.24.0rc1 on)" in " ".join(str(i.title) for i in new)
    read = serveargs.check(cmd, serve_ctx("0.25.1rc1", env=env))
    assert "prefill_tp_size" not in " ".join(str(i.title) for i in read)


def test_secrets_are_redacted_for_snapshots():
    text = ("export HF_TOKEN=hf_abc\nexport MOONCAKE_CONFIG_PATH=/x.json\n"
            "vllm serve /m --api-key sk-123 --kv-transfer-config '{\"kv_connector\": \"MooncakeLayerwiseConnector\", "
            "\"kv_connector_extra_config\": {\"tls_config\": {\"ssl_keyfile\": \"/k.pem\", \"ssl_keyfile_password\": \"pw\"}}}'")
    red = serveargs.redact(text)
    assert "hf_abc" not in red and "sk-123" not in red and '"pw"' not in red
    cmd = serveargs.parse_command(red)
    data, res = serveargs.kv_config(cmd)
    assert res.ok and data["kv_connector_extra_config"]["tls_config"]["ssl_keyfile"] == "/k.pem"
    assert cmd.exports["MOONCAKE_CONFIG_PATH"] == "/x.json"


def test_redaction_keeps_the_numbers_the_tuning_rules_read():
    """An option is a secret by its word parts: --hf-token goes, --max-num-batched-tokens and
    --tokenizer-mode stay (the live check parses the redacted command too)."""
    red = serveargs.redact("vllm serve /m --max-num-batched-tokens 8192 --tokenizer-mode auto --hf-token hf_x "
                           "--api-key=sk-1")
    assert "hf_x" not in red and "sk-1" not in red
    assert "--max-num-batched-tokens 8192" in red and "--tokenizer-mode auto" in red, red


def test_escaped_json_in_a_double_quoted_word_is_redacted_and_stays_parseable():
    text = ('vllm serve m --kv-transfer-config "{\\"kv_connector\\":\\"MooncakeConnectorV1\\",'
            '\\"kv_connector_extra_config\\":{\\"api_key\\":\\"x9\\",\\"mooncake_protocol\\":\\"ascend\\"}}"')
    red = serveargs.redact(text)
    assert "x9" not in red, red
    data, res = serveargs.kv_config(serveargs.parse_command(red))
    assert res.ok and data["kv_connector_extra_config"] == {"api_key": "<redacted>", "mooncake_protocol": "ascend"}
