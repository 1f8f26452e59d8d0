"""The smoke command's own files: its config, the golden file, the --serve-args-file, a model
directory's identity and the work directory the stages share. Every read is capped; errors are
OSError for the use case to word (doctor/usecases/smoke.py)."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional, Tuple

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def is_file(path: Path) -> bool:
    return path.is_file()


def read_capped(path: str, cap: int) -> bytes:
    """At most ``cap`` bytes of the file (OSError when it cannot be read). Only a regular file
    is read: it is opened non-blocking and checked with fstat (a FIFO in its place blocked a
    plain open() for ever); anything else is a NotRegularFile (an OSError)."""
    from doctor.shell.host.files import open_regular

    return open_regular(path, cap)


def weights_bytes(model_dir: str) -> int:
    """The bytes of the weight files directly in a model directory (0 when it cannot be listed)."""
    total = 0
    try:
        for entry in os.scandir(model_dir):
            if entry.is_file() and entry.name.endswith(WEIGHT_SUFFIXES):
                total += entry.stat().st_size
    except OSError:
        pass
    return total


def config_sha256(model_dir: str, cap: int) -> Optional[str]:
    """The hash of the first ``cap`` bytes of the model's config.json, None when it cannot be read."""
    try:
        return hashlib.sha256(read_capped(os.path.join(model_dir, "config.json"), cap)).hexdigest()
    except OSError:
        return None


@contextlib.contextmanager
def workdir(prompts: Any) -> Iterator[Tuple[str, str]]:
    """A directory of the run's own, removed at the end, with the prompts as prompts.json:
    (directory, prompts file)."""
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-smoke-") as tmp:
        path = os.path.join(tmp, "prompts.json")
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(prompts, fh)
        yield tmp, path
