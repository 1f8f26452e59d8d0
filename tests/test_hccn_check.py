"""check, layer hccn: the fake hccn_tool of a seed-003 node printing recorded outputs, one
fault at a time; the control-plane variables; what is never run under --root."""
from __future__ import annotations

import json

import pytest
from fakehost import FakeHost, finding
from fakehost.fleet import node, node_ip
from fakehost.hccn import OUT_DIR, TOOL, Port, install, node_ports, reachable, recorded
from shipped import matrix as shipped_matrix


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    fake = node(FakeHost(tmp_path_factory.mktemp("hccn")), 1)
    yield fake
    install(fake, node_ports(1, count=4))


def judge(fake: FakeHost, ports=None, **options):
    if ports is not None:
        install(fake, ports)
    opts = dict(hccn_tool=str(fake.p(TOOL)), serve_args_file=str(fake.p("/vllm-workspace/launch.sh")))
    opts.update(options)
    return fake.judge(**opts)


def hccn_ids(doc):
    return {f["id"]: f["status"] for f in doc["findings"] if f["id"].startswith("hccn.")}


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_healthy_node(host):
    doc = judge(host, node_ports(1, count=4))
    ids = hccn_ids(doc)
    for fid in ("hccn.tool", "hccn.link", "hccn.net_health", "hccn.ip", "hccn.gateway", "hccn.lldp", "hccn.tls",
                "hccn.conf", "hccn.hccl_if_ip", "hccn.socket_ifname"):
        assert ids.get(fid) == "ok", (fid, ids)
    assert "hccn.vnic" not in ids and "hccn.superpod" not in ids  # A2
    assert finding(doc, "hccn.lldp")["observed"].startswith("0:400GE1/1/1:1")


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_port_faults_each_name_the_device_and_the_command(host):
    ports = node_ports(1, count=4)
    ports[2].extra["link"] = "link status: DOWN\n"
    ports[1].health = "net_health-fault.txt"
    ports[3].health = "net_health-init.txt"
    ports[3].tls = 1
    doc = judge(host, ports)
    link = finding(doc, "hccn.link")
    assert link["status"] == "fail" and "NPU 2" in link["title"] and link["observed"] == "2:DOWN"
    tool = str(host.p(TOOL))
    assert link["commands"][0]["argv"] == [tool, "-i", "2", "-link", "-g"]
    assert link["commands"][1]["argv"] == [tool, "-i", "2", "-link_stat", "-g"]
    health = finding(doc, "hccn.net_health")
    assert health["status"] == "fail" and health["observed"] == "1:Fault, 3:Init"
    tls = finding(doc, "hccn.tls")
    assert tls["status"] == "fail" and "on for NPU 3 and off for NPU 0,1,2" in tls["title"]
    assert "-tls -s enable 0" in tls["hint"]


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_unanswered_query_is_a_warning_with_its_command(host):
    ports = node_ports(1, count=4)
    ports[0].ip = None  # the tool fails for -ip on device 0
    doc = judge(host, ports)
    ip = finding(doc, "hccn.ip")
    assert ip["status"] == "warn" and "-ip -g" in ip["title"] and "NPU 0" in ip["title"]
    assert ip["commands"][0]["shell"].endswith("hccn_tool -i 0 -ip -g") and "exit 1" in ip["observed"]


@pytest.mark.slow  # ~1 s of CPU or more: two checks of a node
def test_conf_missing_in_the_container_and_stale_addresses(host):
    install(host, node_ports(1, count=4), conf=False)
    host.remove("/etc/hccn.conf")
    conf = finding(judge(host), "hccn.conf")
    assert conf["status"] == "fail" and "not mounted" in conf["title"] and "-v /etc/hccn.conf:/etc/hccn.conf" in conf["hint"]
    install(host, node_ports(1, count=4))
    host.write("/etc/hccn.conf", host.p("/etc/hccn.conf").read_text().replace("address_1=29.1.1.11", "address_1=29.1.9.9"))
    stale = [f for f in judge(host)["findings"] if f["id"] == "hccn.ip" and f["status"] == "warn"]
    assert stale and "1: 29.1.1.11 / 29.1.9.9" in stale[0]["title"]


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_hung_device_costs_one_timeout(host):
    ports = node_ports(1, count=4)
    ports[2].hang = True
    # 3 s: the healthy devices' answers (a shell script each) must come within it on a loaded
    # machine too (at 1 s, NPU 0 and 1 once timed out as well under a load of 20). The hung device
    # is asked once: the fake tool records each query that hangs (a wall-clock bound, 12 s for four
    # timeouts, failed at 17 s under a load of 20 with one)
    doc = judge(host, ports, hccn_timeout=3.0)
    hung = host.p(OUT_DIR) / "hung.calls"
    assert len(hung.read_text().splitlines()) == 1, hung.read_text()
    tool = finding(doc, "hccn.tool")
    assert tool["status"] == "warn" and "NPU 2" in tool["title"] and "3 s" in tool["title"], tool["title"]
    assert "NPU 0" not in tool["title"] and "NPU 3" not in tool["title"], tool["title"]


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_mixed_gateways_and_missing_lldp(host):
    ports = node_ports(1, count=4)
    ports[0].gateway = "10.0.0.1"  # outside 29.1.0.0/16
    ports[3].lldp_ifname = None
    ports[3].extra["lldp"] = "Chassis ID TLV\n\tMAC: ...\nEnd of LLDPDU TLV\n"
    doc = judge(host, ports)
    assert finding(doc, "hccn.gateway")["status"] == "warn" and "NPU 0" in finding(doc, "hccn.gateway")["title"]
    assert finding(doc, "hccn.lldp")["status"] == "warn" and "NPU 3" in finding(doc, "hccn.lldp")["title"]


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_control_plane_names_what_is_not_on_this_node(host):
    install(host, node_ports(1, count=4))
    script = host.p("/vllm-workspace/launch.sh")
    original = script.read_text()
    script.write_text(original.replace(f"HCCL_IF_IP={node_ip(1)}", "HCCL_IF_IP=192.0.2.77")
                      .replace("GLOO_SOCKET_IFNAME=eth0", "GLOO_SOCKET_IFNAME=bond0")
                      .replace("--port 8002", "--port 8002 --data-parallel-address 192.0.2.88 --data-parallel-rpc-port 13345"))
    try:
        doc = judge(host)
    finally:
        script.write_text(original)
    if_ip = finding(doc, "hccn.hccl_if_ip")
    assert if_ip["status"] == "fail" and "192.0.2.77" in if_ip["title"] and if_ip["expected"] == node_ip(1)
    gloo = [f for f in doc["findings"] if f["id"] == "hccn.socket_ifname" and "GLOO" in f["title"]][0]
    assert gloo["status"] == "fail" and gloo["observed"] == "bond0" and "eth0" in gloo["expected"]
    assert any(f["id"] == "hccn.socket_ifname" and f["status"] == "info" and "precedence" in f["title"] for f in doc["findings"])
    dp = finding(doc, "hccn.dp_master")
    assert dp["status"] == "fail" and "192.0.2.88" in dp["title"]


def test_nothing_runs_under_root_unless_named(host):
    install(host, node_ports(1, count=4))
    marker = host.base / "ran"
    tool = host.p(TOOL)
    text = tool.read_text()
    tool.write_text(text.replace("#!/bin/sh\n", f"#!/bin/sh\ntouch '{marker}'\n", 1))
    try:
        doc = judge(host, hccn_tool=None)
    finally:
        tool.write_text(text)
    assert not marker.exists()
    ids = hccn_ids(doc)
    assert "hccn.tool" not in ids and "hccn.link" not in ids
    assert ids.get("hccn.hccl_if_ip") == "ok"  # the control plane is read from files, not run


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs against the fake hccn_tool, one per query
def test_pings_between_nodes(host):
    install(host, node_ports(1, count=4))
    reachable(host, [(0, "29.1.2.10"), (1, "29.1.2.11")])
    doc = judge(host, ping_npu=["0:29.1.2.10,1:29.1.2.11", "2:29.1.2.12"])
    ping = finding(doc, "hccn.ping")
    assert ping["status"] == "fail" and "1 of 3" in ping["title"] and "2 -> 29.1.2.12: 0/1" in ping["observed"]
    assert ping["commands"][0]["argv"][-4:] == ["-ping", "-g", "address", "29.1.2.12"]


A3_NPU_SMI = """#!/bin/sh
if [ "$2" = "-t" ] && [ "$3" = "spod-info" ]; then
  cat '{spod}'
  exit 0
fi
cat '{info}'
"""


@pytest.mark.slow  # ~1 s of CPU or more: 16 NPUs' queries to the fake hccn_tool
def test_a3_vnic_and_super_pod(tmp_path):
    fake = FakeHost(tmp_path)
    fake.ascend_host(npu="npu-smi-a3.txt")
    fake.write("/usr/local/bin/.spod", recorded("spod-info-printf.txt"))
    fake.write("/usr/local/bin/npu-smi", A3_NPU_SMI.format(spod=fake.p("/usr/local/bin/.spod"),
                                                           info=fake.p("/usr/local/bin/.npu-smi-output")), 0o755)
    for i in range(8, 16):
        fake.write(f"/dev/davinci{i}", "")
    ports = {i: Port(ip=f"29.1.3.{10 + i}", lldp_ifname=f"400GE1/2/{i}", vnic_ip=f"192.168.2.{100 + i}") for i in range(16)}
    ports[5].vnic_ip = None
    ports[5].extra["vnic"] = "vnic link status: DOWN\n"
    install(fake, ports)
    reachable(fake, [(0, "29.1.4.10")], hccs=True)  # A3 nodes ping over HCCS
    from doctor.usecases.check import CheckOptions, gather, snapshot_json

    facts = gather(CheckOptions(root=str(fake.root), site_packages=[str(tmp_path)], stage="runtime",
                                hccn_tool=str(fake.p(TOOL)), ping_npu=["0:29.1.4.10"],
                                npu_smi=fake.npu_smi_binary()), env=dict(fake.env))
    ping = facts.hccn.pings[0]
    assert "-hccs_ping" in ping.command.argv and (ping.transmitted, ping.received) == (3, 3)
    from doctor.rules.engine import make_context, run_rules

    verdict = run_rules(make_context(facts, shipped_matrix(), "runtime"))
    by = {f.id: f for f in verdict.findings if f.id.startswith("hccn.")}
    assert by["hccn.vnic"].status == "fail" and "NPU 5" in str(by["hccn.vnic"].title)
    assert by["hccn.superpod"].status == "ok" and "super pod 0, server index 4" in str(by["hccn.superpod"].title)
    snap = json.loads(snapshot_json(facts))
    dev0 = snap["hccn"]["devices"][0]
    assert dev0["vnic_ip"] == "192.168.2.100" and dev0["spod"]["SDID"] == 16777216
    assert dev0["commands"]["spod-info"]["argv"][-6:] == ["info", "-t", "spod-info", "-i", "0", "-c", "0"][-6:]
