"""A small on-disk JSON cache ($XDG_CACHE_HOME/ascend-doctor): results that only change when
their inputs change, keyed by a hash of those inputs, so check stays fast on every run.

Best effort both ways: a read-only home (containers, CI) just means no cache.
"""
from __future__ import annotations

import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any, Optional

from doctor import __version__, xdg
from doctor.shell.host.files import create_at, read_fd


def key(*parts: Any) -> str:
    """A key over the inputs and the doctor's version (a new doctor never reads old results).

    Two CRC-32s (of the data and of its reverse) and the length: 64+ bits, without hashlib,
    whose OpenSSL import alone costs ~7 ms on every check."""
    blob = json.dumps([__version__, *parts], sort_keys=True, default=str).encode()
    return f"{zlib.crc32(blob):08x}{zlib.crc32(blob[::-1]):08x}{len(blob):x}"


def _dir(kind: str) -> Path:
    return xdg.cache_dir() / kind


MAX_ENTRY = 16 * 1024 * 1024


def _trusted(st: os.stat_result, mask: int = stat.S_IWGRP | stat.S_IWOTH) -> bool:
    """Made by this user and writable by no one else: an entry (or a directory) another account
    can write is not the doctor's own result (a shared or world-writable $XDG_CACHE_HOME, a root
    run with a user's $HOME), and a planted entry decides the rows check judges by and the hints
    it prints."""
    return st.st_uid == os.geteuid() and not st.st_mode & mask


# a directory may be group-writable (a umask of 002 with one group per user is common): another
# account there can only swap entries for its own files, which read() refuses (owner, mode)
DIR_MASK = stat.S_IWOTH


def _open_dir(kind: str) -> int:
    """A descriptor of the cache's ``kind`` directory, both levels checked by :func:`_trusted`
    on the descriptor itself (what is checked is what is read: no swap between stat and open).
    Raises OSError."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    top = os.open(xdg.cache_dir(), flags)
    try:
        if not _trusted(os.fstat(top), DIR_MASK):
            raise PermissionError(f"{xdg.cache_dir()}: writable by another account")
        fd = os.open(kind, flags | getattr(os, "O_NOFOLLOW", 0), dir_fd=top)
    finally:
        os.close(top)
    if not _trusted(os.fstat(fd), DIR_MASK):
        os.close(fd)
        raise PermissionError(f"{kind}: writable by another account")
    return fd


def read(kind: str, k: str) -> Optional[Any]:
    """The entry, or None: none, unreadable, not JSON, not a regular file (a FIFO planted in
    the cache must not hang check; a symlink planted there is not followed), or not this user's
    own (:func:`_trusted`: the entry and both directories above it)."""
    try:
        d = _open_dir(kind)
        try:
            fd = os.open(f"{k}.json", os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0), dir_fd=d)
        finally:
            os.close(d)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or not _trusted(st) or st.st_size > MAX_ENTRY:
                return None
            data = read_fd(fd, MAX_ENTRY)
        finally:
            os.close(fd)
        return json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None


def _make(d: Path) -> None:
    """The cache's directory ``d``, made below the cache home, and the cache home itself when it
    is missing (XDG: made 0700), never what lies above it: a $HOME that does not exist (a system
    account's /nonexistent, a container's unset one) stays missing, and there is no cache.
    Raises OSError."""
    base = xdg.cache_home()
    if not base.is_dir():
        os.mkdir(base, 0o700)  # FileNotFoundError when its parent (the home) is missing
    d.mkdir(mode=0o700, parents=True, exist_ok=True)


def write(kind: str, k: str, data: Any) -> None:
    """Write the entry whole (a temporary file renamed over it): never through a symlink or into
    a file planted at the temporary name (O_NOFOLLOW, O_EXCL)."""
    tmp = None
    try:
        blob = json.dumps(data).encode("utf-8")
        d = _dir(kind)
        _make(d)
        os.close(_open_dir(kind))  # never into a directory read() would refuse (another's)
        tmp = d / f".{k}.{os.getpid()}.tmp"
        create_at(None, str(tmp), blob)
        os.replace(tmp, d / f"{k}.json")
        tmp = None
    except (OSError, TypeError, ValueError, RecursionError):
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
