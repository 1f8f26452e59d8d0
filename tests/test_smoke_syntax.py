"""The target scripts (doctor/smoke_target) run in the user's interpreter, which may be Python
3.9: they must parse and start there, and import nothing from the doctor."""
import ast
import shutil
import subprocess
from pathlib import Path

import pytest

TARGET = Path(__file__).resolve().parents[1] / "doctor" / "smoke_target"
SCRIPTS = sorted(TARGET.glob("*.py"))
OLDEST = (3, 9)


def parses_on(source: str, version=OLDEST) -> bool:
    try:
        ast.parse(source, feature_version=version)
    except SyntaxError:
        return False
    return True


def test_there_are_scripts():
    assert {p.name for p in SCRIPTS} >= {"smoke_common.py", "smoke_model.py", "smoke_vllm.py", "smoke_rank.py"}


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_parses_as_python_3_9(path):
    assert parses_on(path.read_text()), f"{path.name} uses syntax newer than Python {OLDEST}"


@pytest.mark.parametrize("snippet", [
    "match x:\n    case 1:\n        pass\n",                 # 3.10
    "try:\n    pass\nexcept* ValueError:\n    pass\n",      # 3.11
])
def test_the_check_rejects_newer_syntax(snippet):
    """The check above can fail: the same parser refuses 3.10+ syntax in a real script."""
    source = (TARGET / "smoke_model.py").read_text() + "\n" + snippet
    assert not parses_on(source)
    assert parses_on(source, (3, 11))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_imports_nothing_from_the_doctor(path):
    tree = ast.parse(path.read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.split(".")[0] == "doctor"]


PYPY = shutil.which("pypy3")


@pytest.mark.skipif(PYPY is None, reason="Debian's pypy3 (a Python 3.9 interpreter) is not installed: "
                                         "apt-get install pypy3")
@pytest.mark.parametrize("name", ["smoke_model", "smoke_vllm", "smoke_rank"])
def test_starts_on_a_real_python_3_9(name):
    """A real 3.9 interpreter (PyPy 7.3, Python 3.9) compiles the scripts and runs them up to
    their argument parsing; without torch the model script reports a failed import step."""
    version = subprocess.run([PYPY, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True,
                             timeout=60).stdout.strip()
    assert version == "(3, 9)"
    proc = subprocess.run([PYPY, str(TARGET / f"{name}.py"), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "usage:" in proc.stdout, proc.stderr


@pytest.mark.skipif(PYPY is None, reason="pypy3 not installed")
def test_model_script_reports_missing_torch_on_python_3_9(tmp_path):
    events = tmp_path / "events.jsonl"
    proc = subprocess.run([PYPY, str(TARGET / "smoke_model.py"), "--device", "cpu"], capture_output=True, text=True,
                          timeout=60, env={"ASCEND_DOCTOR_SMOKE_EVENTS": str(events), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 3
    assert '"error": "ModuleNotFoundError: No module named \'torch\'"' in events.read_text()
