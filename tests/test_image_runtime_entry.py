"""The runtime form of the check: docker/serve-checked.sh as a container's entrypoint, on fake
Ascend hosts (the container as it starts on the NPU host: driver mounted, devices passed)."""
import subprocess
import sys
from pathlib import Path

import pytest

from fakehost.scenarios import ascend_host

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "docker" / "serve-checked.sh"


def start(fake, tmp_path, *command, **env):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "ascend-doctor"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m doctor "$@"\n')
    shim.chmod(0o755)
    full = dict(fake.env, PATH=f"{bin_dir}:/usr/bin:/bin", PYTHONPATH=str(ROOT), DOCTOR_ROOT=str(fake.root),
                DOCTOR_PYTHON=str(fake.python), **env)
    return subprocess.run(["sh", str(ENTRY), *command], env=full, capture_output=True, text=True, timeout=300,
                          cwd=fake.workdir)


@pytest.mark.slow
def test_the_server_starts_only_on_a_host_the_image_fits(fake, tmp_path):
    ascend_host(fake, "0.11.0rc3")
    served = tmp_path / "served"
    proc = start(fake, tmp_path, "sh", "-c", f"echo serving > {served}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtime stage" in proc.stdout and served.read_text() == "serving\n"
    served.unlink()
    fake.remove("/usr/local/Ascend/driver")  # `docker run` without -v /usr/local/Ascend/driver
    proc = start(fake, tmp_path, "sh", "-c", f"echo serving > {served}")
    assert proc.returncode == 3 and "driver.installed" in proc.stdout
    assert not served.exists()
