import json
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakehost import FakeHost  # noqa: E402

TESTS = Path(__file__).resolve().parent


def pytest_configure(config):
    """Byte-compile the doctor (and the test helper modules) once, before any worker starts: hundreds
    of tests run `python -m doctor` from this checkout, and where nothing may write bytecode
    (PYTHONDONTWRITEBYTECODE, as on the shared build machines) each of them compiled ~200 modules
    again (0.5-0.7 s of CPU where a check takes 0.3). py_compile writes the same
    ``__pycache__/`` files (git-ignored) the first import would write without that setting, and
    skips the files whose bytecode is current."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import compileall

    compileall.compile_dir(str(TESTS.parent / "doctor"), quiet=1)
    helpers = r"(test_[^/]*|conftest)\.py$"  # pytest rewrites these itself (below)
    for top in (TESTS, TESTS / "fakehost", TESTS / "rules"):
        compileall.compile_dir(str(top), maxlevels=0, quiet=1, rx=re.compile(helpers))


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """While the test modules are imported, pytest keeps their assertion-rewritten bytecode in
    ``__pycache__/`` even where PYTHONDONTWRITEBYTECODE is set: rewriting them costs ~4 s of CPU
    in every xdist worker, every run. The setting is back for the tests themselves."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


@pytest.fixture(scope="session", autouse=True)
def _kit_runs_shared(tmp_path_factory):
    """The kit scenarios' check and fix runs (tests/kitrun.py) made once per test run and read
    by every worker, not made again in each of them."""
    import kitrun
    from fakehost.shared import run_root

    kitrun.SHARED = run_root(tmp_path_factory) / "kit-runs"
    kitrun.SHARED.mkdir(parents=True, exist_ok=True)
    yield
    kitrun.SHARED = None


@pytest.fixture
def fake(tmp_path):
    return FakeHost(tmp_path)


def _inodes(root: Path) -> dict:
    """path -> mode, size, mtime and sha256 of every file below ``root`` (what a write through
    a hard link would change)."""
    import hashlib
    import os

    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            digest = "" if os.path.islink(p) else hashlib.sha256(Path(p).read_bytes()).hexdigest()
            out[os.path.relpath(p, root)] = f"{st.st_mode:o} {st.st_size} {st.st_mtime_ns} {digest}"
    return out


@pytest.fixture(scope="session")
def house(tmp_path_factory):
    """The metadata-faithful wheelhouse and a venv with pip to copy, built once per run and
    shared by every test that runs real pip (and by every xdist worker). Read-only: a test
    that needs a changed wheelhouse copies it."""
    from fakehost import wheelhouse as wh
    from fakehost.shared import once_per_run

    def make(base):
        wh.build(base)
        (base / "template-state.json").write_text(json.dumps(_inodes(wh.template_venv(base))))

    base = once_per_run(tmp_path_factory, "wheelhouse", make)
    dirs = wh.layout(base)
    template = wh.template_venv(base)
    yield {"dirs": dirs, "template": template, "base": base, "list": [dirs[wh.PYPI], dirs[wh.CPU], dirs[wh.ASCEND]]}
    # the venvs made from the template share its files (hard links): none may have written into one
    before, after = json.loads((base / "template-state.json").read_text()), _inodes(template)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert not changed, f"a test changed the shared template venv in place: {changed[:10]}"


@pytest.fixture(scope="session")
def doctor_wheel(tmp_path_factory) -> Path:
    """The doctor's wheel as `pip wheel` builds it from this checkout (isolated build, as
    `pip install .` does), built once per run: setuptools builds in the tree (build/), so two
    builds at once would share it."""
    import subprocess

    from fakehost import REPO
    from fakehost.shared import once_per_run

    def make(out):
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(REPO)],
                       check=True, capture_output=True, timeout=600)

    return next(once_per_run(tmp_path_factory, "doctor-wheel", make).glob("ascend_doctor-*.whl"))


def _weight(item) -> int:
    """0 for the long tests (marked slow), 1 for the ones that run real pip (the wheelhouse),
    2 for the rest."""
    if item.get_closest_marker("slow") is not None:
        return 0
    return 1 if "house" in getattr(item, "fixturenames", ()) else 2


def pytest_collection_modifyitems(config, items):
    """Long tests first (a stable sort: the same order in every xdist worker). Workers take
    tests in this order, so the long ones run alongside the many short ones instead of
    finishing the run one after another."""
    items.sort(key=_weight)
