"""Regular expressions compiled on first use: a module's patterns cost nothing at import.

check imports ~100 module-level patterns and uses about half of them on a given host;
compiling the rest (~10 ms) bought nothing. ``lazy(pattern, flags)`` stands where
``re.compile(pattern, flags)`` stood: the first attribute asked (``.search``, ``.sub``,
``.pattern``...) compiles it, and every method of the compiled pattern is then kept on the
object itself, so later calls cost what a compiled pattern's do. Only attributes are supported:
a lazy pattern is not a ``re.Pattern`` (pass ``.pattern`` to an ``re`` function instead).
"""
from __future__ import annotations

import re
from typing import Any, cast

_KEPT = ("match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split", "pattern", "flags", "groups",
         "groupindex", "scanner")


class _Lazy:
    def __init__(self, pattern: str, flags: int) -> None:
        self.__dict__["_args"] = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only when the attribute is not kept yet
        compiled = re.compile(*self.__dict__["_args"])
        for attr in _KEPT:
            self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self.__dict__['_args'][0]!r})"


def lazy(pattern: str, flags: int = 0) -> "re.Pattern[str]":
    """``re.compile(pattern, flags)``, on first use."""
    return cast("re.Pattern[str]", _Lazy(pattern, int(flags)))
