"""The shipped matrix (matrices/*.toml, no user overlay), loaded once per test process and
shared, through the doctor's own row cache (validated rows kept by file identity, as check keeps
them): validating it costs ~0.6 s of CPU, and several test modules read it while they are
collected, in every xdist worker; the first process of a run validates, the others read. Read-only: a test that changes a matrix builds its
own (``tests/rules/build.py``) or copies this one.

Always imported as ``shipped`` (``tests/`` is on ``sys.path``, tests/conftest.py), so every
importer gets the same module, and so the same loaded matrix."""
from __future__ import annotations

from functools import lru_cache

from doctor.matrix import load_matrix
from doctor.matrix.model import Matrix


@lru_cache(maxsize=1)
def matrix() -> Matrix:
    return load_matrix(user_overlays=False)
