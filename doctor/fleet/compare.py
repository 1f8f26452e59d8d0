"""Compare the snapshots of several nodes: one table of layers x nodes, and the cross-node findings
of a multi-node or disaggregated deployment. Pure: Facts (and each node's own verdict) in.

What must agree: driver, firmware, CANN, every stack package, Mooncake, the TLS switch, the
Mooncake master/metadata server/protocol, the KV connector, the data-parallel master. What must
differ: NPU addresses and HCCL_IF_IP. What may differ but usually should not: *_SOCKET_IFNAME.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from doctor.facts import Facts, canonical
from doctor.findings import EXIT_FAIL, EXIT_OK, EXIT_WARN, FAIL, INFO, OK, WARN, Finding, Verdict
from doctor.i18n import T

STACK = ("torch", "torch-npu", "torchvision", "torchaudio", "triton-ascend", "transformers", "numpy", "vllm",
         "vllm-ascend")
ROLES = ("kv_producer", "kv_consumer", "kv_both")


@dataclass
class Node:
    name: str
    facts: Optional[Facts] = None  # None: the node did not answer
    error: Optional[str] = None  # why it did not answer
    verdict: Optional[Verdict] = None  # its own check

    @property
    def answered(self) -> bool:
        return self.facts is not None


@dataclass
class Row:
    layer: str
    item: str
    values: Dict[str, Optional[str]]  # node name -> value (None: not present there)
    rule: str = "agree"  # agree (must be equal) / unique (must differ) / show (may differ)

    @property
    def differs(self) -> bool:
        seen = [v for v in self.values.values()]
        return len(set(seen)) > 1

    @property
    def bad(self) -> bool:
        """Whether the row breaks its rule (the cells to highlight)."""
        if self.rule == "unique":
            present = [v for v in self.values.values() if v]
            return len(present) != len(set(present))
        return self.differs


@dataclass
class FleetReport:
    nodes: List[Node]
    rows: List[Row] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)

    def exit_code(self) -> int:
        statuses = {f.status for f in self.findings}
        if FAIL in statuses:
            return EXIT_FAIL
        if WARN in statuses:
            return EXIT_WARN
        return EXIT_OK


# -- what each node says ---------------------------------------------------------------------------


def _json(text: Optional[str]) -> Optional[dict]:
    from doctor.parse import jsontext

    if not text:
        return None
    res = jsontext.parse(text)
    value = res.value if res.ok else res.lenient
    return value if isinstance(value, dict) else None


def launch_env(facts: Facts) -> Dict[str, str]:
    env = dict(facts.env)
    if facts.mooncake is not None:
        env.update(facts.mooncake.serve_env)
    return env


def mooncake_config(facts: Facts) -> Optional[dict]:
    m = facts.mooncake
    return _json(m.config_text) if m is not None and m.config_found else None


def kv_config(facts: Facts) -> Optional[dict]:
    from doctor.parse import serveargs

    m = facts.mooncake
    if m is None or m.serve_args is None:
        return None
    data, _ = serveargs.kv_config(serveargs.parse_command(m.serve_args, launch_env(facts)))
    return data


def dp_settings(facts: Facts) -> Dict[str, Optional[str]]:
    from doctor.parse import serveargs

    m = facts.mooncake
    opts = serveargs.parse_command(m.serve_args, launch_env(facts)).options if m and m.serve_args else {}
    env = launch_env(facts)
    return {
        "address": opts.get("data-parallel-address") or env.get("VLLM_DP_MASTER_IP"),
        "port": opts.get("data-parallel-rpc-port") or env.get("VLLM_DP_MASTER_PORT"),
        "size": opts.get("data-parallel-size") or opts.get("dp") or env.get("VLLM_DP_SIZE"),
        "size_local": opts.get("data-parallel-size-local") or opts.get("dpl") or env.get("VLLM_DP_SIZE_LOCAL"),
        "start_rank": opts.get("data-parallel-start-rank") or env.get("VLLM_DP_RANK"),
        "headless": opts.get("headless"),
    }


def npu_addresses(facts: Facts) -> List[Tuple[int, str]]:
    """(device, address) of every NPU port: the RoCE address, and on A3 the vNIC address."""
    h = facts.hccn
    if h is None:
        return []
    out: List[Tuple[int, str]] = []
    for d in h.devices:
        for addr in (d.ip, d.vnic_ip):
            if addr:
                out.append((d.device, addr))
    return out


def tls_state(facts: Facts) -> Optional[str]:
    h = facts.hccn
    states = sorted({d.tls_switch for d in h.devices if d.tls_switch is not None}) if h else []
    return ",".join(str(s) for s in states) if states else None


def _cfg(key: str) -> Callable[[Facts], Optional[str]]:
    def get(f: Facts) -> Optional[str]:
        c = mooncake_config(f)
        v = c.get(key) if c else None
        return None if v is None else str(v)
    return get


def _kv(key: str) -> Callable[[Facts], Optional[str]]:
    def get(f: Facts) -> Optional[str]:
        c = kv_config(f)
        v = c.get(key) if c else None
        return None if v is None else str(v)
    return get


def _env(var: str) -> Callable[[Facts], Optional[str]]:
    return lambda f: launch_env(f).get(var) or None


def _master_reach(f: Facts) -> Optional[str]:
    m = f.mooncake.master if f.mooncake else None
    if m is None or not m.port:
        return None
    if m.tcp_ok:
        return "reachable"
    return f"unreachable ({'timed out' if m.tcp_timed_out else m.tcp_error or '?'})"


def _dp(f: Facts) -> Optional[str]:
    dp = dp_settings(f)
    return f"{dp['address']}:{dp['port']}" if dp["address"] or dp["port"] else None


def _spod(key: str) -> Callable[[Facts], Optional[str]]:
    def get(f: Facts) -> Optional[str]:
        vals = sorted({d.spod[key] for d in (f.hccn.devices if f.hccn else []) if key in d.spod})
        return ",".join(map(str, vals)) if vals else None
    return get


def _short_list(addrs: List[str]) -> Optional[str]:
    return ", ".join(addrs) if addrs else None


# (layer, item, getter, rule)
ITEMS: Tuple[Tuple[str, str, Callable[[Facts], Optional[str]], str], ...] = (
    ("driver", "driver", lambda f: f.driver.version if f.driver and f.driver.found else None, "agree"),
    ("firmware", "firmware", lambda f: f.firmware.version if f.firmware and f.firmware.found else None, "agree"),
    ("cann", "CANN toolkit", lambda f: f.cann.version if f.cann else None, "agree"),
    ("cann", "CANN ops", lambda f: f.cann.ops_version if f.cann else None, "agree"),
    ("cann", "NNAL", lambda f: f.cann.nnal.version if f.cann else None, "agree"),
    ("python", "python", lambda f: f.python.version if f.python else None, "agree"),
) + tuple((canonical(p).replace("-", "_") if p in ("torch", "torch-npu", "vllm", "vllm-ascend") else "python",
           p, (lambda name: lambda f: f.version_of(name))(p), "agree") for p in STACK) + (
    ("mooncake", "mooncake", lambda f: f.mooncake.version if f.mooncake else None, "agree"),
    ("mooncake", "master_server_address", _cfg("master_server_address"), "agree"),
    ("mooncake", "metadata_server", _cfg("metadata_server"), "agree"),
    ("mooncake", "protocol", _cfg("protocol"), "agree"),
    ("mooncake", "master port from this node", _master_reach, "show"),
    ("mooncake", "kv_connector", _kv("kv_connector"), "agree"),
    ("mooncake", "kv_role", _kv("kv_role"), "show"),
    ("mooncake", "PYTHONHASHSEED", _env("PYTHONHASHSEED"), "agree"),
    ("hccn", "TLS switch", tls_state, "agree"),
    ("hccn", "NPU addresses", lambda f: _short_list([a for _, a in npu_addresses(f)]), "unique"),
    ("hccn", "Super Pod ID", _spod("Super Pod ID"), "show"),
    ("hccn", "HCCL_IF_IP", _env("HCCL_IF_IP"), "unique"),
    ("hccn", "HCCL_SOCKET_IFNAME", _env("HCCL_SOCKET_IFNAME"), "show"),
    ("hccn", "GLOO_SOCKET_IFNAME", _env("GLOO_SOCKET_IFNAME"), "show"),
    ("hccn", "TP_SOCKET_IFNAME", _env("TP_SOCKET_IFNAME"), "show"),
    ("hccn", "data-parallel master", _dp, "agree"),
)
VERSION_LAYERS = ("driver", "firmware", "cann", "python", "torch", "torch_npu", "vllm", "vllm_ascend", "mooncake")
VERSION_ITEMS = {"driver", "firmware", "CANN toolkit", "CANN ops", "NNAL", "python", "mooncake"} | set(STACK)


def table(nodes: List[Node]) -> List[Row]:
    answered = [n for n in nodes if n.facts is not None]
    rows: List[Row] = []
    for layer, item, get, rule in ITEMS:
        values = {n.name: _safe(get, n.facts) for n in answered}
        if any(v is not None for v in values.values()):
            rows.append(Row(layer, item, values, rule))
    return rows


def _safe(get: Callable[[Facts], Optional[str]], facts: Optional[Facts]) -> Optional[str]:
    try:
        return get(facts) if facts is not None else None
    except Exception:  # one odd snapshot must not hide the others' comparison
        return None


# -- cross-node findings ---------------------------------------------------------------------------


def _cells(row: Row) -> str:
    return "; ".join(f"{n}: {v if v is not None else '-'}" for n, v in row.values.items())


def _majority(values: Iterable[Optional[str]]) -> Optional[str]:
    counts = Counter(v for v in values if v is not None).most_common(2)
    if not counts or (len(counts) == 2 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def name_ping_targets(nodes: List[Node]) -> None:
    """Which node holds each address a node pinged (the probe only knows the address)."""
    owner = {addr: n.name for n in nodes if n.facts for _, addr in npu_addresses(n.facts)}
    for n in nodes:
        if n.facts and n.facts.hccn:
            for p in n.facts.hccn.pings:
                p.target = p.target or owner.get(p.address, "")


def node_findings(nodes: List[Node]) -> List[Finding]:
    out: List[Finding] = []
    for n in nodes:
        if n.facts is None:
            out.append(Finding("fleet.node", FAIL, T("fleet.node.no_answer", node=n.name), observed=n.error,
                               hint=T("fleet.node.no_answer_hint")))
        elif n.verdict is not None:
            code = n.verdict.exit_code()
            if code == EXIT_FAIL:
                out.append(Finding("fleet.node", FAIL, T("fleet.node.fails", node=n.name, root=n.verdict.root_cause or "?"),
                                   observed=n.verdict.root_cause,
                                   hint=T("fleet.node.fails_hint", node=n.name)))
            elif code == EXIT_WARN:
                out.append(Finding("fleet.node", WARN, T("fleet.node.warns", node=n.name),
                                   hint=T("fleet.node.fails_hint", node=n.name)))
    return out


def version_findings(rows: List[Row]) -> List[Finding]:
    out: List[Finding] = []
    for row in rows:
        if row.item not in VERSION_ITEMS or not row.differs:
            continue
        out.append(Finding("fleet.versions", FAIL, T("fleet.versions.differ", item=row.item), observed=_cells(row),
                           expected=_majority(row.values.values()), hint=T("fleet.versions.hint", item=row.item)))
    if not out and rows:
        out.append(Finding("fleet.versions", OK, T("fleet.versions.ok")))
    return out


def _row(rows: List[Row], item: str) -> Optional[Row]:
    return next((r for r in rows if r.item == item), None)


def tls_findings(rows: List[Row]) -> List[Finding]:
    row = _row(rows, "TLS switch")
    if row is None:
        return []
    if row.differs or any(v and "," in v for v in row.values.values()):
        return [Finding("fleet.tls", FAIL, T("fleet.tls.differ"), observed=_cells(row), expected="0 everywhere (or 1 everywhere)",
                        hint=T("fleet.tls.hint"))]
    return [Finding("fleet.tls", OK, T("fleet.tls.ok", state=next(iter(row.values.values()))))]


def address_findings(nodes: List[Node], rows: List[Row]) -> List[Finding]:
    out: List[Finding] = []
    holders: Dict[str, List[str]] = {}
    for n in nodes:
        if n.facts:
            for dev, addr in npu_addresses(n.facts):
                holders.setdefault(addr, []).append(f"{n.name}/npu{dev}")
    dups = {a: h for a, h in holders.items() if len(h) > 1}
    if dups:
        out.append(Finding("fleet.npu_ips", FAIL, T("fleet.npu_ips.duplicate", count=len(dups)),
                           observed="; ".join(f"{a}: {', '.join(h)}" for a, h in sorted(dups.items())),
                           hint=T("fleet.npu_ips.hint")))
    elif holders:
        out.append(Finding("fleet.npu_ips", OK, T("fleet.npu_ips.ok", count=len(holders))))
    row = _row(rows, "HCCL_IF_IP")
    if row is not None and row.bad:
        out.append(Finding("fleet.hccl_if_ip", FAIL, T("fleet.hccl_if_ip.same"), observed=_cells(row),
                           hint=T("fleet.hccl_if_ip.hint")))
    for var in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "TP_SOCKET_IFNAME"):
        row = _row(rows, var)
        if row is not None and row.differs:
            out.append(Finding("fleet.socket_ifname", WARN, T("fleet.socket_ifname.differ", var=var), observed=_cells(row),
                               hint=T("fleet.socket_ifname.hint", var=var)))
    return out


def mooncake_findings(nodes: List[Node], rows: List[Row]) -> List[Finding]:
    out: List[Finding] = []
    for item in ("master_server_address", "metadata_server", "protocol"):
        row = _row(rows, item)
        if row is None:
            continue
        present = {k: v for k, v in row.values.items() if v is not None}
        missing = [k for k, v in row.values.items() if v is None]
        if len(set(present.values())) > 1:
            out.append(Finding("fleet.mooncake_config", FAIL, T("fleet.mooncake_config.differ", field=item), observed=_cells(row),
                               expected=_majority(present.values()), hint=T("fleet.mooncake_config.hint", field=item)))
        elif missing and present:
            out.append(Finding("fleet.mooncake_config", WARN, T("fleet.mooncake_config.missing", field=item, nodes=", ".join(missing)),
                               observed=_cells(row), hint=T("fleet.mooncake_config.hint", field=item)))
    if not out and any(_row(rows, i) for i in ("master_server_address", "metadata_server", "protocol")):
        out.append(Finding("fleet.mooncake_config", OK, T("fleet.mooncake_config.ok")))
    reach = _row(rows, "master port from this node")
    if reach is not None:
        bad = {k: v for k, v in reach.values.items() if v is not None and v != "reachable"}
        if bad:
            out.append(Finding("fleet.mooncake_master", FAIL, T("fleet.mooncake_master.unreachable", nodes=", ".join(bad)),
                               observed=_cells(reach), hint=T("fleet.mooncake_master.hint")))
        else:
            out.append(Finding("fleet.mooncake_master", OK, T("fleet.mooncake_master.ok",
                                                                nodes=len([v for v in reach.values.values() if v]))))
    return out


def kv_findings(nodes: List[Node], rows: List[Row]) -> List[Finding]:
    out: List[Finding] = []
    conn = _row(rows, "kv_connector")
    role_row = _row(rows, "kv_role")
    if conn is not None and len({v for v in conn.values.values() if v}) > 1:
        out.append(Finding("fleet.kv_transfer", FAIL, T("fleet.kv_transfer.connectors"), observed=_cells(conn),
                           hint=T("fleet.kv_transfer.connectors_hint")))
    if role_row is not None:
        roles = Counter(v for v in role_row.values.values() if v)
        if roles and set(roles) <= {"kv_both"}:
            pass
        elif roles.get("kv_producer") and roles.get("kv_consumer"):
            if roles.get("kv_both"):
                out.append(Finding("fleet.kv_transfer", WARN, T("fleet.kv_transfer.mixed_both"), observed=_cells(role_row)))
        elif roles:
            lone = "kv_producer" if roles.get("kv_producer") else "kv_consumer"
            other = "kv_consumer" if lone == "kv_producer" else "kv_producer"
            out.append(Finding("fleet.kv_transfer", FAIL, T("fleet.kv_transfer.unpaired", role=lone, other=other),
                               observed=_cells(role_row), hint=T("fleet.kv_transfer.unpaired_hint", other=other)))
        unknown = [r for r in roles if r not in ROLES]
        if unknown:
            out.append(Finding("fleet.kv_transfer", FAIL, T("fleet.kv_transfer.bad_role", roles=", ".join(unknown)),
                               observed=_cells(role_row)))
    if not out and (conn is not None or role_row is not None):
        out.append(Finding("fleet.kv_transfer", OK, T("fleet.kv_transfer.ok")))
    seed = _row(rows, "PYTHONHASHSEED")
    uses_pool = any(kv_config(n.facts) for n in nodes if n.facts) or any(mooncake_config(n.facts) for n in nodes if n.facts)
    if uses_pool and len([n for n in nodes if n.facts]) > 1:
        values = seed.values if seed is not None else {n.name: None for n in nodes if n.facts}
        if len(set(values.values())) > 1 or None in values.values():
            out.append(Finding("fleet.hash_seed", WARN, T("fleet.hash_seed.differ"),
                               observed="; ".join(f"{k}: {v if v is not None else 'unset'}" for k, v in values.items()),
                               expected="the same value everywhere, e.g. 0", hint=T("fleet.hash_seed.hint")))
    return out


def dp_findings(nodes: List[Node]) -> List[Finding]:
    settings = {n.name: dp_settings(n.facts) for n in nodes if n.facts}
    settings = {k: v for k, v in settings.items() if v["address"] or v["port"]}
    if len(settings) < 2:
        return []
    out: List[Finding] = []
    for key in ("address", "port", "size"):
        values = {k: v[key] for k, v in settings.items()}
        if len(set(values.values())) > 1:
            out.append(Finding("fleet.dp", FAIL, T("fleet.dp.differ", field=key),
                               observed="; ".join(f"{k}: {v}" for k, v in values.items()), hint=T("fleet.dp.hint")))
    masters = [k for k, v in settings.items() if v["headless"] is None and v["start_rank"] in (None, "0")]
    if len(masters) != 1:
        out.append(Finding("fleet.dp", FAIL, T("fleet.dp.masters", count=len(masters)),
                           observed=", ".join(masters) or "-", expected="exactly one", hint=T("fleet.dp.hint")))
    starts = [(int(v["start_rank"] or 0), int(v["size_local"] or 1), k) for k, v in settings.items()
              if (v["start_rank"] or "0").isdigit() and (v["size_local"] or "1").isdigit()]
    starts.sort()
    for (s1, l1, k1), (s2, _, k2) in zip(starts, starts[1:]):
        if s1 + l1 > s2:
            out.append(Finding("fleet.dp", FAIL, T("fleet.dp.overlap", a=k1, b=k2), observed=f"{k1}: {s1}+{l1}, {k2}: {s2}",
                               hint=T("fleet.dp.hint")))
    if not out:
        out.append(Finding("fleet.dp", OK, T("fleet.dp.ok", master=masters[0], nodes=len(settings))))
    return out


def superpod_findings(nodes: List[Node], rows: List[Row]) -> List[Finding]:
    out: List[Finding] = []
    row = _row(rows, "Super Pod ID")
    if row is not None and len({v for v in row.values.values() if v}) > 1:
        out.append(Finding("fleet.superpod", WARN, T("fleet.superpod.differ"), observed=_cells(row), hint=T("fleet.superpod.hint")))
    sdids: Dict[int, List[str]] = {}
    for n in nodes:
        for d in (n.facts.hccn.devices if n.facts and n.facts.hccn else []):
            if "SDID" in d.spod:
                sdids.setdefault(d.spod["SDID"], []).append(f"{n.name}/npu{d.device}")
    dups = {k: v for k, v in sdids.items() if len(v) > 1}
    if dups:
        out.append(Finding("fleet.superpod", FAIL, T("fleet.superpod.sdid"),
                           observed="; ".join(f"{k}: {', '.join(v)}" for k, v in dups.items())))
    return out


def ping_findings(nodes: List[Node]) -> List[Finding]:
    pings = [(n.name, p) for n in nodes if n.facts and n.facts.hccn for p in n.facts.hccn.pings]
    if not pings:
        return []
    failed = [(name, p) for name, p in pings if not (p.transmitted and p.received == p.transmitted)]
    if failed:
        return [Finding("fleet.ping", FAIL, T("fleet.ping.failed", count=len(failed), total=len(pings)),
                        observed="; ".join(f"{name}/npu{p.device} -> {p.target or '?'} {p.address}: "
                                           f"{p.received if p.received is not None else '?'}/{p.transmitted if p.transmitted is not None else '?'}"
                                           for name, p in failed[:16]),
                        hint=T("fleet.ping.hint"))]
    return [Finding("fleet.ping", OK, T("fleet.ping.ok", total=len(pings)))]


def compare(nodes: List[Node]) -> FleetReport:
    rows = table(nodes)
    report = FleetReport(nodes=nodes, rows=rows)
    if len(nodes) < 2:
        report.findings.append(Finding("fleet.node", INFO, T("fleet.node.alone")))
    report.findings += node_findings(nodes)
    report.findings += version_findings(rows)
    report.findings += tls_findings(rows)
    report.findings += address_findings(nodes, rows)
    report.findings += mooncake_findings(nodes, rows)
    report.findings += kv_findings(nodes, rows)
    report.findings += dp_findings(nodes)
    report.findings += superpod_findings(nodes, rows)
    report.findings += ping_findings(nodes)
    return report
