"""Reaching the nodes of a deployment the way the team already does (ssh, kubectl exec, Ray) to
run the doctor installed there: ``ascend-doctor snapshot`` prints the node's facts as JSON.

Every transport answers one Reply per node, in parallel, each within its own deadline; a node
that does not answer is a Reply with an error, never an exception. Every process goes through
doctor.shell.runtime.proc (own process group, killed on timeout and when the doctor exits).
"""
from __future__ import annotations

import json
import re
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence

from doctor.shell.runtime import proc

MAX_SNAPSHOT = 32 * 1024 * 1024  # a snapshot with many packages is a few hundred KB
MAX_PARALLEL = 16
_HOST = re.compile(r"^(ssh://)?[A-Za-z0-9_.@:\[\]%-]+$")


@dataclass
class Reply:
    node: str
    stdout: str = ""
    error: Optional[str] = None  # why there is no snapshot
    seconds: float = 0.0
    argv: List[str] = field(default_factory=list)


@dataclass
class RemoteSnapshot:
    """The doctor command each node runs, with the snapshot options that name node-side paths."""

    doctor: str = "ascend-doctor"  # --remote-doctor: how the doctor is started there
    python: Optional[str] = None
    serve_args_file: Optional[str] = None
    mooncake_master: Optional[str] = None
    hccn_timeout: Optional[float] = None
    ping_npu: List[str] = field(default_factory=list)

    def argv(self) -> List[str]:
        out = shlex.split(self.doctor) + ["snapshot"]
        if self.python:
            out += ["--python", self.python]
        if self.serve_args_file:
            out += ["--serve-args-file", self.serve_args_file]
        if self.mooncake_master:
            out += ["--mooncake-master", self.mooncake_master]
        if self.hccn_timeout:
            out += ["--hccn-timeout", f"{self.hccn_timeout:g}"]
        for p in self.ping_npu:
            out += ["--ping-npu", p]
        return out


Done = Callable[[Reply], None]
ArgvFor = Callable[[str], Optional[List[str]]]  # node -> the doctor command it runs (None: skip it)
NOT_ASKED = "not asked"


def judge_output(node: str, done: proc.Finished, timeout: float, argv: Sequence[str], not_found_code: int = 127) -> Reply:
    """A node's Reply from the finished transport command."""
    reply = Reply(node=node, stdout=done.stdout, seconds=round(done.duration_s, 2), argv=list(argv))
    last = (done.stderr.strip().splitlines() or [""])[-1][:300]
    if not done.found:
        reply.error = f"{argv[0]}: not found on this machine"
    elif done.error:
        reply.error = f"{argv[0]}: {done.error}"
    elif done.timed_out:
        reply.error = f"no answer within {timeout:g} s"
    elif done.returncode == not_found_code:
        reply.error = f"the doctor is not installed there ({last or 'command not found'}); set --remote-doctor"
    elif not _looks_like_snapshot(done.stdout):
        reply.error = f"exit {done.returncode}: {last or 'no snapshot on stdout'}"
    return reply


def _looks_like_snapshot(text: str) -> bool:
    start = text.find("{")
    if start < 0:
        return False
    try:
        data = json.loads(text[start:])
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "host" in data


def parallel(items: Sequence, work: Callable[[object], Reply], on_done: Optional[Done] = None) -> List[Reply]:
    if not items:
        return []

    def run(item) -> Reply:
        reply = work(item)
        if on_done is not None:
            on_done(reply)
        return reply

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(items))) as pool:
        return list(pool.map(run, items))


# -- ssh --------------------------------------------------------------------------------------------


def check_host(host: str) -> Optional[str]:
    """Why a --ssh host cannot be used (it would be read as an ssh option), or None."""
    if not host or host.startswith("-") or not _HOST.match(host):
        return f"{host!r} is not a host name ([user@]host or ssh://[user@]host[:port])"
    return None


def ssh_argv(host: str, remote: Sequence[str], timeout: float, config: Optional[str] = None,
             options: Sequence[str] = ()) -> List[str]:
    argv = ["ssh", "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, int(min(timeout, 60)))}",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2"]
    if config:
        argv += ["-F", config]
    for option in options:
        argv += ["-o", option]
    # The remote side hands the command to the login shell: one quoted string.
    return argv + [host, shlex.join(list(remote))]


def collect_ssh(hosts: Sequence[str], argv_for: ArgvFor, timeout: float, config: Optional[str] = None,
                options: Sequence[str] = (), on_done: Optional[Done] = None) -> List[Reply]:
    def one(host) -> Reply:
        remote = argv_for(host)
        if remote is None:
            return Reply(node=host, error=NOT_ASKED)
        argv = ssh_argv(host, remote, timeout, config, options)
        done = proc.run(argv, timeout, max_output=MAX_SNAPSHOT)
        reply = judge_output(host, done, timeout, argv)
        if reply.error and done.returncode == 255 and not done.timed_out:
            last = (done.stderr.strip().splitlines() or ["ssh failed"])[-1][:300]
            reply.error = f"ssh: {last}"
        return reply

    return parallel(list(hosts), one, on_done)


# -- kubectl ----------------------------------------------------------------------------------------


@dataclass
class Pod:
    name: str
    node: str = ""
    phase: str = ""


def kubectl_base(namespace: Optional[str], context: Optional[str]) -> List[str]:
    argv = ["kubectl"]
    if context:
        argv += ["--context", context]
    if namespace:
        argv += ["--namespace", namespace]
    return argv


def list_pods(selector: str, namespace: Optional[str], context: Optional[str], timeout: float) -> List[Pod]:
    """The pods the selector names; raises RuntimeError with kubectl's own words when it fails."""
    argv = kubectl_base(namespace, context) + ["get", "pods", "--selector", selector, "--output", "json"]
    done = proc.run(argv, timeout, max_output=MAX_SNAPSHOT)
    if not done.ok:
        why = "timed out" if done.timed_out else (done.error or (done.stderr.strip().splitlines() or ["failed"])[-1])
        raise RuntimeError(f"{shlex.join(argv)}: {why}")
    try:
        items = json.loads(done.stdout).get("items", [])
    except (ValueError, AttributeError, RecursionError) as e:
        raise RuntimeError(f"{shlex.join(argv)}: not a pod list ({e})") from None
    out = []
    for item in items:
        meta, spec, status = item.get("metadata", {}), item.get("spec", {}), item.get("status", {})
        out.append(Pod(name=str(meta.get("name", "?")), node=str(spec.get("nodeName", "")), phase=str(status.get("phase", ""))))
    return out


def collect_kubectl(pods: Sequence[Pod], argv_for: ArgvFor, timeout: float, namespace: Optional[str] = None,
                    context: Optional[str] = None, container: Optional[str] = None,
                    on_done: Optional[Done] = None) -> List[Reply]:
    def one(pod) -> Reply:
        if pod.phase != "Running":
            return Reply(node=pod.name, error=f"pod is {pod.phase or 'not running'}")
        remote = argv_for(pod.name)
        if remote is None:
            return Reply(node=pod.name, error=NOT_ASKED)
        argv = kubectl_base(namespace, context) + ["exec", pod.name]
        if container:
            argv += ["--container", container]
        argv += ["--"] + remote
        done = proc.run(argv, timeout, max_output=MAX_SNAPSHOT)
        # kubectl exec passes the command's exit status through (127: not found in the container)
        return judge_output(pod.name, done, timeout, argv)

    return parallel(list(pods), one, on_done)


def elapsed_since(start: float) -> float:
    return round(time.monotonic() - start, 2)
