"""The doctor itself runs on Python 3.9 to 3.13 (users install it into the env it checks)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from fakehost.installs import install, make_venv


def find_python(version):
    """python3.X from PATH (if it really runs) or a pyenv install."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    for c in candidates:
        if c and subprocess.run([c, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
            return c
    return None


@pytest.mark.slow  # builds the wheel and installs it with its dependencies, per interpreter
@pytest.mark.parametrize("version", ["3.9", "3.13"])
def test_doctor_installs_and_checks_on(version, tmp_path, fake, doctor_wheel):
    python = find_python(version)
    if python is None:
        pytest.skip(f"python{version} is not installed on this machine")
    # the wheel `pip install .` builds, with its dependencies resolved for that Python
    venv = tmp_path / "venv"
    install(make_venv(python, venv, with_pip=False), [str(doctor_wheel)], timeout=900, compile=False)
    fake.ascend_host().venv({"torch": "2.7.1+cpu"}, python=python)
    proc = subprocess.run([str(venv / "bin" / "ascend-doctor"), "check", "--json", *fake.args()],
                          capture_output=True, text=True, timeout=120, env=dict(fake.env), cwd=fake.workdir)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 3, proc.stderr  # no vllm-ascend in this env
    ids = {f["id"]: f for f in doc["findings"]}
    assert ids["python.version"]["observed"].startswith(version)
    assert ids["driver.installed"]["status"] == "ok"
    # ...and the venv the doctor was installed into (its script runs the venv's interpreter) is that Python's
    ran = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         capture_output=True, text=True, timeout=60).stdout.strip()
    assert ran == version
