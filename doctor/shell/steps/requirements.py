"""Requirement lines of a requirements file the doctor itself cloned (a vLLM checkout's
requirements/common.txt): comments, options and URLs left out, ``-r`` followed inside the same
tree only, every file read as a capped regular file."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

from doctor.plan.pins import Spec
from doctor.shell.host.files import read_text

MAX_FILE = 4 * 1024 * 1024


def requirements_file(path: Path, depth: int = 0, top: Optional[Path] = None) -> List[str]:
    top = top or path.parent
    out: List[str] = []
    if depth > 5:
        return out
    try:
        text = read_text(str(path), cap=MAX_FILE)
    except OSError:
        return out
    for raw in (text or "").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            inner = (path.parent / line.split(None, 1)[1]).resolve()
            if str(inner).startswith(str(top.resolve()) + os.sep):
                out += requirements_file(inner, depth + 1, top)
            continue
        if line.startswith("-"):
            continue
        if Spec.parse(line) is not None:
            out.append(line)
    return out
