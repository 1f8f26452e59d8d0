"""The doctor itself runs on Python 3.9 to 3.13 (users install it into the env it checks)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def find_python(version):
    """python3.X from PATH (if it really runs) or a pyenv install."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for c in candidates:
        if c and subprocess.run([c, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
            return c
    return None


@pytest.mark.parametrize("version", ["3.9", "3.13"])
def test_doctor_installs_and_checks_on(version, tmp_path, fake):
    python = find_python(version)
    if python is None:
        pytest.skip(f"python{version} is not installed on this machine")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)], check=True, timeout=900,
                   capture_output=True)
    fake.ascend_host().venv({"torch": "2.7.1+cpu"}, python=python)
    proc = subprocess.run([str(venv / "bin" / "ascend-doctor"), "check", "--json", *fake.args()],
                          capture_output=True, text=True, timeout=120, env=dict(fake.env), cwd=fake.workdir)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3, proc.stderr  # no vllm-ascend in this env
    ids = {f["id"]: f for f in doc["findings"]}
    assert ids["python.version"]["observed"].startswith(version)
    assert ids["driver.installed"]["status"] == "ok"
