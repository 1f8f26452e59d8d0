"""The description pass: causes a person describes in words instead of pasting a log.

Users paste issue titles, questions and PR motivations (in English and Chinese: "this version
does not exist", "310p is not supported", vllm uninstalling torch) as often as logs. Such prose is a weak needle for the
log scanner (doctor/parse/logscan.py): its words ("torch", "install", "not supported") are in
every serving log, so each keyword signature would cost the 100 MB scan an exact-text pass. The
description pass is not part of that scan. It runs in plain Python after it, and only on short
inputs, what a person types or pastes (:data:`MAX_BYTES` and :data:`MAX_LINES` over all inputs of
one run): on anything longer it does not run at all, so the scan's budget and speed are untouched.

Each [[prose]] (matrices/descriptions.toml) is a set of keyword groups, each a regular
expression matched without case; all groups must match within ``within`` consecutive lines, and
none of its ``none`` words there. The answer is the cause of an existing [[signature]] (its id,
cause and fix), at low confidence and said to come from the description. A description never
outranks a log answer (:func:`doctor.explain.answers.primary`), and it is dropped when a line it
rests on is explained by the log scan or its answer was already found in the log.

Pure: text in, answers out.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Pattern, Sequence, Tuple

from doctor.explain.answers import DESCRIPTION, LOW, Answer, Bi
from doctor.i18n import tr
from doctor.matrix.model import Description, Signature

# A paste a person typed or copied from a thread: at most 64 KiB and 500 lines over all inputs of
# a run. A log longer than that is a log: the scan reads it, the description pass does not.
MAX_BYTES = 64 * 1024
MAX_LINES = 500


def short_enough(byte_count: int, line_count: int) -> bool:
    """Whether an input of this size is read by the description pass."""
    return byte_count <= MAX_BYTES and line_count <= MAX_LINES


# a description's keyword regexes, compiled when a text is first matched against them: the
# descriptions hold ~200, and most are never reached (a description stops at its first group
# without a match), while compiling them all costs ~0.1 s of a one-line explain
_REGEXES: Dict[str, Pattern[str]] = {}


def _regex(pattern: str) -> Pattern[str]:
    r = _REGEXES.get(pattern)
    if r is None:
        r = _REGEXES[pattern] = re.compile(pattern, re.I)
    return r


@dataclass(frozen=True)
class Compiled:
    """One description, ready to match: its keyword groups and ``none`` words (regexes, compiled
    without case when first needed), its answer's texts resolved."""

    row: Description
    groups: Tuple[str, ...]
    none: Tuple[str, ...]
    id: str
    layer: str
    cause: Bi
    fix: Bi
    source: str
    benign: bool
    finding: Optional[str]


def compile_descriptions(rows: Iterable[Description], signatures: Sequence[Signature]) -> List[Compiled]:
    """The descriptions with their answer's id and texts (from the signature they name, else
    their own); a row naming no known signature and carrying no texts of its own is skipped (the
    loader refuses it in a matrix file)."""
    by_id = {s.id: s for s in signatures}
    out: List[Compiled] = []
    for d in rows:
        sig = by_id.get(d.signature) if d.signature else None
        if sig is not None:
            aid, layer = sig.id, sig.layer
            cause = Bi(d.cause_en or sig.cause_en, d.cause_zh or sig.cause_zh)
            fix = Bi(d.fix_en or sig.fix_en, d.fix_zh or sig.fix_zh)
            benign = sig.benign if d.benign is None else d.benign
            finding = sig.finding
        elif d.answer and d.layer and d.cause_en and d.cause_zh and d.fix_en and d.fix_zh:
            aid, layer, cause, fix = d.answer, d.layer, Bi(d.cause_en, d.cause_zh), Bi(d.fix_en, d.fix_zh)
            benign, finding = bool(d.benign), None
        else:
            continue
        out.append(Compiled(d, tuple(d.words), tuple(d.none), aid, layer, cause, fix, d.source, benign, finding))
    return out


def _line_starts(text: str) -> List[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _lines_of(pattern: Pattern[str], text: str, starts: List[int]) -> List[int]:
    """The 1-based lines on which ``pattern`` matches (a match spanning lines counts on its first)."""
    found: List[int] = []
    for m in pattern.finditer(text):
        line = bisect.bisect_right(starts, m.start())
        if not found or found[-1] != line:
            found.append(line)
    return found


def _window(groups: List[List[int]], within: int) -> Optional[Tuple[int, List[int]]]:
    """The first run of ``within`` lines holding a line of every group: (its first line, the
    lines of each group's first match in it), or None."""
    for start in sorted({line for lines in groups for line in lines}):
        picked = []
        for lines in groups:
            i = bisect.bisect_left(lines, start)
            if i == len(lines) or lines[i] >= start + within:
                break
            picked.append(lines[i])
        else:
            return start, picked
    return None


def describe(text: str, descriptions: Sequence[Compiled], log_answers: Sequence[Answer] = (),
             file: Optional[str] = None) -> List[Answer]:
    """The descriptions ``text`` matches, as answers, one per answer id (its first window).
    ``log_answers`` are what the log scan found in the same text: a line they explain is theirs,
    and an id they already give is not repeated."""
    if not descriptions or not text:
        return []
    starts = _line_starts(text)
    lines = text.split("\n")
    taken = {a.line for a in log_answers if a.file == file}
    known = {a.id for a in log_answers if a.file == file}
    cache: Dict[str, List[int]] = {}

    def where(pattern: str) -> List[int]:
        if pattern not in cache:
            cache[pattern] = _lines_of(_regex(pattern), text, starts)
        return cache[pattern]

    out: Dict[str, Answer] = {}
    for d in descriptions:
        if d.id in known or d.id in out:
            continue
        groups: List[List[int]] = []
        for g in d.groups:  # the first group without a match ends it
            groups.append(where(g))
            if not groups[-1]:
                break
        if not groups or not groups[-1]:
            continue
        found = _window(groups, d.row.within)
        if found is None:
            continue
        first, picked = found
        if taken.intersection(picked):
            continue  # a line the log scan explains is the log's
        span = range(first, min(first + d.row.within, len(lines) + 1))
        if any(_regex(n).search(lines[i - 1]) for n in d.none for i in span):
            continue
        line = min(picked)
        out[d.id] = Answer(
            id=d.id, kind=DESCRIPTION, layer=d.layer,
            cause=Bi(tr("explain.description.cause", "en", cause=d.cause.en),
                     tr("explain.description.cause", "zh", cause=d.cause.zh)),
            fix=d.fix, source=d.source, confidence=LOW, line=line, text=lines[line - 1].rstrip("\r")[:2048],
            after=[lines[i - 1].rstrip("\r")[:2048] for i in span if i > line][:2], benign=d.benign,
            finding=d.finding, file=file)
    return sorted(out.values(), key=lambda a: a.line)
