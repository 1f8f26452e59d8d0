"""Findings and the verdict: root cause first, "blocked by" for what follows from it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from doctor.layers import order, upstream_of

OK, INFO, WARN, FAIL, SKIP = "ok", "info", "warn", "fail", "skip"
STATUSES = (OK, INFO, WARN, FAIL, SKIP)
FIXABLE = ("auto", "manual", "vendor", "none")

EXIT_OK, EXIT_DOCTOR, EXIT_USAGE, EXIT_FAIL, EXIT_WARN = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class Msg:
    """A message in English and Chinese; ``{name}`` placeholders are filled by ``text()``."""

    en: str
    zh: str

    def text(self, lang: str = "en", **values) -> str:
        template = self.zh if lang == "zh" else self.en
        return template.format(**values) if values else template


def msg(en: str, zh: str) -> Msg:
    return Msg(en, zh)


@dataclass
class Finding:
    id: str
    status: str
    title: Msg
    observed: Optional[str] = None
    expected: Optional[str] = None
    hint: Optional[Msg] = None
    fixable: str = "none"
    source: Optional[str] = None
    evidence: List[str] = field(default_factory=list)
    root_cause: bool = False
    blocked_by: Optional[str] = None

    @property
    def layer(self) -> str:
        return self.id.split(".", 1)[0]

    def to_json(self, lang: str = "en") -> Dict:
        return {
            "id": self.id,
            "layer": self.layer,
            "status": self.status,
            "title": self.title.text(lang),
            "observed": self.observed,
            "expected": self.expected,
            "root_cause": self.root_cause,
            "blocked_by": self.blocked_by,
            "fixable": self.fixable,
            "hint": self.hint.text(lang) if self.hint else None,
            "source": self.source,
            "evidence": list(self.evidence),
        }


@dataclass
class Verdict:
    findings: List[Finding]
    root_cause: Optional[str]

    def counts(self) -> Dict[str, int]:
        out = {s: 0 for s in (OK, WARN, FAIL, SKIP, INFO)}
        for f in self.findings:
            out[f.status] += 1
        return out

    def exit_code(self, fail_on: str = "fail") -> int:
        statuses = {f.status for f in self.findings}
        if FAIL in statuses:
            return EXIT_FAIL
        if WARN in statuses:
            return EXIT_FAIL if fail_on == "warn" else EXIT_WARN
        return EXIT_OK


def judge(findings: List[Finding]) -> Verdict:
    """Order findings by layer (stable within a layer), mark the first failure as the root cause
    and point every other problem at the earliest failure in a layer it rests on."""
    ordered = sorted(findings, key=lambda f: order(f.layer))
    first_fail: Dict[str, Finding] = {}
    for f in ordered:
        if f.status == FAIL and f.layer not in first_fail:
            first_fail[f.layer] = f
    root = next((f for f in ordered if f.status == FAIL), None)
    for f in ordered:
        f.root_cause = f is root
        if f.status not in (FAIL, WARN) or f is root or f.blocked_by:
            continue
        for layer in upstream_of(f.id):
            if layer in first_fail:
                f.blocked_by = first_fail[layer].id
                break
    return Verdict(findings=ordered, root_cause=root.id if root else None)

