"""check and fix outputs (text and JSON, English and Chinese) on every kit scenario, pinned.

A change of output is either a regression or on purpose; on purpose, regenerate with
``UPDATE_GOLDENS=1 python -m pytest tests/test_golden.py`` and review the diff. The runs are
shared with the other tests of the kit's outputs (tests/kitrun.py).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from kitrun import kit_run, names, normalise

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("UPDATE_GOLDENS"))
PINNED = ("check.json", "check.en.txt", "check.zh.txt", "fix.json", "fix.en.txt", "fix.zh.txt")


def strip_timings(doc: dict) -> dict:
    doc.pop("timings_ms", None)
    for key in ("result",):
        if isinstance(doc.get(key), dict):
            doc[key].pop("timings_ms", None)
    return doc


def outputs(name: str) -> dict:
    run = kit_run(name)
    out = {}
    for key in PINNED:
        code, text, err = run.out[key]
        if key.endswith(".json"):
            out[key] = json.dumps({"exit_code": code, **strip_timings(json.loads(text))}, ensure_ascii=False, indent=2) \
                if text.strip() else f"exit {code}\n{err}"
        else:
            out[key] = f"exit {code}\n{text}" + (err if key.startswith("fix.") else "")
    return {k: normalise(v, run.fake).rstrip() + "\n" for k, v in out.items()}


@pytest.mark.parametrize("name", names())
def test_outputs_match_the_goldens(name):
    got = outputs(name)
    folder = GOLDEN / name
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for k, v in got.items():
            (folder / k).write_text(v, encoding="utf-8")
    for k, v in got.items():
        want = (folder / k).read_text(encoding="utf-8")
        assert v == want, f"{name}/{k} changed (UPDATE_GOLDENS=1 regenerates it on purpose)"
