import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakehost import FakeHost  # noqa: E402


@pytest.fixture
def fake(tmp_path):
    return FakeHost(tmp_path)
