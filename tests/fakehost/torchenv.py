"""A virtualenv with the real torch CPU build, shared by the smoke tests and the benchmark.

`pip install torch==2.13.0` takes a local file on these machines (the machine's pip
configuration points at it), so this runs offline; the venv is cached under .cache/ in the
repository (git-ignored) and reused until torch is gone from it. It is made under a lock (the
test workers run at once), with uv when it is there (fakehost.installs), and checked with a
real `import torch` once per test run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from .installs import install, make_venv
from .shared import exclusive, verified_this_run

REPO = Path(__file__).resolve().parents[2]
TORCH = os.environ.get("ASCEND_DOCTOR_TEST_TORCH", "torch==2.13.0")
DEFAULT = REPO / ".cache" / "torch-venv"


def imports(python: Path, modules: Sequence[str], timeout: float = 300) -> bool:
    return subprocess.run([str(python), "-c", "import " + ", ".join(modules)], capture_output=True,
                          timeout=timeout).returncode == 0


def torch_python(cache: Path = DEFAULT) -> Path:
    python = cache / "bin" / "python"
    with exclusive(cache.parent / f"{cache.name}.lock"):
        if python.exists() and verified_this_run(cache / ".torch-imports", lambda: imports(python, ["torch"])):
            return python
        make_venv(sys.executable, cache)
        install(python, [TORCH])
    return python


def with_packages(modules: Sequence[str], packages: Sequence[str], cache: Path = DEFAULT) -> Path:
    """The torch venv with more packages (installed into it once, checked once per run)."""
    python = torch_python(cache)
    stamp = cache / (".imports-" + "-".join(modules))
    with exclusive(cache.parent / f"{cache.name}.lock"):
        if not verified_this_run(stamp, lambda: imports(python, modules)):
            install(python, packages)
    return python
