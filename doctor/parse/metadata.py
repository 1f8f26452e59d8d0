"""Core metadata (METADATA / PKG-INFO / PEP 658 ``.metadata``): the one reader of it.

The format is RFC 822 headers (https://packaging.python.org/en/latest/specifications/core-metadata/);
only the fields the doctor judges are read. Pure: bytes or text in, a value out.
"""
from __future__ import annotations

import email.parser
from dataclasses import dataclass
from typing import Optional, Tuple, Union

from packaging.utils import canonicalize_name


class MetadataError(ValueError):
    """The text is not core metadata (no Name or no Version)."""


@dataclass(frozen=True)
class Metadata:
    name: str  # canonical (PEP 503) name
    version: str
    requires_python: Optional[str] = None
    requires_dist: Tuple[str, ...] = ()


def parse_metadata(raw: Union[bytes, str]) -> Metadata:
    """Name, Version, Requires-Python and Requires-Dist of a core-metadata document.

    Core metadata is UTF-8; old tools wrote Latin-1, which is read as such rather than refused.
    The long description (the body after the headers) is never parsed.
    """
    if isinstance(raw, bytes):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")
    else:
        text = raw
    msg = email.parser.HeaderParser().parsestr(text)
    name, version = (msg.get("Name") or "").strip(), (msg.get("Version") or "").strip()
    if not name or not version:
        raise MetadataError("no Name/Version header")
    return Metadata(
        name=canonicalize_name(name),
        version=version,
        requires_python=(msg.get("Requires-Python") or "").strip() or None,
        requires_dist=tuple(r.strip() for r in msg.get_all("Requires-Dist") or []),
    )
