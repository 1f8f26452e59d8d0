"""check's own front end (doctor/entry.py) against the typer command it stands in for: the same
options, the same parameters for every command line it takes, every other command line left to
typer (help, errors: typer's words, byte for byte), and no typer imported on the way."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kitrun import kit_run

from doctor import entry
from doctor.cli import check_command, params

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _click_check():
    import typer

    from doctor.cli.main import make_app

    group = typer.main.get_command(make_app("check"))
    return group.commands["check"]  # type: ignore[attr-defined]


def test_the_front_end_knows_every_option_of_the_typer_command_and_its_default():
    command = _click_check()
    options = [p for p in command.params if p.param_type_name == "option"]
    table: Dict[str, Tuple[str, str]] = {}
    for p in options:
        if p.name == "requirements":  # the guard's path: left to typer on purpose
            assert not any(o in entry.CHECK_OPTIONS for o in p.opts)
            continue
        names = [o for o in p.opts + p.secondary_opts if o not in ("-h", "--help")]
        kind = ("flag" if p.is_flag else "list" if p.multiple else
                {"FloatParamType": "seconds", "IntParamType": "int", "StringParamType": "str"}[type(p.type).__name__])
        for o in names:
            table[o] = (p.name, kind)
        default = p.default
        assert entry.CHECK_DEFAULTS[p.name] == (list(default) if isinstance(default, tuple) else default), p.name
    assert table == entry.CHECK_OPTIONS
    assert set(entry.CHECK_DEFAULTS) == {p.name for p in options}
    # and in the order of the declarations (the order of --help), the one the front end reads
    assert [p.name for p in options] == [o.name for o in params.CHECK] + ["requirements"]


def typer_call(args: List[str], monkeypatch) -> Tuple[Optional[Dict[str, Any]], int, str]:
    """The parameters the typer command hands the body for ``check ARGS`` (None: it never got
    there), its exit code and what it printed."""
    from doctor.cli.main import main

    seen: Dict[str, Any] = {}

    def body(params: Dict[str, Any]) -> int:
        seen.update(params)
        return 0

    monkeypatch.setattr(check_command, "run_check_command", body)
    out, err = io.StringIO(), io.StringIO()
    code = None
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(["check", *args])
        except SystemExit as e:
            code = e.code
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in seen.items()} if seen else None
    return params, code, out.getvalue() + err.getvalue()


OPTION_WORDS = sorted(entry.CHECK_OPTIONS) + ["--requirements", "--help", "-h", "-vv", "--", "--jso", "--Json"]
VALUES = ["x", "/tmp", "", "-", "--json", "-h", "3", "-1", "0", "1e3", " 4", "2.5", "nan", "inf", "٣", "fail", "warn",
          "a=b", "--root"]


@st.composite
def command_lines(draw) -> List[str]:
    args: List[str] = []
    for _ in range(draw(st.integers(0, 5))):
        word = draw(st.sampled_from(OPTION_WORDS + VALUES[:3]))
        if word.startswith("--") and draw(st.booleans()) and word != "--":
            args.append(f"{word}={draw(st.sampled_from(VALUES))}")
        else:
            args.append(word)
            if draw(st.booleans()):
                args.append(draw(st.sampled_from(VALUES)))
    return args


@settings(max_examples=150, deadline=None)
@given(args=command_lines())
@pytest.mark.slow  # ~0.5 s of CPU or more: real interpreters for each command line
def test_the_front_end_reads_what_typer_reads_or_leaves_it_to_typer(args):
    with pytest.MonkeyPatch.context() as mp:
        want, code, said = typer_call(args, mp)
    got = entry.parse_check(args)
    if got is not None:  # taken: exactly the parameters typer would have passed, silently
        assert want is not None and code == 0 and said == "", (args, code, said)
        assert got == want, args
    # typer refused it, or printed help: the front end must have left it to typer
    if want is None:
        assert got is None, args


@pytest.mark.parametrize("args", [
    ["check", "--json", "--stage", "build"],
    ["check", "--root=/", "--python", sys.executable, "-v", "--lang", "zh", "--fail-on=warn"],
    ["check", "--matrix", "a.toml", "--matrix=b.toml", "--npu-smi-timeout", "2.5", "--verify-sample", "0"],
])
def test_command_lines_typer_takes_the_front_end_takes(args, monkeypatch):
    want, code, _ = typer_call(args[1:], monkeypatch)
    assert want is not None and entry.parse_check(args[1:]) == want


def _run(argv: List[str], via: str, env: Dict[str, str], cwd: str) -> Tuple[int, str, str]:
    """``ascend-doctor ARGV`` through the console entry point (the front end) or straight into
    the typer app."""
    code = ("from doctor.entry import main; main()" if via == "entry" else
            "from doctor.cli.main import main; main()")
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.argv[0] = 'ascend-doctor'; {code}", *argv],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _strip(text: str) -> str:
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    doc.pop("timings_ms", None)
    return json.dumps(doc, indent=1)


def _in_process(argv: List[str], via: str) -> Tuple[int, str, str]:
    """``ascend-doctor ARGV`` in this process, through the console entry point (the front end)
    or straight into the typer app."""
    from doctor.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    code = None
    with pytest.MonkeyPatch.context() as mp, redirect_stdout(out), redirect_stderr(err):
        mp.setattr(sys, "argv", ["ascend-doctor", *argv])
        try:
            entry.main() if via == "entry" else cli.main()
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


HELP_AND_ERRORS = [
    ["--help"], ["-h"], ["--json", "--help"], ["--bogus"], ["--jsn"], ["--json=yes"], ["--npu-smi-timeout", "nan"],
    ["--npu-smi-timeout", "1e18"], ["--hccn-timeout=1e308"], ["--npu-smi-timeout", "soon"], ["--verify-sample", "x"], ["--stage"], ["surplus"], ["--", "--json"],
    ["--fail-on", "never"], ["--lang", "fr"], ["--stage", "later"], ["--root", "/no/such/dir"],
]


def test_help_and_errors_are_typers_own_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    for extra in HELP_AND_ERRORS:
        argv = ["check", "--site-packages", str(tmp_path), *extra]
        front = _in_process(argv, "entry")
        assert front == _in_process(argv, "typer"), extra
        assert front[0] in (0, 2), (extra, front)
        if front[0] == 2:  # an error: one line
            assert front[1] == "" and len(front[2].splitlines()) == 1, (extra, front)
        else:
            assert front[1].startswith("Usage: ascend-doctor check"), extra


def test_help_is_the_same_from_a_real_process(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": REPO, "HOME": str(tmp_path), "COLUMNS": "100", "LANG": "C.UTF-8"}
    argv = ["check", "--help"]
    front = _run(argv, "entry", env, str(tmp_path))
    assert front == _run(argv, "typer", env, str(tmp_path)) and front[0] == 0 and "--npu-smi-timeout" in front[1]


@pytest.mark.parametrize("extra", [["--json"], [], ["--lang", "zh", "--fail-on", "warn"]])  # (-v prints timings)
@pytest.mark.slow  # ~1 s of CPU or more: checks through both fronts
def test_a_check_says_the_same_through_either_front(extra):
    fake = kit_run("healthy_a2_documented").fake
    env = dict(fake.env, PYTHONPATH=REPO)
    argv = ["check", *fake.args(), *extra]
    front, back = _run(argv, "entry", env, str(fake.workdir)), _run(argv, "typer", env, str(fake.workdir))
    assert (front[0], _strip(front[1]), front[2]) == (back[0], _strip(back[1]), back[2])
    assert front[0] in (0, 3, 4) and front[1]


@pytest.mark.slow  # ~0.5 s of CPU or more: real interpreters for each command line
def test_the_front_end_imports_no_typer_click_or_rich(tmp_path):
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'typer', 'click', 'rich'}) + sorted({'doctor.cli.main', 'doctor.cli.options'} & set(sys.modules)), "
             "file=sys.stderr))\n"
             "sys.argv = ['ascend-doctor', 'check', '--json', '--site-packages', sys.argv[1]]\n"
             "from doctor.entry import main; main()\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": REPO, "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert json.loads(proc.stdout)["findings"], proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def test_a_declared_default_is_the_use_cases_default_too():
    """An option's default is declared once for the command line (doctor/cli/params.py); the
    field it fills (CheckOptions, ProbeOptions) has the same one, so a caller of the use case
    (fix's re-check, the tests, explain --check) judges what the command judges."""
    from doctor.record import MISSING, fields_of
    from doctor.usecases.check import CheckOptions

    declared = {o.name: o for o in vars(params).values() if isinstance(o, params.Opt)}
    checked = []
    for f in fields_of(CheckOptions):
        if f.name not in declared or f.name == "image":  # image: the request built from the image options
            continue
        default = f.default_factory() if f.default is MISSING else f.default
        assert default == declared[f.name].default, f.name
        checked.append(f.name)
    assert {"root", "stage", "npu_smi_timeout", "hccn_timeout", "verify_sample", "site_packages"} <= set(checked)
