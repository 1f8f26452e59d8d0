"""check and fix outputs (text and JSON, English and Chinese) on every kit scenario, pinned.

A change of output is either a regression or on purpose; on purpose, regenerate with
``UPDATE_GOLDENS=1 python -m pytest tests/test_golden.py`` and review the diff.
"""
from __future__ import annotations

import io
import json
import os
import platform
import shutil
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from fakehost import FakeHost
from fakehost.kit import SCENARIOS

GOLDEN = Path(__file__).parent / "golden"
UPDATE = bool(os.environ.get("UPDATE_GOLDENS"))


def run_cli(fake: FakeHost, argv, monkeypatch):
    """The command in this process, with the fake host's environment and working directory."""
    from doctor.cli.main import main

    for k in list(os.environ):
        monkeypatch.delenv(k)
    for k, v in fake.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.chdir(fake.workdir)
    out, err = io.StringIO(), io.StringIO()
    code = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def normalise(text: str, fake: FakeHost) -> str:
    for real, name in ((str(fake.base), "<BASE>"), (sys.executable, "<DOCTOR_PYTHON>"),
                       (platform.python_version(), "<PYVER>"), (sys.prefix, "<DOCTOR_PREFIX>")):
        text = text.replace(real, name)
    return text


def strip_timings(doc: dict) -> dict:
    doc.pop("timings_ms", None)
    for key in ("result",):
        if isinstance(doc.get(key), dict):
            doc[key].pop("timings_ms", None)
    return doc


def outputs(fake: FakeHost, monkeypatch) -> dict:
    out = {}
    target = fake.args()
    code, text, _ = run_cli(fake, ["check", *target, "--json"], monkeypatch)
    out["check.json"] = json.dumps({"exit_code": code, **strip_timings(json.loads(text))}, ensure_ascii=False, indent=2)
    for lang in ("en", "zh"):
        code, text, _ = run_cli(fake, ["check", *target, "--lang", lang], monkeypatch)
        out[f"check.{lang}.txt"] = f"exit {code}\n{text}"
    code, text, err = run_cli(fake, ["fix", *target, "--offline", "--json"], monkeypatch)
    out["fix.json"] = json.dumps({"exit_code": code, **json.loads(text)}, ensure_ascii=False, indent=2) if text.strip() \
        else f"exit {code}\n{err}"
    code, text, err = run_cli(fake, ["fix", *target, "--offline", "--lang", "en"], monkeypatch)
    out["fix.en.txt"] = f"exit {code}\n{text}{err}"
    return {k: normalise(v, fake).rstrip() + "\n" for k, v in out.items()}


FIXED_ROOT = os.path.join(tempfile.gettempdir(), "ascend-doctor-golden")


@pytest.fixture
def golden_root():
    """A directory of this test's own (parallel workers and other runs on the machine must not
    share one), whose path is exactly as long as FIXED_ROOT: text output wraps at the terminal
    width, so the length of the paths it prints must not vary. mkdtemp adds 8 characters."""
    root = tempfile.mkdtemp(prefix=os.path.basename(FIXED_ROOT)[:-8], dir=os.path.dirname(FIXED_ROOT))
    assert len(root) == len(FIXED_ROOT), (root, FIXED_ROOT)
    yield Path(root)
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_outputs_match_the_goldens(name, monkeypatch, golden_root):
    fake = FakeHost(golden_root / name)
    SCENARIOS[name](fake)
    got = outputs(fake, monkeypatch)
    folder = GOLDEN / name
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for k, v in got.items():
            (folder / k).write_text(v, encoding="utf-8")
    for k, v in got.items():
        want = (folder / k).read_text(encoding="utf-8")
        assert v == want, f"{name}/{k} changed (UPDATE_GOLDENS=1 regenerates it on purpose)"
