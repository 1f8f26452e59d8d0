"""Parse ``hccn_tool`` outputs, ``/etc/hccn.conf``, ``npu-smi info -t spod-info`` and the host's
own interface tables (/proc/net/fib_trie, /proc/net/route, /proc/net/if_inet6).

Pure functions over text. Every parser accepts garbage and answers "nothing found" (None or an
empty result) rather than raising: the rules then say that the output could not be read.
Formats: docs/fleet.md lists the recorded outputs each parser is tested on (tests/fakehost/data).
"""
from __future__ import annotations

import ipaddress
import re
from doctor.record import field, record
from typing import Dict, List, Optional, Tuple
from doctor.lazyre import lazy

# `link status: UP`; a third-party test writes `Up`, so the value is matched case-insensitively.
_LINK = lazy(r"^\s*link status\s*:\s*(\S+)", re.I | re.M)
# The value may hold spaces (`Socket fail`, `Receive timeout`, `Detect ip set`).
_HEALTH = lazy(r"^\s*net health status\s*:\s*(.+?)\s*$", re.I | re.M)
# Older tools print `dev_id:0, tls switch[0]`, newer ones `device 0, tls switch[0]`: the prefix is
# not anchored on.
_TLS_SWITCH = lazy(r"tls switch\[(\d)\]", re.I)
_TLS_PRESET = lazy(r"tls preconfigured\[(\d)\]", re.I)
_TLS_EXPIRY = lazy(r"tls expiration status\[(\d)\]", re.I)
_IP = lazy(r"^\s*ipaddr\s*:\s*(\S+)", re.I | re.M)
_MASK = lazy(r"^\s*netmask\s*:\s*(\S+)", re.I | re.M)
_GATEWAY = lazy(r"default gateway\s*:\s*([^,\s]+)(?:\s*,\s*Iface\s*:\s*(\S+))?", re.I)
_NETDETECT = lazy(r"netdetect address\s*:\s*(\S+)", re.I)
_VNIC_LINK = lazy(r"^\s*vnic link status\s*:\s*(\S+)", re.I | re.M)
_VNIC_IP = lazy(r"^\s*vnic ipaddr\s*:\s*(\S+)", re.I | re.M)
_VNIC_MASK = lazy(r"^\s*vnic netmask\s*:\s*(\S+)", re.I | re.M)
# `3 packets transmitted, 3 received, 0.00% packet loss` (some builds write `packets loss`).
_PING = lazy(r"(\d+)\s+packets? transmitted,\s*(\d+)\s+received,\s*([\d.]+)%\s*packets?\s+loss", re.I)
_CONF_KEY = lazy(r"^([A-Za-z_]+?)_(\d+)$")


def ipv4(value: Optional[str]) -> Optional[str]:
    """The value when it is a usable IPv4 address (not 0.0.0.0), else None."""
    if not value:
        return None
    try:
        addr = ipaddress.IPv4Address(value.strip())
    except ValueError:
        return None
    return None if addr.is_unspecified else str(addr)


def parse_link(text: str) -> Optional[str]:
    """``-link -g``: ``UP`` / ``DOWN`` (upper-cased), or None."""
    m = _LINK.search(text or "")
    return m.group(1).upper() if m else None


def parse_net_health(text: str) -> Optional[str]:
    """``-net_health -g``: ``Success``, ``Init``, ``Fault``, ``Socket fail`` ..., or None."""
    m = _HEALTH.search(text or "")
    return m.group(1) if m else None


@record
class TlsState:
    switch: Optional[int] = None  # 0 disabled, 1 enabled
    preconfigured: Optional[int] = None
    expiration: List[int] = field(default_factory=list)  # per certificate: 0 normal, 1 near, 2 expired


def parse_tls(text: str) -> TlsState:
    """``-tls -g`` (whole or filtered with ``grep switch``)."""
    state = TlsState()
    text = text or ""
    m = _TLS_SWITCH.search(text)
    if m:
        state.switch = int(m.group(1))
    m = _TLS_PRESET.search(text)
    if m:
        state.preconfigured = int(m.group(1))
    state.expiration = [int(x) for x in _TLS_EXPIRY.findall(text)]
    return state


def parse_ip(text: str) -> Tuple[Optional[str], Optional[str]]:
    """``-ip -g``: (address, netmask); no space after the colon in real output."""
    text = text or ""
    ip, mask = _IP.search(text), _MASK.search(text)
    return (ipv4(ip.group(1)) if ip else None), (ipv4(mask.group(1)) if mask else None)


def parse_gateway(text: str) -> Tuple[Optional[str], Optional[str]]:
    """``-gateway -g``: (gateway, iface)."""
    m = _GATEWAY.search(text or "")
    if not m:
        return None, None
    return ipv4(m.group(1)), m.group(2)


def parse_netdetect(text: str) -> Optional[str]:
    m = _NETDETECT.search(text or "")
    return ipv4(m.group(1)) if m else None


@record
class Lldp:
    ifname: Optional[str] = None  # the switch port this NPU port is cabled to
    system_name: Optional[str] = None
    system_description: Optional[str] = None
    management_ip: Optional[str] = None


def parse_lldp(text: str) -> Lldp:
    """``-lldp -g``: TLV headings at column 0, values indented by a TAB (real output) or by
    spaces (as blogs render it); a description may run over several unindented lines."""
    out = Lldp()
    section = None
    desc: List[str] = []
    for raw in (text or "").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        indented = line[:1] in (" ", "\t")
        value = line.strip()
        if not indented and value.endswith("TLV"):
            section = value[:-3].strip().lower()
            continue
        if value.lower().startswith("ifname:"):
            out.ifname = value.split(":", 1)[1].strip() or None
        elif section == "system name" and out.system_name is None:
            out.system_name = value
        elif section == "system description":
            desc.append(value)
        elif section == "management address" and value.lower().startswith("ipv4:"):
            out.management_ip = value.split(":", 1)[1].strip() or None
    if desc:
        out.system_description = " ".join(desc)
    return out


@record
class Vnic:
    link: Optional[str] = None
    ip: Optional[str] = None
    netmask: Optional[str] = None


def parse_vnic(text: str) -> Vnic:
    """``-vnic -g`` (A3): ``vnic link status: UP`` / ``vnic ipaddr: ...`` / ``vnic netmask: ...``."""
    text = text or ""
    link, ip, mask = _VNIC_LINK.search(text), _VNIC_IP.search(text), _VNIC_MASK.search(text)
    return Vnic(link=link.group(1).upper() if link else None, ip=ipv4(ip.group(1)) if ip else None,
                netmask=ipv4(mask.group(1)) if mask else None)


@record
class PingResult:
    transmitted: int
    received: int
    loss_pct: float

    @property
    def ok(self) -> bool:
        return self.transmitted > 0 and self.received == self.transmitted


def parse_ping(text: str) -> Optional[PingResult]:
    """``-ping -g address X`` / ``-hccs_ping -g address X``: the summary line, or None."""
    m = _PING.search(text or "")
    if not m:
        return None
    return PingResult(int(m.group(1)), int(m.group(2)), float(m.group(3)))


def parse_spod_info(text: str) -> Dict[str, int]:
    """``npu-smi info -t spod-info -i N -c C`` (A3): ``SDID``, ``Super Pod Size``, ``Super Pod ID``,
    ``Server Index`` (printed as ``\\t%-30s : %u``; documentation shows it unpadded)."""
    out: Dict[str, int] = {}
    for raw in (text or "").splitlines():
        key, sep, value = raw.partition(":")
        key, value = key.strip(), value.strip()
        if sep and key and value.isdigit():
            out[key] = int(value)
    return out


@record
class HccnConf:
    devices: Dict[int, Dict[str, str]] = field(default_factory=dict)  # device id -> key -> value
    other: Dict[str, str] = field(default_factory=dict)  # keys without a _N suffix
    bad_lines: List[str] = field(default_factory=list)


def parse_hccn_conf(text: str) -> HccnConf:
    """``key_<devid>=value`` lines, unordered, no sections; blank lines (the A3 file starts with
    one) and ``#`` lines ignored; values may contain ``=`` and spaces (``arp_0=-i eth0 -s ...``)."""
    conf = HccnConf()
    for raw in (text or "").splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq or not key:
            conf.bad_lines.append(raw[:200])
            continue
        m = _CONF_KEY.match(key)
        if m:
            conf.devices.setdefault(int(m.group(2)), {})[m.group(1).lower()] = value.strip()
        else:
            conf.other[key] = value.strip()
    return conf


# -- the host's own interfaces -------------------------------------------------------------------


def local_ipv4(fib_trie: str) -> List[str]:
    """Addresses the kernel holds as local (``/32 host LOCAL`` leaves of /proc/net/fib_trie)."""
    out: List[str] = []
    last: Optional[str] = None
    for raw in (fib_trie or "").splitlines():
        line = raw.strip()
        if line.startswith("|--"):
            last = line[3:].strip()
        elif last and line.startswith("/32") and line.endswith("host LOCAL"):
            addr = ipv4(last)
            if addr and addr not in out:
                out.append(addr)
    return out


def routes(route_text: str) -> List[Tuple[str, ipaddress.IPv4Network]]:
    """(iface, network) of the directly connected routes in /proc/net/route (hex, little-endian)."""
    out: List[Tuple[str, ipaddress.IPv4Network]] = []
    for raw in (route_text or "").splitlines()[1:]:
        cols = raw.split()
        if len(cols) < 8:
            continue
        try:
            dest = ipaddress.IPv4Address(bytes.fromhex(cols[1])[::-1])
            mask = ipaddress.IPv4Address(bytes.fromhex(cols[7])[::-1])
            net = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
        except ValueError:
            continue
        if net.prefixlen == 0:
            continue  # the default route says where to go, not which addresses are ours
        out.append((cols[0], net))
    return out


def ipv6_by_iface(if_inet6: str) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {}
    for raw in (if_inet6 or "").splitlines():
        cols = raw.split()
        if len(cols) != 6 or len(cols[0]) != 32:
            continue
        try:
            addr = ipaddress.IPv6Address(bytes.fromhex(cols[0]))
        except ValueError:
            continue
        out.setdefault(cols[5], []).append(str(addr))
    return out


def addresses_by_iface(fib_trie: str, route_text: str, if_inet6: str = "") -> Dict[str, List[str]]:
    """Which interface holds each local address: the longest directly connected route that
    contains it (loopback addresses belong to ``lo``)."""
    table = routes(route_text)
    out: Dict[str, List[str]] = {}
    for addr in local_ipv4(fib_trie):
        ip = ipaddress.IPv4Address(addr)
        if ip.is_loopback:
            iface = "lo"
        else:
            best = max((r for r in table if ip in r[1]), key=lambda r: r[1].prefixlen, default=None)
            iface = best[0] if best else "?"
        out.setdefault(iface, []).append(addr)
    for iface, addrs in ipv6_by_iface(if_inet6).items():
        out.setdefault(iface, []).extend(addrs)
    return out


def ifname_matches(spec: str, names: List[str]) -> List[str]:
    """The interfaces HCCL_SOCKET_IFNAME selects, in its order: ``eth,enp`` prefixes, ``=eth0``
    exact names, ``^eth`` / ``^=eth0`` exclusions (CANN environment variable reference)."""
    spec = spec.strip()
    exclude = spec.startswith("^")
    if exclude:
        spec = spec[1:]
    exact = spec.startswith("=")
    if exact:
        spec = spec[1:]
    items = [s.strip() for s in spec.split(",") if s.strip()]

    def hit(name: str) -> bool:
        return any(name == i if exact else name.startswith(i) for i in items)

    if exclude:
        return [n for n in names if not hit(n)]
    out: List[str] = []
    for item in items:  # the first match is the one HCCL uses
        for n in names:
            if (n == item if exact else n.startswith(item)) and n not in out:
                out.append(n)
    return out
