"""The Ray transport: one task per alive node of the cluster, pinned to it (node affinity, not
soft), running the node's own doctor. Ray is the optional extra ``fleet`` (installed into the doctor's
own environment); its version must be the cluster's, and when it is not Ray's own refusal is turned into one plain line.
"""
from __future__ import annotations

import logging
import re
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from doctor.shell.fleet.transport import NOT_ASKED, ArgvFor, Done, Reply

_MISMATCH = re.compile(
    r"The cluster was started with:\s*Ray:\s*(?P<cray>\S+)\s*Python:\s*(?P<cpy>\S+)\s*"
    r"This process on .*? was started with:\s*Ray:\s*(?P<ray>\S+)\s*Python:\s*(?P<py>\S+)", re.S)


class RayUnavailable(RuntimeError):
    """Ray cannot be used from here; the message says why in one line (key, params)."""

    def __init__(self, key: str, **params):
        super().__init__(key)
        self.key, self.params = key, params


def version_mismatch(message: str) -> Optional[Dict[str, str]]:
    """Ray's "Version mismatch" text as {cluster_ray, cluster_python, ray, python}, or None."""
    m = _MISMATCH.search(message or "")
    if not m:
        return None
    return {"cluster_ray": m.group("cray"), "cluster_python": m.group("cpy"), "ray": m.group("ray"), "python": m.group("py")}


def install_ray(version: Optional[str] = None) -> str:
    """The command that installs Ray into the doctor's own environment: the cluster's version
    when it is known, else the ``fleet`` extra's requirement (a cluster of another version is then
    named by Ray's refusal, and the next hint pins it)."""
    from doctor.program import FLEET_EXTRA, own_pip_install, requirements

    return own_pip_install(f"ray=={version}" if version else requirements(FLEET_EXTRA)[0])


def _import_ray():
    try:
        import ray  # noqa: F401  (the optional extra)
    except ImportError:
        raise RayUnavailable("fleet.ray.missing", install=install_ray()) from None
    return ray


def _reachable(address: str, timeout: float) -> Optional[str]:
    """Why the GCS port of ``host:port`` cannot be reached (ray.init would retry for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return None  # not host:port (ray://..., a name Ray resolves itself): let Ray say
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as e:
        return e.strerror or str(e) or type(e).__name__
    return None


def connect(address: Optional[str], timeout: float = 30.0):
    """ray.init within a total deadline: a TCP check of the GCS port first, then the connect in a
    thread that is given up on (the command ends) when it takes longer than ``timeout``."""
    import threading

    ray = _import_ray()
    target = address or "auto"
    if target != "auto":
        why = _reachable(target, min(timeout, 5.0))
        if why:
            raise RayUnavailable("fleet.ray.connect", address=target, error=why)
    outcome: Dict[str, BaseException] = {}

    def init() -> None:
        try:
            ray.init(address=target, logging_level=logging.ERROR, log_to_driver=False, ignore_reinit_error=True)
        except BaseException as e:  # RuntimeError (versions), ConnectionError (no cluster)
            outcome["error"] = e

    worker = threading.Thread(target=init, name="ray-init", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise RayUnavailable("fleet.ray.connect", address=target, error=f"no answer within {timeout:g} s")
    if "error" in outcome:
        e = outcome["error"]
        versions = version_mismatch(str(e))
        if versions:
            if versions["python"] == versions["cluster_python"]:  # the doctor's environment can take the cluster's Ray
                raise RayUnavailable("fleet.ray.mismatch", address=target, install=install_ray(versions["cluster_ray"]),
                                     **versions)
            raise RayUnavailable("fleet.ray.mismatch_python", address=target, **versions)
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise RayUnavailable("fleet.ray.connect", address=target, error=first)
    return ray


def alive_nodes(ray) -> List[Tuple[str, str]]:
    """(label, node id) of every alive node; the label is its address, made unique when several
    nodes share one (a local test cluster)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    addresses = [n.get("NodeManagerAddress", "?") for n in nodes]
    out = []
    for n, addr in zip(nodes, addresses):
        label = addr if addresses.count(addr) == 1 else f"{addr}-{n['NodeID'][:6]}"
        out.append((label, n["NodeID"]))
    return sorted(out)


def collect_ray(address: Optional[str], argv_for: ArgvFor, timeout: float,
                on_done: Optional[Done] = None, on_nodes: Optional[Callable[[int], None]] = None) -> List[Reply]:
    ray = connect(address, min(timeout, 60.0))
    try:
        return _collect(ray, argv_for, timeout, on_done, on_nodes)
    finally:
        ray.shutdown()


def _collect(ray, argv_for: ArgvFor, timeout: float, on_done: Optional[Done],
             on_nodes: Optional[Callable[[int], None]]) -> List[Reply]:
    from ray import cloudpickle
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from doctor.shell.fleet import ray_task

    # Shipped by value: the node runs its own doctor, it need not import ours.
    cloudpickle.register_pickle_by_value(ray_task)
    task = ray.remote(num_cpus=0, max_retries=0)(ray_task.run_snapshot)
    nodes = alive_nodes(ray)
    if on_nodes:
        on_nodes(len(nodes))
    started = time.monotonic()
    replies: Dict[str, Reply] = {}
    refs = {}
    argvs = {label: argv_for(label) for label, _ in nodes}
    for label, node_id in nodes:
        if argvs[label] is None:
            replies[label] = Reply(node=label, error=NOT_ASKED)
            continue
        pinned = task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False))
        refs[pinned.remote(argvs[label], timeout)] = label
    def read(ref) -> None:
        reply = _reply(ray, refs[ref], ref, timeout, argvs[refs[ref]] or [])
        replies[reply.node] = reply
        if on_done:
            on_done(reply)

    deadline = started + timeout + 10.0  # the task's own timeout, plus scheduling
    pending = drain(ray.wait, list(refs), deadline, read)
    for ref in pending:
        ray.cancel(ref, force=True)
        reply = Reply(node=refs[ref], error=f"no answer within {timeout:g} s", seconds=round(time.monotonic() - started, 2))
        replies[reply.node] = reply
        if on_done:
            on_done(reply)
    return [replies[label] for label, _ in nodes]


def drain(wait: Callable[..., Tuple[list, list]], pending: list, deadline: float, on_ready: Callable[[Any], None],
          clock: Callable[[], float] = time.monotonic) -> list:
    """Hand each finished ref to ``on_ready`` as it finishes (``ray.wait``'s protocol) until the
    deadline, then once more without waiting: a node that answered while the last wait returned is
    read, not cancelled and called silent. Returns the refs still running."""
    while pending:
        left = deadline - clock()
        if left <= 0:
            break
        ready, pending = wait(pending, num_returns=1, timeout=left)
        for ref in ready:
            on_ready(ref)
    if pending:
        ready, pending = wait(pending, num_returns=len(pending), timeout=0)
        for ref in ready:
            on_ready(ref)
    return pending


def _reply(ray, label: str, ref, timeout: float, argv: Sequence[str]) -> Reply:
    from doctor.shell.fleet.transport import judge_output
    from doctor.shell.runtime.proc import Finished

    try:
        out = ray.get(ref, timeout=5)
    except Exception as e:  # the node died, the worker crashed, the task was cancelled
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        return Reply(node=label, error=f"{type(e).__name__}: {first}", argv=list(argv))
    done = Finished(argv=list(argv), returncode=out.get("returncode"), stdout=out.get("stdout", ""),
                    stderr=out.get("stderr", ""), timed_out=bool(out.get("timed_out")), found=True,
                    duration_s=float(out.get("seconds") or 0.0))
    return judge_output(label, done, timeout, argv)
