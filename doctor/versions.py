"""Version strings of the Ascend stack and of Python distributions.

Huawei versions (CANN ``8.2.RC1``, ``8.2.RC1.alpha002``, ``9.1.0-beta.1``; driver ``24.1.rc2.2``,
``23.0.rc1.b070``; firmware ``7.5.0.1.129``) are not PEP 440, so they get their own total order:
``8.0.RC1 < 8.0.RC3 < 8.0.0 < 8.0.1``, ``x.alphaN < x.betaN < x``, ``x < x.2``, ``x < x.bNNN < x.bMMM`` (N < M).
Python distributions use :mod:`packaging` (PEP 440, local labels such as ``+empty``).
"""
from __future__ import annotations

import functools
import re
from typing import List, Optional, Tuple, overload

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# Token kinds, in the order they sort at the same position. "end" pads the shorter version,
# so a pre-release marker (alpha/beta) sorts before the plain version and a trailing number
# or build suffix after it; an rc at the position of the patch number sorts before any patch.
_ALPHA, _BETA, _WORD, _END, _RC, _BUILD, _NUM = -4, -3, -2, 0, 1, 2, 3
_WORD_KINDS = {"alpha": _ALPHA, "a": _ALPHA, "beta": _BETA, "rc": _RC, "b": _BUILD}
_END_TOKEN = (_END, 0, "")

Token = Tuple[int, int, str]


def _tokens(text: str) -> Tuple[Token, ...]:
    # pure, and asked again and again for the same few hundred strings (every matrix query
    # compares a version against each row): each short one is parsed once per process; a long
    # one (only crafted input is) is parsed every time, so the cache never holds its bytes
    return _tokens_cached(text) if len(text) <= _CACHED_LEN else _parse_tokens(text)


_CACHED_LEN = 64


def _parse_tokens(text: str) -> Tuple[Token, ...]:
    out: List[Token] = []
    parts = [p for p in re.split(r"[.\-_+\s]+", text.strip().lower()) if p]
    i = 0
    while i < len(parts):
        runs = re.findall(r"[a-z]+|\d+|[^a-z\d]+", parts[i])
        # "beta.1" / "rc.2" are one marker split by a dot.
        if len(runs) == 1 and runs[0].isalpha() and i + 1 < len(parts) and parts[i + 1].isdigit():
            runs = [runs[0], parts[i + 1]]
            i += 1
        j = 0
        while j < len(runs):
            run = runs[j]
            if run.isdigit():
                out.append((_NUM, int(run), ""))
            elif run.isalpha():
                num = 0
                if j + 1 < len(runs) and runs[j + 1].isdigit():
                    num = int(runs[j + 1])
                    j += 1
                kind = _WORD_KINDS.get(run, _WORD)
                out.append((kind, num, "" if kind != _WORD else run))
            else:
                out.append((_WORD, 0, run))
            j += 1
        i += 1
    return tuple(out)


_tokens_cached = functools.lru_cache(maxsize=4096)(_parse_tokens)


@functools.total_ordering
class AscendVersion:
    """A CANN / driver / firmware version with a total order. Never raises on parse."""

    __slots__ = ("text", "key")

    def __init__(self, text: str):
        self.text = str(text).strip()
        self.key: Tuple[Token, ...] = _tokens(self.text)

    def _padded(self, other: "AscendVersion") -> Tuple[Tuple[Token, ...], Tuple[Token, ...]]:
        n = max(len(self.key), len(other.key))
        a = self.key + (_END_TOKEN,) * (n - len(self.key))
        b = other.key + (_END_TOKEN,) * (n - len(other.key))
        return a, b

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AscendVersion):
            return NotImplemented
        a, b = self._padded(other)
        return a == b

    def __lt__(self, other: "AscendVersion") -> bool:
        a, b = self._padded(other)
        return a < b

    def __hash__(self) -> int:
        # Keys never contain end tokens, so padded equality is plain key equality.
        return hash(self.key)

    def __repr__(self) -> str:
        return f"AscendVersion({self.text!r})"

    def __str__(self) -> str:
        return self.text

    @property
    def numbers(self) -> Tuple[int, ...]:
        """Leading numeric components: ``7.7.0.1.231`` -> (7, 7, 0, 1, 231); ``8.2.RC1`` -> (8, 2)."""
        nums = []
        for kind, num, _ in self.key:
            if kind != _NUM:
                break
            nums.append(num)
        return tuple(nums)

    def truncated(self, parts: int) -> "AscendVersion":
        return AscendVersion(".".join(str(n) for n in self.numbers[:parts]))

    def has_prefix(self, prefix: str) -> bool:
        """True when this version belongs to the family ``prefix`` (``24.1`` holds ``24.1.rc3``)."""
        p = AscendVersion(prefix).key
        return len(p) <= len(self.key) and self.key[: len(p)] == p

    def release_line(self) -> str:
        """The release a version belongs to, without patch or build suffixes:
        ``8.2.RC1.B150`` -> ``8.2.rc1``, ``25.0.rc1.1`` -> ``25.0.rc1``, ``8.5.0.2.220`` -> ``8.5.0``."""
        parts = []
        for kind, num, _ in self.key[:3]:
            if kind == _NUM:
                parts.append(str(num))
            elif kind == _RC:
                parts.append(f"rc{num}")
                break
            else:
                break
        return ".".join(parts)


def ascend(text: str) -> AscendVersion:
    return AscendVersion(text)


# What a version read from an Ascend host may look like: ASCII digits and letters in parts
# separated by dots, dashes or underscores, starting with a number (8.3.RC2, 9.1.0-beta.1,
# 23.0.rc1.b070, 7.7.0.1.231). Anything else (spaces, ';', '$', bytes that are not UTF-8) is not a
# version: such a string is never judged as one, and never reaches a printed command.
_VERSION_SHAPE = re.compile(r"[0-9]+(?:[._\-][0-9A-Za-z]+)*")
MAX_VERSION_LEN = 64


def version_problem(text: Optional[str]) -> Optional[str]:
    """Why ``text`` (a version read from a host file or a vendor tool) is not a version, or None
    when it is one. The why shows the value escaped (``ascii()``): it may hold anything."""
    if text is None:
        return None
    shown = ascii(text if len(text) <= MAX_VERSION_LEN else text[:MAX_VERSION_LEN] + "...")
    if "\ufffd" in text:
        return f"{shown} is not a version (bytes that are not UTF-8)"
    if len(text) > MAX_VERSION_LEN:
        return f"{shown} is not a version (longer than {MAX_VERSION_LEN} characters)"
    if not _VERSION_SHAPE.fullmatch(text):
        return f"{shown} is not a version (only digits, letters and . - _ between them)"
    return None


def in_version_range(version: str, lo: str, hi: str, compare_parts: Optional[int] = None) -> bool:
    """Huawei ``[lo,hi]`` compatibility ranges.

    ``[24.1,24.1.]`` (hi = lo + ".") is the prefix family of ``24.1`` (firmware's
    ``compatible_version_drv``); otherwise an inclusive range, comparing ``version`` on as many
    numeric parts as the bounds have (driver's ``compatible_version_fw=[7.0.0,7.7.99]`` against
    firmware ``7.7.0.1.231``).
    """
    lo, hi = lo.strip(), hi.strip()
    v = AscendVersion(version)
    if hi.endswith(".") and hi.rstrip(".").lower() == lo.lower():
        return v.has_prefix(lo)
    parts = compare_parts or max(len(AscendVersion(lo).numbers), len(AscendVersion(hi).numbers))
    if parts and len(v.numbers) >= parts:
        v = v.truncated(parts)
    return AscendVersion(lo) <= v <= AscendVersion(hi)


def parse_ranges(text: str) -> List[Tuple[str, str]]:
    """``[6.4.0,6.4.99],[7.0.0,7.7.99]`` -> [("6.4.0", "6.4.99"), ("7.0.0", "7.7.99")]."""
    out = []
    for body in re.findall(r"\[([^\]]*)\]", text or ""):
        bits = [b.strip() for b in body.split(",")]
        if len(bits) == 2 and bits[0]:
            out.append((bits[0], bits[1]))
        elif len(bits) == 1 and bits[0]:
            out.append((bits[0], bits[0]))
    return out


# ---------------------------------------------------------------------------------------------
# PEP 440


def pep440(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    text = str(text).strip()
    return _pep440_cached(text) if len(text) <= _CACHED_LEN else _pep440(text)


def _pep440(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None


# a Version is immutable: one per string is shared, as for Ascend versions above
_pep440_cached = functools.lru_cache(maxsize=4096)(_pep440)


def valid_pep440(text: str) -> Version:
    """A version the matrix schema already checked (``check_pep440``): never None, and an
    InvalidVersion if it was not checked after all."""
    v = pep440(text)
    return v if v is not None else Version(str(text).strip())


@overload
def public(text: str) -> str: ...
@overload
def public(text: None) -> None: ...
def public(text: Optional[str]) -> Optional[str]:
    """``0.11.2+empty`` -> ``0.11.2``; unparsable strings come back unchanged."""
    v = pep440(text)
    if v is None:
        return text
    return v.public


def same_release(installed: Optional[str], expected: Optional[str]) -> bool:
    """Installed version equals the expected one, ignoring a local label (``2.7.1+cpu`` == ``2.7.1``)."""
    a, b = pep440(installed), pep440(expected)
    if a is None or b is None:
        return False
    return Version(a.public) == Version(b.public)


def local_label(text: Optional[str]) -> Optional[str]:
    v = pep440(text)
    return v.local if v is not None else None


def specifier(text: Optional[str]) -> Optional[SpecifierSet]:
    if text is None:
        return None
    return _specifier_cached(text) if len(text) <= 4 * _CACHED_LEN else _specifier(text)


def _specifier(text: str) -> Optional[SpecifierSet]:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


# shared like the versions: nothing here sets a SpecifierSet's prereleases (its one mutable part)
_specifier_cached = functools.lru_cache(maxsize=1024)(_specifier)


def satisfies(version: Optional[str], spec: Optional[str]) -> Optional[bool]:
    """Does an installed version satisfy a specifier? None when either cannot be parsed."""
    v, s = pep440(version), specifier(spec)
    if v is None or s is None:
        return None
    return s.contains(v, prereleases=True)

