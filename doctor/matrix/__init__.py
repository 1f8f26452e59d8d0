"""The compatibility matrix: loading, validation and the questions it answers."""
from doctor.matrix.load import load_matrix as _load_matrix
from doctor.matrix.model import Matrix, Release
from doctor.matrix.schema import MatrixError

__all__ = ["load_matrix", "Matrix", "Release", "MatrixError"]


def load_matrix(*args, **kwargs) -> Matrix:
    """:func:`doctor.matrix.load.load_matrix` with the validated rows cached on disk
    (``doctor.shell.cache``, keyed by content): check loads the matrix on every run."""
    from doctor.shell import cache

    kwargs.setdefault("cache", cache)
    return _load_matrix(*args, **kwargs)
