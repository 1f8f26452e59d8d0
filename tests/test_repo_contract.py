"""Promises of the repository itself: README's commands, CI, packaging of the matrix."""
import re
import zipfile
from pathlib import Path

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
