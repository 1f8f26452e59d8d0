"""The literal text every shipped pattern must contain, worked out from the pattern itself.

A log scanner can only skip a line cheaply when it knows which exact strings each regular
expression needs: ``required`` reads a pattern's parse tree into *needles* (sequences of byte
sets, one per position), ``line_literals`` into the strings a matching line must hold.
:mod:`doctor.parse.logscan` (the marker scan) and :mod:`doctor.parse.exactscan` (the automaton)
both build their candidate searches from these; :class:`Matcher` is the record they share.
Pure: patterns in, needles out.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

if sys.version_info >= (3, 11):  # Python 3.11 moved the regex parser (the old names are deprecated there)
    from re import _constants as sre_c
    from re import _parser as sre_parse
else:  # pragma: no cover - Python < 3.11
    import sre_constants as sre_c
    import sre_parse

# a parsed pattern (sre_parse.SubPattern) or a branch of one: (opcode, argument) pairs
Items = Iterable[Tuple[Any, Any]]
Atom = FrozenSet[int]  # the bytes one position of a match may hold
Needle = Tuple[Atom, ...]

# How often each printable byte occurs in serving logs, per 100,000 bytes: measured on the corpus
# bench/explain_bench.py writes (vLLM, vllm-ascend, CANN plog, HCCL, ATB, Mooncake and pip lines
# in the proportions of a busy server) and floored at 20, since no byte is absent from every log.
# Bytes above 0x7e (UTF-8 of Chinese messages) and controls other than the tab are priced flat.
_FREQ_TEXT = """
 8227 ! 20 " 690 # 20 $ 20 % 189 & 20 ' 112 ( 379 ) 379 * 20 + 20 , 1948 - 1084 . 2360 / 717
0 4037 1 3373 2 2900 3 2129 4 1802 5 2038 6 1641 7 1617 8 1534 9 1836 : 2795 ; 20 < 31 = 1292
> 55 ? 20 @ 20 A 290 B 75 C 229 D 144 E 293 F 417 G 149 H 189 I 667 J 20 K 139 L 147 M 181
N 688 O 569 P 446 Q 20 R 297 S 353 T 322 U 145 V 121 W 116 X 20 Y 20 Z 30 [ 1150 \\ 20 ] 1168
^ 20 _ 1578 ` 20 a 2870 b 450 c 2235 d 1423 e 5846 f 847 g 1132 h 1044 i 2639 j 20 k 671
l 1775 m 1773 n 3173 o 3116 p 2963 q 471 r 2994 s 2578 t 3969 u 1128 v 703 w 143 x 333 y 871
z 81 { 24 | 49 } 24 ~ 20
"""


def _freq_table() -> Dict[int, int]:
    out = {b: 20 for b in range(256)}
    out.update({b: 1000 for b in range(0x7F, 256)})
    out[0x09] = 100
    out[0x0A] = out[0x0D] = 10 ** 6  # never a marker: lines are split there
    words = _FREQ_TEXT.replace("\n", " ").split(" ")
    words = [w for w in words if w != ""]
    out[0x20] = int(words[0])
    for name, count in zip(words[1::2], words[2::2]):
        out[ord(name)] = int(count)
    return out


FREQ: Dict[int, int] = _freq_table()
# Control bytes that stand for marked bytes in the translated text: text logs hold none of them
# (tab, newline, carriage return and the escape of colour codes are left out); where one does
# occur it only costs a wasted check.
MARKERS = tuple(c for c in range(1, 32) if c not in (0x09, 0x0A, 0x0D, 0x1B))
MIN_NEEDLE = 3  # atoms; shorter literals would make nearly every line a candidate
MAX_TOKEN = 24  # atoms after the marker at which a token stops growing (longer buys nothing)
MAX_BEHIND = 12  # atoms before the marker a token also checks (by lookbehind)
# A needle is weak when its rarest atom occurs more often than this (per 100,000 bytes): the
# marker scan would then stop at a byte as common as 'r' or 'd'. Shipped patterns hold none.
WEAK = 900


class PatternError(ValueError):
    """A pattern holds no literal text long enough to prefilter on."""


# ---------------------------------------------------------------------------------------------
# what every match of a pattern must contain


def _fold(b: int, icase: bool) -> Atom:
    if icase and (65 <= b <= 90 or 97 <= b <= 122):
        return frozenset({b | 0x20, b & ~0x20})
    return frozenset({b})


def _literal_atoms(code: int, icase: bool) -> Optional[List[Atom]]:
    ch = chr(code)
    raw = ch.encode("utf-8")
    if len(raw) == 1:
        return [_fold(raw[0], icase)]
    return [frozenset({b}) for b in raw]  # non-ASCII: exact UTF-8 bytes


_CATEGORY = {
    "CATEGORY_DIGIT": frozenset(range(48, 58)),
    "CATEGORY_SPACE": frozenset(b" \t\n\r\f\v"),
    "CATEGORY_WORD": frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"),
}


def _in_atom(items: Items, icase: bool) -> Optional[Atom]:
    """The bytes a character class accepts, when it is a small ASCII set (else None)."""
    out: Set[int] = set()
    for op, av in items:
        name = str(op)
        if name == "NEGATE":
            return None
        if name == "LITERAL":
            if av > 127:
                return None
            out |= _fold(av, icase)
        elif name == "RANGE":
            lo, hi = av
            if hi > 127:
                return None
            for b in range(lo, hi + 1):
                out |= _fold(b, icase)
        elif name == "CATEGORY":
            cat = _CATEGORY.get(str(av))
            if cat is None:
                return None
            out |= cat
        else:
            return None
    return frozenset(out) if 0 < len(out) <= 64 else None


@lru_cache(maxsize=4096)
def atom_cost(atom: Atom) -> int:
    """How often the marker scan would stop at this atom (FREQ of its bytes, summed)."""
    return sum(FREQ[b] for b in atom)


def needle_cost(needle: Needle) -> int:
    """The cost of the needle's rarest atom: what it adds to the scan at best."""
    return min(atom_cost(a) for a in needle)


def _score(alternatives: Sequence[Needle]) -> Tuple[int, int, int, int]:
    """Higher is better. Needles the marker scan can use (not weak) beat weak ones, and among
    them the weakest needle's cost decides; weak needles are found by their exact text instead,
    so among those the longest exact run of the worst decides. Then length (a longer token
    makes fewer lines candidates), then fewer alternatives."""
    span = min(min(len(n) for n in alternatives), MAX_TOKEN + MAX_BEHIND + 1)
    if not any(weak(n) for n in alternatives):
        return (1, -max(needle_cost(n) for n in alternatives), span, -len(alternatives))
    return (0, min(max((len(r) for r in exact_runs(n)), default=0) for n in alternatives), span, -len(alternatives))


Score = Callable[[Sequence[Needle]], Tuple[Any, ...]]


MAX_ALTS = 16  # alternatives of fixed text a needle is spelled out in (``(?:err|retCode)=0x``: 2)


def _sequence(items: Items, icase: bool, score: Score = _score) -> Optional[List[Needle]]:
    """The best needles (by ``score``) of a sequence: its runs of contiguous fixed text, where a
    choice of fixed texts or a group of fixed text (``(?:err|retCode)[=:](?P<code>0x7...``)
    continues the run as alternatives (each a needle), and the best needles of its parts."""
    best: Optional[List[Needle]] = None
    runs: List[List[Atom]] = [[]]  # the fixed text just read: its alternatives

    def consider(alts: Optional[List[Needle]]) -> None:
        nonlocal best
        if alts and (best is None or score(alts) > score(best)):
            best = alts

    def qualified(alts: Sequence[Sequence[Atom]]) -> Optional[List[Needle]]:
        if all(len(r) >= MIN_NEEDLE for r in alts):
            return list(dict.fromkeys(tuple(r) for r in alts))
        return None

    def flush() -> None:
        nonlocal runs
        consider(qualified(runs))
        runs = [[]]

    def extend(alts: List[Needle]) -> None:
        nonlocal runs
        if len(alts) > 1:  # the text before a choice, and the choice itself, are needles too
            consider(qualified(runs))
            consider(qualified(alts))
        if len(runs) * len(alts) > MAX_ALTS:
            flush()
            runs = [list(a) for a in alts]
        else:
            runs = [r + list(a) for r in runs for a in alts]

    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            atoms = _literal_atoms(av, icase)
            for r in runs:
                r.extend(atoms or [])
        elif name == "IN":
            atom = _in_atom(av, icase)
            if atom is None:
                flush()
            else:
                for r in runs:
                    r.append(atom)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # zero width: the text around it stays contiguous
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            single = _single_atom(sub, icase)
            if single is not None and lo >= 1:
                for r in runs:
                    r.extend([single] * min(lo, MAX_TOKEN))
                if hi != lo or lo > MAX_TOKEN:  # past MAX_TOKEN copies, what follows is not next
                    flush()
                continue
            flush()
            if lo >= 1:
                consider(_sequence(sub, icase, score))
        elif name == "SUBPATTERN":
            group, add, delete, sub = av
            sub_icase = (icase or bool(add & sre_c.SRE_FLAG_IGNORECASE)) and not (delete & sre_c.SRE_FLAG_IGNORECASE)
            fixed = _fixed(sub, sub_icase)
            if fixed:
                extend(fixed)
                continue
            flush()
            consider(_sequence(sub, sub_icase, score))
        elif name == "BRANCH":
            fixed = _fixed([(op, av)], icase)
            if fixed:
                extend(fixed)
                continue
            flush()
            alts: List[Needle] = []
            for branch in av[1]:
                got = _sequence(branch, icase, score)
                if not got:
                    alts = []
                    break
                alts.extend(got)
            consider(alts or None)
        else:
            flush()
    flush()
    return best


def _fixed(items: Items, icase: bool) -> Optional[List[Needle]]:
    """The texts a sequence matches when they are few and fixed (literals, small classes,
    repeats of one atom a fixed number of times, groups and choices of such): each as atoms,
    at most MAX_ALTS of them. None when it matches anything else."""
    out: List[Needle] = [()]
    for op, av in items:
        name = str(op)
        add: List[Needle]
        if name == "LITERAL":
            add = [tuple(_literal_atoms(av, icase) or [])]
        elif name == "IN":
            atom = _in_atom(av, icase)
            if atom is None:
                return None
            add = [(atom,)]
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            single = _single_atom(sub, icase)
            if single is None or lo != hi or not 1 <= lo <= MAX_TOKEN:
                return None
            add = [(single,) * lo]
        elif name == "SUBPATTERN":
            _group, add_flags, delete, sub = av
            sub_icase = (icase or bool(add_flags & sre_c.SRE_FLAG_IGNORECASE)) and not (delete & sre_c.SRE_FLAG_IGNORECASE)
            got = _fixed(sub, sub_icase)
            if got is None:
                return None
            add = got
        elif name == "BRANCH":
            add = []
            for branch in av[1]:
                got = _fixed(branch, icase)
                if got is None:
                    return None
                add.extend(got)
        else:
            return None
        if len(out) * len(add) > MAX_ALTS:
            return None
        out = [o + a for o in out for a in add]
    return out if out != [()] else None


def _single_atom(sub: Items, icase: bool) -> Optional[Atom]:
    items = list(sub)
    if len(items) != 1:
        return None
    op, av = items[0]
    if str(op) == "LITERAL":
        atoms = _literal_atoms(av, icase)
        return atoms[0] if atoms and len(atoms) == 1 else None
    if str(op) == "IN":
        return _in_atom(av, icase)
    return None


@lru_cache(maxsize=1024)
def _parse(pattern: str, ignore_case: bool) -> Any:
    return sre_parse.parse(pattern, re.IGNORECASE if ignore_case else 0)


def line_literals(pattern: str, ignore_case: bool = False) -> Optional[List[List[str]]]:
    """Text every line the pattern matches contains: a list of alternatives, each a list of
    strings that must all occur in the line (or None when nothing cheap is known). Cheaper to
    test with ``in`` than the pattern's search, which is run only on lines that pass."""
    parsed = _parse(pattern, ignore_case)
    if parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE:
        return None
    items = list(parsed.data)
    branches = [list(b) for b in items[0][1][1]] if len(items) == 1 and str(items[0][0]) == "BRANCH" else [items]
    out: List[List[str]] = []
    for branch in branches:
        runs = _literal_runs(branch)
        if len(runs) > 4:  # enough to tell most lines apart: the longest
            runs = sorted(runs, key=len, reverse=True)[:4]
        if not runs:
            return None  # this alternative asks for no literal text: nothing to test cheaply
        out.append(runs)
    return out


def plain_literals(pattern: str, ignore_case: bool = False) -> bool:
    """Whether the pattern is text or a choice of texts, nothing else: then a line matches it
    exactly when it holds one of them (what ``line_literals`` gives)."""
    parsed = _parse(pattern, ignore_case)
    if parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE:
        return False
    items = list(parsed.data)
    branches = [list(b) for b in items[0][1][1]] if len(items) == 1 and str(items[0][0]) == "BRANCH" else [items]
    return all(b and all(str(op) == "LITERAL" for op, _ in b) and len(b) >= MIN_NEEDLE for b in branches)


def _literal_runs(items: Items) -> List[str]:
    """The runs of literal characters of a sequence and of the groups it must match: those of
    3 characters or more, and shorter ones outside ASCII (a Chinese word of two characters)."""
    out: List[str] = []
    run: List[str] = []

    def flush() -> None:
        if len(run) >= MIN_NEEDLE or (run and any(ord(ch) > 127 for ch in run)):
            out.append("".join(run))
        run.clear()

    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            run.append(chr(av))
            continue
        flush()
        if name == "SUBPATTERN":
            _group, add, delete, sub = av
            if not (add & sre_c.SRE_FLAG_IGNORECASE):
                sub_items = list(sub)
                if not (len(sub_items) == 1 and str(sub_items[0][0]) == "BRANCH"):
                    out.extend(_literal_runs(sub_items))
    flush()
    return out


def required(pattern: str, ignore_case: bool = False, score: Score = _score) -> List[Needle]:
    """Needles such that every match of ``pattern`` contains at least one of them; where the
    pattern offers several choices, the one ``score`` rates highest (by default: what the
    marker scan finds cheapest).

    Raises PatternError when the pattern has no literal run of MIN_NEEDLE characters on every
    path (a pattern like ``.*error`` with ``error`` optional cannot be prefiltered)."""
    parsed = _parse(pattern, ignore_case)
    icase = bool(parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE)
    got = _sequence(parsed.data, icase, score)  # the (opcode, argument) list SubPattern iterates over
    if not got:
        raise PatternError(f"no literal text of {MIN_NEEDLE}+ characters that every match must contain: {pattern!r}")
    return got


# ---------------------------------------------------------------------------------------------
# tokens: a needle suffix that starts at a rare byte


@dataclass(frozen=True)
class Matcher:
    """One regular expression the scanner evaluates on candidate lines.

    ``key`` names a capture group whose value distinguishes hits (a code, a library name): the
    scanner keeps the first line of every distinct value, up to ``max_keys``. ``lookback`` and
    ``context`` require ``context`` to match the hit's line or one of the ``lookback`` lines
    before it (a traceback frame above an exception). A ``once`` matcher keeps its first hit
    only, with a count of 1."""

    id: str
    pattern: str
    ignore_case: bool = False
    key: Optional[str] = None
    lookback: int = 0
    context: Optional[str] = None
    max_keys: int = 64
    # only whether it matches counts (a signature's ``requires`` and ``unless``): past its first
    # hit its lines are neither matched nor counted, and the candidate search passes them by
    once: bool = False


def weak(needle: Needle) -> bool:
    """A needle whose rarest atom is common in logs (the scan would stop at it constantly)."""
    return needle_cost(needle) > WEAK


def exact_runs(needle: Needle) -> List[bytes]:
    """The needle's stretches of MIN_NEEDLE+ atoms that each hold a single byte."""
    out: List[bytes] = []
    run: List[int] = []
    for atom in needle + (frozenset(),):
        if len(atom) == 1:
            run.extend(atom)
            continue
        if len(run) >= MIN_NEEDLE:
            out.append(bytes(run))
        run = []
    return out
