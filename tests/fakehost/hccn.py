"""A fake ``hccn_tool`` for fake hosts: a shell script that prints the recorded outputs of
data/hccn (see SOURCES.md) for ``-i N -<query> -g [address X]``, with the scenario's addresses
substituted; a device can hang or fail. Only the vendor binary is faked.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional

from . import DATA, FakeHost

HCCN = DATA / "hccn"
TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
OUT_DIR = "/usr/local/Ascend/driver/tools/.hccn-outputs"

SCRIPT = """#!/bin/sh
# fake hccn_tool: -i N -QUERY -g [address X]
dev="$2"; q="${3#-}"; addr="$6"
key="$dev-$q"
[ -n "$addr" ] && key="$key-$addr"
d="%(dir)s"
if [ -f "$d/$key.hang" ] || [ -f "$d/$dev.hang" ]; then echo "$key" >> "$d/hung.calls"; sleep 60 & wait; fi
if [ -f "$d/$key" ]; then
  cat "$d/$key"
  rc=0; [ -f "$d/$key.rc" ] && rc=$(cat "$d/$key.rc")
  exit "$rc"
fi
if [ "$q" = "ping" ] || [ "$q" = "hccs_ping" ]; then cat "$d/unreachable"; exit 0; fi
echo "device $dev: no such device or query $q" >&2
exit 1
"""


def recorded(name: str) -> str:
    return (HCCN / name).read_text()


def _ip(text: str, ip: str) -> str:
    return text.replace("29.1.112.213", ip)


@dataclass
class Port:
    """One NPU port of a scenario; None leaves a query unanswered (the tool fails for it)."""

    ip: Optional[str]
    link: str = "link-up.txt"
    health: str = "net_health-success.txt"
    gateway: Optional[str] = "29.1.0.1"
    lldp_ifname: Optional[str] = None
    tls: int = 0
    vnic_ip: Optional[str] = None
    hang: bool = False
    extra: Dict[str, str] = field(default_factory=dict)  # query -> output, overrides


def port_outputs(device: int, port: Port) -> Dict[str, str]:
    tls_line = recorded("tls-grep-switch-mixed.txt").splitlines()[0]
    out = {
        "link": recorded(port.link),
        "net_health": recorded(port.health),
        "tls": tls_line.replace("dev_id:0,", f"dev_id:{device},").replace("tls switch[0]", f"tls switch[{port.tls}]") + "\n",
    }
    if port.ip:
        out["ip"] = _ip(recorded("ip.txt"), port.ip)
    if port.gateway:
        out["gateway"] = recorded("gateway.txt").replace("11.12.165.1", port.gateway).replace("eth0", f"eth{device}")
        out["netdetect"] = recorded("netdetect.txt").replace("11.12.165.1", port.gateway)
    if port.lldp_ifname:
        out["lldp"] = recorded("lldp-blog.txt").replace("400GE1/1/20:2", port.lldp_ifname).replace("        ", "\t")
    if port.vnic_ip:
        out["vnic"] = recorded("vnic.txt").replace("192.168.2.199", port.vnic_ip)
    out.update(port.extra)
    return out


def install(fake: FakeHost, ports: Dict[int, Port], conf: bool = True) -> Path:
    """Write the fake hccn_tool into the root and, with ``conf``, an /etc/hccn.conf that matches."""
    out_dir = fake.p(OUT_DIR)
    if out_dir.exists():
        shutil.rmtree(out_dir)  # a scenario replaces the previous one whole
    out_dir.mkdir(parents=True)
    (out_dir / "unreachable").write_text(recorded("ping-send-fail.txt"))
    lines: List[str] = []
    for device, port in ports.items():
        for query, text in port_outputs(device, port).items():
            (out_dir / f"{device}-{query}").write_text(text)
        if port.hang:
            (out_dir / f"{device}.hang").write_text("")
        if port.ip:
            lines += [f"address_{device}={port.ip}", f"netmask_{device}=255.255.0.0"]
            if port.gateway:
                lines += [f"netdetect_{device}={port.gateway}", f"gateway_{device}={port.gateway}"]
            lines += [f"send_arp_status_{device}=1", f"tls_enable_{device}={port.tls}"]
    if conf:
        fake.write("/etc/hccn.conf", "\n".join(lines) + "\n")
    return fake.write(TOOL, SCRIPT % {"dir": out_dir}, 0o755)


def reachable(fake: FakeHost, pairs: Iterable[tuple], hccs: bool = False) -> None:
    """Make ``-ping`` (or ``-hccs_ping``) from device N to address X answer like ping-ok.txt."""
    out_dir = fake.p(OUT_DIR)
    query = "hccs_ping" if hccs else "ping"
    for device, address in pairs:
        text = recorded("ping-ok.txt").replace("device 3", f"device {device}").replace("29.1.137.205", address)
        (out_dir / f"{device}-{query}-{address}").write_text(text)


def node_ports(node: int, count: int = 8, **overrides) -> Dict[int, Port]:
    """A healthy A2 node of seed 003's kind: 8 RoCE ports on 29.1.<node>.x, one switch port each."""
    return {i: Port(ip=f"29.1.{node}.{10 + i}", lldp_ifname=f"400GE1/1/{i + 1}:{node}", **overrides) for i in range(count)}
