"""`ascend-doctor explain`: match a log or traceback against the known error signatures.

The matching and rendering are pure functions; :func:`run_explain` is the thin shell that reads
the input, loads the matrix and prints. Signatures live in matrices/signatures.toml.
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from doctor.matrix.model import Signature

LANGS = ("en", "zh")


@dataclass(frozen=True)
class Match:
    id: str
    layer: str
    cause: str
    fix: str
    benign: bool
    finding: Optional[str]
    line: int  # 1-based line number in the log
    text: str  # the matched line, trailing whitespace removed

    def to_json(self) -> Dict[str, object]:
        return {
            "id": self.id,
            "layer": self.layer,
            "cause": self.cause,
            "fix": self.fix,
            "benign": self.benign,
            "finding": self.finding,
            "line": self.line,
            "text": self.text,
        }


def _flags(sig: Signature) -> int:
    # MULTILINE so that ^/$ in `unless` (and in the whole-text prefilter) mean line boundaries.
    return re.MULTILINE | (re.IGNORECASE if sig.ignore_case else 0)


def _line_starts(lines: Sequence[str]) -> List[int]:
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    return starts


def _line_of(starts: Sequence[int], offset: int) -> int:
    """Index of the line that contains ``offset`` in the "\\n"-joined text (binary search)."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


def match_log(text: str, signatures: Iterable[Signature], lang: str = "en") -> List[Match]:
    """Every signature that matches ``text``: one match per signature (its first matching line),
    ordered by line number, then by the signature's position in the matrix.

    ``pattern`` is searched in each line; ``unless`` is searched in the whole text and, when it
    matches, the signature does not fire.
    """
    lines = text.splitlines()
    joined = "\n".join(lines)
    starts = _line_starts(lines)
    found: List[Tuple[int, int, Match]] = []
    for order, sig in enumerate(signatures):
        flags = _flags(sig)
        if sig.unless and re.search(sig.unless, joined, flags):
            continue
        pattern = re.compile(sig.pattern, flags)
        # A per-line match is also a match in the joined text, so one search over the whole
        # text skips most signatures cheaply and tells where the first candidate line is.
        first = pattern.search(joined)
        if first is None:
            continue
        for index in range(_line_of(starts, first.start()), len(lines)):
            if pattern.search(lines[index]):
                found.append((index, order, _make_match(sig, lang, index + 1, lines[index])))
                break
    found.sort(key=lambda item: (item[0], item[1]))
    return [m for _, _, m in found]


def _make_match(sig: Signature, lang: str, line: int, text: str) -> Match:
    zh = lang == "zh"
    return Match(
        id=sig.id,
        layer=sig.layer,
        cause=sig.cause_zh if zh else sig.cause_en,
        fix=sig.fix_zh if zh else sig.fix_en,
        benign=sig.benign,
        finding=sig.finding,
        line=line,
        text=text.rstrip(),
    )


# ---------------------------------------------------------------------------------------------
# rendering

_LABELS = {
    "en": {
        "none": "No known error signature matched.",
        "summary": "{n} known signature(s) matched, {b} of them benign.",
        "line": "line",
        "benign": "benign",
        "cause": "cause",
        "fix": "fix",
        "confirm": "confirm with: ascend-doctor check  (finding {finding})",
    },
    "zh": {
        "none": "未匹配到已知的错误特征。",
        "summary": "匹配到 {n} 个已知特征，其中 {b} 个为无害提示。",
        "line": "行",
        "benign": "无害",
        "cause": "原因",
        "fix": "修复",
        "confirm": "确认方法：ascend-doctor check（检查项 {finding}）",
    },
}

_MAX_SHOWN = 300  # a matched line longer than this is cut in the human output only


def render_matches(matches: Sequence[Match], lang: str = "en", as_json: bool = False) -> str:
    """JSON (``{"matches": [...]}``) or one plain-text block per match."""
    if as_json:
        return json.dumps({"matches": [m.to_json() for m in matches]}, ensure_ascii=False, indent=2)
    labels = _LABELS["zh" if lang == "zh" else "en"]
    if not matches:
        return labels["none"]
    benign = sum(1 for m in matches if m.benign)
    blocks = [labels["summary"].format(n=len(matches), b=benign)]
    for m in matches:
        shown = m.text.strip()
        if len(shown) > _MAX_SHOWN:
            shown = shown[:_MAX_SHOWN] + "..."
        tag = f"  [{labels['benign']}]" if m.benign else ""
        block = [
            f"{labels['line']} {m.line}: {m.id} ({m.layer}){tag}",
            f"  > {shown}",
            f"  {labels['cause']}: {m.cause}",
            f"  {labels['fix']}: {m.fix}",
        ]
        if m.finding:
            block.append("  " + labels["confirm"].format(finding=m.finding))
        blocks.append("\n".join(block))
    return "\n\n".join(blocks)


# ---------------------------------------------------------------------------------------------
# shell


def read_source(source: str) -> str:
    """The log text from a path or ``-`` (stdin), decoded as UTF-8 with replacement.
    Raises OSError when it cannot be read."""
    data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    return data.decode("utf-8", errors="replace")


def _error(message: str) -> None:
    print(f"ascend-doctor: error: {message}", file=sys.stderr)


def _emit(text: str) -> None:
    # A log may hold characters the terminal encoding cannot show; never fail on output.
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:
        sys.stdout.flush()
        sys.stdout.buffer.write((text + "\n").encode("utf-8", errors="replace"))
    sys.stdout.flush()


def run_explain(source: str, lang: Optional[str], as_json: bool, extra_matrix: Sequence[Path] = ()) -> int:
    """Read the log, match it, print the result; return the exit code (0, or 2 for bad input,
    1 when the shipped matrix itself is broken)."""
    from doctor.matrix import MatrixError, load_matrix
    from doctor.i18n import resolve_lang

    lang = resolve_lang(lang, os.environ)
    if lang not in LANGS:
        _error(f"--lang must be one of {', '.join(LANGS)}, not {lang!r}")
        return 2
    try:
        text = read_source(source)
    except OSError as e:
        where = "<stdin>" if source == "-" else source
        _error(f"cannot read {where}: {e.strerror or e}")
        return 2
    try:
        matrix = load_matrix(list(extra_matrix), warn=lambda msg: print(f"ascend-doctor: warning: {msg}", file=sys.stderr))
    except MatrixError as e:
        _error(str(e))
        # A bad --matrix file is bad input; a broken shipped matrix is the doctor's own failure.
        return 2 if any(str(p) == e.path for p in extra_matrix) else 1
    _emit(render_matches(match_log(text, matrix.signatures, lang), lang, as_json))
    return 0
