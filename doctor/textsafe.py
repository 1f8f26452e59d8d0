"""Text from data made safe to show on a terminal: the one filter every string that comes from
data (package metadata, image configs and Dockerfile steps, logs, snapshots, fleet values, host
names, file names) passes through before it is printed.

A terminal obeys what it is sent: ESC starts a control sequence (``ESC [2J`` clears the screen,
``ESC ]0;...`` retitles the window, ``ESC c`` resets it), CR returns to the start of the line
(the rest of the line can be overwritten with something else), BEL rings, BS erases, and the
Unicode bidi controls reorder what is shown ("Trojan source"). rich strips BEL, BS, VT, FF and CR
from what it prints but passes ESC through, and it reads ``[...]`` as markup unless told not to
(``root@[fd00::1]`` would be shown as ``root@``). So:

- :func:`clean` shows every control character of one line as a visible escape (``\\x1b``,
  ``\\r``, ``\\n``, ``\\u202e``): one datum stays one line and prints as it is written;
- :func:`clean_block` does the same but keeps line breaks (a log excerpt, a file's text);
- :func:`markup` is :func:`clean` for a place where rich reads markup.

``--json`` output is never filtered: it is exact (and JSON escapes C0 controls itself);
:func:`json_safe` only writes a lone surrogate as its escape, so that it encodes as UTF-8.
Pure functions.
"""
from __future__ import annotations

import re
from typing import Any
from doctor.lazyre import lazy

# C0 controls, DEL, C1 controls; the Unicode characters that reorder or hide text (bidi
# embeddings, overrides and isolates, marks, the line and paragraph separators, zero-width
# joiners and spaces, the BOM used mid-text), and lone surrogates: a name that is not UTF-8 (a
# file name, a dist-info directory) decodes with surrogateescape, and stdout would write its
# bytes back raw (0x9b is the 8-bit CSI) or, where it is strict UTF-8, fail
_UNSAFE = lazy("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_UNSAFE_KEEP_NL = lazy("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_SURROGATE = lazy("[\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# what rich reads as a markup tag: [bold], [/], [#fff], [@click], [link=...] (rich.markup.escape)
_TAG = lazy(r"(\\*)(\[[a-z#/@][^[]*?])")


def _escape(m: "re.Match[str]") -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape): shown as that byte
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def clean(text: Any) -> str:
    """One line of data, safe for a terminal: every control character shown as an escape."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s) if _UNSAFE.search(s) else s


def clean_block(text: Any) -> str:
    """Several lines of data: as :func:`clean`, line breaks kept."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE_KEEP_NL.sub(_escape, s) if _UNSAFE_KEEP_NL.search(s) else s


def markup(text: Any) -> str:
    """A datum placed where rich parses markup: cleaned, and its ``[...]`` shown as written."""
    return _TAG.sub(lambda m: m.group(1) * 2 + "\\" + m.group(2), clean(text))


def json_safe(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) that encodes as UTF-8: a lone surrogate
    from data (a name that was not UTF-8) written as its ``\\uXXXX`` escape, which a JSON reader
    turns back into the same string. Surrogates occur only inside JSON strings, so the escape is
    always in one."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) if _SURROGATE.search(text) else text


def dumps(value: Any, **options: Any) -> str:
    """Every JSON the doctor writes (--json, snapshots, journals, a bundle's plan): UTF-8 as it is
    (``ensure_ascii=False``), lone surrogates escaped (:func:`json_safe`)."""
    import json

    return json_safe(json.dumps(value, ensure_ascii=False, **options))


def is_clean(text: str) -> bool:
    return not _UNSAFE.search(text)
