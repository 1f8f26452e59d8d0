"""A virtualenv with the real torch CPU build, shared by the smoke tests and the benchmark.

`pip install torch==2.13.0` takes a local file on these machines (the machine's pip
configuration points at it), so this runs offline. The venv (1.2 GB, ~30 s of CPU to make) is
cached per user, not per checkout, in a directory named by what it holds (the torch spec and
the base interpreter): every clone and worktree of the repository, and every run, share one
(``ASCEND_DOCTOR_TEST_CACHE`` moves it; it is made once, then reused until torch is gone from
it). It is made under a lock (the test workers and other checkouts' runs start at once), with
uv when it is there (fakehost.installs), and checked with a real `import torch` once per test
run.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Sequence, Tuple

from .installs import install, make_venv
from .shared import exclusive, verified_this_run

REPO = Path(__file__).resolve().parents[2]
TORCH = os.environ.get("ASCEND_DOCTOR_TEST_TORCH", "torch==2.13.0")


def shared_cache() -> Path:
    """The per-user cache the expensive test environments live in (not inside a checkout, so a
    fresh clone does not build them again)."""
    env = os.environ.get("ASCEND_DOCTOR_TEST_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascend-doctor-tests"


def content_key(*parts: object) -> str:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).hexdigest()[:16]


# the venv's interpreter links to the base one (uv and venv both resolve to it): the key names it
BASE = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
DEFAULT = shared_cache() / f"torch-venv-{content_key(TORCH, BASE, sys.version)}"


def imports(python: Path, modules: Sequence[str], timeout: float = 300) -> bool:
    return subprocess.run([str(python), "-c", "import " + ", ".join(modules)], capture_output=True,
                          timeout=timeout).returncode == 0


def own_torch() -> bool:
    """The interpreter running the tests has the pinned torch itself (a developer's venv with
    torch in it): then no second copy is made. Read from its metadata, not imported."""
    from importlib import metadata

    name, _, want = TORCH.partition("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return bool(want) and have.split("+")[0] == want


def torch_python(cache: Path = DEFAULT) -> Path:
    if cache == DEFAULT and own_torch():
        return Path(sys.executable)
    return _cached(cache)


def _cached(cache: Path) -> Path:
    python = cache / "bin" / "python"
    with exclusive(cache.parent / f"{cache.name}.lock"):
        if python.exists() and verified_this_run(cache / ".torch-imports", lambda: imports(python, ["torch"])):
            return python
        make_venv(sys.executable, cache)
        install(python, [TORCH])
    return python


_OWN_HAS: Dict[Tuple[str, ...], bool] = {}


def with_packages(modules: Sequence[str], packages: Sequence[str], cache: Path = DEFAULT) -> Path:
    """The torch venv with more packages (installed into it once, checked once per run); the
    tests' own interpreter when it has torch and these already (nothing is installed into it)."""
    python = torch_python(cache)
    if python == Path(sys.executable):
        key = tuple(modules)
        if key not in _OWN_HAS:
            _OWN_HAS[key] = imports(python, modules)  # probed once per process
        if _OWN_HAS[key]:
            return python
        python = _cached(cache)
    stamp = cache / (".imports-" + "-".join(modules))
    with exclusive(cache.parent / f"{cache.name}.lock"):
        if not verified_this_run(stamp, lambda: imports(python, modules)):
            install(python, packages)
    return python
