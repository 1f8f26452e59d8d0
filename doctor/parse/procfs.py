"""Pure parsers of the /proc and /sys files the tuning layer reads (text in, values out)."""
from __future__ import annotations

import re
from typing import Dict, List, Optional, TypedDict
from doctor.lazyre import lazy

_SIZE = lazy(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(text: Optional[str]) -> Optional[int]:
    """``64m`` / ``65536k`` / ``1g`` / ``1073741824`` -> bytes (tmpfs and docker use powers of 2)."""
    if not text:
        return None
    m = _SIZE.match(text)
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def parse_meminfo(text: str) -> Dict[str, int]:
    """``MemTotal: 1024 kB`` -> {"MemTotal": 1024}; page counts (HugePages_Total) stay counts."""
    out: Dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r"^([\w()]+):\s+(\d+)", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


_LIMITS = {"Max open files": "nofile", "Max locked memory": "memlock"}


def parse_limits(text: str) -> Dict[str, List[Optional[int]]]:
    """/proc/<pid>/limits -> {"nofile": [soft, hard], "memlock": [soft, hard]}; None = unlimited."""
    out: Dict[str, List[Optional[int]]] = {}
    for line in text.splitlines():
        for label, key in _LIMITS.items():
            if not line.startswith(label):
                continue
            words = line[len(label):].split()
            if len(words) < 2:
                continue
            values: List[Optional[int]] = []
            for w in words[:2]:
                values.append(None if w == "unlimited" else int(w) if w.isdigit() else None)
            out[key] = values
    return out


class MountEntry(TypedDict):
    fstype: str
    options: Dict[str, str]  # size=64m -> {"size": "64m"}; flags -> ""
    size_bytes: Optional[int]  # the size= option, when it has one


def parse_mount(text: str, mount_point: str) -> Optional[MountEntry]:
    """The last /proc/mounts entry for ``mount_point`` (later mounts hide earlier ones)."""
    found: Optional[MountEntry] = None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[1].replace("\\040", " ") != mount_point:
            continue
        options: Dict[str, str] = {}
        for opt in parts[3].split(","):
            name, _, value = opt.partition("=")
            options[name] = value
        found = {"fstype": parts[2], "options": options, "size_bytes": parse_size(options.get("size"))}
    return found


def parse_cpulist(text: Optional[str]) -> List[int]:
    """``0-3,8-11`` -> [0, 1, 2, 3, 8, 9, 10, 11]; malformed parts are skipped."""
    out: List[int] = []
    for part in (text or "").strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def thp_choice(text: Optional[str]) -> Optional[str]:
    """``always [madvise] never`` -> ``madvise``."""
    m = re.search(r"\[(\w+)\]", text or "")
    return m.group(1) if m else None


def hypervisor(cpuinfo: str) -> Optional[bool]:
    """True when the CPU flags carry ``hypervisor`` (x86 guests); None when there is no flags
    line to tell (ARM's /proc/cpuinfo lists Features, which do not say)."""
    saw_flags = False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            saw_flags = True
            if "hypervisor" in line.split(":", 1)[-1].split():
                return True
    return False if saw_flags else None


def status_field(status: str, name: str) -> Optional[str]:
    for line in status.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return None


def first_int(text: Optional[str]) -> Optional[int]:
    m = re.match(r"^\s*(-?\d+)", text or "")
    return int(m.group(1)) if m else None
