"""``fix --tuning-patch``: the tuning findings' edits applied to the user's launch script, as a
unified diff the user reviews and applies (``patch -p1``). Pure: text and edits in, text out.

Exports go right above the ``vllm serve`` command (replacing an earlier export of the same
variable); flags are changed where they stand, or added on a line of their own after the first
line of the command (a one-line command gets them at its end).
"""
from __future__ import annotations

import difflib
import re
import shlex
from typing import Iterable, List, Optional, Sequence, Tuple

from doctor.findings import FAIL, INFO, WARN, Edit, Finding

_COMMAND = re.compile(r"(^|[\s/;&|])vllm\s+serve\b|vllm\.entrypoints\.")


class PatchError(ValueError):
    pass


def edits_of(findings: Iterable[Finding]) -> List[Tuple[Edit, str]]:
    """(edit, finding id) for every tuning finding that asks for one, first one per target."""
    out: List[Tuple[Edit, str]] = []
    seen = set()
    for f in findings:
        if f.layer != "tuning" or f.status not in (FAIL, WARN, INFO):
            continue
        for e in f.edits:
            key = (e.action in ("export", "unset"), e.name)
            if key not in seen:
                seen.add(key)
                out.append((e, f.id))
    return out


def _shell_value(value: str) -> str:
    if shlex.quote(value) == value:
        return value
    if "$(" in value or "${" in value:  # keep the expansion the value relies on
        return '"' + value.replace('"', '\\"') + '"'
    return shlex.quote(value)


def _command_span(lines: List[str]) -> Tuple[int, int]:
    """[start, end] line indices of the vllm serve command (backslash continuations included)."""
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#") or not _COMMAND.search(line):
            continue
        end = i
        while lines[end].rstrip("\n").rstrip().endswith("\\") and end + 1 < len(lines):
            end += 1
        return i, end
    raise PatchError("no `vllm serve` command in the script")


def _assignment(name: str) -> re.Pattern:
    return re.compile(r"^\s*(?:export\s+)?" + re.escape(name) + r"=")


def _inline(name: str) -> re.Pattern:
    return re.compile(r"(?<!\S)" + re.escape(name) + r"=(?:\"[^\"]*\"|'[^']*'|\S*)\s*")


def _flag(name: str) -> re.Pattern:
    names = "|".join(re.escape(n) for n in {name, name.replace("-", "_")})
    return re.compile(r"(?<!\S)--(?:" + names + r")(?:=(?:\"[^\"]*\"|'[^']*'|\S+)|[ \t]+(?!-)(?:\"[^\"]*\"|'[^']*'|[^\s\\]+))?(?=\s|$)")


def _newline(lines: List[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    nl = _newline(lines)
    for e in edits:
        start, end = _command_span(lines)
        if e.action == "export":
            _export(lines, start, e.name, e.value or "", nl)
        elif e.action == "unset":
            _unset(lines, start, e.name, nl)
        elif e.action == "flag":
            _set_flag(lines, start, end, e.name, e.value, nl)
        elif e.action == "drop":
            _drop_flag(lines, start, end, e.name)
        else:
            raise PatchError(f"unknown edit {e.action}")
    return "".join(lines)


def _export(lines: List[str], start: int, name: str, value: str, nl: str) -> None:
    new = f"export {name}={_shell_value(value)}{nl}"
    inline = _inline(name)
    if inline.search(lines[start].split("vllm", 1)[0]):
        head, tail = lines[start].split("vllm", 1)
        lines[start] = inline.sub(f"{name}={_shell_value(value)} ", head, count=1) + "vllm" + tail
        return
    pattern = _assignment(name)
    hits = [i for i in range(start) if pattern.match(lines[i])]
    if hits:
        lines[hits[-1]] = new
    else:
        lines.insert(start, new)


def _unset(lines: List[str], start: int, name: str, nl: str) -> None:
    pattern = _assignment(name)
    hits = [i for i in range(start) if pattern.match(lines[i])]
    head, sep, tail = lines[start].partition("vllm")
    inline = _inline(name)
    removed = False
    if sep and inline.search(head):
        lines[start] = inline.sub("", head, count=1) + sep + tail
        removed = True
    for i in reversed(hits):
        del lines[i]
        removed = True
        start -= 1
    if not removed:  # it comes from the environment the script runs in
        lines.insert(start, f"unset {name}{nl}")


def _set_flag(lines: List[str], start: int, end: int, name: str, value: Optional[str], nl: str) -> None:
    pattern = _flag(name)
    rendered = f"--{name}" + (f" {_shell_value(value)}" if value is not None else "")
    for i in range(start, end + 1):
        if pattern.search(lines[i]):
            lines[i] = pattern.sub(lambda m: rendered, lines[i], count=1)
            return
    if end > start:  # a multi-line command: a line of its own, indented like the next one
        following = lines[start + 1]
        indent = following[: len(following) - len(following.lstrip())]
        lines.insert(start + 1, f"{indent}{rendered} \\{nl}")
    else:
        body = lines[start].rstrip("\r\n")
        lines[start] = f"{body.rstrip()} {rendered}{nl}"


def _drop_flag(lines: List[str], start: int, end: int, name: str) -> None:
    pattern = _flag(name)
    for i in range(start, end + 1):
        if not pattern.search(lines[i]):
            continue
        line = pattern.sub("", lines[i], count=1)
        body = line.rstrip("\r\n")
        if body.strip() in ("", "\\"):
            del lines[i]
            if i == end and i > start:  # the command ended on that line: end it one line earlier
                prev = lines[i - 1].rstrip("\r\n").rstrip()
                if prev.endswith("\\"):
                    lines[i - 1] = prev[:-1].rstrip() + lines[i - 1][len(lines[i - 1].rstrip("\r\n")):]
        else:  # close the gap the flag leaves between its neighbours
            lines[i] = re.sub(r"(?<=\S)[ \t]{2,}(?=\S)", " ", body).rstrip() + line[len(body):]
        return


def unified_diff(old: str, new: str, name: str) -> str:
    """A diff ``patch -p1`` applies; a last line without a newline is marked as diff and patch
    mark it (else the next line of the diff runs on after it and patch calls it malformed)."""
    diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
