"""Parse ``npu-smi info`` tables (910B/A2, A3 with two dies per NPU, 310P, first-gen 910).

Column widths change between driver versions, so rows are split on ``|``, never on offsets
(docs/sources/ascend-host-formats.md, npu-smi).
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from doctor.facts import Chip, NpuProcess, NpuSmiInfo
from doctor.lazyre import lazy

_HEADER = lazy(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_PAIR = lazy(r"(\d+)\s*/\s*(\d+)")
_ERRCODE = lazy(r"ret is (-?\d+)")


def _cells(line: str) -> List[str]:
    line = line.strip()
    if not line.startswith("|"):
        return []
    return [c.strip() for c in line.strip("|").split("|")]


def parse_npu_smi(text: str) -> Optional[NpuSmiInfo]:
    """The parsed table, or None when the output is not an ``npu-smi info`` table."""
    info = NpuSmiInfo()
    m = _HEADER.search(text)
    if m:
        info.tool_version, info.driver_version = m.group(1), m.group(2)
    in_processes = False
    pending: Optional[Tuple[re.Match[str], List[str]]] = None  # a chip's first row: (NPU and name, cells)
    saw_table = False
    for line in text.splitlines():
        cells = _cells(line)
        if not cells:
            continue
        first = cells[0]
        if first.startswith("NPU") and len(cells) > 1 and cells[1].startswith("Process id"):
            in_processes = True
            continue
        if first.startswith("NPU") and "Name" in first:
            saw_table = True
            continue
        if first.startswith("Chip"):
            words = first.split()
            if len(words) > 1 and words[1].startswith("Phy"):
                info.layout = "A3"
            elif len(words) > 1 and words[1].startswith("Device"):
                info.layout = "310P"
            continue
        if in_processes:
            proc = _process(cells)
            if proc:
                info.processes.append(proc)
            continue
        row1 = re.match(r"^(\d+)\s+(\S.*)$", first)
        if row1 and len(cells) >= 2 and re.match(r"^[A-Za-z]", cells[1]) and not row1.group(2).strip().isdigit():
            pending = (row1, cells)
            continue
        row2 = re.match(r"^(\d+)(?:\s+(\d+))?$", first)
        if pending and row2:
            info.chips.append(_chip(*pending, cells, row2))
            pending = None
    if not saw_table and not info.chips:
        return None
    if not info.layout:
        info.layout = _layout_from_names(info.chips)
    return info


def _chip(head: re.Match[str], row1: List[str], row2: List[str], m: re.Match[str]) -> Chip:
    npu_s, name = head.groups()
    chip = Chip(npu=int(npu_s), chip=int(m.group(1)), name=name.strip(), health=row1[1].strip())
    if m.group(2) is not None:
        chip.phy_id = int(m.group(2))
    chip.bus_id = row2[1] if len(row2) > 1 else ""
    pairs = _PAIR.findall(row2[2]) if len(row2) > 2 else []
    if pairs:
        chip.memory_total_mb = int(pairs[0][1])
    if len(pairs) > 1:
        chip.hbm_used_mb, chip.hbm_total_mb = int(pairs[1][0]), int(pairs[1][1])
    return chip


def _process(cells: List[str]) -> Optional[NpuProcess]:
    m = re.match(r"^(\d+)\s+(\d+)$", cells[0])
    if not m or len(cells) < 4 or not cells[1].isdigit():
        return None
    return NpuProcess(npu=int(m.group(1)), chip=int(m.group(2)), pid=int(cells[1]), name=cells[2],
                      memory=cells[3])


def _layout_from_names(chips: List[Chip]) -> str:
    for chip in chips:
        name = chip.name.replace(" ", "")
        if re.match(r"^(Ascend)?910B\d$", name):
            return "910B"
        if re.match(r"^(Ascend)?910[AB]?$", name) and (chip.memory_total_mb or 0) > 0:
            return "910"  # first generation: DDR next to HBM, no digit suffix
        if name.startswith("310P"):
            return "310P"
        if "950" in name:
            return "A5"
    return ""


def hardware_class(info: Optional[NpuSmiInfo]) -> Optional[str]:
    """A2 / A3 / 310P / A5, "910" for unsupported first-generation boards, None if unknown."""
    if info is None:
        return None
    return {"910B": "A2", "A3": "A3", "310P": "310P", "A5": "A5", "910": "910"}.get(info.layout)


def error_code(text: str) -> Optional[int]:
    """``dcmi module initialize failed. ret is -8005`` -> -8005."""
    m = _ERRCODE.search(text)
    return int(m.group(1)) if m else None
