"""A JSON document parsed only when its shape is bounded (the approach of doctor/parse/oci.py's
``load_json``, with the bounds as arguments): how many objects and arrays it holds, how many
values (members, elements, keys) and how deeply they nest are counted on the bytes first, so that
no crafted document costs memory or recursion to find out. ``json.loads`` of 100 MB of ``[],``
builds ~35M lists (2.7 GB); the count is a few passes of C over the bytes.
"""
from __future__ import annotations

import json
from typing import Any

from doctor.record import record

_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"{}[]")


@record(frozen=True)
class Shape:
    depth: int  # objects and arrays inside each other
    containers: int  # objects and arrays
    values: int  # keys, members and elements (a comma or a colon in front of each but the first)


class ShapeError(ValueError):
    """The document goes past a bound: ``bound`` is "depth", "containers" or "values"."""

    def __init__(self, bound: str, limit: int):
        self.bound, self.limit = bound, limit
        super().__init__(f"JSON {bound} past the bound of {limit}")


def check(data: bytes, shape: Shape) -> None:
    """ShapeError when ``data`` would go past ``shape``. The raw counts (strings included) are an
    upper bound, so a document within them is not looked at again: the common case. Only C
    passes over the bytes (a regex that skips strings backtracks into gigabytes on a 100 MB one),
    and the one Python loop runs over at most 2 * containers + 1 brackets."""
    opening = data.count(b"{") + data.count(b"[")
    if opening <= shape.depth and opening <= shape.containers and data.count(b",") + data.count(b":") <= shape.values:
        return
    if data.count(b'"') // 2 > shape.values:  # every string is a value (a key or an element)
        raise ShapeError("values", shape.values)
    # what is inside strings is no structure: drop escaped backslashes, then escaped quotes
    # (left to right, as a JSON reader pairs them), then every other piece between quotes
    text = b"".join(data.replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')[0::2])
    if text.count(b",") + text.count(b":") > shape.values:
        raise ShapeError("values", shape.values)
    brackets = text.translate(None, delete=_NOT_BRACKETS)
    if brackets.count(b"{") + brackets.count(b"[") > shape.containers or len(brackets) > 2 * shape.containers + 2:
        raise ShapeError("containers", shape.containers)
    depth = 0
    for c in brackets:
        if c in b"{[":
            depth += 1
            if depth > shape.depth:
                raise ShapeError("depth", shape.depth)
        else:
            depth -= 1


def loads(data: bytes, shape: Shape) -> Any:
    """``json.loads`` of UTF-8 ``data`` within ``shape`` (ShapeError past it; ValueError,
    UnicodeDecodeError when it is not JSON)."""
    check(data, shape)
    return json.loads(data.decode("utf-8"))
