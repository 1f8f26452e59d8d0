"""What the pure Mooncake checks return: a problem (or a confirmation) in English and Chinese.

The rules turn each Issue into a Finding under the topic's id (mooncake.config, ...).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"
SEVERITY = {FAIL: 0, WARN: 1, OK: 2, INFO: 3}  # a confirmation comes before its notes


@dataclass(frozen=True)
class Issue:
    status: str
    en: str
    zh: str
    hint_en: str = ""
    hint_zh: str = ""
    observed: Optional[str] = None
    expected: Optional[str] = None
    evidence: Tuple[str, ...] = ()
    fixable: str = "manual"
    source: Optional[str] = None


def issue(status: str, en: str, zh: str, hint: Tuple[str, str] = ("", ""), **kw) -> Issue:
    return Issue(status, en, zh, hint[0], hint[1], **kw)


def worst_first(issues):
    return sorted(issues, key=lambda i: SEVERITY.get(i.status, 9))
