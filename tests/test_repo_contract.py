"""Promises of the repository itself: README's commands, CI, packaging of the matrix."""
import re
import zipfile
from pathlib import Path
from typing import Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_commands():
    return re.findall(r"```\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_ci_runs_the_test_command_from_readme():
    commands = readme_commands()
    test_cmd = next(c for c in commands if "pytest" in c)
    assert test_cmd in (ROOT / ".ci" / "run").read_text()


def test_readme_install_command_installs_and_runs_check():
    install = readme_commands()[0]
    assert "pip install ." in install and install.rstrip().endswith("ascend-doctor check")


@pytest.mark.slow  # ~0.5 s of CPU or more: builds the doctor's wheel (an isolated build), when no test before it did
def test_wheel_ships_the_matrix(doctor_wheel):
    """The matrix is data inside the wheel (doctor/matrices/*.toml), not files next to the repo."""
    names = zipfile.ZipFile(doctor_wheel).namelist()
    shipped = {Path(n).name for n in names if n.startswith("doctor/matrices/") and n.endswith(".toml")}
    assert shipped == {p.name for p in (ROOT / "matrices").glob("*.toml")}
    # every module of the package is in the wheel (pyproject lists the subpackages explicitly)
    modules = {str(p.relative_to(ROOT)) for p in (ROOT / "doctor").rglob("*.py")}
    assert modules <= set(names), sorted(modules - set(names))


def _as_on_the_host(text: str, fake) -> str:
    """A kit report as the README shows it: run on the host itself (no --root, no --npu-smi),
    the doctor on PATH, the image's interpreter and workspace."""
    from kitrun import normalise

    text = normalise(text, fake)
    text = re.sub(r" --(root|npu-smi) \S+", "", text)
    text = text.replace("<DOCTOR_PREFIX>/bin/ascend-doctor", "ascend-doctor")
    text = text.replace("<BASE>/venv/bin/python", "/usr/local/python3.11.13/bin/python3")
    return text.replace("<BASE>/vllm-workspace", "/vllm-workspace")


def test_the_readme_examples_are_what_the_doctor_prints():
    """Both examples of "What it does" are the report of a kit host, line for line up to their
    "...": the official image's broken vLLM (exit 3) and a healthy documented pairing (exit 0)."""
    from kitrun import kit_run

    blocks = re.findall(r"```\n(.+?)\n```", (ROOT / "README.md").read_text(), re.S)
    examples = [c for c in blocks if c.startswith("$ ascend-doctor check\n")]
    assert len(examples) == 2
    for example, name, code in zip(examples, ("seed_001_official_image", "healthy_a2_documented"), (3, 0)):
        run = kit_run(name)
        got_code, text, _ = run.out["check.en.txt"]
        assert got_code == code, name
        want = example.splitlines()[1:]
        if want[-1] == "...":
            want = want[:-1]
        else:
            assert len(want) == len(text.splitlines()), name
        assert _as_on_the_host(text, run.fake).splitlines()[:len(want)] == want, name


def _template_re(template: str) -> "re.Pattern[str]":
    """A catalogue template as a pattern: each {placeholder} any text."""
    return re.compile(re.sub(r"\\\{[a-z_]+\\\}", ".+", re.escape(template)))


def test_the_command_labels_of_check_md_json_example_are_the_ones_the_doctor_prints():
    """docs/check.md's `--json` example: every command label is a label of the catalogue (cmd.*,
    English), the words the doctor prints, not a paraphrase."""
    import json

    from doctor.i18n import catalogue

    text = (ROOT / "docs" / "check.md").read_text(encoding="utf-8")
    example = json.loads(re.search(r"```json\n(.+?)\n```", text, re.S).group(1))
    labels = [c["label"] for f in example["findings"] for c in f.get("commands", []) if "label" in c]
    assert labels
    templates = [v["en"] for k, v in catalogue().items() if k.startswith("cmd.")]
    for label in labels:
        assert any(_template_re(t).fullmatch(label) for t in templates), label


def _usage_options(text: str) -> List[str]:
    block = re.search(r"```\n(ascend-doctor fix .+?)\n```", text, re.S).group(1)
    return sorted(set(re.findall(r"--[a-z][a-z-]*", block)))


def _exit_rows(text: str) -> Dict[str, List[str]]:
    rows = re.findall(r"^\| ([0-4]) \| (.+) \|$", text.split("\n## Exit codes" if "## Exit codes" in text
                                                          else "\n## 退出码")[1], re.M)
    return {code: [c.strip() for c in rest.split(" | ")] for code, rest in rows}


def test_fix_zh_md_says_what_fix_md_says():
    """docs/fix.zh.md is a translation of docs/fix.md: the same options in its usage block, and an
    exit table whose cells name the same commands and cases (`rollback`, 1 MB, backups kept)."""
    en = (ROOT / "docs" / "fix.md").read_text(encoding="utf-8")
    zh = (ROOT / "docs" / "fix.zh.md").read_text(encoding="utf-8")
    assert _usage_options(zh) == _usage_options(en)
    rows_en, rows_zh = _exit_rows(en), _exit_rows(zh)
    assert sorted(rows_en) == sorted(rows_zh) == ["0", "1", "2", "3", "4"]
    for code in rows_en:
        for cell_en, cell_zh in zip(rows_en[code], rows_zh[code]):
            assert sorted(re.findall(r"`[^`]+`", cell_en)) == sorted(re.findall(r"`[^`]+`", cell_zh)), code
            assert ("1 MB" in cell_en) == ("1 MB" in cell_zh), code
            if cell_en.startswith("same;"):
                assert cell_zh.startswith("同左；") and len(cell_zh) > len("同左；"), code
