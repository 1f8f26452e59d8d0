"""Sizes the way vllm-ascend reads ``global_segment_size`` / ``local_buffer_size``.

From v0.12.0rc1 on, ``_parse_global_segment_size`` accepts an int (bytes) or a string matching
``^\\s*([\\d.]+)\\s*(gb|mb|kb|b)?\\s*$`` (case-insensitive, binary units, no unit = bytes);
``"1 GiB"`` and ``"10G"`` are rejected. v0.11.x passed the JSON value to Mooncake as is, so
only an integer works there.
"""
from __future__ import annotations

import math
from doctor.record import record
from typing import Any, Optional
from doctor.lazyre import lazy

UNITS = {"gb": 1024 ** 3, "mb": 1024 ** 2, "kb": 1024, "b": 1}
_PATTERN = lazy(r"^\s*([\d.]+)\s*(gb|mb|kb|b)?\s*$")
GIB = 1024 ** 3


@record(frozen=True)
class Size:
    value: Optional[int]  # bytes, or None when rejected
    error: Optional[str] = None  # the ValueError/TypeError vllm-ascend would raise


def parse_size(value: Any, strings_accepted: bool = True) -> Size:
    if isinstance(value, bool):
        # bool is an int in Python: vllm-ascend would pass True as 1 byte.
        return Size(int(value), None)
    if isinstance(value, int):
        return Size(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # 1e999 in JSON is inf: int() raises, as in vllm-ascend
            return Size(None, f"cannot convert float {value} to integer")
        return Size(int(value))  # int() truncates, as vllm-ascend does
    if not isinstance(value, str):
        return Size(None, f"Unsupported type for global_segment_size: {type(value).__name__}")
    if not strings_accepted:
        return Size(None, f"a string ({value!r}) is not parsed by this vllm-ascend: use an integer number of bytes")
    cleaned = value.strip().lower()
    if not cleaned:
        return Size(None, "global segment size cannot be empty.")
    m = _PATTERN.match(cleaned)
    if not m:
        return Size(None, f"Invalid format: '{value}'")
    try:
        number = float(m.group(1))
    except ValueError:
        return Size(None, f"Invalid numeric value '{m.group(1)}' in: '{value}'")
    total = number * UNITS[m.group(2) or "b"]
    if not math.isfinite(total):
        return Size(None, f"cannot convert float {total} to integer")
    return Size(int(total))


def human(n: Optional[int]) -> str:
    """Binary units, as Mooncake's master prints them (98.23 GB)."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{n} B"
