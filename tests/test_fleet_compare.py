"""fleet compare on the recorded snapshots of seed 003's two nodes (tests/data/fleet), and the
cross-node rules on variations of them."""
from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path

import pytest
from fakehost import REPO

from doctor.fleet.compare import Node, compare
from doctor.usecases.check import load_snapshot
from doctor.usecases.fleet import ping_pairs, run_compare
import doctor_fork

DATA = Path(__file__).parent / "data" / "fleet"
NODE1, NODE2, DRIFTED = (str(DATA / f) for f in ("node1.json", "node2.json", "node2-drifted.json"))


@pytest.fixture(scope="module")
def facts():
    return {name: load_snapshot(str(DATA / f"{name}.json")) for name in ("node1", "node2", "node2-drifted")}


def nodes(facts, *names, **edits):
    out = []
    for name in names:
        f = copy.deepcopy(facts[name])
        if name in edits:
            edits[name](f)
        out.append(Node(name=name, facts=f))
    return out


def by_id(report, fid):
    return [f for f in report.findings if f.id == fid]


def cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return doctor_fork.run([sys.executable, "-m", "doctor", "fleet", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_healthy_pair_agrees_and_exits_0():
    report = run_compare([NODE1, NODE2])
    assert report.exit_code() == 0, [(f.id, f.status, str(f.title)) for f in report.findings if f.status != "ok"]
    assert all(n.verdict and n.verdict.exit_code() == 0 for n in report.nodes)
    rows = {r.item: r for r in report.rows}
    assert not rows["torch-npu"].differs and not rows["TLS switch"].bad
    assert rows["NPU addresses"].differs and not rows["NPU addresses"].bad  # unique: they must differ
    assert {f.id for f in report.findings} >= {"fleet.versions", "fleet.tls", "fleet.npu_ips", "fleet.mooncake_config",
                                                "fleet.mooncake_master", "fleet.kv_transfer"}


def test_drifted_node_is_named_on_every_layer_that_drifted():
    report = run_compare([NODE1, DRIFTED])
    assert report.exit_code() == 3
    versions = by_id(report, "fleet.versions")
    assert versions[0].status == "fail" and "torch-npu" in str(versions[0].title)
    assert versions[0].observed == "node1: 2.10.0; node2-drifted: 2.8.0"
    assert by_id(report, "fleet.tls")[0].status == "fail"
    ifnames = {f.observed for f in by_id(report, "fleet.socket_ifname")}
    assert "node1: eth0; node2-drifted: enp189s0f0" in ifnames and all(f.status == "warn" for f in by_id(report, "fleet.socket_ifname"))
    node = {f.observed for f in by_id(report, "fleet.node") if f.status == "fail"}
    assert node == {"hccn.socket_ifname"}  # its own check: the interface it names does not exist there
    drifted = next(n for n in report.nodes if n.name == "node2-drifted")
    problems = {f.id for f in drifted.verdict.findings if f.status == "fail"}
    assert {"hccn.socket_ifname", "torch_npu.version"} <= problems


def test_cli_table_and_json(tmp_path):
    proc = cli("compare", NODE1, DRIFTED)
    assert proc.returncode == 3
    table = proc.stdout
    assert "torch-npu" in table and "2.8.0" in table and "enp189s0f0" in table and "fleet.tls" in table
    assert "own check" in table and "node2-drifted" in table
    import io

    from doctor.fleet.render import print_report

    out = io.StringIO()
    print_report(run_compare([NODE1, DRIFTED]), "zh", file=out)
    assert "各节点的 NPU TLS 开关不一致" in out.getvalue() and "自身检查" in out.getvalue()
    assert [x for x in out.getvalue().splitlines() if x != x.rstrip()] == []  # no padding when not a terminal
    proc = cli("compare", NODE1, NODE2, "--json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["exit_code"] == 0
    assert [n["name"] for n in doc["nodes"]] == ["node1", "node2"] and all(n["verdict"]["exit_code"] == 0 for n in doc["nodes"])
    assert {"layer", "item", "rule", "differs", "bad", "values"} <= set(doc["rows"][0])


@pytest.mark.parametrize("args, words", [
    ((), "Missing argument"),
    (("/nonexistent.json",), "cannot read snapshot"),
    ((str(DATA / "README.md"),), "is not JSON"),
])
def test_bad_input_is_one_line_exit_2(args, words):
    proc = cli("compare", *args)
    assert proc.returncode == 2 and words in proc.stderr and proc.stderr.count("\n") == 1 and not proc.stdout


def test_duplicate_npu_address_and_hccl_if_ip(facts):
    def copy_node1_addresses(f):
        f.hccn.devices[0].ip = "29.1.1.10"
        f.env["HCCL_IF_IP"] = "192.0.2.2"
        f.mooncake.serve_env["HCCL_IF_IP"] = "192.0.2.2"

    report = compare(nodes(facts, "node1", "node2", node2=copy_node1_addresses))
    dup = by_id(report, "fleet.npu_ips")[0]
    assert dup.status == "fail" and "29.1.1.10: node1/npu0, node2/npu0" in dup.observed
    assert by_id(report, "fleet.hccl_if_ip")[0].status == "fail"


def test_mooncake_master_config_and_reach(facts):
    def other_master(f):
        f.mooncake.config_text = f.mooncake.config_text.replace("127.0.0.1:", "127.0.0.9:")
        f.mooncake.master.tcp_ok, f.mooncake.master.tcp_error = False, "connection refused"

    report = compare(nodes(facts, "node1", "node2", node2=other_master))
    cfg = by_id(report, "fleet.mooncake_config")[0]
    assert cfg.status == "fail" and "master_server_address" in str(cfg.title)
    reach = by_id(report, "fleet.mooncake_master")[0]
    assert reach.status == "fail" and "node2" in str(reach.title) and "connection refused" in reach.observed


def _role(role, connector="MooncakeConnectorStoreV1"):
    def edit(f):
        f.mooncake.serve_args = f.mooncake.serve_args.replace('"kv_role": "kv_both"', f'"kv_role": "{role}"') \
            .replace("MooncakeConnectorStoreV1", connector)
    return edit


def test_kv_roles_pair_up(facts):
    ok = compare(nodes(facts, "node1", "node2", node1=_role("kv_producer"), node2=_role("kv_consumer")))
    assert by_id(ok, "fleet.kv_transfer")[0].status == "ok"
    lone = compare(nodes(facts, "node1", "node2", node1=_role("kv_producer"), node2=_role("kv_producer")))
    f = by_id(lone, "fleet.kv_transfer")[0]
    assert f.status == "fail" and "kv_consumer" in str(f.title)
    mixed = compare(nodes(facts, "node1", "node2", node2=_role("kv_both", "MooncakeConnectorV1")))
    assert any(x.status == "fail" and "different kv_connector" in str(x.title) for x in by_id(mixed, "fleet.kv_transfer"))


def test_hash_seed_must_match(facts):
    def unset(f):
        f.mooncake.serve_env.pop("PYTHONHASHSEED", None)
        f.env.pop("PYTHONHASHSEED", None)

    report = compare(nodes(facts, "node1", "node2", node2=unset))
    seed = by_id(report, "fleet.hash_seed")[0]
    assert seed.status == "warn" and "node2: unset" in seed.observed


def _dp(address, port, start, headless=False, local=1):
    def edit(f):
        f.mooncake.serve_args = f.mooncake.serve_args.rstrip() + (f" --data-parallel-size 2 --data-parallel-size-local {local} --data-parallel-address {address}"
                                  f" --data-parallel-rpc-port {port} --data-parallel-start-rank {start}"
                                  + (" --headless" if headless else ""))
    return edit


def test_data_parallel_master(facts):
    good = compare(nodes(facts, "node1", "node2", node1=_dp("192.0.2.2", 13345, 0), node2=_dp("192.0.2.2", 13345, 1, True)))
    assert by_id(good, "fleet.dp")[0].status == "ok"
    bad = compare(nodes(facts, "node1", "node2", node1=_dp("192.0.2.2", 13345, 0), node2=_dp("192.0.2.3", 13346, 0)))
    titles = {str(f.title) for f in by_id(bad, "fleet.dp")}
    assert any("address" in t for t in titles) and any("port" in t for t in titles) and any("2 node(s) start" in t for t in titles)


def test_unanswered_node_and_ping_pairs(facts):
    report = compare(nodes(facts, "node1", "node2") + [Node(name="node3", error="no answer within 5 s")])
    f = [x for x in by_id(report, "fleet.node") if "node3" in str(x.title)][0]
    assert f.status == "fail" and f.observed == "no answer within 5 s" and report.exit_code() == 3
    pairs = ping_pairs(nodes(facts, "node1", "node2"))
    assert pairs["node1"] == ["0:29.1.2.10", "1:29.1.2.11", "2:29.1.2.12", "3:29.1.2.13"]
    assert pairs["node2"][0] == "0:29.1.1.10"


@pytest.mark.parametrize("columns", ["80", "100", "200"])
@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs at three widths
def test_the_verdict_comes_first_and_the_table_fits_the_width(columns):
    """fleet compare: the verdict line first, then the findings with what to do, then the table,
    which fits COLUMNS with every version, address and name whole (too narrow: records wrapped
    between words); a healthy pair says so first, in en and zh."""
    from rich.cells import cell_len

    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS=columns)
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fleet", "compare", NODE1, DRIFTED], capture_output=True,
                          text=True, env=env, timeout=120)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 3 and lines[0].startswith("✗ Broken: 3 cross-node check(s) fail, 3 warn on 2 node(s)"), lines[:2]
    assert lines[1].startswith("✗ fleet.") and lines[-1].endswith("exit 3")
    first_row = next(i for i, x in enumerate(lines) if x.split()[:2] in (["driver", "driver"], ["layer:", "driver"]))
    assert first_row > max(i for i, x in enumerate(lines) if x.startswith(("✗ fleet.", "! fleet.")))
    table = lines[first_row:-1]
    assert [x for x in table if cell_len(x) > int(columns)] == []
    words = set(" ".join(table).split())
    for whole in ("MooncakeConnectorStoreV1", "0.22.1rc1", "0.3.11.post1", "127.0.0.1:37813", "29.1.2.13", "enp189s0f0"):
        assert whole in words, (whole, columns)
    for lang, healthy in (("en", "✓ The nodes agree"), ("zh", "✓ 各节点一致")):
        proc = doctor_fork.run([sys.executable, "-m", "doctor", "fleet", "compare", NODE1, NODE2, "--lang", lang],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0 and proc.stdout.startswith(healthy), proc.stdout[:200]


def test_fleet_progress_draws_on_stderr_never_into_the_report(monkeypatch):
    """`fleet check > report.txt` on a terminal: the bar goes to stderr, stdout holds only the report."""
    import io

    from doctor.cli import fleet as fleet_cli

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.StringIO(), Tty()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setenv("TERM", "xterm")
    start = fleet_cli._progress(True)
    assert start is not None
    tick = start("collecting snapshots", 2)
    tick(None)
    tick(None)
    assert out.getvalue() == ""
    assert "collecting snapshots" in err.getvalue()
