"""What the pure Mooncake checks return: a problem (or a confirmation) as catalogue texts.

The rules turn each Issue into a Finding under the topic's id (mooncake.config, ...).
"""
from __future__ import annotations

from doctor.record import record
from typing import Any, Iterable, List, Optional, Tuple

from doctor.findings import FAIL, INFO, OK, WARN, Fixable, Status
from doctor.i18n import Text

__all__ = ["FAIL", "INFO", "OK", "WARN", "Fixable", "Issue", "Status", "issue", "worst_first"]
SEVERITY = {FAIL: 0, WARN: 1, OK: 2, INFO: 3}  # a confirmation comes before its notes


@record(frozen=True)
class Issue:
    status: Status
    title: Text
    hint: Optional[Text] = None
    observed: Optional[str] = None
    expected: Optional[str] = None
    evidence: Tuple[str, ...] = ()
    fixable: Fixable = Fixable.MANUAL
    source: Optional[str] = None


def issue(status: Status, title: Text, hint: Optional[Text] = None, **kw: Any) -> Issue:
    return Issue(status, title, hint, **kw)


def worst_first(issues: Iterable[Issue]) -> List[Issue]:
    return sorted(issues, key=lambda i: SEVERITY.get(i.status, 9))
