"""Errors that end a command with a clear one-line message instead of a traceback.

The message is a catalogue Text (``raise UsageError(T("bundle.error.not_dir", path=d))``),
shown in the user's language; ``str()`` of the error is its English (scripts, logs, tests).
An inline English string is still taken, for the messages not yet in the catalogue
(tests/test_i18n.py counts them: the count may only go down).
"""
from __future__ import annotations

from typing import Any


class DoctorError(Exception):
    """A problem the user can act on. ``str()`` is the one-line message in English,
    :meth:`text` in a language."""

    exit_code = 1

    def text(self, lang: str = "en") -> str:
        message: Any = self.args[0] if len(self.args) == 1 else None
        return message.text(lang) if hasattr(message, "text") else str(self)


class UsageError(DoctorError):
    """Bad usage or unreadable input (exit code 2)."""

    exit_code = 2
