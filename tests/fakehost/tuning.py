"""Host files the tuning layer reads, written into a FakeHost's root from the recorded ones in
data/proc (SOURCES.md says where each comes from)."""
from __future__ import annotations

import re
from typing import Dict, Optional, Sequence

from . import FakeHost, fixture

# A2 (8 x 910B4, the npu-smi-910b4-32g.txt record): the PCI bus of each NPU -> NUMA node, on
# a 192-CPU, 8-node Kunpeng host as `npu-smi info -t topo` shows it (NPU0 144-167, NPU1 0-23).
A2_BUS_NODE = {"0000:c1:00.0": 6, "0000:01:00.0": 0, "0000:c2:00.0": 7, "0000:02:00.0": 1,
               "0000:81:00.0": 4, "0000:41:00.0": 2, "0000:82:00.0": 5, "0000:42:00.0": 3}
DOCKER_SHM = "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0"


def limits(nofile=(20000, 20000), memlock=(8388608, 8388608)) -> str:
    """The recorded /proc/self/limits with other values for open files / locked memory."""
    def cell(v):
        return "unlimited" if v is None else str(v)

    text = fixture("proc/limits-dev.txt")
    text = re.sub(r"^(Max open files\s+)\S+(\s+)\S+", lambda m: f"{m.group(1)}{cell(nofile[0]):<21}{cell(nofile[1])}", text, flags=re.M)
    text = re.sub(r"^(Max locked memory\s+)\S+(\s+)\S+", lambda m: f"{m.group(1)}{cell(memlock[0]):<21}{cell(memlock[1])}", text, flags=re.M)
    return text


def meminfo(swap_kb: int = 0, hugepages: int = 0, hugepages_free: Optional[int] = None) -> str:
    text = fixture("proc/meminfo-dev.txt")
    text = re.sub(r"^SwapTotal:\s+\d+", f"SwapTotal:      {swap_kb}", text, flags=re.M)
    text = re.sub(r"^HugePages_Total:\s+\d+", f"HugePages_Total:    {hugepages}", text, flags=re.M)
    free = hugepages if hugepages_free is None else hugepages_free
    return re.sub(r"^HugePages_Free:\s+\d+", f"HugePages_Free:     {free}", text, flags=re.M)


def mounts(shm_line: Optional[str] = None) -> str:
    text = fixture("proc/mounts-dev.txt")
    if shm_line is not None:
        text = "\n".join(shm_line if " /dev/shm " in line else line for line in text.splitlines()) + "\n"
    return text


def tuned_host(f: FakeHost, *, cpus: int = 192, governor: str = "performance", numa_nodes: int = 8,
               thp: str = "always [madvise] never", kernel: str = "5.10.0-182.0.0.95.oe2203sp3.aarch64",
               swappiness: int = 60, numa_balancing: int = 1, allowed: Optional[str] = None,
               nofile=(1048576, 1048576), memlock=(8388608, 8388608), swap_kb: int = 0, hugepages: int = 0,
               hugepages_free: Optional[int] = None, shm: Optional[str] = None, cpuinfo: Optional[str] = None,
               bus_node: Optional[Dict[str, int]] = None, governors: Optional[Sequence[str]] = None) -> FakeHost:
    """An Ascend server's /proc and /sys (an A2 Kunpeng host by default): every setting a knob."""
    f.write("/sys/devices/system/cpu/online", f"0-{cpus - 1}\n")
    for i in range(cpus):
        gov = governors[i % len(governors)] if governors else governor
        f.write(f"/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_governor", gov + "\n")
    per = cpus // numa_nodes
    for n in range(numa_nodes):
        f.write(f"/sys/devices/system/node/node{n}/cpulist", f"{n * per}-{(n + 1) * per - 1}\n")
    for bus, node in (A2_BUS_NODE if bus_node is None else bus_node).items():
        f.write(f"/sys/bus/pci/devices/{bus}/numa_node", f"{node if node < numa_nodes else -1}\n")
    f.write("/sys/kernel/mm/transparent_hugepage/enabled", thp + "\n")
    f.write("/proc/sys/kernel/osrelease", kernel + "\n")
    f.write("/proc/sys/vm/swappiness", f"{swappiness}\n")
    f.write("/proc/sys/kernel/numa_balancing", f"{numa_balancing}\n")
    f.write("/proc/cpuinfo", cpuinfo if cpuinfo is not None else KUNPENG_CPUINFO)
    f.write("/proc/self/status", STATUS.format(allowed=allowed or f"0-{cpus - 1}"))
    f.write("/proc/self/limits", limits(nofile, memlock))
    f.write("/proc/meminfo", meminfo(swap_kb, hugepages, hugepages_free))
    f.write("/proc/mounts", mounts(shm))
    return f


# /proc/cpuinfo of an ARM server lists Features, not x86 flags: whether it is a guest is not
# written there (the rules then say nothing about virtual machines).
KUNPENG_CPUINFO = """processor\t: 0
BogoMIPS\t: 200.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm ssbs
CPU implementer\t: 0x48
CPU architecture: 8
CPU variant\t: 0x1
CPU part\t: 0xd01
CPU revision\t: 0

"""

STATUS = """Name:\tpython3
Umask:\t0022
State:\tR (running)
Tgid:\t4242
Pid:\t4242
Cpus_allowed:\tffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff
Cpus_allowed_list:\t{allowed}
Mems_allowed_list:\t0-7
voluntary_ctxt_switches:\t1
nonvoluntary_ctxt_switches:\t0
"""
