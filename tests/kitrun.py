"""check and fix on the kit scenarios (tests/fakehost/kit.py), run in this process once per test
session and shared by the tests that read them: the goldens (tests/test_golden.py), the printed
commands (tests/test_printed_commands.py) and the Chinese output (tests/test_zh_output.py).

Each scenario is built in a directory of this process (never shared: other test runs on the
machine build the same scenarios); ``normalise`` replaces the paths that vary between runs and
machines (the report is never wrapped, so a path's length changes nothing else).

The runs themselves are made once per test run, not once per xdist worker: the first worker to
need a scenario runs it and keeps the outputs in the run's common directory (``SHARED``, set by
tests/conftest.py), with its scenario directory written as a placeholder; another worker builds
the same scenario in its own directory (every directory here has the same length) and reads
those outputs with its own directory put back. The 7 runs of a scenario cost ~0.7 s of CPU,
building it ~0.15 s.
"""
from __future__ import annotations

import atexit
import io
import json
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

# where the outputs are shared between the workers of this run (tests/conftest.py sets it; None:
# each process runs its scenarios itself)
SHARED: Optional[Path] = None
_PLACEHOLDER = "\x00kit-base\x00"


def base_of(name: str) -> Path:
    if not _BASE:
        _BASE.append(Path(tempfile.mkdtemp(prefix="ascend-doctor-kit-")))
        atexit.register(shutil.rmtree, _BASE[0], True)
    return _BASE[0] / name


def run_cli(fake: FakeHost, argv: Sequence[str], lang: Optional[str] = "en", target: bool = True) -> Tuple[int, str, str]:
    """The command in this process, with the fake host's environment and working directory (and
    its target options, --root, --python, --npu-smi, unless ``target`` is false: --from)."""
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
                main([argv[0], *(fake.args() if target else ()), *argv[1:], *(("--lang", lang) if lang else ())])
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
        run.out = _shared_runs(name, fake) if SHARED is not None else _runs(fake)
        _RUNS[name] = run
    return _RUNS[name]


def _runs(fake: FakeHost) -> Dict[str, Tuple[int, str, str]]:
    return {key: run_cli(fake, argv, lang) for key, (argv, lang) in RUNS.items()}


def _shared_runs(name: str, fake: FakeHost) -> Dict[str, Tuple[int, str, str]]:
    """The runs of scenario ``name`` made by whichever worker of this run came first, as if
    made on ``fake``: its own directory in place of the first one's."""
    from fakehost.shared import exclusive

    assert SHARED is not None
    here = str(fake.base)
    kept = SHARED / f"{name}.json"
    with exclusive(SHARED / f"{name}.lock"):
        if not kept.is_file():
            out = _runs(fake)
            text = json.dumps({k: [code, o.replace(here, _PLACEHOLDER), e.replace(here, _PLACEHOLDER)]
                               for k, (code, o, e) in out.items()})
            tmp = kept.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(kept)
            return out
        data = json.loads(kept.read_text())
    return {k: (code, o.replace(_PLACEHOLDER, here), e.replace(_PLACEHOLDER, here)) for k, (code, o, e) in data.items()}


def normalise(text: str, fake: FakeHost) -> str:
    for real, name in ((str(fake.base), "<BASE>"), (sys.executable, "<DOCTOR_PYTHON>"),
                       (platform.python_version(), "<PYVER>"), (sys.prefix, "<DOCTOR_PREFIX>")):
        text = text.replace(real, name)
    return text


def names() -> List[str]:
    return sorted(SCENARIOS)
