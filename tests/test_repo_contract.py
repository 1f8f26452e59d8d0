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
