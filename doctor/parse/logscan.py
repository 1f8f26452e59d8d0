"""Stream a log through hundreds of regular expressions at the cost of two passes over its bytes.

Python's ``re`` scans for one literal at C speed but an alternation of hundreds of literals at a
tenth of that, so a log of 100 MB would take minutes line by line. The prefilter here exploits
two facts: every pattern we ship must contain some literal text (``required``), and any
substring of that text is as good a witness as the whole. For each pattern we pick a short
*token* that starts at a byte rare in logs ('E', 'x', 'j', ...). ``bytes.translate`` maps all
those start bytes to one marker byte in a single pass, and one regex with that marker as a
literal prefix and a trie of the tokens after it finds every candidate position in a second
pass. Only lines holding a token are decoded and matched for real.

Everything here is pure: :class:`LogScanner` is fed bytes and returns hits; reading files is
the shell's job.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

try:  # Python 3.11 moved the regex parser; the old name still works on 3.9/3.10
    from re import _parser as sre_parse  # type: ignore[attr-defined]
    from re import _constants as sre_c  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as sre_c  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

Atom = FrozenSet[int]  # the bytes one position of a match may hold
Needle = Tuple[Atom, ...]

# Printable bytes from rarest to most common in serving logs (measured on vLLM/HCCL/pip logs and
# the excerpts in tests/data); bytes not listed count as common.
# Digits come last whatever the sample says: timestamps, pids and addresses fill real logs.
_RARE_FIRST = (b"$*@X\\^~#J{|}?+<YQ`&!>jZ;z'M%\"KHVBLqDwGSUWxAC=TF()NbOPyR,EIf/v-k[]_ghmudl.pcsa:intore "
               b"9876543210")
RARITY: Dict[int, int] = {b: i for i, b in enumerate(_RARE_FIRST)}
MARKER = 0x01  # never appears in text logs; where it does, it only costs a wasted check
MIN_NEEDLE = 3  # atoms; shorter literals would make nearly every line a candidate
MAX_TOKEN = 10  # atoms after which a token stops growing (longer buys nothing)


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


def _in_atom(items, icase: bool) -> Optional[Atom]:
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


def _score(alternatives: Sequence[Needle]) -> Tuple[int, int]:
    """Higher is better: the weakest needle's rarity, then fewer alternatives."""
    def needle(n: Needle) -> int:
        best = max(_start_rarity(a) for a in n[: len(n) - MIN_NEEDLE + 1])
        return min(len(n), MAX_TOKEN) * 8 + best
    return (min(needle(n) for n in alternatives), -len(alternatives))


def _start_rarity(atom: Atom) -> int:
    # rarer start bytes make the marker scan cheaper; an atom's cost is its commonest byte
    return len(RARITY) - max(RARITY.get(b, len(RARITY)) for b in atom)


def _sequence(items, icase: bool) -> Optional[List[Needle]]:
    best: Optional[List[Needle]] = None
    run: List[Atom] = []

    def consider(alts: Optional[List[Needle]]) -> None:
        nonlocal best
        if alts and (best is None or _score(alts) > _score(best)):
            best = alts

    def flush() -> None:
        if len(run) >= MIN_NEEDLE:
            consider([tuple(run)])
        run.clear()

    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            atoms = _literal_atoms(av, icase)
            run.extend(atoms or [])
        elif name == "IN":
            atom = _in_atom(av, icase)
            if atom is None:
                flush()
            else:
                run.append(atom)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # zero width: the text around it stays contiguous
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            single = _single_atom(sub, icase)
            if single is not None and lo >= 1:
                run.extend([single] * min(lo, MAX_TOKEN))
                if hi != lo:
                    flush()
                continue
            flush()
            if lo >= 1:
                consider(_sequence(sub, icase))
        elif name == "SUBPATTERN":
            flush()
            group, add, delete, sub = av
            sub_icase = (icase or bool(add & sre_c.SRE_FLAG_IGNORECASE)) and not (delete & sre_c.SRE_FLAG_IGNORECASE)
            consider(_sequence(sub, sub_icase))
        elif name == "BRANCH":
            flush()
            alts: List[Needle] = []
            for branch in av[1]:
                got = _sequence(branch, icase)
                if not got:
                    alts = []
                    break
                alts.extend(got)
            consider(alts or None)
        else:
            flush()
    flush()
    return best


def _single_atom(sub, icase: bool) -> Optional[Atom]:
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


def required(pattern: str, ignore_case: bool = False) -> List[Needle]:
    """Needles such that every match of ``pattern`` contains at least one of them.

    Raises PatternError when the pattern has no literal run of MIN_NEEDLE characters on every
    path (a pattern like ``.*error`` with ``error`` optional cannot be prefiltered)."""
    flags = re.IGNORECASE if ignore_case else 0
    parsed = sre_parse.parse(pattern, flags)
    icase = bool(parsed.state.flags & sre_c.SRE_FLAG_IGNORECASE)
    got = _sequence(parsed, icase)
    if not got:
        raise PatternError(f"no literal text of {MIN_NEEDLE}+ characters that every match must contain: {pattern!r}")
    return got


# ---------------------------------------------------------------------------------------------
# tokens: a needle suffix that starts at a rare byte


def _token(needle: Needle) -> Needle:
    last = len(needle) - MIN_NEEDLE
    start = max(range(last + 1), key=lambda i: (_start_rarity(needle[i]), -i))
    return needle[start: start + MAX_TOKEN]


def _class(atom: Atom, marked: FrozenSet[int]) -> str:
    """The regex for one atom in the translated text, where every marked byte reads MARKER."""
    present = set(atom - marked)
    if atom & marked:
        present.add(MARKER)
    if len(present) == 1:
        return re.escape(bytes(present).decode("latin-1"))
    return "[" + "".join(re.escape(chr(b)) for b in sorted(present)) + "]"


@dataclass(frozen=True)
class Matcher:
    """One regular expression the scanner evaluates on candidate lines.

    ``key`` names a capture group whose value distinguishes hits (a code, a library name): the
    scanner keeps the first line of every distinct value, up to ``max_keys``. ``lookback`` and
    ``context`` require ``context`` to match one of the ``lookback`` lines before the hit (a
    traceback frame above an exception)."""

    id: str
    pattern: str
    ignore_case: bool = False
    key: Optional[str] = None
    lookback: int = 0
    context: Optional[str] = None
    max_keys: int = 64


@dataclass
class Hit:
    matcher: str
    key: str
    line: int  # 1-based
    text: str
    groups: Dict[str, str]
    before: List[str] = field(default_factory=list)
    after: List[str] = field(default_factory=list)
    count: int = 1


class Prefilter:
    """The compiled marker scan for a set of matchers."""

    def __init__(self, matchers: Sequence[Matcher]):
        needles: List[Tuple[int, Needle]] = []
        for index, m in enumerate(matchers):
            for needle in required(m.pattern, m.ignore_case):
                needles.append((index, _token(needle)))
        marked = frozenset().union(*(tok[0] for _, tok in needles)) if needles else frozenset()
        table = bytearray(range(256))
        for b in marked:
            table[b] = MARKER
        self.table = bytes(table)
        self.marked = marked
        # one trie path per distinct token (in translated form); leaves carry a named group
        paths: Dict[Tuple[str, ...], int] = {}
        owners: List[Set[int]] = []
        for index, tok in needles:
            path = tuple(_class(a, marked) for a in tok[1:])
            if path not in paths:
                paths[path] = len(owners)
                owners.append(set())
            owners[paths[path]].add(index)
        # a token that is a prefix of a longer one matches wherever the longer one does
        by_path = sorted(paths.items())
        closure: List[Set[int]] = [set(o) for o in owners]
        for path, tid in by_path:
            for other, oid in by_path:
                if len(other) < len(path) and path[: len(other)] == other:
                    closure[tid] |= owners[oid]
        self.owners: List[FrozenSet[int]] = [frozenset(c) for c in closure]
        self.regex = re.compile(b"\\x01(?=" + _trie(paths).encode("latin-1") + b")") if paths else None


def _trie(paths: Dict[Tuple[str, ...], int]) -> str:
    root: Dict = {}
    for path, tid in paths.items():
        node = root
        for sym in path:
            node = node.setdefault(sym, {})
        node[None] = tid

    def build(node: Dict) -> str:
        parts = [sym + build(child) for sym, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if None in node:
            parts.append(f"(?P<t{node[None]}>)")  # last: a longer token wins the leaf
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    return build(root)


# ---------------------------------------------------------------------------------------------
# streaming


class LogScanner:
    """Feed bytes, then ``finish()``: the first line of every (matcher, key), with context.

    Memory stays flat: the buffer holds the unread tail, ``keep`` recent lines for context and
    lookback, and lines longer than ``max_line`` bytes are cut (the rest of the line skipped).
    """

    def __init__(self, matchers: Sequence[Matcher], context: int = 2, max_line: int = 64 * 1024):
        self.matchers = list(matchers)
        self.prefilter = Prefilter(self.matchers)
        self.compiled = [re.compile(m.pattern, re.IGNORECASE if m.ignore_case else 0) for m in self.matchers]
        self.lookbehind = [re.compile(m.context) if m.context else None for m in self.matchers]
        self.context = context
        self.max_line = max_line
        self.keep = max([context] + [m.lookback for m in self.matchers])
        self.hits: Dict[Tuple[int, str], Hit] = {}
        self._keys: Dict[int, int] = {}
        self._pending: List[Hit] = []  # hits still collecting lines after them
        self._recent: List[str] = []  # the last `keep` complete lines (decoded), for context
        self._buf = b""
        self._skipping = False  # inside an overlong line: drop bytes until its newline
        self.lines = 0
        self.bytes = 0
        self.cut_lines = 0

    # -- input --

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self.bytes += len(data)
        if self._skipping:
            nl = data.find(b"\n")
            if nl < 0:
                return
            data = data[nl:]  # the newline ends the cut line (already in the buffer)
            self._skipping = False
        buf = self._buf + data if self._buf else data
        end = buf.rfind(b"\n") + 1
        if end:
            self._scan(buf, end)
        rest = buf[end:]
        if len(rest) > self.max_line:
            rest = rest[: self.max_line]
            self._skipping = True
            self.cut_lines += 1
        self._buf = rest

    def finish(self) -> List[Hit]:
        if self._buf:
            self._scan(self._buf + b"\n", len(self._buf) + 1)
            self._buf = b""
        self._pending = []
        return sorted(self.hits.values(), key=lambda h: (h.line, h.matcher))

    # -- scanning --

    def _scan(self, buf: bytes, end: int) -> None:
        base = self.lines
        candidates: Dict[int, Set[int]] = {}  # line start -> matcher indexes
        spans: Dict[int, int] = {}
        regex = self.prefilter.regex
        if regex is not None:
            translated = buf[:end].translate(self.prefilter.table)
            line_start, line_end = -1, -1
            for m in regex.finditer(translated):
                pos = m.start()
                if pos >= line_end:
                    line_start = buf.rfind(b"\n", 0, pos) + 1
                    line_end = buf.find(b"\n", pos, end)
                    spans[line_start] = line_end
                    candidates[line_start] = set()
                candidates[line_start] |= self.prefilter.owners[int(m.lastgroup[1:])]
        self._fill_pending(buf, 0, end)
        counted, lineno = 0, base
        for start in sorted(candidates):
            lineno += buf.count(b"\n", counted, start)
            counted = start
            text = _decode(buf[start:spans[start]])
            for index in sorted(candidates[start]):
                self._try(index, text, lineno + 1, buf, start)
        total_lines = base + buf.count(b"\n", 0, end)
        self.lines = total_lines
        self._remember(buf, end)

    def _try(self, index: int, text: str, lineno: int, buf: bytes, start: int) -> None:
        m = self.compiled[index].search(text)
        if m is None:
            return
        spec = self.matchers[index]
        look = self.lookbehind[index]
        if look is not None and not any(look.search(t) for t in self._before(buf, start, spec.lookback)):
            return
        key = m.group(spec.key) if spec.key and m.group(spec.key) is not None else ""
        slot = (index, key)
        hit = self.hits.get(slot)
        if hit is not None:
            hit.count += 1
            return
        if key and self._keys.get(index, 0) >= spec.max_keys:
            return
        self._keys[index] = self._keys.get(index, 0) + (1 if key else 0)
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        hit = Hit(spec.id, key, lineno, text.rstrip(), groups, before=self._before(buf, start, self.context))
        self.hits[slot] = hit
        if self.context:
            after = _lines_after(buf, start, self.context)
            hit.after = after
            if len(after) < self.context:
                self._pending.append(hit)

    def _before(self, buf: bytes, start: int, count: int) -> List[str]:
        """The ``count`` lines before the line at ``start``, oldest first (from earlier
        regions when this one does not reach back far enough)."""
        out: List[str] = []  # nearest first
        pos = start
        while len(out) < count and pos > 0:
            prev = buf.rfind(b"\n", 0, pos - 1) + 1  # buf[pos - 1] is the newline ending it
            out.append(_decode(buf[prev: pos - 1]).rstrip())
            pos = prev
        if len(out) < count and pos == 0 and self._recent:
            out.extend(reversed(self._recent[-(count - len(out)):]))
        return list(reversed(out))

    def _fill_pending(self, buf: bytes, start: int, end: int) -> None:
        if not self._pending:
            return
        need = max(self.context - len(h.after) for h in self._pending)
        lines = _lines_from(buf, start, end, need)
        for hit in self._pending:
            hit.after.extend(lines[: self.context - len(hit.after)])
        self._pending = [h for h in self._pending if len(h.after) < self.context]

    def _remember(self, buf: bytes, end: int) -> None:
        if not self.keep:
            return
        tail: List[str] = []  # nearest first
        pos = end - 1  # the newline that ends the region
        while len(tail) < self.keep and pos >= 0:
            prev = buf.rfind(b"\n", 0, pos) + 1
            tail.append(_decode(buf[prev:pos]).rstrip())
            pos = prev - 1
        self._recent = (self._recent + list(reversed(tail)))[-self.keep:]


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").rstrip("\r")


def _lines_after(buf: bytes, start: int, count: int) -> List[str]:
    nl = buf.find(b"\n", start)
    if nl < 0:
        return []
    return _lines_from(buf, nl + 1, len(buf), count)


def _lines_from(buf: bytes, start: int, end: int, count: int) -> List[str]:
    out: List[str] = []
    pos = start
    while len(out) < count and pos < end:
        nl = buf.find(b"\n", pos, end)
        if nl < 0:
            break
        out.append(_decode(buf[pos:nl]).rstrip())
        pos = nl + 1
    return out


def scan_text(text: str, matchers: Sequence[Matcher], context: int = 2) -> List[Hit]:
    """Convenience for tests and small inputs: the whole text in one feed."""
    scanner = LogScanner(matchers, context=context)
    scanner.feed(text.encode("utf-8", errors="replace"))
    return scanner.finish()


def union_required(patterns: Iterable[Tuple[str, bool]]) -> List[Needle]:
    """All needles of several patterns (for the bench's grep comparison and docs)."""
    out: List[Needle] = []
    for pattern, icase in patterns:
        out.extend(required(pattern, icase))
    return out
