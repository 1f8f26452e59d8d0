"""The example commands of the usage texts (explain without input on a terminal, guard without a
command, a --target not in the matrix) run as printed: each on a line of its own (or ending the
one-line error), no prose glued to it (``   (all ranks of one job)`` is a bash syntax error), and
spelled with the doctor's own invocation as every other printed command is (a doctor started by
its path prints its path). Parsed with the doctor's own command line, in both languages."""
from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys

import pytest
from fakehost import REPO
from test_printed_commands import parse_doctor

from doctor import program
from doctor.i18n import LANGS

STARTED_AS = ["/opt/venvs/doctor dir/bin/ascend-doctor"]  # a path with a space: quoted when printed


def doctor_part(line: str) -> list:
    """The doctor's argv of a pasted line (after a pipe when it reads one)."""
    words = shlex.split(line)
    if "|" in words:
        words = words[words.index("|") + 1:]
    return words


@pytest.mark.parametrize("lang", LANGS)
def test_explain_usage_examples_run_as_printed(lang, monkeypatch, capsys):
    from doctor.usecases.explain import run_explain

    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    program.use(STARTED_AS)
    try:
        assert run_explain([], lang, False) == 2
    finally:
        program.use([program.DOCTOR])
    lines = capsys.readouterr().err.splitlines()
    quoted = shlex.quote(STARTED_AS[0])
    examples = [line for line in lines if quoted in line]
    assert len(examples) == 5
    for line in lines:
        assert "ascend-doctor" not in line.replace(quoted, ""), f"the plain name, not how it was started: {line!r}"
    for line in examples:
        assert line.startswith("  "), f"an example inside prose: {line!r}"
        argv = doctor_part(line)
        assert argv[0] == STARTED_AS[0] and argv[1] == "explain", line
        assert not any(w.startswith(("(", "（", "#")) or ord(w[0]) > 127 for w in argv), f"prose in the command: {line!r}"
        if "--help" not in argv:  # parsing --help prints the help and exits
            parse_doctor(argv)
    bash = subprocess.run(["bash", "-n", "-c", "\n".join(line for line in examples)], capture_output=True, text=True)
    assert bash.returncode == 0, bash.stderr


def run_doctor(*argv: str, lang: str) -> subprocess.CompletedProcess:
    """``python -m doctor`` with no ascend-doctor on PATH: it spells itself by its entry point."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": os.environ.get("HOME", "/tmp"),
           "LANG": "zh_CN.UTF-8" if lang == "zh" else "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "doctor", *argv], capture_output=True, text=True, env=env,
                          cwd=str(REPO), timeout=120)


def own_entry() -> list:
    from doctor.cli.invocation import entry_point

    return entry_point("", sys.executable)


def last_command(stderr: str, entry: list) -> list:
    """The command that ends the one-line error: it starts with the doctor's own entry point."""
    (line,) = stderr.strip().splitlines()
    start = line.index(shlex.join(entry) + " ")
    assert line[start - 1] == " ", f"glued to the prose before it: {line!r}"
    return shlex.split(line[start:])


@pytest.mark.parametrize("lang", LANGS)
def test_guard_without_a_command_names_an_example_that_parses(lang):
    proc = run_doctor("guard", lang=lang)
    assert proc.returncode == 2
    entry = own_entry()
    argv = last_command(proc.stderr, entry)
    assert argv[:len(entry)] == entry and argv[len(entry):] == ["guard", "--", "pip", "install", "vllm==0.11.0"]
    parse_doctor([program.DOCTOR] + argv[len(entry):])


@pytest.mark.parametrize("lang", LANGS)
def test_a_target_not_in_the_matrix_names_matrix_show_as_it_runs(lang):
    proc = run_doctor("check", "--target", "vllm-ascend==9.9.9", "--stage", "build", lang=lang)
    assert proc.returncode == 2, proc.stderr
    entry = own_entry()
    argv = last_command(proc.stderr, entry)
    assert argv[:len(entry)] == entry and argv[len(entry):] == ["matrix", "show"]
    parse_doctor([program.DOCTOR] + argv[len(entry):])
