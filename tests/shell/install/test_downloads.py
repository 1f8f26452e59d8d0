"""doctor/shell/install/downloads.py: the resolved files fetched within one total deadline."""
from __future__ import annotations

import subprocess
import sys

from fakehost import REPO
from fakehost.index_server import endless_trailer_server


def test_a_download_that_never_ends_ends_with_the_deadline_and_so_does_the_doctor(tmp_path):
    """http.client reads the trailer inside one read: the phase said its deadline error, but the
    download thread stayed in that read and the interpreter's exit waited for it forever (fix
    --apply printed the error and never returned)."""
    httpd = endless_trailer_server("application/octet-stream")
    code = (
        "import sys\n"
        "from types import SimpleNamespace\n"
        "from pathlib import Path\n"
        "from doctor.errors import DoctorError\n"
        "from doctor.shell.install.downloads import fetch_resolved\n"
        f"r = SimpleNamespace(name='x', filename='x-1.0-py3-none-any.whl', size=10, hashes={{'sha256': '0' * 64}},\n"
        f"                    url='http://127.0.0.1:{httpd.server_port}/x-1.0-py3-none-any.whl')\n"
        "try:\n"
        f"    fetch_resolved([r], Path({str(tmp_path / 'dest')!r}), deadline=2.0)\n"
        "except DoctorError as e:\n"
        "    print(e)\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONPATH": str(REPO)}
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the doctor did not exit: a download thread is still reading") from None
    finally:
        httpd.shutdown()
    assert done.returncode == 0, done.stderr
    assert "within 2 s" in done.stdout or "deadline of 2 s" in done.stdout, done.stdout  # the phase's or the file's
