"""Word-for-word golden files: compare a test's outputs with its JSON file, or rewrite the file
with UPDATE_GOLDENS=1 (review the diff)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict

UPDATE = bool(os.environ.get("UPDATE_GOLDENS"))


def match(got: Dict[str, Any], expected: Path) -> None:
    if UPDATE:
        expected.write_text(json.dumps(got, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(expected.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(want)
    where = f"tests/{expected.parent.name}/{expected.name}"
    for name in want:
        assert got[name] == want[name], f"{name} changed (UPDATE_GOLDENS=1 rewrites {where})"
