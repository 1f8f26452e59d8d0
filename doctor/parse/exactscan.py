"""The log scanner's candidate search through one compiled multi-string automaton.

``ahocorasick-rs`` (a Rust Aho-Corasick wheel, a declared dependency with wheels for x86_64 and
aarch64 on every Python the doctor runs on) finds hundreds of exact strings in a piece of log in
one pass, about three times as fast as the pure-Python marker scan of
:mod:`doctor.parse.logscan`, which stays the fallback where the wheel is missing. Both only
choose candidate lines: every candidate is then matched for real in Python, so the answers
are the same either way.

Each needle of a pattern (text every match contains, :func:`doctor.parse.logscan.required`) is
chosen here for how seldom it occurs rather than for a rare byte, then cut to its most selective
*window*: a run of atoms whose classes multiply out to at most VARIANTS exact strings, every one
of which goes into the automaton. A matcher with a needle that has no such window is left to the
marker scan. The search reports overlapping matches, so a string inside another one's match is
not lost.
"""
from __future__ import annotations

import math
from functools import lru_cache
from itertools import chain, product
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from doctor.parse.needles import FREQ, MIN_NEEDLE, Matcher, Needle, line_literals, plain_literals, required

# exact strings one needle's window may expand to: FEW when that leaves it MIN_NEEDLE atoms (each
# string adds automaton states, which take time to build on every run), else up to VARIANTS
FEW = 64
VARIANTS = 512
WINDOW = 32  # atoms a window holds at most (longer buys little but automaton states, built on every run)
FLOOR = 0.02  # the least share of log bytes an atom is taken to match: words are not random letters


def load() -> Any:
    """The ahocorasick_rs module, or None when its wheel is not installed (or lacks the API)."""
    try:
        import ahocorasick_rs
    except ImportError:
        return None
    if not hasattr(ahocorasick_rs, "BytesAhoCorasick") or not hasattr(ahocorasick_rs, "Implementation"):
        return None
    return ahocorasick_rs


def _atoms(needle: Needle) -> List[Tuple[int, ...]]:
    """The needle's atoms as sorted byte tuples, the newline left out (no line holds one)."""
    return [tuple(sorted(b for b in atom if b != 0x0A)) for atom in needle]


def _rate(atom: Tuple[int, ...]) -> float:
    return min(1.0, max(FLOOR, sum(FREQ[b] for b in atom) / 100000))


@lru_cache(maxsize=4096)
def window(needle: Needle) -> Optional[Tuple[float, int, int]]:
    """(rate, start, stop) of the needle's most selective window: at least MIN_NEEDLE atoms,
    at most WINDOW, at most FEW strings (else VARIANTS); rate estimates how often it occurs
    per byte (the product of its atoms' shares). None when no window qualifies."""
    return _window(needle, FEW) or _window(needle, VARIANTS)


def _window(needle: Needle, limit: int) -> Optional[Tuple[float, int, int]]:
    atoms = _atoms(needle)
    sizes = [len(a) for a in atoms]
    logs = [math.log(_rate(a)) if a else 0.0 for a in atoms]
    best: Optional[Tuple[float, int, int]] = None
    # every atom's rate is at most 1: from each start the longest window that fits is the best
    # one, and its end never moves back as the start moves on (two pointers, linear)
    stop, variants, total = 0, 1, 0.0
    for start in range(len(atoms)):
        if stop < start:
            stop, variants, total = start, 1, 0.0
        while stop < len(atoms) and stop - start < WINDOW and sizes[stop] and variants * sizes[stop] <= limit:
            variants *= sizes[stop]
            total += logs[stop]
            stop += 1
        if stop - start >= MIN_NEEDLE and (best is None or total < best[0] - 1e-9):
            best = (total, start, stop)
        if stop > start:  # the start atom leaves the window
            variants //= sizes[start]
            total -= logs[start]
    return None if best is None else (math.exp(best[0]), best[1], best[2])


# Each atom of a window past its rarest multiplies the estimate of how often the window occurs
# by its share of log bytes, but by no less than this: letters in words follow each other far
# more often than random bytes would (the shares alone make "vllm" look rarer than "install").
FOLLOW = 0.5
# Words (or their parts) in nearly every line of some serving log, whatever the case: a window
# inside one of them occurs that often, whatever its bytes' shares say (the commonest needles of
# the bench's serving log, bench/explain_bench.py, and of real vLLM, CANN and HCCL logs).
COMMON = ("vllm_ascend", "torch_npu", "ascend", "hccl", "npu", "cann", "vllm", "torch", "available", "support",
          "error", "warning", "failed", "export", "requirement already satisfied", "does not", "did not", "do not",
          "is not", "not found")
COMMON_RATE = 0.01  # the estimate for such a window (per byte)


def estimate(needle: Needle, w: Tuple[float, int, int]) -> float:
    """How often the window ``w`` of the needle occurs in logs, per byte: its rarest atom's share
    times the others' (each at least FOLLOW); COMMON_RATE at least when it lies in a COMMON word."""
    atoms = _atoms(needle)[w[1]: w[2]]
    shares = sorted(min(1.0, max(1e-4, sum(FREQ[b] if b < 0x80 else 200 for b in a) / 100000)) for a in atoms)
    out = shares[0]
    for share in shares[1:]:
        out *= max(share, FOLLOW)
    if out < COMMON_RATE and _in_common(atoms):
        return COMMON_RATE
    return out


def _in_common(atoms: Sequence[Tuple[int, ...]]) -> bool:
    """Whether the window's text, without the spaces and punctuation around it, lies inside one
    of the COMMON words or phrases (case and the choice between '-' and '_' aside)."""
    def fold(b: int) -> str:
        c = chr(b).lower()
        return "_" if c == "-" else c

    core = list(atoms)
    while core and not any(chr(b).isalnum() for b in core[0]):
        core.pop(0)
    while core and not any(chr(b).isalnum() for b in core[-1]):
        core.pop()
    if not core or any(b >= 0x80 for a in core for b in a):
        return False
    # the text, each atom by its first byte folded (an atom of one letter in both cases, or of
    # '-' and '_', folds to one character; any other class does not make a word)
    text = ""
    for a in core:
        folded = {fold(b) for b in a}
        if len(folded) != 1:
            return False
        text += folded.pop()
    return any(text in word for word in COMMON)


def score(alternatives: Sequence[Needle]) -> Tuple[int, float, int]:
    """For :func:`required`, like the marker scan's choice but for exact strings: alternatives
    that all have a window beat those that do not; then the fewer occurrences their windows are
    estimated to have together (:func:`estimate`), then fewer alternatives."""
    windows = [window(n) for n in alternatives]
    missing = sum(1 for w in windows if w is None)
    if missing:
        return (0, -float(missing), -len(alternatives))
    return (1, -sum(estimate(n, w) for n, w in zip(alternatives, windows) if w is not None), -len(alternatives))


def strings(needle: Needle) -> List[bytes]:
    """The exact strings of the needle's window (one of them is in every text the needle is)."""
    w = window(needle)
    if w is None:
        return []
    atoms = _atoms(needle)[w[1]: w[2]]
    return [bytes(combo) for combo in product(*atoms)]


def plan(matchers: Sequence[Matcher]) -> Dict[str, Any]:
    """What the automaton is built from, as JSON data (the scanner may keep it in a cache): the
    exact strings (latin-1, one character a byte), for each the matchers it stands for
    (``owners``) and those for which it is one of the plain texts the matcher is made of
    (``sure``: a line holding it passes that matcher's literal test), and the matchers left to
    the marker scan (``rest``: a needle without a window); and each matcher's literal test and
    whether it is counted (doctor.parse.logscan.Compiled.prepare), which parse its pattern."""
    owners: Dict[bytes, Set[int]] = {}
    texts: Dict[bytes, Set[int]] = {}
    rest: List[int] = []
    for index, m in enumerate(matchers):
        found = [strings(n) for n in required(m.pattern, m.ignore_case, score=score)]
        if not all(found):
            rest.append(index)
            continue
        for group in found:
            for s in group:
                owners.setdefault(s, set()).add(index)
        if plain_literals(m.pattern, m.ignore_case) and not m.key and not m.context:
            for alt in line_literals(m.pattern, m.ignore_case) or []:
                for text in alt:
                    if "\r" not in text and "\n" not in text:
                        texts.setdefault(text.encode("utf-8"), set()).add(index)
    patterns = sorted(owners)
    return {"patterns": [p.decode("latin-1") for p in patterns],
            "owners": [sorted(owners[p]) for p in patterns],
            "sure": [sorted(owners[p] & texts.get(p, set())) for p in patterns],
            "rest": rest,
            "literals": [line_literals(m.pattern, m.ignore_case) for m in matchers],
            "counted": [plain_literals(m.pattern, m.ignore_case) and not m.key and not m.context for m in matchers]}


def valid(data: Any, count: int) -> bool:
    """Whether ``data`` has the shape :func:`plan` gives for ``count`` matchers (a cache entry
    that does not is built again)."""
    if not isinstance(data, dict) or set(data) != {"patterns", "owners", "sure", "rest", "literals", "counted"}:
        return False
    patterns, owners, sure, rest = data["patterns"], data["owners"], data["sure"], data["rest"]
    if not valid_literals(data["literals"], data["counted"], count):
        return False
    if not (isinstance(patterns, list) and isinstance(owners, list) and isinstance(sure, list) and isinstance(rest, list)):
        return False
    if not len(patterns) == len(owners) == len(sure):
        return False

    def indexes(lists: List[Any]) -> bool:  # lists of matcher indexes (one pass over them all)
        if not all(type(xs) is list for xs in lists):
            return False
        flat = list(chain.from_iterable(lists))
        return not flat or (set(map(type, flat)) == {int} and min(flat) >= 0 and max(flat) < count)

    return (all(type(p) is str and p and max(p) <= "\xff" and "\n" not in p for p in patterns)
            and all(owners) and indexes(owners) and indexes(sure) and indexes([rest])
            and all(not x or x == o or set(x) <= set(o) for x, o in zip(sure, owners)))


def valid_literals(literals: Any, counted: Any, count: int) -> bool:
    """Whether these are the literal tests and counted flags of ``count`` matchers
    (doctor.parse.logscan.Compiled.prepare), as a plan or a cache holds them."""
    if not (isinstance(literals, list) and isinstance(counted, list) and len(literals) == len(counted) == count):
        return False
    if not all(type(c) is bool for c in counted):
        return False
    return all(alts is None or (isinstance(alts, list) and alts and all(
        isinstance(alt, list) and alt and all(isinstance(t, str) and t for t in alt) for alt in alts))
        for alts in literals)


class ExactSearch:
    """The automaton of a :func:`plan`: ``masks[k]`` holds the matchers (bit i: matcher i) that
    pattern ``k`` stands for, ``sure[k]`` those it is a plain text of (``pure[k]``: all of
    them); ``rest`` lists the
    matchers left to the marker scan; ``find`` is the search (None without patterns)."""

    def __init__(self, module: Any, data: Dict[str, Any]):
        patterns = [p.encode("latin-1") for p in data["patterns"]]
        self.patterns = patterns
        self.masks = [_mask(set(o)) for o in data["owners"]]
        self.sure = [_mask(set(x)) for x in data["sure"]]
        # a pure pattern is a plain text of every matcher it stands for: a line found only by
        # pure patterns, whose matchers all have their hit, is only counted
        self.pure = [bool(m) and m == x for m, x in zip(self.masks, self.sure)]
        self.rest: List[int] = list(data["rest"])
        self.find = None
        if patterns:
            automaton = module.BytesAhoCorasick(patterns, implementation=module.Implementation.DFA)
            self.find = automaton.find_matches_as_indexes


@lru_cache(maxsize=4)
def fingerprint(*also: str) -> int:
    """A checksum of the code that makes plans (this module and doctor.parse.needles, and the
    modules named in ``also``: doctor.parse.logscan for its marker scan): part of a cached
    plan's key, so that a changed choice of strings is never read from an older cache.
    Taken from the loaded functions' code and the modules' constants, not from their files; the
    same in every process (not ``marshal``, whose output follows the objects' reference counts,
    which differ with what else is loaded, and the order of sets, which follows the hash seed)."""
    import sys
    import zlib

    crc = 0
    for module in [sys.modules[__name__], sys.modules[Matcher.__module__]] + [sys.modules[name] for name in also]:
        for name, value in sorted(vars(module).items()):
            if getattr(value, "__module__", None) != module.__name__:
                if isinstance(value, (int, float, str, tuple, frozenset)) and name.isupper():
                    crc = zlib.crc32(_stable((name, value)).encode(), crc)
                continue
            members = [value] + ([v for _, v in sorted(vars(value).items())] if isinstance(value, type) else [])
            for member in members:
                member = getattr(member, "__wrapped__", getattr(member, "__func__", member))
                code = getattr(member, "__code__", None)
                if code is not None:
                    crc = zlib.crc32(_stable(code).encode(), crc)
    return crc


def _stable(value: Any) -> str:
    """A text of a constant or a code object that is the same in every process."""
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_stable(v) for v in value) + ")"
    if isinstance(value, (frozenset, set)):
        return "{" + ",".join(sorted(_stable(v) for v in value)) + "}"
    code = getattr(value, "co_code", None)
    if code is not None:
        return "<" + ",".join([code.hex(), _stable(value.co_consts), _stable(value.co_names),
                               _stable(value.co_varnames), str(value.co_argcount), str(value.co_flags)]) + ">"
    return repr(value)


def _mask(indexes: Set[int]) -> int:
    out = 0
    for i in indexes:
        out |= 1 << i
    return out
