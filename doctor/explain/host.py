"""Answers combined with what `check` finds on this host (explain --check).

An answer names the check finding that confirms it; some answers list several findings that
tell causes apart ("libatb.so not found" + NNAL not installed vs. installed but not sourced).
The host's verdict decides which one applies, and whether the log's cause is present here at
all (a log copied from another machine is explained, but not confirmed)."""
from __future__ import annotations

from typing import Dict, Iterable, Optional, Sequence

from doctor.explain.answers import Answer, Bi, HostNote
from doctor.findings import FAIL, WARN, Finding

PROBLEM = (FAIL, WARN)


def annotate(answers: Iterable[Answer], findings: Sequence[Finding]) -> None:
    by_id: Dict[str, Finding] = {}
    for f in findings:  # a finding id may be reported more than once: keep the worst
        old = by_id.get(f.id)
        if old is None or (f.status in PROBLEM and old.status not in PROBLEM):
            by_id[f.id] = f
    for a in answers:
        if a.benign:
            continue
        a.host = _note(a, by_id)


def _note(a: Answer, by_id: Dict[str, Finding]) -> Optional[HostNote]:
    for c in a.confirm:  # the first alternative the host shows as a problem decides the cause
        f = by_id.get(c.finding)
        if f is not None and f.status in PROBLEM:
            fix = Bi(c.fix_en, c.fix_zh or c.fix_en) if c.fix_en else None
            return HostNote(c.finding, f.status, True, f.title, Bi(c.cause_en, c.cause_zh), fix)
    if not a.finding:
        return None
    f = by_id.get(a.finding)
    if f is None:
        return HostNote(a.finding, "absent", False)
    return HostNote(a.finding, f.status, f.status in PROBLEM, f.title)
