"""Parsers for the small text formats Ascend hosts are full of (docs/sources/ascend-host-formats.md)."""
from __future__ import annotations

from typing import Dict


def parse_equals(text: str) -> Dict[str, str]:
    """``key=value`` files: version.info, *_install.info, ascend_install.info, version.cfg.

    Keys are lower-cased (drivers write ``Version=``, toolkits ``version=``); ``\\r``, blank and
    ``#`` lines and leading indentation are tolerated; one pair of double quotes is stripped;
    the last duplicate wins.
    """
    out: Dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        out[key.strip().lower()] = value
    return out


def parse_colon(text: str) -> Dict[str, str]:
    """``key : value`` files: nnal/atb version.info, ``npu-smi info -t board`` output."""
    out: Dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or ":" not in line:
            continue
        key, _, value = line.partition(":")
        out[key.strip().lower()] = value.strip()
    return out
