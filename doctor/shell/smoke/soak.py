"""Memory samples during an endpoint soak: HBM per chip (npu-smi info) and the server's RSS.

The server is found by the port it listens on (/proc/net/tcp{,6} -> socket inode -> the process
holding it) unless --server-pid names it; its RSS is summed over its process tree, since
`vllm serve` runs its engine in child processes. Servers on other hosts have no RSS here.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Set, Tuple
from urllib.parse import urlparse

from doctor.parse.npusmi import parse_npu_smi
from doctor.shell.host.root import Host

MAX_PROC_FILE = 64 * 1024


def _read(path: str, cap: int = MAX_PROC_FILE) -> Optional[str]:
    try:
        with open(path, "rb") as fh:
            return fh.read(cap).decode("utf-8", "replace")
    except OSError:
        return None


def hbm_per_chip(host: Host, timeout: float = 10.0) -> Dict[str, Tuple[float, float]]:
    """chip name -> (used MiB, total MiB); empty without npu-smi or HBM figures."""
    exe = host.which("npu-smi")
    if not exe:
        return {}
    out = host.run([exe, "info"], timeout=timeout)
    info = parse_npu_smi(out.stdout) if out.returncode == 0 else None
    result: Dict[str, Tuple[float, float]] = {}
    for chip in (info.chips if info else []):
        if chip.hbm_used_mb is not None and chip.hbm_total_mb:
            result[f"hbm.npu{chip.npu}.chip{chip.chip}"] = (float(chip.hbm_used_mb), float(chip.hbm_total_mb))
    return result


def _listening_inodes(port: int) -> List[str]:
    inodes = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        text = _read(table, 4 * 1024 * 1024) or ""
        for line in text.splitlines()[1:]:
            cols = line.split()
            if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[-1], 16) == port:
                inodes.append(cols[9])
    return inodes


def server_pid(url: str) -> Optional[int]:
    """The local process listening on the endpoint's port, if it is on this host."""
    parsed = urlparse(url)
    if parsed.hostname not in ("localhost", "127.0.0.1", "::1", "0.0.0.0") and not _is_local(parsed.hostname or ""):
        return None
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    wanted = {f"socket:[{i}]" for i in _listening_inodes(port)}
    if not wanted:
        return None
    for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
        fd_dir = f"/proc/{pid}/fd"
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(f"{fd_dir}/{fd}") in wanted:
                        return int(pid)
                except OSError:
                    continue
        except OSError:
            continue
    return None


def _is_local(hostname: str) -> bool:
    text = _read("/proc/net/fib_trie", 1024 * 1024) or ""
    return bool(hostname) and re.search(r"\b" + re.escape(hostname) + r"\b", text) is not None


def _children(pid: int) -> List[int]:
    out: List[int] = []
    task_dir = f"/proc/{pid}/task"
    try:
        tasks = os.listdir(task_dir)
    except OSError:
        return out
    for tid in tasks:
        text = _read(f"{task_dir}/{tid}/children") or ""
        out.extend(int(x) for x in text.split() if x.isdigit())
    return out


def rss_mib(pid: int) -> Optional[float]:
    """Resident memory of a process and all its descendants, MiB; None when it is gone."""
    total, stack = 0.0, [pid]
    seen: Set[int] = set()
    found = False
    while stack and len(seen) < 4096:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        status = _read(f"/proc/{p}/status")
        m = re.search(r"^VmRSS:\s+(\d+)\s+kB", status or "", re.MULTILINE)
        if m:
            total += int(m.group(1)) / 1024.0
            found = True
        stack.extend(_children(p))
    return round(total, 1) if found else None


class Sampler:
    """Collects (seconds, value) series for doctor.smoke.soak; call it on a period."""

    def __init__(self, host: Host, pid: Optional[int]) -> None:
        self.host, self.pid = host, pid
        self.series: Dict[str, List[Tuple[float, float]]] = {}
        self.capacity: Dict[str, float] = {}

    def __call__(self, t: float) -> None:
        for name, (used, total) in hbm_per_chip(self.host).items():
            self.series.setdefault(name, []).append((t, used))
            self.capacity[name] = total
        if self.pid:
            rss = rss_mib(self.pid)
            if rss is not None:
                self.series.setdefault("server.rss", []).append((t, rss))
