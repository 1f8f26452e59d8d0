"""Explain's output: a readable report for people, one JSON object for programs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.explain.answers import Answer
from doctor.explain.nodes import Origin
from doctor.findings import cmd
from doctor.i18n import Text, tr
from doctor.parse.logscan import MAX_LINE
from doctor.parse.logtime import format_stamp
from doctor.render import json_text
from doctor.textsafe import clean

JSON_SCHEMA_VERSION = 1
MAX_SHOWN = 300  # a matched line longer than this is cut in the human output only


@dataclass
class FileSummary:
    path: str
    lines: int
    bytes: int
    cut_lines: int = 0
    dropped: int = 0  # hits past the scanner's bounds on what it keeps (counted, not shown)


@dataclass
class Report:
    files: List[FileSummary]
    answers: List[Answer]  # selected, in log order (file, line)
    primary: Optional[Answer]
    origin: Optional[Origin] = None
    notes: List[Text] = field(default_factory=list)  # e.g. the vllm / vllm-ascend pair that fits
    host_exit: Optional[int] = None
    host_root_cause: Optional[str] = None
    # nothing explained: (file, line, text) of the lines that look like the failure, from each log's end
    last_errors: List[Tuple[str, int, str]] = field(default_factory=list)


def to_json(report: Report, lang: str) -> str:
    origin = None
    if report.origin is not None:
        o = report.origin
        origin = {"file": o.file or None, "node": o.node or None, "rank": o.rank, "reason": o.reason,
                  "votes": o.votes, "files_with_waits": o.files_with_waits,
                  "id": o.answer.id if o.answer else None, "line": o.answer.line if o.answer else None,
                  "time": format_stamp(o.answer.time) if o.answer and o.answer.time else None}
    doc: Dict[str, object] = {
        "schema_version": JSON_SCHEMA_VERSION,
        "files": [{"path": f.path, "lines": f.lines, "bytes": f.bytes, "cut_lines": f.cut_lines,
                   "dropped_hits": f.dropped} for f in report.files],
        "primary": ({"id": report.primary.id, "file": report.primary.file, "line": report.primary.line}
                    if report.primary else None),
        "matches": [a.to_json(lang) for a in report.answers],
        "origin": origin,
        "notes": [n.text(lang) for n in report.notes],
        "host": (None if report.host_exit is None else
                 {"exit_code": report.host_exit, "root_cause": report.host_root_cause}),
        "last_errors": [{"file": f, "line": n, "text": t} for f, n, t in report.last_errors],
    }
    return json_text(doc)


def _cut(text: str) -> str:
    """A log line as shown: cut, its control characters escaped (a log is data: ESC c, CR...)."""
    text = text.strip()
    return clean(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "...")


def _where(a: Answer, lang: str, many_files: bool) -> str:
    where = tr("explain.label.line", lang, line=a.line)
    if many_files and a.file:
        where = f"{clean(a.file)}:{a.line}"
    return where


def _block(a: Answer, lang: str, many_files: bool, context: bool) -> List[str]:
    tags = [tr(f"explain.kind.{a.kind}", lang), tr(f"explain.confidence.{a.confidence}", lang)]
    if a.victim:
        tags.append(tr("explain.label.victim", lang))
    if a.count > 1:
        tags.append(tr("explain.label.count", lang, count=a.count))
    out = [f"{_where(a, lang, many_files)}: {a.id} ({a.layer})  [{', '.join(tags)}]"]
    if context:
        out.extend(f"    | {_cut(t)}" for t in a.before)
    out.append(f"  > {_cut(a.text)}")
    if context:
        out.extend(f"    | {_cut(t)}" for t in a.after)
    out.append(f"  {tr('explain.label.cause', lang)}: {clean(a.cause.text(lang))}")  # may quote the log
    out.append(f"  {tr('explain.label.fix', lang)}: {clean(a.fix_text(lang))}")
    for c in a.commands:  # each on a line of its own, runnable as printed; its label above it
        if c.label is not None:
            out.append(f"    # {c.label.text(lang)}")
        out.append(f"    {clean(c.shell())}")
    if a.host is not None:
        h = a.host
        if h.confirmed:
            out.append("  " + tr("explain.host.confirmed", lang, finding=h.finding,
                                 title=h.title.text(lang) if h.title else h.status))
            if h.cause is not None:
                out.append(f"  {tr('explain.label.cause', lang)}: {h.cause.text(lang)}")
            if h.fix is not None:
                out.append(f"  {tr('explain.label.fix', lang)}: {h.fix.text(lang)}")
        elif h.status == "absent":
            out.append("  " + tr("explain.host.absent", lang, finding=h.finding))
        else:
            out.append("  " + tr("explain.host.not_confirmed", lang, finding=h.finding, status=h.status))
    elif a.finding and not a.benign:
        out.append("  " + tr("explain.label.confirm", lang, finding=a.finding))
        out.append("    " + cmd("ascend-doctor", "check").shell())
    return out


def to_text(report: Report, lang: str) -> str:
    many = len(report.files) > 1
    real = [a for a in report.answers if not a.benign]
    benign = [a for a in report.answers if a.benign]
    if not report.answers:
        return "\n\n".join([tr("explain.none", lang)] + _last_errors(report, lang, many) + _bounds_said(report, lang))
    parts: List[str] = []
    if report.origin is not None and report.origin.answer is not None:
        o = report.origin
        parts.append(tr(f"explain.origin.{o.reason}", lang, node=clean(o.node), file=clean(o.file),
                        rank="?" if o.rank is None else o.rank, votes=o.votes,
                        time=format_stamp(o.answer.time) if o.answer and o.answer.time else "?",
                        waits=o.files_with_waits))
    elif report.origin is not None:
        parts.append(tr("explain.origin.rank_only", lang, rank=report.origin.rank, votes=report.origin.votes))
    if report.primary is not None:
        parts.append(tr("explain.primary", lang) + "\n" + "\n".join(_block(report.primary, lang, many, True)))
    others = [a for a in real if a is not report.primary]
    if others:
        parts.append(tr("explain.also", lang, n=len(others)) + "\n\n" +
                     "\n\n".join("\n".join(_block(a, lang, many, False)) for a in others))
    if benign:
        items = tr("sep.list", lang).join(f"{a.id} ({_where(a, lang, many)})" for a in benign)
        parts.append(tr("explain.benign", lang, items=items))
    if not real:
        parts.extend(_last_errors(report, lang, many))
    for note in report.notes:
        parts.append(note.text(lang))
    parts.extend(_bounds_said(report, lang))
    if report.host_exit is not None:
        parts.append(tr("explain.host.summary", lang, code=report.host_exit,
                        root=report.host_root_cause or tr("explain.host.no_root", lang)))
    return "\n\n".join(parts)


def _last_errors(report: Report, lang: str, many: bool) -> List[str]:
    """The lines the logs end with that look like the failure, with what to do next."""
    if not report.last_errors:
        return []
    lines = [tr("explain.none.last_errors", lang)]
    for file, number, text in report.last_errors:
        where = f"{clean(file)}:{number}" if many else tr("explain.label.line", lang, line=number)
        shown = text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"
        lines.append(f"  {where}: {clean(shown)}")
    return ["\n".join(lines), tr("explain.none.next", lang) + "\n    " + cmd("ascend-doctor", "check").shell()]


def _bounds_said(report: Report, lang: str) -> List[str]:
    """A line per file whose lines were cut or whose hits were not all kept."""
    out: List[str] = []
    for f in report.files:
        if f.cut_lines:
            out.append(tr("explain.cut_lines", lang, path=clean(f.path), n=f.cut_lines, kib=MAX_LINE // 1024))
        if f.dropped:
            out.append(tr("explain.dropped_hits", lang, path=clean(f.path), n=f.dropped))
    return out


def summary_counts(answers: Sequence[Answer]) -> Dict[str, int]:
    return {"real": sum(1 for a in answers if not a.benign), "benign": sum(1 for a in answers if a.benign)}
