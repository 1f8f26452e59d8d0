"""The node's networks: every NPU port through ``hccn_tool`` (one call per query, each with a
timeout), /etc/hccn.conf, A3 super-pod information, and the host's own interfaces.

hccn_tool runs only on the live host (found on PATH or in the driver's tools directory) or when
the user names it (``--hccn-tool PATH``); nothing found inside ``--root`` is executed. A device
whose query times out is not asked anything more (a hung driver call would only hang again), and
the devices are asked in parallel, so a stuck driver costs one timeout, not one per query.
"""
from __future__ import annotations

import os
from doctor.record import field, record
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.i18n import T
from doctor.facts import CommandFact, DevicesFacts, HccnDevice, HccnFacts, NpuPing
from doctor.parse import hccn as parse
from doctor.probes.inputs import HCCN_DIRS
from doctor.shell.host.root import Host

CONF = "/etc/hccn.conf"
# What the vllm-ascend multi-node guides ask for on every device (A3 adds -vnic).
QUERIES = ("link", "net_health", "ip", "gateway", "netdetect", "lldp", "tls")
A3_QUERIES = ("vnic",)
MAX_WORKERS = 8


@record
class HccnOptions:
    tool: Optional[str] = None  # --hccn-tool: a binary the user names (a path on this machine)
    timeout: float = 5.0  # per hccn_tool call
    pings: List[Tuple[int, str]] = field(default_factory=list)  # --ping-npu DEVICE:ADDRESS


def parse_ping_pairs(values: Sequence[str]) -> List[Tuple[int, str]]:
    """``--ping-npu 0:29.1.137.205`` (repeatable, or comma-separated): which local device pings
    which address. Raises ValueError naming the bad value."""
    out: List[Tuple[int, str]] = []
    for value in values:
        for item in (v.strip() for v in value.split(",")):
            if not item:
                continue
            dev, sep, addr = item.partition(":")
            if not sep or not dev.strip().isdigit() or parse.ipv4(addr) is None:
                raise ValueError(T("hccn.error.bad_ping_pair", item=repr(item)))
            out.append((int(dev), parse.ipv4(addr) or addr))
    return out


def find_tool(host: Host, options: HccnOptions) -> Tuple[Optional[str], str, Optional[str]]:
    """(path, how, why not): the named binary, else on the live host PATH or the driver tools."""
    if options.tool:
        return options.tool, "--hccn-tool", None
    if not host.is_live:
        return None, "", "not the live host"
    dirs = host.env.get("PATH", "").split(os.pathsep)
    path = host.which("hccn_tool", HCCN_DIRS)
    if path is None:
        return None, "", "not found"
    return path, "PATH" if os.path.dirname(path) in dirs else "driver tools", None


def _hostname(host: Host) -> str:
    if host.is_live:
        return os.uname().nodename  # what socket.gethostname() returns (glibc asks uname), without socket's ~3 ms import
    return (host.read_text("/etc/hostname", limit=256) or "").strip()


def _interfaces(host: Host, facts: HccnFacts) -> None:
    fib = host.read_text("/proc/net/fib_trie")
    route = host.read_text("/proc/net/route")
    if fib is None or route is None:
        return  # an image or a mounted disk: no live network to read
    facts.interfaces = parse.addresses_by_iface(fib, route, host.read_text("/proc/net/if_inet6") or "")
    for name in host.listdir("/sys/class/net"):
        state = (host.read_text(f"/sys/class/net/{name}/operstate", limit=64) or "").strip()
        facts.interfaces_up[name] = state
        facts.interfaces.setdefault(name, [])


def _conf(host: Host, facts: HccnFacts) -> None:
    text = host.read_text(CONF)
    if text is None:
        return
    facts.conf_found = True
    conf = parse.parse_hccn_conf(text)
    facts.conf = {str(k): v for k, v in sorted(conf.devices.items())}
    facts.conf_bad_lines = conf.bad_lines[:20]


def _apply(dev: HccnDevice, query: str, out: str) -> None:
    if query == "link":
        dev.link = parse.parse_link(out)
    elif query == "net_health":
        dev.net_health = parse.parse_net_health(out)
    elif query == "ip":
        dev.ip, dev.netmask = parse.parse_ip(out)
    elif query == "gateway":
        dev.gateway = parse.parse_gateway(out)[0]
    elif query == "netdetect":
        dev.netdetect = parse.parse_netdetect(out)
    elif query == "lldp":
        lldp = parse.parse_lldp(out)
        dev.lldp_ifname, dev.lldp_system = lldp.ifname, lldp.system_name or lldp.system_description
    elif query == "tls":
        tls = parse.parse_tls(out)
        dev.tls_switch, dev.tls_expiration = tls.switch, tls.expiration
    elif query == "vnic":
        vnic = parse.parse_vnic(out)
        dev.vnic_link, dev.vnic_ip = vnic.link, vnic.ip


def hccn_argv(tool: str, device: int, query: str) -> List[str]:
    return [tool, "-i", str(device), f"-{query}", "-g"]


def _run(host: Host, argv: Sequence[str], timeout: float) -> CommandFact:
    # Either a binary of the live host or one the user named: a path on this machine as it is.
    return host.run(argv, timeout=timeout, map_executable=False)


def _device(host: Host, tool: str, device: int, queries: Sequence[str], timeout: float) -> HccnDevice:
    dev = HccnDevice(device=device)
    for i, query in enumerate(queries):
        fact = _run(host, hccn_argv(tool, device, query), timeout)
        dev.commands[query] = fact
        if fact.stdout:
            _apply(dev, query, fact.stdout)
        if fact.timed_out or not fact.found:
            dev.skipped = list(queries[i + 1:])
            break
    return dev


def _spod(host: Host, devices: DevicesFacts, by_phy: Dict[int, HccnDevice], timeout: float) -> None:
    """A3: ``npu-smi info -t spod-info -i NPU -c CHIP`` for every die that has an hccn device."""
    info = devices.npu_smi_info
    if not devices.npu_smi_path or info is None or not host.may_run(devices.npu_smi_path):
        return  # under --root only a named npu-smi runs
    for chip in info.chips:
        dev = by_phy.get(chip.phy_id if chip.phy_id is not None else -1)
        if dev is None:
            continue
        argv = [devices.npu_smi_path, "info", "-t", "spod-info", "-i", str(chip.npu), "-c", str(chip.chip)]
        fact = host.run(argv, timeout=timeout)
        dev.commands["spod-info"] = fact
        dev.spod = parse.parse_spod_info(fact.stdout)
        if fact.timed_out:
            return


def ping_argv(tool: str, device: int, address: str, a3: bool) -> List[str]:
    return [tool, "-i", str(device), "-hccs_ping" if a3 else "-ping", "-g", "address", address]


def _pings(host: Host, tool: str, pairs: List[Tuple[int, str]], a3: bool, timeout: float) -> List[NpuPing]:
    def one(pair: Tuple[int, str]) -> NpuPing:
        device, address = pair
        fact = _run(host, ping_argv(tool, device, address, a3), timeout)
        result = parse.parse_ping(fact.stdout)
        return NpuPing(device=device, address=address, command=fact,
                       transmitted=result.transmitted if result else None,
                       received=result.received if result else None)

    if not pairs:
        return []
    from concurrent.futures import ThreadPoolExecutor  # here: it loads logging, ~7 ms check mostly does not need

    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(pairs))) as pool:
        return list(pool.map(one, pairs))


def probe_hccn(host: Host, devices: Optional[DevicesFacts], options: HccnOptions) -> HccnFacts:
    facts = HccnFacts(hostname=_hostname(host), timeout_s=options.timeout)
    _conf(host, facts)
    _interfaces(host, facts)
    tool, how, why_not = find_tool(host, options)
    facts.tool, facts.tool_how, facts.not_run = tool, how, why_not
    if tool is None:
        return facts
    ids = sorted({int(n.path.rsplit("davinci", 1)[1]) for n in (devices.davinci if devices else []) if n.exists})
    if not ids:  # no device nodes visible: ask for the devices hccn.conf configures
        ids = sorted(int(k) for k in facts.conf)
    a3 = bool(devices and devices.npu_smi_info and devices.npu_smi_info.layout == "A3")
    queries = QUERIES + (A3_QUERIES if a3 else ())
    if ids:
        from concurrent.futures import ThreadPoolExecutor  # here: only hosts with hccn_tool get this far

        with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(ids))) as pool:
            facts.devices = list(pool.map(lambda d: _device(host, tool, d, queries, options.timeout), ids))
    if a3 and devices is not None:
        _spod(host, devices, {d.device: d for d in facts.devices}, options.timeout)
    facts.pings = _pings(host, tool, options.pings, a3, options.timeout + 5.0)
    return facts
