"""What a citation must be: a public URL, or a file inside this repository (a user who runs
`matrix explain` must be able to follow it). Shared by the tests of every place that cites."""
from __future__ import annotations

import re
from pathlib import Path
from typing import List

REPO = Path(__file__).resolve().parents[1]
URL = re.compile(r"https?://[^\s;,)\]]+")
PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:md|toml|py|json|txt|sh|cfg|info))(?:#[\w.-]*)?")
# internal places a user cannot open
FORBIDDEN = re.compile(r"(?<![\w/])(?:shared/|facts/|seeds?[ /_]\d|\.\./)", re.I)


def unresolved(source: str) -> List[str]:
    """The parts of a source string (parts separated by ';') that cite nothing a user can open:
    no URL and no existing repository file, or a path outside the repository."""
    bad = []
    for part in (p.strip() for p in source.split(";")):
        if not part:
            continue
        if FORBIDDEN.search(URL.sub("", part)):
            bad.append(part)
            continue
        urls = URL.findall(part)
        paths = [m.group(1) for m in PATH.finditer(URL.sub("", part))]
        missing = [p for p in paths if not (REPO / p).exists()]
        if missing or not (urls or paths):
            bad.append(part)
    return bad
