"""A virtualenv with the real torch CPU build, shared by the smoke tests and the benchmark.

`pip install torch==2.13.0` takes a local file on these machines (the machine's pip
configuration points at it), so this runs offline; the venv is cached under .cache/ in the
repository (git-ignored) and reused until torch is gone from it.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TORCH = os.environ.get("ASCEND_DOCTOR_TEST_TORCH", "torch==2.13.0")


def torch_python(cache: Path = REPO / ".cache" / "torch-venv") -> Path:
    python = cache / "bin" / "python"
    probe = [str(python), "-c", "import torch"]
    if python.exists() and subprocess.run(probe, capture_output=True, timeout=120).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(cache)], check=True, timeout=300)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", TORCH], check=True, timeout=1800)
    return python
