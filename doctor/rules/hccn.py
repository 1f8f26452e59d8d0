"""The node's networks: every NPU port (what the vllm-ascend multi-node guides ask to verify with
hccn_tool before a launch) and the host interfaces the control plane is told to use.

The NPU checks run only when hccn_tool ran (the live host, or ``--hccn-tool``); the control-plane
checks whenever HCCL_IF_IP, *_SOCKET_IFNAME or a data-parallel master is set (in the environment
or in the exports of ``--serve-args-file``). One Rule record per finding id.
"""
from __future__ import annotations

import ipaddress
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from doctor.facts import CommandFact, HccnDevice, HccnFacts
from doctor.findings import Fixable, FAIL, INFO, OK, WARN, Command, Finding, cmd
from doctor.i18n import T
from doctor.parse import hccn as parse
from doctor.parse import serveargs
from doctor.rules.base import Context, rule

VA = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source"
PD_COLOCATED = f"{VA}/tutorials/features/pd_colocated_mooncake_multi_instance.md"
LARGE_EP = f"{VA}/user_guide/feature_guide/large_scale_ep.md"
PD_MULTI_NODE = f"{VA}/tutorials/features/pd_disaggregation_mooncake_multi_node.md"
HCCN_TOOL_DOC = "https://gitcode.com/cann/driver (hccn_tool reference)"
CANN_IFNAME = "https://www.hiascend.com/document/detail/zh/canncommercial/800/apiref/envvar/envref_07_0075.html"
TORCH_GLOO = "https://pytorch.org/docs/stable/distributed.html (GLOO_SOCKET_IFNAME)"
TORCH_TP = "https://pytorch.org/docs/stable/rpc.html (TP_SOCKET_IFNAME)"
VLLM_DP = "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html"
MAX_COMMANDS = 4  # commands per finding: the first failing devices show how to look at the rest


# -- inputs ----------------------------------------------------------------------------------------


def _hccn(ctx: Context) -> Optional[HccnFacts]:
    return ctx.facts.hccn


def _ran(ctx: Context) -> Optional[HccnFacts]:
    """The facts when hccn_tool ran and there were devices to ask."""
    h = _hccn(ctx)
    if h is None or h.tool is None or not h.devices or ctx.build:
        return None
    return h


def _tool(h: HccnFacts) -> str:
    return h.tool or "hccn_tool"


def _answered(d: HccnDevice, query: str) -> bool:
    c = d.commands.get(query)
    return c is not None and c.ok


def _show(h: HccnFacts, devices: Sequence[int], *query: str) -> List[Command]:
    return [cmd(_tool(h), "-i", str(i), *query) for i in list(devices)[:MAX_COMMANDS]]


def _ids(devices: Iterable[int]) -> str:
    return ",".join(str(i) for i in devices)


def _a3(ctx: Context) -> bool:
    return ctx.hardware == "A3"


def _failed_reading(h: HccnFacts, query: str) -> List[int]:
    return [d.device for d in h.devices if query not in d.skipped and query in d.commands and not _answered(d, query)]


def _unreadable(fid: str, h: HccnFacts, query: str, devices: List[int]) -> Finding:
    return Finding(fid, WARN, T("hccn.msg.unreadable", query=query, devices=_ids(devices)),
                   observed=_first_error(h, query), hint=T("hccn.msg.unreadable_hint"),
                   commands=_show(h, devices, f"-{query}", "-g"))


def _first_error(h: HccnFacts, query: str) -> Optional[str]:
    for d in h.devices:
        c = d.commands.get(query)
        if c is not None and not c.ok:
            return _describe(c)
    return None


def _describe(c: CommandFact) -> str:
    if c.timed_out:
        return "timed out"
    if c.error:
        return c.error
    text = (c.stderr or c.stdout).strip().splitlines()
    return f"exit {c.returncode}" + (f": {text[0][:160]}" if text else "")


# -- the tool itself -------------------------------------------------------------------------------


def check_tool(ctx: Context) -> Iterable[Finding]:
    h = _hccn(ctx)
    if h is None or h.tool is None or ctx.build:
        return []
    if not h.devices:
        return [Finding("hccn.tool", INFO, T("hccn.tool.no_devices", tool=h.tool))]
    answered = [d for d in h.devices if any(c.ok for c in d.commands.values())]
    hung = [d.device for d in h.devices if any(c.timed_out for c in d.commands.values())]
    if not answered:
        first = h.devices[0]
        c = next(iter(first.commands.values()), None)
        return [Finding("hccn.tool", FAIL, T("hccn.tool.failed", tool=h.tool), observed=_describe(c) if c else None,
                        hint=T("hccn.tool.failed_hint_container" if ctx.facts.host.in_container else "hccn.tool.failed_hint"),
                        fixable=Fixable.MANUAL, commands=[cmd(h.tool, "-i", str(first.device), "-link", "-g")])]
    if hung:
        return [Finding("hccn.tool", WARN, T("hccn.tool.timeout", devices=_ids(hung), seconds=f"{h.timeout_s:g}"),
                        observed="timed out", hint=T("hccn.tool.timeout_hint"),
                        commands=_show(h, hung, "-link", "-g"))]
    return [Finding("hccn.tool", OK, T("hccn.tool.ok", tool=h.tool, count=len(h.devices)), observed=h.tool)]


# -- per NPU port ----------------------------------------------------------------------------------


def check_link(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    down = [d.device for d in h.devices if d.link is not None and d.link != "UP"]
    if down:
        return [Finding("hccn.link", FAIL, T("hccn.link.down", devices=_ids(down)),
                        observed=", ".join(f"{d.device}:{d.link}" for d in h.devices if d.device in down),
                        expected="UP", hint=T("hccn.link.down_hint"), fixable=Fixable.MANUAL,
                        commands=_show(h, down, "-link", "-g") + _show(h, down[:1], "-link_stat", "-g"))]
    unknown = _failed_reading(h, "link")
    if unknown:
        return [_unreadable("hccn.link", h, "link", unknown)]
    return [Finding("hccn.link", OK, T("hccn.link.ok", count=sum(1 for d in h.devices if d.link)))]


def check_net_health(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    bad = [d for d in h.devices if d.net_health is not None and d.net_health.lower() != "success"]
    faults = [d for d in bad if (d.net_health or "").lower() != "init"]  # every bad one has a state
    if bad:
        status = FAIL if faults else WARN
        return [Finding("hccn.net_health", status,
                        T("hccn.net_health.bad" if faults else "hccn.net_health.init", devices=_ids(d.device for d in bad)),
                        observed=", ".join(f"{d.device}:{d.net_health}" for d in bad), expected="Success",
                        hint=T("hccn.net_health.hint"), fixable=Fixable.MANUAL,
                        commands=_show(h, [d.device for d in bad], "-net_health", "-g")
                        + _show(h, [d.device for d in bad][:1], "-netdetect", "-g"))]
    unknown = _failed_reading(h, "net_health")
    if unknown:
        return [_unreadable("hccn.net_health", h, "net_health", unknown)]
    return [Finding("hccn.net_health", OK, T("hccn.net_health.ok", count=sum(1 for d in h.devices if d.net_health)))]


def check_ip(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    out: List[Finding] = []
    missing = [d.device for d in h.devices if _answered(d, "ip") and not d.ip]
    if missing:
        out.append(Finding("hccn.ip", FAIL, T("hccn.ip.missing", devices=_ids(missing)), expected="ipaddr:<address>",
                           hint=T("hccn.ip.hint"), fixable=Fixable.MANUAL, commands=_show(h, missing, "-ip", "-g")))
    seen: Dict[str, List[int]] = {}
    for d in h.devices:
        if d.ip:
            seen.setdefault(d.ip, []).append(d.device)
    dups = {ip: devs for ip, devs in seen.items() if len(devs) > 1}
    if dups:
        out.append(Finding("hccn.ip", FAIL, T("hccn.ip.duplicate", pairs="; ".join(f"{ip} ({_ids(v)})" for ip, v in dups.items())),
                           hint=T("hccn.ip.hint"), fixable=Fixable.MANUAL,
                           commands=_show(h, [i for v in dups.values() for i in v], "-ip", "-g")))
    stale = [(d.device, d.ip, h.conf.get(str(d.device), {}).get("address")) for d in h.devices
             if d.ip and h.conf_found and h.conf.get(str(d.device), {}).get("address") not in (None, d.ip)]
    if stale:
        out.append(Finding("hccn.ip", WARN, T("hccn.ip.conf_differs", pairs="; ".join(f"{i}: {ip} / {c}" for i, ip, c in stale),
                                              path=h.conf_path),
                           hint=T("hccn.ip.conf_hint"), commands=[cmd("cat", h.conf_path)]))
    if not out:
        unknown = _failed_reading(h, "ip")
        if unknown:
            return [_unreadable("hccn.ip", h, "ip", unknown)]
        out.append(Finding("hccn.ip", OK, T("hccn.ip.ok", count=len(seen)),
                           observed=", ".join(f"{d.device}:{d.ip}" for d in h.devices if d.ip)))
    return out


def _same_subnet(ip: str, mask: Optional[str], gateway: str) -> Optional[bool]:
    if not mask:
        return None
    try:
        return ipaddress.IPv4Address(gateway) in ipaddress.IPv4Network(f"{ip}/{mask}", strict=False)
    except ValueError:
        return None


def check_gateway(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    missing = [d.device for d in h.devices if _answered(d, "gateway") and not d.gateway]
    outside = [d for d in h.devices if d.ip and d.gateway and _same_subnet(d.ip, d.netmask, d.gateway) is False]
    if missing:
        return [Finding("hccn.gateway", WARN, T("hccn.gateway.missing", devices=_ids(missing)),
                        hint=T("hccn.gateway.hint"), fixable=Fixable.MANUAL, commands=_show(h, missing, "-gateway", "-g"))]
    if outside:
        return [Finding("hccn.gateway", WARN, T("hccn.gateway.outside", devices=_ids(d.device for d in outside)),
                        observed=", ".join(f"{d.device}: {d.ip}/{d.netmask} via {d.gateway}" for d in outside),
                        hint=T("hccn.gateway.hint"), fixable=Fixable.MANUAL,
                        commands=_show(h, [d.device for d in outside], "-gateway", "-g"))]
    unknown = _failed_reading(h, "gateway")
    if unknown:
        return [_unreadable("hccn.gateway", h, "gateway", unknown)]
    gateways = sorted({d.gateway for d in h.devices if d.gateway})
    return [Finding("hccn.gateway", OK, T("hccn.gateway.ok", gateways=", ".join(gateways)), observed=", ".join(gateways))]


def check_lldp(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    asked = [d for d in h.devices if "lldp" in d.commands]
    # only a query that answered can say "no neighbour": a failed one says nothing about the cable
    none = [d.device for d in asked if _answered(d, "lldp") and not d.lldp_ifname]
    if none:
        return [Finding("hccn.lldp", WARN, T("hccn.lldp.none", devices=_ids(none)), expected="Ifname: <switch port>",
                        hint=T("hccn.lldp.hint"), commands=_show(h, none, "-lldp", "-g"))]
    unknown = _failed_reading(h, "lldp")
    if unknown:
        return [_unreadable("hccn.lldp", h, "lldp", unknown)]
    if not asked:
        return []
    ports = [f"{d.device}:{d.lldp_ifname}" for d in asked]
    return [Finding("hccn.lldp", OK, T("hccn.lldp.ok", count=len(asked)), observed=", ".join(ports))]


def check_tls(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None:
        return []
    known = [d for d in h.devices if d.tls_switch is not None]
    if not known:
        unknown = _failed_reading(h, "tls")
        return [_unreadable("hccn.tls", h, "tls", unknown)] if unknown else []
    states = sorted({d.tls_switch for d in known if d.tls_switch is not None})  # known: all of them
    observed = ", ".join(f"{d.device}:{d.tls_switch}" for d in known)
    if len(states) > 1:
        return [Finding("hccn.tls", FAIL, T("hccn.tls.mixed", on=_ids(d.device for d in known if d.tls_switch == 1),
                                             off=_ids(d.device for d in known if d.tls_switch == 0)),
                        observed=observed, expected="the same on every NPU of every node", hint=T("hccn.tls.hint"),
                        fixable=Fixable.MANUAL, commands=_show(h, [d.device for d in known], "-tls", "-g"))]
    expired = [d.device for d in known if d.tls_switch == 1 and 2 in d.tls_expiration]
    near = [d.device for d in known if d.tls_switch == 1 and 1 in d.tls_expiration]
    if expired or near:
        return [Finding("hccn.tls", FAIL if expired else WARN,
                        T("hccn.tls.expired" if expired else "hccn.tls.near", devices=_ids(expired or near)),
                        observed=observed, hint=T("hccn.tls.cert_hint"), fixable=Fixable.MANUAL,
                        commands=_show(h, expired or near, "-tls", "-g"))]
    return [Finding("hccn.tls", OK, T("hccn.tls.ok", state=T("hccn.tls.on" if states == [1] else "hccn.tls.off"),
                                      count=len(known)), observed=observed)]


def check_conf(ctx: Context) -> Iterable[Finding]:
    h = _hccn(ctx)
    if h is None or h.tool is None or ctx.build:
        return []
    container = ctx.facts.host.in_container
    if not h.conf_found:
        return [Finding("hccn.conf", FAIL if container else WARN,
                        T("hccn.conf.missing_container" if container else "hccn.conf.missing", path=h.conf_path),
                        observed=f"{h.conf_path} missing",
                        hint=T("hccn.conf.mount_hint" if container else "hccn.conf.hint"), fixable=Fixable.MANUAL,
                        commands=[cmd("cat", h.conf_path)])]
    if h.conf_bad_lines:
        return [Finding("hccn.conf", WARN, T("hccn.conf.bad_lines", path=h.conf_path, count=len(h.conf_bad_lines)),
                        observed=h.conf_bad_lines[0], evidence=list(h.conf_bad_lines), commands=[cmd("cat", h.conf_path)])]
    return [Finding("hccn.conf", OK, T("hccn.conf.ok", path=h.conf_path, count=len(h.conf)), evidence=[h.conf_path])]


def check_vnic(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None or not _a3(ctx):
        return []
    bad = [d.device for d in h.devices if "vnic" in d.commands and (d.vnic_link != "UP" or not d.vnic_ip)]
    if bad:
        return [Finding("hccn.vnic", FAIL, T("hccn.vnic.bad", devices=_ids(bad)),
                        observed=", ".join(f"{d.device}:{d.vnic_link or '?'}/{d.vnic_ip or '-'}" for d in h.devices if d.device in bad),
                        expected="vnic link status: UP, vnic ipaddr set", hint=T("hccn.vnic.hint"), fixable=Fixable.MANUAL,
                        commands=_show(h, bad, "-vnic", "-g"))]
    asked = [d for d in h.devices if "vnic" in d.commands]
    if not asked:
        return []
    return [Finding("hccn.vnic", OK, T("hccn.vnic.ok", count=len(asked)),
                    observed=", ".join(f"{d.device}:{d.vnic_ip}" for d in asked))]


def check_superpod(ctx: Context) -> Iterable[Finding]:
    h = _ran(ctx)
    if h is None or not _a3(ctx):
        return []
    read = [d for d in h.devices if d.spod]
    asked = [d for d in h.devices if "spod-info" in d.commands]
    if not asked:
        return []
    spod_cmd = [Command(tuple(c.argv)) for c in (d.commands["spod-info"] for d in asked[:1])]
    if len(read) < len(asked):
        return [Finding("hccn.superpod", WARN, T("hccn.superpod.unreadable", devices=_ids(d.device for d in asked if not d.spod)),
                        commands=spod_cmd)]
    pods = sorted({d.spod.get("Super Pod ID") for d in read}, key=str)
    servers = sorted({d.spod.get("Server Index") for d in read}, key=str)
    observed = f"Super Pod ID {','.join(map(str, pods))}, Server Index {','.join(map(str, servers))}"
    if len(pods) > 1 or len(servers) > 1:
        return [Finding("hccn.superpod", FAIL, T("hccn.superpod.split"), observed=observed, hint=T("hccn.superpod.hint"),
                        fixable=Fixable.VENDOR, commands=spod_cmd)]
    return [Finding("hccn.superpod", OK, T("hccn.superpod.ok", pod=pods[0], server=servers[0]), observed=observed)]


def check_ping(ctx: Context) -> Iterable[Finding]:
    h = _hccn(ctx)
    if h is None or not h.pings or ctx.build:
        return []
    failed = [p for p in h.pings if not (p.transmitted and p.received == p.transmitted)]
    if failed:
        return [Finding("hccn.ping", FAIL, T("hccn.ping.failed", count=len(failed), total=len(h.pings)),
                        observed="; ".join(f"{p.device} -> {p.address}{' (' + p.target + ')' if p.target else ''}: "
                                           + (f"{p.received}/{p.transmitted}" if p.transmitted is not None else
                                              (_describe(p.command) if p.command else "?")) for p in failed),
                        hint=T("hccn.ping.hint"), fixable=Fixable.MANUAL,
                        commands=[Command(tuple(p.command.argv)) for p in failed[:MAX_COMMANDS] if p.command])]
    return [Finding("hccn.ping", OK, T("hccn.ping.ok", total=len(h.pings)))]


# -- the control plane -----------------------------------------------------------------------------


def launch_env(ctx: Context) -> Dict[str, str]:
    """The environment the serving processes get: the host's, then the exports of the launch script."""
    return ctx.env


def serve_options(ctx: Context) -> Dict[str, str]:
    m = ctx.facts.mooncake
    if m is None or m.serve_args is None:
        return {}
    return serveargs.parse_command(m.serve_args, launch_env(ctx)).options


def _ifaces(ctx: Context) -> Optional[Dict[str, List[str]]]:
    h = _hccn(ctx)
    return h.interfaces if h is not None else None


def _where(ifaces: Dict[str, List[str]], ip: str) -> Optional[str]:
    return next((name for name, addrs in ifaces.items() if ip in addrs), None)


def _no_interfaces(fid: str, var: str) -> Finding:
    return Finding(fid, INFO, T("hccn.msg.ifaces_unknown", var=var))


def check_hccl_if_ip(ctx: Context) -> Iterable[Finding]:
    value = launch_env(ctx).get("HCCL_IF_IP")
    if not value:
        return []
    ifaces = _ifaces(ctx)
    addr = parse.ipv4(value)
    if addr is None:
        return [Finding("hccn.hccl_if_ip", FAIL, T("hccn.hccl_if_ip.invalid", value=value), observed=value,
                        expected="an IPv4 address of this node", hint=T("hccn.hccl_if_ip.hint"), fixable=Fixable.MANUAL,
                        source=CANN_IFNAME)]
    if ifaces is None:
        return [_no_interfaces("hccn.hccl_if_ip", "HCCL_IF_IP")]
    where = _where(ifaces, addr)
    if where is None:
        return [Finding("hccn.hccl_if_ip", FAIL, T("hccn.hccl_if_ip.not_here", value=addr), observed=addr,
                        expected=", ".join(a for n, addrs in ifaces.items() if n != "lo" for a in addrs if "." in a) or None,
                        hint=T("hccn.hccl_if_ip.hint"), fixable=Fixable.MANUAL, commands=[cmd("ip", "-4", "addr", "show")])]
    return [Finding("hccn.hccl_if_ip", OK, T("hccn.hccl_if_ip.ok", value=addr, iface=where), observed=f"{addr} on {where}")]


# name -> (how the value selects interfaces, citation)
IFNAME_VARS: Tuple[Tuple[str, str], ...] = (
    ("HCCL_SOCKET_IFNAME", "hccl"), ("GLOO_SOCKET_IFNAME", "list"), ("TP_SOCKET_IFNAME", "single"))


def selected_interfaces(var: str, value: str, names: List[str]) -> List[str]:
    """The interfaces a *_SOCKET_IFNAME value picks among ``names``: HCCL's prefix rules, Gloo's
    comma-separated exact names, TensorPipe's single exact name."""
    kind = dict(IFNAME_VARS)[var]
    if kind == "hccl":
        return parse.ifname_matches(value, names)
    wanted = [v.strip() for v in value.split(",")] if kind == "list" else [value.strip()]
    return [w for w in wanted if w in names]


def check_socket_ifname(ctx: Context) -> Iterable[Finding]:
    env = launch_env(ctx)
    present = [(var, env[var]) for var, _ in IFNAME_VARS if env.get(var)]
    if not present:
        return []
    ifaces = _ifaces(ctx)
    if ifaces is None:
        return [_no_interfaces("hccn.socket_ifname", ", ".join(v for v, _ in present))]
    h = _hccn(ctx)
    up = h.interfaces_up if h is not None else {}
    names = sorted(ifaces)
    out: List[Finding] = []
    for var, value in present:
        chosen = selected_interfaces(var, value, names)
        if not chosen:
            out.append(Finding("hccn.socket_ifname", FAIL, T("hccn.socket_ifname.none", var=var, value=value),
                               observed=value, expected=", ".join(n for n in names if n != "lo"),
                               hint=T("hccn.socket_ifname.hint"), fixable=Fixable.MANUAL,
                               commands=[cmd("ip", "-4", "addr", "show")]))
            continue
        first = chosen[0]
        if not [a for a in ifaces.get(first, []) if "." in a]:
            out.append(Finding("hccn.socket_ifname", FAIL, T("hccn.socket_ifname.no_address", var=var, iface=first),
                               observed=first, hint=T("hccn.socket_ifname.hint"), fixable=Fixable.MANUAL,
                               commands=[cmd("ip", "-4", "addr", "show", "dev", first)]))
        elif up.get(first) == "down":
            out.append(Finding("hccn.socket_ifname", FAIL, T("hccn.socket_ifname.down", var=var, iface=first),
                               observed=f"{first}: down", hint=T("hccn.socket_ifname.hint"), fixable=Fixable.MANUAL,
                               commands=[cmd("ip", "link", "show", "dev", first)]))
        else:
            out.append(Finding("hccn.socket_ifname", OK, T("hccn.socket_ifname.ok", var=var, iface=first,
                                                             address=next(a for a in ifaces[first] if "." in a)),
                               observed=f"{var}={value}"))
    if_ip = parse.ipv4(env.get("HCCL_IF_IP"))
    hccl = dict(present).get("HCCL_SOCKET_IFNAME")
    if if_ip and hccl:
        chosen = selected_interfaces("HCCL_SOCKET_IFNAME", hccl, names)
        if chosen and if_ip not in ifaces.get(chosen[0], []):
            out.append(Finding("hccn.socket_ifname", INFO, T("hccn.socket_ifname.if_ip_wins", iface=chosen[0], ip=if_ip),
                               source=CANN_IFNAME))
    return out


def dp_settings(ctx: Context) -> Dict[str, Optional[str]]:
    """The data-parallel master this node's launch names: vLLM's --data-parallel-* options, else the
    VLLM_DP_* variables of the large-scale EP launch scripts."""
    opts, env = serve_options(ctx), launch_env(ctx)
    return {
        "address": opts.get("data-parallel-address") or env.get("VLLM_DP_MASTER_IP"),
        "port": opts.get("data-parallel-rpc-port") or env.get("VLLM_DP_MASTER_PORT"),
        "size": opts.get("data-parallel-size") or opts.get("dp") or env.get("VLLM_DP_SIZE"),
        "size_local": opts.get("data-parallel-size-local") or opts.get("dpl") or env.get("VLLM_DP_SIZE_LOCAL"),
        "start_rank": opts.get("data-parallel-start-rank") or env.get("VLLM_DP_RANK"),
        "headless": opts.get("headless"),
    }


def check_dp_master(ctx: Context) -> Iterable[Finding]:
    dp = dp_settings(ctx)
    address, port = dp["address"], dp["port"]
    if not address and not port:
        return []
    out: List[Finding] = []
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        out.append(Finding("hccn.dp_master", FAIL, T("hccn.dp_master.bad_port", value=port), observed=port,
                           expected="1-65535", fixable=Fixable.MANUAL, source=VLLM_DP))
    addr = parse.ipv4(address) if address else None
    if address and addr is None:
        out.append(Finding("hccn.dp_master", WARN, T("hccn.dp_master.not_ipv4", value=address), observed=address,
                           source=VLLM_DP))
    size, local = dp["size"], dp["size_local"]
    if size and local and size.isdigit() and local.isdigit() and int(local) > int(size):
        out.append(Finding("hccn.dp_master", FAIL, T("hccn.dp_master.local_too_big", size=size, local=local),
                           observed=f"{local} > {size}", fixable=Fixable.MANUAL, source=VLLM_DP))
    master_here = dp["headless"] is None and (dp["start_rank"] in (None, "0"))
    ifaces = _ifaces(ctx)
    if addr and master_here and ifaces is not None and _where(ifaces, addr) is None and not ipaddress.IPv4Address(addr).is_loopback:
        out.append(Finding("hccn.dp_master", FAIL, T("hccn.dp_master.not_here", address=addr), observed=addr,
                           hint=T("hccn.dp_master.hint"), fixable=Fixable.MANUAL, commands=[cmd("ip", "-4", "addr", "show")]))
    if not out:
        out.append(Finding("hccn.dp_master", OK, T("hccn.dp_master.ok", address=address or "?", port=port or "?",
                                                   role=T("hccn.dp_master.role_master" if master_here else "hccn.dp_master.role_follower")),
                           observed=f"{address or '?'}:{port or '?'}"))
    return out


RULES = (
    rule("hccn.tool", check_tool, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.link", check_link, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.net_health", check_net_health, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.ip", check_ip, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.gateway", check_gateway, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.lldp", check_lldp, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.tls", check_tls, f"{PD_COLOCATED}; {PD_MULTI_NODE}"),
    rule("hccn.conf", check_conf, PD_COLOCATED),
    rule("hccn.vnic", check_vnic, f"{LARGE_EP}; {HCCN_TOOL_DOC}"),
    rule("hccn.superpod", check_superpod, LARGE_EP),
    rule("hccn.ping", check_ping, f"{PD_COLOCATED}; {LARGE_EP}"),
    rule("hccn.hccl_if_ip", check_hccl_if_ip, f"{LARGE_EP}; {CANN_IFNAME}"),
    rule("hccn.socket_ifname", check_socket_ifname, f"{LARGE_EP}; {CANN_IFNAME}; {TORCH_GLOO}; {TORCH_TP}"),
    rule("hccn.dp_master", check_dp_master, f"{LARGE_EP}; {VLLM_DP}"),
)
