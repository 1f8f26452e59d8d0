"""doctor/rules/hccn.py on literal facts: each NPU-port check and control-plane check produces its
id with a status, and says nothing when hccn_tool did not run or nothing names the network
(tests/test_hccn_check.py runs the same rules on a fake node's recorded hccn_tool outputs)."""
from doctor.facts import CommandFact, HccnDevice, HccnFacts, NpuPing
from doctor.rules import hccn as rules

from .build import absent, context, expect, facts, host, judge, replace

QUERIES = ("link", "net_health", "ip", "gateway", "lldp", "tls")


def _ok(query: str, device: int) -> CommandFact:
    return CommandFact(argv=["hccn_tool", "-i", str(device), f"-{query}", "-g"], returncode=0, stdout="ok")


def port(device: int, **kw) -> HccnDevice:
    base = dict(device=device, link="UP", net_health="Success", ip=f"29.0.0.{device + 1}", netmask="255.255.255.0",
                gateway="29.0.0.254", lldp_ifname=f"400GE1/1/{device + 1}:1", tls_switch=0, tls_expiration=[0],
                commands={q: _ok(q, device) for q in QUERIES})
    base.update(kw)
    return HccnDevice(**base)


def node(*ports: HccnDevice, **kw) -> HccnFacts:
    base = dict(hostname="n1", tool="/usr/local/Ascend/driver/tools/hccn_tool", tool_how="driver tools",
                devices=list(ports) or [port(0), port(1)], conf_found=True,
                conf={"0": {"address": "29.0.0.1"}, "1": {"address": "29.0.0.2"}},
                interfaces={"lo": ["127.0.0.1"], "enp1": ["10.0.0.5"]}, interfaces_up={"enp1": "up"})
    base.update(kw)
    return HccnFacts(**base)


def ctx(h=None, env=None, hardware="A2", stage="runtime", **kw):
    f = facts(hccn=h if h is not None else node(), **kw)
    if env is not None:
        f.env = dict(f.env, **env)
    return context(f, hardware=hardware, stage=stage)


NOT_RUN = node(tool=None, not_run="not the live host", devices=[])


def test_tool():
    expect(judge(rules.check_tool, ctx()), "hccn.tool", "ok")
    hung = port(1, commands={"link": CommandFact(argv=["hccn_tool"], timed_out=True)})
    expect(judge(rules.check_tool, ctx(node(port(0), hung))), "hccn.tool", "warn")
    dead = port(0, link=None, commands={"link": CommandFact(argv=["hccn_tool"], returncode=1, stderr="no device")})
    expect(judge(rules.check_tool, ctx(node(dead))), "hccn.tool", "fail")
    absent(judge(rules.check_tool, ctx(NOT_RUN)), "hccn.tool")


def test_link():
    expect(judge(rules.check_link, ctx()), "hccn.link", "ok")
    expect(judge(rules.check_link, ctx(node(port(0), port(1, link="DOWN")))), "hccn.link", "fail")
    absent(judge(rules.check_link, ctx(NOT_RUN)), "hccn.link")
    absent(judge(rules.check_link, ctx(stage="build")), "hccn.link")


def test_net_health():
    expect(judge(rules.check_net_health, ctx()), "hccn.net_health", "ok")
    expect(judge(rules.check_net_health, ctx(node(port(0), port(1, net_health="Init")))), "hccn.net_health", "warn")
    expect(judge(rules.check_net_health, ctx(node(port(0, net_health="Fault"), port(1)))), "hccn.net_health", "fail")
    absent(judge(rules.check_net_health, ctx(NOT_RUN)), "hccn.net_health")


def test_ip():
    expect(judge(rules.check_ip, ctx()), "hccn.ip", "ok")
    got = judge(rules.check_ip, ctx(node(port(0), port(1, ip="29.0.0.1"))))  # two ports, one address
    assert [f.status for f in got] == ["fail", "warn"]  # the duplicate, and the conf that says otherwise
    absent(judge(rules.check_ip, ctx(NOT_RUN)), "hccn.ip")


def test_gateway():
    expect(judge(rules.check_gateway, ctx()), "hccn.gateway", "ok")
    expect(judge(rules.check_gateway, ctx(node(port(0, gateway="30.0.0.1"), port(1)))), "hccn.gateway", "warn")
    absent(judge(rules.check_gateway, ctx(NOT_RUN)), "hccn.gateway")


def test_lldp():
    expect(judge(rules.check_lldp, ctx()), "hccn.lldp", "ok")
    expect(judge(rules.check_lldp, ctx(node(port(0, lldp_ifname=None), port(1)))), "hccn.lldp", "warn")
    absent(judge(rules.check_lldp, ctx(NOT_RUN)), "hccn.lldp")


def test_tls():
    expect(judge(rules.check_tls, ctx()), "hccn.tls", "ok")
    expect(judge(rules.check_tls, ctx(node(port(0, tls_switch=1), port(1)))), "hccn.tls", "fail")
    absent(judge(rules.check_tls, ctx(NOT_RUN)), "hccn.tls")


def test_conf():
    expect(judge(rules.check_conf, ctx()), "hccn.conf", "ok")
    expect(judge(rules.check_conf, ctx(node(conf_found=False, conf={}))), "hccn.conf", "warn")
    expect(judge(rules.check_conf, ctx(node(conf_found=False, conf={}), host=host(in_container=True))), "hccn.conf", "fail")
    absent(judge(rules.check_conf, ctx(NOT_RUN)), "hccn.conf")


def _a3(device: int, **kw) -> HccnDevice:
    d = port(device, vnic_link="UP", vnic_ip=f"10.1.0.{device}", spod={"Super Pod ID": 1, "Server Index": 0}, **kw)
    d.commands.update({q: _ok(q, device) for q in ("vnic", "spod-info")})
    return d


def test_vnic():
    expect(judge(rules.check_vnic, ctx(node(_a3(0), _a3(1)), hardware="A3")), "hccn.vnic", "ok")
    bad = _a3(1)
    bad.vnic_link = "DOWN"
    expect(judge(rules.check_vnic, ctx(node(_a3(0), bad), hardware="A3")), "hccn.vnic", "fail")
    absent(judge(rules.check_vnic, ctx(node(_a3(0), _a3(1)))), "hccn.vnic")  # A2: no vnic


def test_superpod():
    expect(judge(rules.check_superpod, ctx(node(_a3(0), _a3(1)), hardware="A3")), "hccn.superpod", "ok")
    other = _a3(1)
    other.spod = {"Super Pod ID": 2, "Server Index": 0}
    expect(judge(rules.check_superpod, ctx(node(_a3(0), other), hardware="A3")), "hccn.superpod", "fail")
    absent(judge(rules.check_superpod, ctx(node(_a3(0), _a3(1)))), "hccn.superpod")


def test_ping():
    sent = NpuPing(device=0, address="29.0.1.1", transmitted=3, received=3)
    expect(judge(rules.check_ping, ctx(node(pings=[sent]))), "hccn.ping", "ok")
    lost = replace(sent, received=0)
    expect(judge(rules.check_ping, ctx(node(pings=[sent, lost]))), "hccn.ping", "fail")
    absent(judge(rules.check_ping, ctx()), "hccn.ping")  # no fleet check --ping


def test_hccl_if_ip_reads_the_launch_environment():
    expect(judge(rules.check_hccl_if_ip, ctx(env={"HCCL_IF_IP": "10.0.0.5"})), "hccn.hccl_if_ip", "ok")
    expect(judge(rules.check_hccl_if_ip, ctx(env={"HCCL_IF_IP": "10.9.9.9"})), "hccn.hccl_if_ip", "fail")
    expect(judge(rules.check_hccl_if_ip, ctx(node(interfaces=None), env={"HCCL_IF_IP": "10.0.0.5"})),
           "hccn.hccl_if_ip", "info")
    absent(judge(rules.check_hccl_if_ip, ctx()), "hccn.hccl_if_ip")


def test_socket_ifname():
    expect(judge(rules.check_socket_ifname, ctx(env={"GLOO_SOCKET_IFNAME": "enp1"})), "hccn.socket_ifname", "ok")
    expect(judge(rules.check_socket_ifname, ctx(env={"GLOO_SOCKET_IFNAME": "eth9"})), "hccn.socket_ifname", "fail")
    absent(judge(rules.check_socket_ifname, ctx()), "hccn.socket_ifname")


def test_dp_master():
    expect(judge(rules.check_dp_master, ctx(env={"VLLM_DP_MASTER_IP": "10.0.0.5", "VLLM_DP_MASTER_PORT": "13345"})),
           "hccn.dp_master", "ok")
    expect(judge(rules.check_dp_master, ctx(env={"VLLM_DP_MASTER_IP": "10.0.0.5", "VLLM_DP_MASTER_PORT": "99999"})),
           "hccn.dp_master", "fail")
    absent(judge(rules.check_dp_master, ctx()), "hccn.dp_master")
