"""The compatibility matrix: loading, validation and the questions it answers."""
from doctor.matrix.load import load_matrix
from doctor.matrix.model import Matrix, Release
from doctor.matrix.schema import MatrixError

__all__ = ["load_matrix", "Matrix", "Release", "MatrixError"]
