"""A small on-disk JSON cache ($XDG_CACHE_HOME/ascend-doctor): results that only change when
their inputs change, keyed by a hash of those inputs, so check stays fast on every run.

Best effort both ways: a read-only home (containers, CI) just means no cache.
"""
from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any, Optional

from doctor import __version__, xdg


def key(*parts: Any) -> str:
    """A key over the inputs and the doctor's version (a new doctor never reads old results).

    Two CRC-32s (of the data and of its reverse) and the length: 64+ bits, without hashlib,
    whose OpenSSL import alone costs ~7 ms on every check."""
    blob = json.dumps([__version__, *parts], sort_keys=True, default=str).encode()
    return f"{zlib.crc32(blob):08x}{zlib.crc32(blob[::-1]):08x}{len(blob):x}"


def _dir(kind: str) -> Path:
    return xdg.cache_dir() / kind


MAX_ENTRY = 16 * 1024 * 1024


def read(kind: str, k: str) -> Optional[Any]:
    """The entry, or None: none, unreadable, not JSON, or not a regular file (a FIFO planted in
    the cache must not hang check; a symlink planted there is not followed)."""
    from doctor.shell.files import open_regular

    try:
        return json.loads(open_regular(str(_dir(kind) / f"{k}.json"), MAX_ENTRY, follow=False))
    except (OSError, ValueError, RecursionError):
        return None


def write(kind: str, k: str, data: Any) -> None:
    """Write the entry whole (a temporary file renamed over it): never through a symlink or into
    a file planted at the temporary name (O_NOFOLLOW, O_EXCL)."""
    tmp = None
    try:
        blob = json.dumps(data).encode("utf-8")
        d = _dir(kind)
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{k}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     0o644)
        try:
            view = memoryview(blob)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, d / f"{k}.json")
        tmp = None
    except (OSError, TypeError, ValueError, RecursionError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
