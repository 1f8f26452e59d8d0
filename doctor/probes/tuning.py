"""Host settings that decide serving speed, and the user's serve command (the tuning layer).

Everything is read under --root through Host, a few small files from /proc and /sys: nothing is
changed and nothing is executed. On an image or a host that does not expose a file the fact stays
empty, and the rules say nothing about it.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from doctor.facts import Facts, MountFact, TuningFacts
from doctor.parse import procfs
from doctor.shell.host.root import Host

MAX_SERVE = 256 * 1024
CPU_DIR = "/sys/devices/system/cpu"
NODE_DIR = "/sys/devices/system/node"


def probe_tuning(host: Host, facts: Facts, serve_args: Optional[str], serve_args_file: Optional[str]) -> TuningFacts:
    t = TuningFacts()

    def step(name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception as e:  # one unreadable part must not hide the others
            t.errors.append(f"{name}: {type(e).__name__}: {e}")

    step("cpu", lambda: _cpu(t, host))
    step("memory", lambda: _memory(t, host))
    step("numa", lambda: _numa(t, host, facts))
    step("process", lambda: _process(t, host))
    step("serve-args", lambda: _serve(t, host, serve_args, serve_args_file))
    step("jemalloc", lambda: _jemalloc(t, host, facts))
    return t


JEMALLOC = "libjemalloc.so.2"


def _jemalloc(t: TuningFacts, host: Host, facts: Facts) -> None:
    """The distribution of the judged root and where its libjemalloc.so.2 is (the tuning guide's
    /usr/lib/ARCH-linux-gnu/ on Debian and Ubuntu, /usr/lib64/ on openEuler and its kin)."""
    from doctor.parse.os_release import YUM, os_family

    text = host.read_text("/etc/os-release", limit=64 * 1024) or host.read_text("/usr/lib/os-release", limit=64 * 1024)
    t.os_family = os_family(text or "")
    p = facts.python
    machine = (p.machine if p is not None and p.machine else None) or facts.host.machine or "x86_64"
    multiarch = [f"/usr/lib/{m}-linux-gnu/{JEMALLOC}" for m in dict.fromkeys((machine, "x86_64", "aarch64"))]
    lib64 = [f"/usr/lib64/{JEMALLOC}"]
    rest = [f"/usr/lib/{JEMALLOC}", f"/usr/local/lib/{JEMALLOC}", f"/usr/local/lib64/{JEMALLOC}"]
    for path in (lib64 + multiarch if t.os_family == YUM else multiarch + lib64) + rest:
        if host.is_file(path):
            t.jemalloc = path
            break
    t.jemalloc_looked = True


def _cpu(t: TuningFacts, host: Host) -> None:
    online = host.read_text(f"{CPU_DIR}/online", limit=4096)
    if online:
        t.cpus_online = len(procfs.parse_cpulist(online))
    # One lookup of the directory, then plain reads: hosts have hundreds of CPUs, and the
    # cpufreq links inside sysfs are relative (they stay inside the root).
    base = host.path(CPU_DIR)
    for name in host.listdir(CPU_DIR):
        if re.match(r"^cpu\d+$", name):
            gov = _small(base / name / "cpufreq" / "scaling_governor")
            if gov:
                t.governors[gov] = t.governors.get(gov, 0) + 1
    cpuinfo = host.read_text("/proc/cpuinfo", limit=64 * 1024)
    if cpuinfo:
        t.hypervisor = procfs.hypervisor(cpuinfo)
    t.thp = procfs.thp_choice(host.read_text("/sys/kernel/mm/transparent_hugepage/enabled", limit=256))
    kernel = host.read_text("/proc/sys/kernel/osrelease", limit=256)
    t.kernel = kernel.strip() if kernel and kernel.strip() else None
    t.swappiness = procfs.first_int(host.read_text("/proc/sys/vm/swappiness", limit=64))
    t.numa_balancing = procfs.first_int(host.read_text("/proc/sys/kernel/numa_balancing", limit=64))


def _small(path) -> Optional[str]:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(256).strip() or None
    except OSError:
        return None


def _memory(t: TuningFacts, host: Host) -> None:
    text = host.read_text("/proc/meminfo", limit=64 * 1024)
    if text:
        keep = ("MemTotal", "MemAvailable", "SwapTotal", "HugePages_Total", "HugePages_Free", "Hugepagesize")
        t.meminfo_kb = {k: v for k, v in procfs.parse_meminfo(text).items() if k in keep}
    mounts = host.read_text("/proc/mounts", limit=512 * 1024)
    shm = procfs.parse_mount(mounts, "/dev/shm") if mounts else None
    if shm is not None:
        t.shm = MountFact(path="/dev/shm", fstype=shm["fstype"], options=dict(shm["options"]),
                          size_bytes=shm["size_bytes"])


def _numa(t: TuningFacts, host: Host, facts: Facts) -> None:
    for name in host.listdir(NODE_DIR):
        m = re.match(r"^node(\d+)$", name)
        if m:
            cpus = host.read_text(f"{NODE_DIR}/{name}/cpulist", limit=4096)
            if cpus is not None:
                t.numa_nodes[m.group(1)] = cpus.strip()
    info = facts.devices.npu_smi_info if facts.devices else None
    for chip in info.chips if info else []:
        bus = chip.bus_id.strip().lower()
        if not re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", bus) or chip.bus_id in t.npu_numa:
            continue
        node = procfs.first_int(host.read_text(f"/sys/bus/pci/devices/{bus}/numa_node", limit=64))
        if node is not None:
            t.npu_numa[chip.bus_id] = node


def _process(t: TuningFacts, host: Host) -> None:
    """This process's cpuset and limits: the shell that runs the doctor is the one that will run
    vllm (a container's cpuset and ulimits apply to both)."""
    status = host.read_text("/proc/self/status", limit=64 * 1024)
    if status:
        t.cpus_allowed = procfs.status_field(status, "Cpus_allowed_list")
    limits = host.read_text("/proc/self/limits", limit=64 * 1024)
    if limits:
        t.limits = procfs.parse_limits(limits)


def _serve(t: TuningFacts, host: Host, serve_args: Optional[str], serve_args_file: Optional[str]) -> None:
    if serve_args is None and not serve_args_file:
        return
    from doctor.parse import serving

    if serve_args is not None:
        text, source = serve_args, "--serve-args"
    else:
        with open(str(serve_args_file), "r", encoding="utf-8", errors="replace") as fh:
            text, source = fh.read(MAX_SERVE), str(serve_args_file)
    t.serve = serving.read_command(text, host.env, source)
