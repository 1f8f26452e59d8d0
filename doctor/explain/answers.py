"""What a matched line means: the Answer record, and how answers are chosen and ordered."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union

from doctor.findings import Command, Msg
from doctor.i18n import Text
from doctor.matrix.model import Confirm
from doctor.parse.logtime import Stamp, format_stamp

SIGNATURE, CODE, CODE_CLASS, CLASSIFIER = "signature", "code", "code_class", "classifier"
DESCRIPTION = "description"  # a user's words, not a log line (doctor/explain/describe.py)
KINDS = (SIGNATURE, CODE, CODE_CLASS, CLASSIFIER, DESCRIPTION)  # most specific first
HIGH, MEDIUM, LOW = "high", "medium", "low"
CONFIDENCES = (HIGH, MEDIUM, LOW)


@dataclass(frozen=True)
class Bi:
    """A text from the matrix, in both languages."""

    en: str
    zh: str

    def text(self, lang: str = "en") -> str:
        return self.zh if lang == "zh" else self.en


# a check finding's title on the host (HostNote.title) may still be smoke's inline Msg
Words = Union[Bi, Msg, Text]


@dataclass
class HostNote:
    """What `check` on this host says about an answer's cause (explain --check)."""

    finding: str
    status: str  # the finding's status on this host: ok, info, warn, fail, skip, absent
    confirmed: bool  # the host shows the problem the answer names
    title: Optional[Words] = None
    cause: Optional[Words] = None  # a cause that only the host can tell (Confirm rows)
    fix: Optional[Words] = None


@dataclass
class Answer:
    id: str
    kind: str
    layer: str
    cause: Words
    fix: Words
    source: str
    confidence: str
    line: int
    text: str
    before: List[str] = field(default_factory=list)
    after: List[str] = field(default_factory=list)
    count: int = 1
    benign: bool = False
    victim: bool = False  # usually the consequence of an error elsewhere (a timeout waiting)
    wrapper: bool = False  # only wraps another error (EZ9999, ERR00100): never the cause
    generic: bool = False  # a code that names only the kind of failure (HCCL_E_PARA): the message after it says why
    finding: Optional[str] = None
    code: Optional[str] = None
    commands: List[Command] = field(default_factory=list)
    confirm: Tuple[Confirm, ...] = ()
    file: Optional[str] = None
    rank: Optional[int] = None
    time: Optional[Stamp] = None
    host: Optional[HostNote] = None

    def sort_key(self) -> Tuple[int, int, int, int]:
        """Most likely cause first: real errors before symptoms (timeouts, wrappers), earlier
        lines before later ones, specific knowledge before generic."""
        return (int(self.victim or self.wrapper), self.line, KINDS.index(self.kind),
                CONFIDENCES.index(self.confidence))

    def fix_text(self, lang: str = "en") -> str:
        """The fix in words, its ``NAME==<pin>`` placeholders filled with the version the log
        pins for NAME (``torch-npu 2.7.1 requires torch==2.7.1, but you have ...``); what the
        log does not say is left for the reader, with where to find it."""
        return fill_placeholders(self.fix.text(lang), [self.text, *self.before, *self.after], lang)

    def to_json(self, lang: str) -> Dict[str, object]:
        host = None
        if self.host is not None:
            h = self.host
            host = {"finding": h.finding, "status": h.status, "confirmed": h.confirmed,
                    "title": h.title.text(lang) if h.title else None,
                    "cause": h.cause.text(lang) if h.cause else None,
                    "fix": h.fix.text(lang) if h.fix else None}
        return {
            "id": self.id,
            "layer": self.layer,
            "cause": self.cause.text(lang),
            "fix": self.fix_text(lang),
            "benign": self.benign,
            "finding": self.finding,
            "line": self.line,
            "text": self.text,
            "kind": self.kind,
            "confidence": self.confidence,
            "code": self.code,
            "victim": self.victim,
            "wrapper": self.wrapper,
            "count": self.count,
            "file": self.file,
            "rank": self.rank,
            "time": format_stamp(self.time) if self.time else None,
            "context": {"before": list(self.before), "after": list(self.after)},
            "commands": [c.to_json(lang) for c in self.commands],
            "source": self.source,
            "host": host,
        }


def select(answers: Sequence[Answer]) -> List[Answer]:
    """Explicit signatures win over generic answers on the same line; one answer per id
    (its first line), and one per finding on a line (two signatures that read the same line as
    the same finding say one cause twice: the first in the catalogue stays); ordered by line,
    most specific first within a line."""
    signature_on: Dict[Tuple[Optional[str], int], Answer] = {}
    for a in answers:
        if a.kind == SIGNATURE:
            signature_on.setdefault((a.file, a.line), a)
    said: Dict[Tuple[Optional[str], int, str, bool], Answer] = {}
    kept: Dict[str, Answer] = {}
    for a in sorted(answers, key=lambda a: (a.line, KINDS.index(a.kind))):
        if a.finding is not None:
            same = said.setdefault((a.file, a.line, a.finding, a.benign), a)
            if same is not a and same.kind == a.kind:
                continue
        if a.kind != SIGNATURE and (a.file, a.line) in signature_on:
            # the vendor code the line carries stays with the signature that explains it
            sig = signature_on[(a.file, a.line)]
            if sig.code is None and a.code is not None:
                sig.code = a.code
            continue
        key = f"{a.file}\0{a.id}"
        if key in kept:
            kept[key].count += a.count
            if kept[key].code is None and a.code is not None:  # the same cause, its code on another line
                kept[key].code = a.code
            continue
        kept[key] = a
    return sorted(kept.values(), key=lambda a: (a.file or "", a.line, KINDS.index(a.kind)))


def primary(answers: Sequence[Answer]) -> Optional[Answer]:
    """The most likely cause among ``answers`` (None when all are benign)."""
    candidates = [a for a in answers if not a.benign]
    if not candidates:
        return None
    # what the log says outranks what a person's words suggest (the description pass)
    candidates = [a for a in candidates if a.kind != DESCRIPTION] or candidates
    real = [a for a in candidates if not a.wrapper] or candidates
    return with_reason(min(real, key=Answer.sort_key), answers)


def with_reason(top: Answer, answers: Sequence[Answer]) -> Answer:
    """``top``, or the signature that gives its reason when ``top`` is a code that names only the
    kind of failure: one error report (torch_npu's "function error ..., error code is N", its
    ERRxxxxx line, then CANN's message with the reason) is a run of adjacent answered lines of one
    file, and the first real signature below ``top`` in it knows more than the code's table."""
    if not top.generic:
        return top
    lines = {a.line for a in answers if a.file == top.file}
    line = top.line
    while line + 1 in lines:
        line += 1
        for a in answers:
            if a.file == top.file and a.line == line and a.kind == SIGNATURE and not (a.benign or a.victim or a.wrapper):
                return a
    return top


_PINNED = re.compile(r"(?<![\w.-])([A-Za-z][\w.-]*)==<[^<>\s`]+>")


def fill_placeholders(text: str, log: Sequence[str], lang: str) -> str:
    from doctor.i18n import tr

    said = "\n".join(log)

    def pin(m: "re.Match[str]") -> str:
        name = re.escape(m.group(1)).replace("\\-", "[-_]").replace("_", "[-_]")
        found = re.search(rf"(?<![\w-]){name}\s*==\s*([0-9][\w.+!]*)", said, re.I)
        return f"{m.group(1)}=={found.group(1)}" if found else m.group(0)

    out = _PINNED.sub(pin, text)
    if _PINNED.search(out):  # a pin the log does not name
        out += tr("explain.placeholder", lang)
    return out
