import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakehost import FakeHost  # noqa: E402


@pytest.fixture
def fake(tmp_path):
    return FakeHost(tmp_path)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    """The metadata-faithful wheelhouse (tests/fakehost/wheelhouse.py), built once per session,
    and a venv with pip to copy."""
    from fakehost import wheelhouse as wh

    base = tmp_path_factory.mktemp("wheelhouse-shared")
    return {"dirs": wh.build(base), "template": wh.template_venv(base), "base": base}
