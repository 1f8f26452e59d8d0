"""check and fix on the kit scenarios (tests/fakehost/kit.py), run in this process once per test
session and shared by the tests that read them: the goldens (tests/test_golden.py), the printed
commands (tests/test_printed_commands.py) and the Chinese output (tests/test_zh_output.py).

Each scenario is built in a directory of this process (never shared: other test runs on the
machine build the same scenarios); ``normalise`` replaces the paths that vary between runs and
machines (the report is never wrapped, so a path's length changes nothing else).
"""
from __future__ import annotations

import atexit
import io
import os
import platform
import shutil
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest
from fakehost import FakeHost
from fakehost.kit import SCENARIOS

# name -> (argv after the target options, the language of the run)
RUNS: Dict[str, Tuple[Tuple[str, ...], str]] = {
    "check.json": (("check", "--json"), "en"),
    "check.zh.json": (("check", "--json"), "zh"),
    "check.en.txt": (("check",), "en"),
    "check.zh.txt": (("check",), "zh"),
    "fix.json": (("fix", "--offline", "--json"), "en"),
    "fix.en.txt": (("fix", "--offline"), "en"),
    "fix.zh.txt": (("fix", "--offline"), "zh"),
}


@dataclass
class KitRun:
    name: str
    fake: FakeHost
    out: Dict[str, Tuple[int, str, str]] = field(default_factory=dict)  # run -> (exit code, stdout, stderr)


_RUNS: Dict[str, KitRun] = {}


_BASE: List[Path] = []


def base_of(name: str) -> Path:
    if not _BASE:
        _BASE.append(Path(tempfile.mkdtemp(prefix="ascend-doctor-kit-")))
        atexit.register(shutil.rmtree, _BASE[0], True)
    return _BASE[0] / name


def run_cli(fake: FakeHost, argv: Sequence[str], lang: Optional[str] = "en") -> Tuple[int, str, str]:
    """The command in this process, with the fake host's environment and working directory."""
    from doctor.cli.main import main

    with pytest.MonkeyPatch.context() as mp:
        for k in list(os.environ):
            mp.delenv(k)
        for k, v in fake.env.items():
            mp.setenv(k, v)
        mp.setenv("COLUMNS", "120")
        mp.chdir(fake.workdir)
        out, err = io.StringIO(), io.StringIO()
        code = None
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main([argv[0], *fake.args(), *argv[1:], *(("--lang", lang) if lang else ())])
            except SystemExit as e:
                code = e.code
    return code, out.getvalue(), err.getvalue()


def kit_run(name: str) -> KitRun:
    """Every run of RUNS on scenario ``name``, made once per session."""
    if name not in _RUNS:
        base = base_of(name)
        shutil.rmtree(base, ignore_errors=True)
        fake = FakeHost(base)
        SCENARIOS[name](fake)
        run = KitRun(name, fake)
        for key, (argv, lang) in RUNS.items():
            run.out[key] = run_cli(fake, argv, lang)
        _RUNS[name] = run
    return _RUNS[name]


def normalise(text: str, fake: FakeHost) -> str:
    for real, name in ((str(fake.base), "<BASE>"), (sys.executable, "<DOCTOR_PYTHON>"),
                       (platform.python_version(), "<PYVER>"), (sys.prefix, "<DOCTOR_PREFIX>")):
        text = text.replace(real, name)
    return text


def names() -> List[str]:
    return sorted(SCENARIOS)
