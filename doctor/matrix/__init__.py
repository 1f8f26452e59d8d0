"""The compatibility matrix: loading, validation and the questions it answers."""
from pathlib import Path
from typing import Callable, Dict, Optional, Sequence

from doctor.matrix.load import load_matrix as _load_matrix
from doctor.matrix.model import Matrix, Release
from doctor.matrix.schema import MatrixError

__all__ = ["load_matrix", "Matrix", "Release", "MatrixError"]


def load_matrix(extra: Sequence[Path] = (), *, user_overlays: bool = True, env: Optional[Dict[str, str]] = None,
                warn: Optional[Callable[[str], None]] = None, error_knowledge: bool = True) -> Matrix:
    """:func:`doctor.matrix.load.load_matrix` with the validated rows cached on disk
    (``doctor.shell.host.cache``, keyed by content): check loads the matrix on every run."""
    from doctor.shell.host import cache

    return _load_matrix(extra, user_overlays=user_overlays, env=env, warn=warn, cache=cache,
                        error_knowledge=error_knowledge)
