"""`ascend-doctor explain`: what the lines of one or more logs mean, and where a failure started.

The knowledge and the judgement are pure (doctor/explain/, doctor/parse/logscan.py); this module
wires them to the inputs (doctor/shell/host/logread.py streams them), to `check`'s pipeline for
``--check``, and to the output.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Dict, List, Optional, Sequence, Tuple, Union

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.matrix.model import Signature

LANGS = ("en", "zh")
CONTEXT_LINES = 2


@dataclass(frozen=True)
class Match:
    """One signature that matched (the API of `match_log`, used by smoke and mooncake build)."""

    id: str
    layer: str
    cause: str
    fix: str
    benign: bool
    finding: Optional[str]
    line: int
    text: str

    def to_json(self) -> Dict[str, object]:
        return {"id": self.id, "layer": self.layer, "cause": self.cause, "fix": self.fix,
                "benign": self.benign, "finding": self.finding, "line": self.line, "text": self.text}


def match_log(text: str, signatures: Sequence[Signature], lang: str = "en") -> List[Match]:
    """The signatures that match ``text`` (one per signature, at its first line), in log order.
    Signatures keyed on vendor codes find them through the shipped code forms."""
    from doctor.explain.answers import SIGNATURE
    from doctor.explain.catalog import Catalog
    from doctor.matrix.model import Matrix
    from doctor.parse.logscan import scan_text

    forms: list = []
    if any(s.codes for s in signatures):
        from doctor.matrix import load_matrix

        forms = list(load_matrix(user_overlays=False).code_forms)
    catalog = Catalog.from_matrix(Matrix([], [], [], [], list(signatures), [], code_forms=forms), classifiers=())
    answers = [a for a in catalog.answers(scan_text(text, catalog.compiled, context=0)) if a.kind == SIGNATURE]
    order = {s.id: i for i, s in enumerate(signatures)}
    answers.sort(key=lambda a: (a.line, order.get(a.id, 0)))
    seen = set()
    out = []
    for a in answers:  # a signature with a pattern and codes may fire on both: keep its first line
        if a.id not in seen:
            seen.add(a.id)
            out.append(Match(a.id, a.layer, a.cause.text(lang), a.fix.text(lang), a.benign, a.finding, a.line, a.text))
    return out


# ---------------------------------------------------------------------------------------------
# the command


def _emit(text: str) -> None:
    # A log may hold characters the terminal encoding cannot show; never fail on output.
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:
        sys.stdout.flush()
        sys.stdout.buffer.write((text + "\n").encode("utf-8", errors="replace"))
    sys.stdout.flush()


def _node_name(path: str) -> str:
    if path == "-":
        return "stdin"
    name = Path(path).name
    for suffix in (".log", ".txt", ".out", ".gz"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return name


def run_explain(sources: Union[str, Sequence[str]], lang: Optional[str], as_json: bool,
                extra_matrix: Sequence[Path] = (), *, check: bool = False, root: str = "/",
                python: Optional[str] = None, stdin: Optional[BinaryIO] = None,
                progress: Optional[bool] = None, env: Optional[Dict[str, str]] = None,
                cwd: Optional[str] = None, max_bytes: Optional[int] = None,
                max_seconds: Optional[float] = None) -> int:
    """Explain the logs; return the exit code (0, 2 for bad input or a bound hit, 1 when the
    shipped matrix is broken). ``--check`` adds the findings of `check` on this host to the
    answers. All logs together are read up to ``max_bytes`` and ``max_seconds``."""
    from doctor.explain.answers import primary, select, with_reason
    from doctor.explain.catalog import Catalog, pair_note, vllm_versions
    from doctor.explain.describe import MAX_BYTES as DESCRIPTION_MAX_BYTES
    from doctor.explain.describe import MAX_LINES as DESCRIPTION_MAX_LINES
    from doctor.explain.lasterrors import TAIL_BYTES, last_error_lines, tail_lines
    from doctor.explain.nodes import FileReport, file_ranks, find_origin, stamp_answers, waits
    from doctor.explain.render import FileSummary, Report, to_json, to_text
    from doctor.i18n import resolve_lang, tr
    from doctor.matrix import MatrixError, load_matrix
    from doctor.parse.logscan import LogScanner, ScanTimeout
    from doctor.shell.host.logread import MAX_BYTES, MAX_SECONDS, Budget, LogBoundError, LogInputError, chunks, open_log
    from doctor.shell.host.logread import progress as reading_progress

    paths = [sources] if isinstance(sources, str) else list(sources) or ["-"]
    lang = resolve_lang(lang, os.environ)
    if lang not in LANGS:
        raise UsageError(T("explain.error.bad_lang", langs=", ".join(LANGS), value=repr(lang)))
    if paths.count("-") > 1:
        raise UsageError(tr("explain.error.stdin_twice", lang))
    if paths == ["-"] and stdin is None and sys.stdin is not None and sys.stdin.isatty():
        # Nothing piped in and no file named: say how to use it instead of waiting silently.
        from doctor.program import DOCTOR, spelled_text

        print(tr("explain.usage", lang, doctor=spelled_text(DOCTOR)), file=sys.stderr)
        return 2
    try:
        matrix = load_matrix(list(extra_matrix), warn=lambda msg: print(f"ascend-doctor: warning: {msg}", file=sys.stderr))
    except MatrixError as e:
        # A bad --matrix file is bad input; a broken shipped matrix is the doctor's own failure.
        if any(str(p) == e.path for p in extra_matrix):
            raise UsageError(str(e)) from None
        print(f"ascend-doctor: error: {e}", file=sys.stderr)
        return 1
    catalog = Catalog.from_matrix(matrix)
    from doctor.shell.host import cache

    catalog.cache = cache  # the scan's automaton plan, kept between runs

    inputs = []
    try:
        for path in paths:
            inputs.append(open_log(path, stdin))
    except LogInputError as e:
        for i in inputs:
            i.close()
        where = "<stdin>" if e.path == "-" else e.path
        raise UsageError(tr("explain.error.directory", lang, path=where) if e.directory
                         else tr("explain.error.cannot_read", lang, path=where, reason=e.reason)) from None

    budget = Budget(max_bytes or MAX_BYTES, max_seconds or MAX_SECONDS)
    bar = reading_progress(inputs, lambda name: tr("explain.progress", lang, name=name), enabled=progress)
    read = [0]

    def advance(n: int) -> None:
        read[0] += n
        bar.count(read[0], bar.total)

    reports: List[FileReport] = []
    summaries: List[FileSummary] = []
    versions: List[str] = []
    # what was read, kept while all inputs together stay short enough for the description pass
    pasted: Optional[List[bytes]] = []
    pasted_bytes = 0
    tails: List[Tuple[str, List[Tuple[int, str]]]] = []  # (file, its failure-looking lines) of unexplained logs
    try:
        for log in inputs:
            scanner = LogScanner(catalog.compiled, context=CONTEXT_LINES, deadline=budget.deadline, clock=budget.clock)
            bar.stage(log.label)
            mine: List[bytes] = []
            tail = bytearray()  # the log's last bytes: its failure's lines, if no signature explains it
            try:
                for data in chunks(log, advance, budget):
                    scanner.feed(data)
                    tail += data[-TAIL_BYTES:]
                    if len(tail) > TAIL_BYTES:
                        del tail[:len(tail) - TAIL_BYTES]
                    if pasted is not None:
                        pasted_bytes += len(data)
                        if pasted_bytes > DESCRIPTION_MAX_BYTES:
                            pasted = None  # a log, not a paste
                        else:
                            mine.append(data)
            except LogInputError as e:
                raise UsageError(tr("explain.error.cannot_read", lang, path=log.label, reason=e.reason)) from None
            except ScanTimeout:
                raise UsageError(tr("explain.error.max_seconds", lang, path=log.label, seconds=f"{budget.max_seconds:g}",
                                    more=f"{2 * budget.max_seconds:g}")) from None
            except LogBoundError as e:
                if e.bound == "bytes":
                    raise UsageError(tr("explain.error.max_bytes", lang, path=log.label, size=_size(int(e.limit)),
                                        more=_size_option(2 * int(e.limit)))) from None
                raise UsageError(tr("explain.error.max_seconds", lang, path=log.label, seconds=f"{e.limit:g}",
                                    more=f"{2 * e.limit:g}")) from None
            finally:
                log.close()
            hits = scanner.finish()
            answers = catalog.answers(hits)
            stamp_answers(answers, log.label)
            chosen = select(answers)
            reports.append(FileReport(log.label, _node_name(log.path), chosen, waits(hits), file_ranks(chosen)))
            if pasted is not None:
                pasted.append(b"".join(mine))
            summaries.append(FileSummary(log.label, scanner.lines, scanner.bytes, scanner.cut_lines, scanner.dropped))
            if all(a.benign for a in chosen):  # nothing, or only lines known to be harmless
                tails.append((log.label, last_error_lines(tail_lines(bytes(tail), scanner.lines))))
            versions.extend(vllm_versions(hits))
    finally:
        bar.close()
        for i in inputs:  # the ones an error left unread (closing twice is harmless)
            i.close()

    all_answers = [a for r in reports for a in r.answers]
    origin = find_origin(reports)
    if pasted is not None and sum(r.lines for r in summaries) <= DESCRIPTION_MAX_LINES:
        # a short paste: what its words describe, after (never before) what its log lines say
        for r, raw in zip(reports, pasted):
            described = catalog.describe(raw.decode("utf-8", errors="replace"), r.answers, file=r.path)
            r.answers.extend(described)
            all_answers.extend(described)
    top = with_reason(origin.answer, all_answers) if origin is not None and origin.answer is not None \
        else primary(all_answers)
    report = Report(summaries, all_answers, top, origin)
    if all(a.benign for a in all_answers):  # no failure explained: what the logs end with, to search for or report
        report.last_errors = [(f, n, t) for f, found in tails for n, t in found]

    installed: Dict[str, Optional[str]] = {}
    if check:
        installed = _add_host(report, matrix, root, python, env, cwd)
    if any(a.finding in ("vllm.version", "vllm_ascend.installed") for a in all_answers if not a.benign):
        note = pair_note(matrix, versions[0] if versions else installed.get("vllm"), installed.get("vllm-ascend"))
        if note is not None:
            report.notes.append(note)
    _emit(to_json(report, lang) if as_json else to_text(report, lang))
    return 0


def _size(n: int) -> str:
    """A byte count as people read it: 2048 MiB, 1.5 MiB, 64 KiB, 700 bytes."""
    mib = 1 << 20
    if n % mib == 0:
        return f"{n // mib} MiB"
    if n >= mib:
        return f"{n / mib:.1f} MiB"
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes"


def _size_option(n: int) -> str:
    """A byte count as --max-bytes takes it, rounded up to what the suffix can say."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale:
            return f"{-(-n // scale)}{suffix}"
    return str(n)


def _add_host(report, matrix, root: str, python: Optional[str], env: Optional[Dict[str, str]] = None,
              cwd: Optional[str] = None) -> Dict[str, Optional[str]]:
    """Run check's pipeline in this process and put its findings next to the answers."""
    from doctor.explain.host import annotate
    from doctor.usecases.check import CheckOptions, run_check

    result = run_check(CheckOptions(root=root, python=python, cwd=cwd), env=env, matrix=matrix)
    annotate(report.answers, result.verdict.findings)
    report.host_exit = result.verdict.exit_code()
    report.host_root_cause = result.verdict.root_cause
    return {name: result.facts.version_of(name) for name in ("vllm", "vllm-ascend")}

