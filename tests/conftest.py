import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakehost import FakeHost  # noqa: E402


@pytest.fixture
def fake(tmp_path):
    return FakeHost(tmp_path)


@pytest.fixture(scope="session")
def house(tmp_path_factory):
    """The metadata-faithful wheelhouse and a venv with pip to copy, built once per session
    (shared by every test that runs real pip)."""
    from fakehost import wheelhouse as wh

    base = tmp_path_factory.mktemp("wheelhouse")
    dirs = wh.build(base)
    return {"dirs": dirs, "template": wh.template_venv(base), "base": base,
            "list": [dirs[wh.PYPI], dirs[wh.CPU], dirs[wh.ASCEND]]}
