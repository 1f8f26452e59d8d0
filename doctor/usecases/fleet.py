"""fleet compare (saved snapshots) and fleet check (collect them over ssh, kubectl or Ray, then
compare): every node judged on its own, then the nodes against each other."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from doctor.errors import UsageError
from doctor.fleet.compare import FleetReport, Node, compare, name_ping_targets, npu_addresses
from doctor.i18n import T, tr
from doctor.shell.fleet.transport import RemoteSnapshot, Reply


@dataclass
class FleetCheckOptions:
    ssh: Optional[str] = None  # host list: "a,b" or "a b"
    kubectl: Optional[str] = None  # label selector
    ray: Optional[str] = None  # "" = auto, else an address
    namespace: Optional[str] = None
    context: Optional[str] = None
    container: Optional[str] = None
    ssh_config: Optional[str] = None
    ssh_options: List[str] = field(default_factory=list)
    remote: RemoteSnapshot = field(default_factory=RemoteSnapshot)
    timeout: float = 120.0
    save: Optional[str] = None
    ping: bool = False
    matrix: List[str] = field(default_factory=list)
    lang: str = "en"


Progress = Callable[[str, int], Callable[[Reply], None]]  # (title, total) -> per-node callback
MAX_SSH_HOSTS = 256  # fleet check --ssh: the hosts of one run (16 at a time; --ping: every pair)


def judge_nodes(nodes: List[Node], matrix_paths: Sequence[str]) -> None:
    """Each answering node's own check, as `check --from` would give it."""
    from doctor.rules.engine import make_context, run_rules
    from doctor.usecases.check import cached_pip_conflicts, load_matrix_or_exit

    name_ping_targets(nodes)
    answered = [(n, n.facts) for n in nodes if n.facts is not None]
    if not answered:
        return
    matrix = load_matrix_or_exit(list(matrix_paths))
    for n, facts in answered:
        ctx = make_context(facts, matrix)
        ctx.pip_conflicts = cached_pip_conflicts(facts)
        n.verdict = run_rules(ctx)


def run_compare(paths: Sequence[str], matrix: Sequence[str] = ()) -> FleetReport:
    from doctor.usecases.check import load_snapshot

    if not paths:
        raise UsageError(T("fleet.error.no_snapshots"))
    nodes: List[Node] = []
    names: Dict[str, int] = {}
    for p in paths:
        name = Path(p).stem if p != "-" else "stdin"
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:
            name = f"{name}#{names[name]}"
        nodes.append(Node(name=name, facts=load_snapshot(p)))
    judge_nodes(nodes, matrix)
    return compare(nodes)


# -- fleet check ------------------------------------------------------------------------------------


def split_hosts(text: str) -> List[str]:
    return [h for h in re.split(r"[,\s]+", text.strip()) if h]


def validate(opts: FleetCheckOptions) -> None:
    chosen = [n for n, v in (("--ssh", opts.ssh), ("--kubectl", opts.kubectl), ("--ray", opts.ray)) if v is not None]
    if len(chosen) != 1:
        raise UsageError(T("fleet.error.one_transport_got", got=", ".join(chosen)) if chosen
                         else T("fleet.error.one_transport"))
    if opts.timeout <= 0:
        raise UsageError(T("option.error.must_be_positive", option="--timeout"))
    if opts.ssh is not None:
        from doctor.shell.fleet.transport import check_host

        hosts = split_hosts(opts.ssh)
        if not hosts:
            raise UsageError(T("fleet.error.ssh_no_host"))
        if len(hosts) > MAX_SSH_HOSTS:  # each reached, and with --ping each pinging every other's NPUs
            raise UsageError(T("fleet.error.too_many_hosts", n=len(hosts), limit=MAX_SSH_HOSTS))
        for h in hosts:
            why = check_host(h)
            if why:
                raise UsageError(f"--ssh {why}")
        if len(set(hosts)) != len(hosts):
            raise UsageError(T("fleet.error.ssh_twice"))
    if opts.ssh_config and not os.path.isfile(opts.ssh_config):
        raise UsageError(T("option.error.no_file", option="--ssh-config", path=opts.ssh_config))
    if opts.kubectl is not None and not opts.kubectl.strip():
        raise UsageError(T("fleet.error.kubectl_selector"))
    if opts.save and os.path.exists(opts.save) and not os.path.isdir(opts.save):
        raise UsageError(T("option.error.not_dir", option="--save", path=opts.save))


def _collect(opts: FleetCheckOptions, argv_for, progress: Optional[Progress], title: str) -> List[Reply]:
    from doctor.shell.fleet import transport

    if opts.ssh is not None:
        hosts = split_hosts(opts.ssh)
        tick = progress(title, len(hosts)) if progress else None
        return transport.collect_ssh(hosts, argv_for, opts.timeout, opts.ssh_config, opts.ssh_options, tick)
    if opts.kubectl is not None:
        try:
            pods = transport.list_pods(opts.kubectl, opts.namespace, opts.context, min(opts.timeout, 60.0))
        except RuntimeError as e:
            raise UsageError(tr("fleet.kubectl.failed", opts.lang, error=str(e))) from None
        if not pods:
            raise UsageError(tr("fleet.kubectl.no_pods", opts.lang, selector=opts.kubectl))
        tick = progress(title, len(pods)) if progress else None
        return transport.collect_kubectl(pods, argv_for, opts.timeout, opts.namespace, opts.context, opts.container, tick)
    from doctor.shell.fleet import ray_cluster as fleet_ray

    holder: Dict[str, Callable[[Reply], None]] = {}

    def on_nodes(count: int) -> None:
        if progress:
            holder["tick"] = progress(title, count)

    def on_done(reply: Reply) -> None:
        if "tick" in holder:
            holder["tick"](reply)

    try:
        return fleet_ray.collect_ray(opts.ray or None, argv_for, opts.timeout, on_done=on_done, on_nodes=on_nodes)
    except fleet_ray.RayUnavailable as e:
        raise UsageError(tr(e.key, opts.lang, **e.params)) from None


def _nodes(replies: List[Reply]) -> List[Node]:
    from doctor.usecases.check import snapshot_from_text

    nodes = []
    for r in replies:
        if r.error:
            nodes.append(Node(name=r.node, error=r.error))
            continue
        try:
            text = r.stdout[r.stdout.find("{"):]
            nodes.append(Node(name=r.node, facts=snapshot_from_text(text, r.node)))
        except UsageError as e:
            nodes.append(Node(name=r.node, error=str(e)))
    return nodes


def ping_pairs(nodes: List[Node]) -> Dict[str, List[str]]:
    """For each node, ``DEVICE:ADDRESS`` pings: every NPU towards the same-numbered NPU of every
    other node (the guides' `for i in {0..7}; do hccn_tool -i $i -ping -g address X`)."""
    table = {n.name: dict(npu_addresses(n.facts)) for n in nodes if n.facts}
    out: Dict[str, List[str]] = {}
    for name, mine in table.items():
        pairs = []
        for other, theirs in table.items():
            if other == name:
                continue
            pairs += [f"{dev}:{theirs[dev]}" for dev in sorted(mine) if dev in theirs]
        out[name] = pairs
    return out


def _save(directory: str, nodes: List[Node], replies: List[Reply]) -> None:
    from doctor.shell.host.files import write_atomic

    os.makedirs(directory, exist_ok=True)
    by_node = {r.node: r for r in replies}
    for n in nodes:
        if n.facts is None:
            continue
        safe = re.sub(r"[^A-Za-z0-9_.@-]+", "_", n.name).strip("._") or "node"
        text = by_node[n.name].stdout
        where = os.path.join(directory, f"{safe}.json")
        try:
            write_atomic(where, text[text.find("{"):])
        except OSError as e:
            raise UsageError(T("option.error.detail", option="--save", value=where, error=e.strerror or str(e))) from None


def run_fleet_check(opts: FleetCheckOptions, progress: Optional[Progress] = None) -> FleetReport:
    validate(opts)
    replies = _collect(opts, lambda node: opts.remote.argv(), progress, tr("fleet.progress", opts.lang))
    nodes = _nodes(replies)
    if opts.ping:
        pairs = ping_pairs(nodes)
        if any(pairs.values()):
            replies = _ping_round(opts, replies, pairs, progress)
            nodes = _nodes(replies)
    if opts.save:
        _save(opts.save, nodes, replies)
    judge_nodes(nodes, opts.matrix)
    return compare(nodes)


def _ping_round(opts: FleetCheckOptions, replies: List[Reply], pairs: Dict[str, List[str]],
                progress: Optional[Progress]) -> List[Reply]:
    """Snapshot again, each node with its own pings (the addresses were learned in the first
    round); a node that does not answer this time keeps its first snapshot."""
    import dataclasses

    def argv_for(node: str) -> Optional[List[str]]:
        if not pairs.get(node):
            return None
        return dataclasses.replace(opts.remote, ping_npu=list(pairs[node])).argv()

    second = {r.node: r for r in _collect(opts, argv_for, progress, tr("fleet.progress_ping", opts.lang))}
    return [second[r.node] if r.node in second and not second[r.node].error else r for r in replies]
