"""Strict JSON, as ``json.load`` reads it, with errors a person can act on.

vllm-ascend reads mooncake.json and ``--kv-transfer-config`` with the strict ``json`` module,
but the official docs show the config with ``# comments`` and ``"1GB" (1024MB/...)`` annotations,
and text copied from chat or Chinese IMEs brings curly quotes and full-width punctuation. So we
report the first error exactly where ``json`` stops (line, column), name its likely cause, and
list every other such spot, then try a lenient reading so the remaining checks still run.
"""
from __future__ import annotations

import json
import re
import sys
from doctor.record import field, record
from typing import Any, List, Optional, Tuple

from doctor.i18n import T, Text

# Characters that look like JSON punctuation but are not (curly quotes, full-width forms).
LOOKALIKES = {
    "\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
    "\uff1a": ":", "\uff0c": ",", "\uff5b": "{", "\uff5d": "}", "\u3000": " ",
}


@record(frozen=True)
class Spot:
    """One place in the text that strict JSON rejects."""

    line: int
    col: int
    kind: str  # comment / annotation / trailing_comma / single_quote / lookalike / python_literal
    text: str

    def where(self) -> str:
        return f"line {self.line}, column {self.col}"


@record
class JsonResult:
    value: Any = None
    ok: bool = False
    error: Optional[str] = None  # json's own message
    line: int = 0
    col: int = 0
    cause: str = ""  # the kind of the spot at the error, or "syntax"
    spots: List[Spot] = field(default_factory=list)
    lenient: Any = None  # the value after removing comments/annotations/trailing commas
    excerpt: str = ""  # the offending line with a caret under the column

    def describe(self) -> Text:
        """``line 4, column 28: text in parentheses after a value; ...`` (the likely cause, else json's message)."""
        key = CAUSES.get(self.cause)
        why = T(key) if key else (self.error or T("jsontext.invalid"))
        return T("jsontext.at", line=self.line, col=self.col, why=why)


# The causes we can name (Spot.kind, "empty", "extra", "unquoted"): their catalogue messages.
CAUSES = {kind: f"jsontext.cause.{kind}" for kind in (
    "comment", "annotation", "trailing_comma", "single_quote", "lookalike", "python_literal", "empty", "extra",
    "unquoted")}


def _line_col(text: str, pos: int) -> Tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def scan(text: str) -> List[Spot]:
    """Every spot outside strings that strict JSON rejects and we can name."""
    spots: List[Spot] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        line, col = _line_col(text, i)
        if ch == "#" or text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            spots.append(Spot(line, col, "comment", text[i:end].strip()))
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            spots.append(Spot(line, col, "comment", text[i:end].strip()))
            i = end
            continue
        if ch == "(":
            depth, j = 0, i
            while j < n:
                if text[j] == "(":
                    depth += 1
                elif text[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                elif text[j] == "\n":
                    break
                j += 1
            spots.append(Spot(line, col, "annotation", text[i:j + 1].strip()))
            i = j + 1
            continue
        if ch == ",":
            j = i + 1
            while j < n:
                if text[j].isspace():
                    j += 1
                elif text[j] == "#" or text.startswith("//", j):
                    nl = text.find("\n", j)
                    j = n if nl < 0 else nl
                elif text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                else:
                    break
            if j < n and text[j] in "}]":
                spots.append(Spot(line, col, "trailing_comma", ","))
            i += 1
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            nl = text.find("\n", i + 1)
            end = end if end >= 0 and (nl < 0 or end < nl) else (nl if nl >= 0 else n)
            spots.append(Spot(line, col, "single_quote", text[i:end + 1]))
            i = end + 1
            continue
        if ch in LOOKALIKES:
            spots.append(Spot(line, col, "lookalike", ch))
            i += 1
            continue
        m = re.match(r"(True|False|None)\b", text[i:i + 6])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            spots.append(Spot(line, col, "python_literal", m.group(1)))
            i += len(m.group(1))
            continue
        i += 1
    return spots


def _excerpt(text: str, line: int, col: int) -> str:
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    return f"{line:>4} | {src}\n     | {' ' * max(col - 1, 0)}^"


def _strip(text: str, spots: List[Spot]) -> str:
    """The text with comments, annotations and trailing commas removed, look-alikes replaced
    and Python literals translated: what the author meant."""
    out = text
    for ch, plain in LOOKALIKES.items():
        out = out.replace(ch, plain)
    result, i, n = [], 0, len(out)
    while i < n:
        ch = out[i]
        if ch == '"':
            j = i + 1
            while j < n and out[j] != '"':
                j += 2 if out[j] == "\\" else 1
            result.append(out[i:j + 1])
            i = j + 1
            continue
        if ch == "#" or out.startswith("//", i):
            nl = out.find("\n", i)
            i = n if nl < 0 else nl
            continue
        if out.startswith("/*", i):
            end = out.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch == "(":
            end = out.find(")", i)
            nl = out.find("\n", i)
            i = (end + 1) if end >= 0 and (nl < 0 or end < nl) else (nl if nl >= 0 else n)
            continue
        if ch == "'":
            end = out.find("'", i + 1)
            if end > i:
                result.append(json.dumps(out[i + 1:end]))
                i = end + 1
                continue
        m = re.match(r"(True|False|None)\b", out[i:i + 6])
        if m and (i == 0 or not (out[i - 1].isalnum() or out[i - 1] == "_")):
            result.append({"True": "true", "False": "false", "None": "null"}[m.group(1)])
            i += len(m.group(1))
            continue
        result.append(ch)
        i += 1
    cleaned = "".join(result)
    return re.sub(r",(\s*[}\]])", r"\1", cleaned)


def parse(text: str) -> JsonResult:
    res = JsonResult()
    if not text.strip():
        res.error, res.cause, res.line, res.col = "empty", "empty", 1, 1
        return res
    try:
        res.value = json.loads(text)
        res.ok = True
        return res
    except RecursionError:  # json.load raises it too: the file cannot be loaded at all
        res.error = f"nested more than {sys.getrecursionlimit()} levels deep"
        res.cause, res.line, res.col = "syntax", 1, 1
        res.excerpt = _excerpt(text, 1, 1)
        return res
    except ValueError as e:
        err = e  # json.JSONDecodeError (or a number past Python's 4,300-digit limit)
    res.error = getattr(err, "msg", str(err))
    pos = getattr(err, "pos", 0) or 0
    res.line, res.col = _line_col(text, pos)
    res.spots = scan(text)
    res.cause = _cause(text, pos, res.error, res.spots)
    if res.cause in ("trailing_comma",):
        comma = next((s for s in res.spots if s.kind == "trailing_comma"
                      and (s.line, s.col) <= (res.line, res.col)), None)
        if comma:
            res.line, res.col = comma.line, comma.col
    res.excerpt = _excerpt(text, res.line, res.col)
    try:
        res.lenient = json.loads(_strip(text, res.spots))
    except (ValueError, RecursionError):
        res.lenient = None
    return res


def _cause(text: str, pos: int, message: str, spots: List[Spot]) -> str:
    here = text[pos:pos + 2]
    line, col = _line_col(text, pos)
    for s in spots:
        if (s.line, s.col) == (line, col):
            return s.kind
    if here[:1] == "#" or here == "//" or here == "/*":
        return "comment"
    if here[:1] == "(":
        return "annotation"
    if here[:1] in ("}", "]") or (message.startswith("Expecting property name") and text[:pos].rstrip().endswith(",")):
        if text[:pos].rstrip().endswith(","):
            return "trailing_comma"
    if message.startswith("Extra data"):
        return "extra"
    if message.startswith(("Expecting property name", "Expecting value")) and re.match(r"[A-Za-z_]", here[:1]):
        return "unquoted"
    # json stops at the first problem; a look-alike on that line is the usual reason.
    nearby = [s for s in spots if s.line == line]
    if nearby:
        return nearby[0].kind
    return "syntax"
