"""The lines that look like a log's failure, for a log no signature explains: the last exception
raised, error-level lines, a compiler's ``error:``, a crash. Said as what the log shows, never as
a cause: they tell the user what to search for or to report."""
from __future__ import annotations

import re
from typing import List, Sequence, Tuple

TAIL_BYTES = 64 * 1024  # the end of each log kept while it is read: where a run's failure is
MAX_ERROR_LINES = 3
MAX_TEXT = 1000  # characters of a line kept

_ERROR_LINE = re.compile(
    r"^(?:\[rank\d+\]:\s*)?(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Fault)(?::|$)"  # a raised exception
    r"|\b(?:ERROR|FATAL|CRITICAL)\b"  # a logger's level
    r"|(?:^|:\s*)(?:fatal )?error(?:\[[\w-]+\])?:\s"  # a compiler's or a tool's "error:"
    r"|\b(?:Segmentation fault|core dumped|Aborted|Killed)\b")


def tail_lines(tail: bytes, lines_before_end: int) -> List[Tuple[int, str]]:
    """(number, text) of the complete lines in ``tail``, the last bytes of a log that has
    ``lines_before_end`` newlines in all; a first line the cut began inside is left out."""
    parts = tail.split(b"\n")
    last = lines_before_end + (0 if parts[-1] == b"" else 1)  # the number of the log's last line
    if parts[-1] == b"":
        parts.pop()
    first = last - len(parts) + 1
    out = [(first + i, p.decode("utf-8", errors="replace").rstrip("\r")) for i, p in enumerate(parts)]
    return out[1:] if first > 1 else out


def last_error_lines(lines: Sequence[Tuple[int, str]], limit: int = MAX_ERROR_LINES) -> List[Tuple[int, str]]:
    """The last ``limit`` distinct lines that look like a failure, in log order."""
    found: List[Tuple[int, str]] = []
    seen = set()
    for number, text in reversed(lines):
        line = text.strip()
        if not line or line in seen or not _ERROR_LINE.search(line[:MAX_TEXT]):
            continue
        seen.add(line)
        found.append((number, line[:MAX_TEXT]))
        if len(found) == limit:
            break
    return found[::-1]
