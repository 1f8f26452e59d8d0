"""The matrix overlay file ``matrix sync`` writes: validated before it replaces the old one."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.matrix.load import parse_file
from doctor.matrix.schema import MatrixError


def write_validated(path: Path, text: str) -> None:
    """Write ``text`` next to ``path``, validate it with the matrix loader, then rename it over
    ``path``. A file that does not validate never replaces the old overlay."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".matrix-overlay-", suffix=".toml", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            parse_file(Path(tmp), cache=None)  # a temp name: nothing worth caching
        except MatrixError as e:
            raise DoctorError(T("matrix.error.overlay_invalid", path=path, why=e.message))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
