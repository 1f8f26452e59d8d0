"""The compatibility matrix: loading, validation and the questions it answers."""
from .load import load_matrix
from .model import Matrix, Release
from .schema import MatrixError

__all__ = ["load_matrix", "Matrix", "Release", "MatrixError"]
