"""Errors that end a command with a clear one-line message instead of a traceback."""
from __future__ import annotations


class DoctorError(Exception):
    """A problem the user can act on. ``str()`` is the one-line message."""

    exit_code = 1


class UsageError(DoctorError):
    """Bad usage or unreadable input (exit code 2)."""

    exit_code = 2
