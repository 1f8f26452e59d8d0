"""The hccn parsers on every recorded output (tests/fakehost/data/hccn) and on garbage."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doctor.parse import hccn

DATA = Path(__file__).parent / "fakehost" / "data" / "hccn"


def rec(name: str) -> str:
    return (DATA / name).read_text()


def test_link_and_health():
    assert hccn.parse_link(rec("link-up.txt")) == "UP"
    assert hccn.parse_link(rec("link-up-mixedcase.txt")) == "UP"
    assert hccn.parse_link("link status: DOWN\n") == "DOWN"
    assert hccn.parse_net_health(rec("net_health-success.txt")) == "Success"
    assert hccn.parse_net_health(rec("net_health-fault.txt")) == "Fault"
    assert hccn.parse_net_health(rec("net_health-init.txt")) == "Init"
    assert hccn.parse_net_health("net health status: Receive timeout\n") == "Receive timeout"  # values hold spaces


def test_tls_both_prefixes_filtered_and_full():
    lines = rec("tls-grep-switch-mixed.txt").splitlines()
    assert hccn.parse_tls(lines[0]).switch == 0 and hccn.parse_tls(lines[0]).preconfigured == 1
    assert hccn.parse_tls(lines[1]).switch == 1
    newer = hccn.parse_tls(rec("tls-device-prefix.txt"))
    assert newer.switch == 1 and newer.preconfigured == 1
    full = hccn.parse_tls(rec("tls-full.txt"))
    assert full.switch == 0 and full.preconfigured == 0 and full.expiration == [0, 0]


def test_addresses():
    assert hccn.parse_ip(rec("ip.txt")) == ("29.1.112.213", "255.255.0.0")
    assert hccn.parse_ip(rec("ip-doc-redacted.txt")) == (None, "255.255.255.0")  # 10.xx.xx.10 is no address
    assert hccn.parse_gateway(rec("gateway.txt")) == ("11.12.165.1", "eth0")
    assert hccn.parse_netdetect(rec("netdetect.txt")) == "11.12.165.1"
    vnic = hccn.parse_vnic(rec("vnic.txt"))
    assert (vnic.link, vnic.ip, vnic.netmask) == ("UP", "192.168.2.199", "255.255.255.0")


def test_lldp_spaces_and_tab():
    blog = hccn.parse_lldp(rec("lldp-blog.txt"))
    assert blog.ifname == "400GE1/1/20:2"
    assert blog.system_description.startswith("Versatile Routing Platform Software") and "Huarong DX511" in blog.system_description
    assert blog.management_ip == "26.xx.xx.xx"
    assert hccn.parse_lldp(rec("lldp-grep-ifname-tab.txt")).ifname == "400GE1/1/5:1"
    assert hccn.parse_lldp(rec("lldp-blog.txt").replace("        ", "\t")).ifname == "400GE1/1/20:2"


def test_ping_outputs():
    ok = hccn.parse_ping(rec("ping-ok.txt"))
    assert (ok.transmitted, ok.received, ok.loss_pct, ok.ok) == (3, 3, 0.0, True)
    loss = hccn.parse_ping(rec("ping-loss.txt"))
    assert (loss.received, loss.loss_pct, loss.ok) == (2, 33.33, False)
    fail = hccn.parse_ping(rec("ping-send-fail.txt"))  # "packets loss", and "Cmd executed successfully!"
    assert (fail.transmitted, fail.received, fail.ok) == (1, 0, False)


def test_spod_info_documented_and_padded():
    want = {"SDID": 16777216, "Super Pod Size": 384, "Super Pod ID": 0, "Server Index": 4}
    assert hccn.parse_spod_info(rec("spod-info-doc.txt")) == want
    assert hccn.parse_spod_info(rec("spod-info-printf.txt")) == want


def test_hccn_conf_variants():
    a2 = hccn.parse_hccn_conf(rec("hccn.conf-blog-a2.txt"))
    assert a2.devices[0]["address"] == "29.1.137.205" and a2.devices[7]["gateway"] == "29.1.0.1"
    assert a2.bad_lines == ["..."]  # the author's elision
    head = hccn.parse_hccn_conf(rec("hccn.conf-8npu-head.txt"))
    assert head.devices[0]["tls_enable"] == "0" and head.devices[1] == {"address": "127.0.0.226"}
    a3 = hccn.parse_hccn_conf(rec("hccn.conf-a3-head.txt"))  # leading blank line, arp_N with spaces
    assert a3.devices[0]["arp"] == "-i eth0 -s 127.0.0.114 bc:1e:85:d8:ca:dd" and not a3.bad_lines


def test_host_interfaces_from_proc():
    ifaces = hccn.addresses_by_iface(rec("proc-net-fib_trie.txt"), rec("proc-net-route.txt"), rec("proc-net-if_inet6.txt"))
    assert "192.0.2.2" in ifaces["eth0"] and "127.0.0.1" in ifaces["lo"]
    assert "fd00::2" in ifaces["eth0"] and "::1" in ifaces["lo"]


@pytest.mark.parametrize("spec, chosen", [
    ("eth", ["eth0", "eth1"]), ("=eth0,enp0", ["eth0"]), ("^eth", ["enp3s0", "lo"]), ("^=eth0", ["enp3s0", "eth1", "lo"]),
    ("enp,eth", ["enp3s0", "eth0", "eth1"]), ("ib", []),
])
def test_hccl_socket_ifname_rules(spec, chosen):
    assert hccn.ifname_matches(spec, ["enp3s0", "eth0", "eth1", "lo"]) == chosen


GARBAGE = ["", "\x00\xff", "link status", "ipaddr:", "ipaddr:999.1.1.1", "tls switch[x]", "net health status:",
           "Cmd executed successfully!", "device 0: no such device", "{\"json\": 1}", "=\n=\n", "address_x=1.2.3.4",
           "Main:\n  |-- 1.2.3\n     /32 host LOCAL", "Iface\tDestination\nzz\tGG\t00"]


@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_answers_nothing(text):
    assert hccn.parse_link(text) is None and hccn.parse_net_health(text) in (None,)
    assert hccn.parse_ip(text) == (None, None) and hccn.parse_gateway(text) == (None, None)
    assert hccn.parse_ping(text) is None and hccn.parse_tls(text).switch is None
    assert hccn.parse_vnic(text).ip is None and hccn.parse_lldp(text).ifname is None
    assert hccn.parse_spod_info(text) == {}
    assert hccn.addresses_by_iface(text, text, text) == {}


@settings(max_examples=150, deadline=None)
@given(st.text())
def test_parsers_never_raise(text):
    hccn.parse_link(text), hccn.parse_net_health(text), hccn.parse_tls(text), hccn.parse_ip(text)
    hccn.parse_gateway(text), hccn.parse_netdetect(text), hccn.parse_lldp(text), hccn.parse_vnic(text)
    hccn.parse_ping(text), hccn.parse_spod_info(text), hccn.parse_hccn_conf(text)
    hccn.addresses_by_iface(text, text, text), hccn.ifname_matches(text, ["eth0", "lo"])
