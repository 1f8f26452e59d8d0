"""Many logs of one job: where a multi-rank failure started.

When one rank fails, every other rank of the collective logs a timeout (EI0002, 507048, the
ProcessGroupHCCL watchdog) a while later. The cause is the earliest error that is not such a
wait; when every file shows only waits, the rank the others name as the one they waited for or
lost (HCCL's own "remote rank [r]", "crimer rank", "Cluster Exception Location") is where to
look, as Huawei's MindCluster fault diagnosis does with plogs.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from doctor.explain.answers import Answer
from doctor.parse.logscan import Hit
from doctor.parse.logtime import comparable, rank, timestamp, waited_for


@dataclass
class FileReport:
    path: str
    node: str
    answers: List[Answer]
    waited: Counter = field(default_factory=Counter)  # rank -> lines naming it as waited for / lost
    ranks: Counter = field(default_factory=Counter)  # ranks that wrote this file's error lines


@dataclass
class Origin:
    file: str
    node: str
    rank: Optional[int]
    answer: Optional[Answer]
    reason: str  # "earliest_error" | "waited_for" | "earliest_wait"
    votes: int = 0  # lines on other ranks naming this rank
    files_with_waits: int = 0  # files whose errors are only waits


def stamp_answers(answers: Sequence[Answer], file: str) -> None:
    """Fill each answer's file, time and rank from its line (or the lines just above it)."""
    for a in answers:
        a.file = file
        for text in [a.text] + list(reversed(a.before)):
            if a.time is None:
                a.time = timestamp(text)
            if a.rank is None:
                a.rank = rank(text)


def waits(hits: Sequence[Hit]) -> Counter:
    out: Counter = Counter()
    for h in hits:
        if h.matcher == "fact:waited":
            for r in waited_for(h.text):
                out[r] += h.count
    return out


def find_origin(reports: Sequence[FileReport]) -> Optional[Origin]:
    if len(reports) < 2:
        return None
    events = [(r, a) for r in reports for a in r.answers if not a.benign and not a.wrapper]
    if not events:
        return None
    votes: Counter = Counter()
    for r in reports:
        votes.update(r.waited)
    only_waits = sum(1 for r in reports if r.answers and all(a.victim or a.wrapper or a.benign for a in r.answers))
    real = [(r, a) for r, a in events if not a.victim]
    timed = [(r, a) for r, a in real if a.time is not None]
    if timed:
        keys = comparable([a.time for _, a in timed])  # type: ignore[misc]
        r, a = min(zip(timed, keys), key=lambda x: x[1])[0]
        return Origin(r.path, r.node, a.rank, a, "earliest_error", votes.get(a.rank, 0) if a.rank is not None else 0,
                      only_waits)
    if votes:
        suspect, count = votes.most_common(1)[0]
        holder = next((r for r in reports if suspect in r.ranks), None)
        if holder is not None:
            mine = sorted(holder.answers, key=Answer.sort_key)
            first = next((a for a in mine if not a.benign), None)
            return Origin(holder.path, holder.node, suspect, first, "waited_for", count, only_waits)
        return Origin("", "", suspect, None, "waited_for", count, only_waits)
    if real:  # errors without timestamps: the first file's first real error
        r, a = real[0]
        return Origin(r.path, r.node, a.rank, a, "earliest_error", 0, only_waits)
    stamped = [(r, a) for r, a in events if a.time is not None]
    if stamped:
        keys = comparable([a.time for _, a in stamped])  # type: ignore[misc]
        r, a = min(zip(stamped, keys), key=lambda x: x[1])[0]
        return Origin(r.path, r.node, a.rank, a, "earliest_wait", 0, only_waits)
    return None


def file_ranks(answers: Sequence[Answer]) -> Counter:
    return Counter(a.rank for a in answers if a.rank is not None)
