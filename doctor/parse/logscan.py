"""Stream a log through hundreds of regular expressions at the cost of two passes over its bytes.

Python's ``re`` scans for one literal at C speed but an alternation of hundreds of literals at a
tenth of that, so a log of 100 MB would take minutes line by line. The prefilter here exploits
two facts: every pattern we ship must contain some literal text (``required``), and any
substring of that text is as good a witness as the whole. For each pattern we pick a short
*token* that starts at a byte rare in logs ('E', 'x', 'j', ...). ``bytes.translate`` maps all
those start bytes to one marker byte in a single pass, and one regex with that marker as a
literal prefix and a trie of the tokens after it finds every candidate position in a second
pass. Only lines holding a token are decoded, and on them only the matchers the token stands
for: first a test that the line holds the matcher's literal text (``in``), then its regex.

That marker scan is the fallback: where the ahocorasick-rs wheel is installed, one Aho-Corasick
automaton over exact strings of the same needles finds the candidates about three times as fast
(:mod:`doctor.parse.exactscan`); either way the same lines are then matched for real.

Everything here is pure: :class:`LogScanner` is fed bytes and returns hits; reading files is
the shell's job.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Pattern, Sequence, Set, Tuple, Union

from doctor.parse.needles import (FREQ, MARKERS, MAX_BEHIND, MAX_TOKEN, MIN_NEEDLE, WEAK, Atom, Items,  # noqa: F401
                                   Matcher, Needle, PatternError, atom_cost, exact_runs, line_literals,  # (names the
                                   needle_cost, plain_literals, required, weak)  # scanner's users import from here)


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


@dataclass(frozen=True)
class Token:
    """Where the scan looks for a needle: its ``marker`` atom (every byte of which the scan maps
    to a control byte), up to MAX_BEHIND atoms before it and MAX_TOKEN after it."""

    behind: Needle
    marker: Atom
    ahead: Needle


class Prefilter:
    """The compiled scan for a set of matchers.

    ``marked`` is the set of bytes the marker scan stops at, chosen (greedy weighted set cover)
    so that every needle holds one and their summed frequency in logs stays low; ``density``
    estimates the share of log bytes that are marked (per 100,000). A weak needle (one made of
    common bytes only, like ``error code``) would make that share large, so it is found by an
    ``anchor`` instead: an exact substring searched on its own (``bytes.find``, one pass per
    anchor), shared by as many weak needles as possible."""

    def __init__(self, matchers: Sequence[Matcher]):
        needles: List[Tuple[int, Needle]] = []
        anchored: List[Tuple[int, Needle]] = []
        for index, m in enumerate(matchers):
            for needle in required(m.pattern, m.ignore_case):
                if weak(needle) and exact_runs(needle):
                    anchored.append((index, needle))
                else:
                    needles.append((index, needle))
        self.anchors: Dict[bytes, FrozenSet[int]] = {
            anchor: frozenset(anchored[i][0] for i in members)
            for anchor, members in choose_anchors([n for _, n in anchored]).items()}
        marked = choose_marked([n for _, n in needles])
        self.marked = marked
        self.density = sum(FREQ[b] for b in marked)
        # Each marked byte becomes a control byte of its own (shared round robin when there are
        # more marked bytes than control bytes), so the regex dispatches on which one it met.
        ordered = sorted(marked, key=lambda b: (-FREQ[b], b))
        self.code = {b: MARKERS[i % len(MARKERS)] for i, b in enumerate(ordered)}
        table = bytearray(range(256))
        for b, c in self.code.items():
            table[b] = c
        self.table = bytes(table)
        ids: Dict[Tuple[int, Shape], int] = {}
        shapes: List[Tuple[int, Shape]] = []
        owners: List[Set[int]] = []
        for index, needle in needles:
            tok = token(needle, marked)
            shape = (tuple(self._translated(a) for a in tok.behind), tuple(self._translated(a) for a in tok.ahead))
            for c in sorted(self._translated(tok.marker)):
                key = (c, shape)
                if key not in ids:
                    ids[key] = len(owners)
                    owners.append(set())
                    shapes.append(key)
                owners[ids[key]].add(index)
        # The regex reports one token per marker: the first, in the order it tries them, that
        # matches. Tokens with character classes or of other lengths can match the same text:
        # every token tried after the reported one, at the same marker, whose atoms overlap the
        # reported one's position by position on both sides of the marker, may match too, so
        # its matchers are candidates as well (one tried before it did not match, or it would
        # have been reported).
        rank = {c: i for i, c in enumerate(dict.fromkeys(self.code[b] for b in ordered))}
        source, order = _regex(shapes, rank) if shapes else ("", [])
        self.owners: List[FrozenSet[int]] = [frozenset(o) for o in _overlap_closure(shapes, owners, order)]
        self.regex = re.compile(source.encode("latin-1")) if shapes else None

    def _translated(self, atom: Atom) -> FrozenSet[int]:
        return frozenset(self.code.get(b, b) for b in atom)

    def data(self) -> Dict[str, Any]:
        """What the prefilter is, as JSON data (kept in a cache: building it parses every pattern)."""
        return {"source": self.regex.pattern.decode("latin-1") if self.regex is not None else None,
                "owners": [sorted(o) for o in self.owners],
                "anchors": [[a.decode("latin-1"), sorted(o)] for a, o in self.anchors.items()],
                "marked": sorted(self.marked), "code": sorted(self.code.items()), "density": self.density}

    @classmethod
    def restore(cls, data: Any, count: int) -> Optional["Prefilter"]:
        """The prefilter :meth:`data` gave, for ``count`` matchers; None when ``data`` is not
        such (a cache entry that is not is built again)."""
        try:
            source, owners, anchors = data["source"], data["owners"], data["anchors"]
            marked, code, density = data["marked"], data["code"], data["density"]

            def ints(xs: Any, top: int) -> bool:
                return type(xs) is list and all(type(i) is int and 0 <= i < top for i in xs)

            if not (type(owners) is list and all(ints(o, count) for o in owners) and type(anchors) is list
                    and all(type(a) is list and len(a) == 2 and type(a[0]) is str and a[0] and ints(a[1], count)
                            for a in anchors)
                    and ints(marked, 256) and type(code) is list and all(
                        type(c) is list and len(c) == 2 and ints(c, 256) for c in code)
                    and type(density) is int and (source is None or type(source) is str)):
                return None
            regex = re.compile(source.encode("latin-1")) if source is not None else None
            if (regex is None) != (not owners) or \
                    (regex is not None and set(regex.groupindex) != {f"t{k}" for k in range(len(owners))}):
                return None
        except (KeyError, TypeError, ValueError, re.error, RecursionError):
            return None
        pf = cls.__new__(cls)
        pf.anchors = {a.encode("latin-1"): frozenset(o) for a, o in anchors}
        pf.marked = frozenset(marked)
        pf.density = density
        pf.code = {b: c for b, c in code}
        table = bytearray(range(256))
        for b, c in pf.code.items():
            table[b] = c
        pf.table = bytes(table)
        pf.owners = [frozenset(o) for o in owners]
        pf.regex = regex
        return pf


def choose_anchors(needles: Sequence[Needle]) -> Dict[bytes, List[int]]:
    """Exact substrings that cover the given needles (each needle contains one), as few as
    possible: greedily the substring most needles share, the longer among equals."""
    subs: List[Set[bytes]] = []
    for needle in needles:
        mine: Set[bytes] = set()
        for run in exact_runs(needle):
            for i in range(len(run)):
                for j in range(i + MIN_NEEDLE, min(len(run), i + 16) + 1):
                    mine.add(run[i:j])
        subs.append(mine)
    out: Dict[bytes, List[int]] = {}
    todo = set(range(len(needles)))
    while todo:
        count: Dict[bytes, int] = {}
        for i in todo:
            for sub in subs[i]:
                count[sub] = count.get(sub, 0) + 1
        best = max(count, key=lambda sub: (count[sub], len(sub), sub))
        covered = {i for i in todo if best in subs[i]}
        out[best] = sorted(covered)
        todo -= covered
    return out


def choose_marked(needles: Sequence[Needle]) -> FrozenSet[int]:
    """The bytes to mark: every needle must hold an atom made of marked bytes, and the marked
    bytes' summed frequency should be small. Greedy weighted set cover (repeatedly take the
    atom whose new bytes cost least per needle they newly cover), then pruned."""
    distinct = [frozenset(n) for n in needles]  # atoms repeat within a needle
    chosen: Set[int] = set()
    todo = set(range(len(distinct)))
    while todo:
        options: Dict[FrozenSet[int], Set[int]] = {}
        for i in todo:
            for atom in distinct[i]:
                options.setdefault(frozenset(atom - chosen), set()).add(i)
        add, _ = min(options.items(), key=lambda kv: (sum(FREQ[b] for b in kv[0]) / len(kv[1]), sorted(kv[0])))
        chosen |= add
        todo = {i for i in todo if not any(atom <= chosen for atom in distinct[i])}
    # Greedy choices can become redundant once later bytes cover the same needles: drop them,
    # commonest first, while every needle stays covered.
    for b in sorted(chosen, key=lambda b: (-FREQ[b], b)):
        rest = chosen - {b}
        if all(any(atom <= rest for atom in atoms) for atoms in distinct):
            chosen = rest
    return frozenset(chosen)


def token(needle: Needle, marked: FrozenSet[int]) -> Token:
    """The token for a needle: at its rarest marked atom, with as much of the needle around it
    as the limits allow (the more it checks, the fewer lines become candidates)."""
    def rank(k: int) -> Tuple[int, int, int]:
        return (atom_cost(needle[k]), -min(len(needle) - k - 1, MAX_TOKEN) - min(k, MAX_BEHIND), k)

    k = min((i for i, a in enumerate(needle) if a <= marked), key=rank)
    return Token(needle[max(0, k - MAX_BEHIND): k], needle[k], needle[k + 1: k + 1 + MAX_TOKEN])


def _class(atom: FrozenSet[int]) -> str:
    """The regex for one atom of the translated text."""
    if len(atom) == 1:
        return re.escape(bytes(atom).decode("latin-1"))
    return "[" + "".join(re.escape(chr(b)) for b in sorted(atom)) + "]"


Shape = Tuple[Tuple[FrozenSet[int], ...], Tuple[FrozenSet[int], ...]]  # (behind, ahead), translated


def _overlap_closure(shapes: List[Tuple[int, Shape]], owners: List[Set[int]], order: List[int]) -> List[Set[int]]:
    """Each token's matchers with those of the tokens tried after it that can match with it."""
    out = [set(o) for o in owners]
    tried = {tid: i for i, tid in enumerate(order)}
    by_marker: Dict[int, List[int]] = {}
    for tid, (c, _) in enumerate(shapes):
        by_marker.setdefault(c, []).append(tid)
    for tid, (c, (behind, ahead)) in enumerate(shapes):
        for other in by_marker[c]:
            if tried[other] <= tried[tid]:
                continue
            their_behind, their_ahead = shapes[other][1]
            if all(x & y for x, y in zip(ahead, their_ahead)) and \
                    all(x & y for x, y in zip(reversed(behind), reversed(their_behind))):
                out[tid] |= owners[other]
    return out


def _regex(shapes: List[Tuple[int, Shape]], rank: Dict[int, int]) -> Tuple[str, List[int]]:
    """One regex for all tokens: an alternative per marker byte (the commonest first, so the
    engine tries few), each a trie over the atoms ahead of the marker; at each token's end a
    lookbehind checks the atoms behind the marker and an empty named group ``t<id>`` reports
    the token (longer lookbehinds first, so the most specific one wins). Every alternative
    starts with its marker byte, so the engine skips all other bytes in C. Also returns the
    token ids in the order the engine tries them at one marker (depth first, as written)."""
    order: List[int] = []
    roots: Dict[int, Dict] = {}
    for tid, (c, (behind, ahead)) in enumerate(shapes):
        node = roots.setdefault(c, {})
        for atom in ahead:
            node = node.setdefault(_class(atom), {})
        node.setdefault(None, []).append((behind, ahead, tid))

    def build(node: Dict, c: int) -> str:
        parts = [sym + build(node[sym], c) for sym in sorted(k for k in node if k is not None)]
        for behind, ahead, tid in sorted(node.get(None, []), key=lambda e: (-len(e[0]), e[2])):
            order.append(tid)
            group = f"(?P<t{tid}>)"
            if behind:  # last: a longer token wins
                back = "".join(_class(a) for a in behind) + _class(frozenset({c})) + "".join(_class(a) for a in ahead)
                group = f"(?<={back})" + group
            parts.append(group)
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    alts = [_class(frozenset({c})) + "(?=" + build(roots[c], c) + ")" for c in sorted(roots, key=lambda c: rank.get(c, 0))]
    return (alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"), order


# ---------------------------------------------------------------------------------------------
# streaming

MAX_LINE = 64 * 1024  # bytes of a line that are matched; a longer line is cut there (and counted)
KEEP_CHARS = 2048  # characters a hit keeps of each string it stores (its line, context, groups, key)
MAX_HITS = 1000  # hits kept besides each matcher's first; more are counted in `dropped`
MAX_KEPT = 2 * 1024 * 1024  # characters those hits may keep in all (the context after them aside)
PIECE = 256 * 1024  # bytes of complete lines scanned at a time: bounds the table of candidate lines
# Up to this many bytes fed, every line is tried with every matcher's literal test (about 40 us a
# line) instead of building the prefilter (about 0.15 s): a pasted traceback is read at once.
SMALL_INPUT = 64 * 1024


# Whether the scanner searches candidates with the compiled automaton of doctor.parse.exactscan
# when its wheel is installed (else, or when False, with the marker scan of Prefilter).
AUTOMATON = True


class Marked:
    """A marker prefilter over some of the matchers (``indexes``), with the matchers each of
    its tokens and anchors stands for as bit masks over all matchers (bit i: matcher i)."""

    def __init__(self, matchers: Sequence[Matcher], indexes: Sequence[int], prefilter: Optional[Prefilter] = None):
        self.prefilter = pf = prefilter or Prefilter([matchers[i] for i in indexes])
        self.token_masks = {f"t{k}": _mask(indexes[j] for j in o) for k, o in enumerate(pf.owners)}
        self.anchor_masks = [(a, _mask(indexes[j] for j in o)) for a, o in pf.anchors.items()]


class Compiled:
    """The matchers compiled once (prefilter and regexes), for any number of scanners."""

    def __init__(self, matchers: Sequence[Matcher], cache: Any = None):
        self.matchers = list(matchers)
        # where the automaton's plan is kept between runs (doctor.shell.host.cache: key, read, write),
        # keyed by the matchers and the code that makes plans; None: built every time
        self.cache = cache
        self._marked: Optional[Marked] = None
        self._exact: Any = None  # exactscan.ExactSearch, False when the wheel is missing
        self._rest: Optional[Marked] = None
        # each matcher's regex is compiled when a line first needs it (most never do in a log)
        self.regexes: List[Optional[Pattern[str]]] = [None] * len(self.matchers)
        # each matcher's context regex, compiled when a hit of its pattern first needs it
        self.lookbehind: List[Optional[Pattern[str]]] = [None] * len(self.matchers)
        # each matcher's literal test and whether it is ``counted`` (its first hit is all it
        # keeps and its literal test is exact: once it has that hit, a line that passes the test
        # only adds to its count), worked out when a line first needs them (``ready``): parsing
        # every pattern costs about 40 ms, and most matchers never see a candidate in a log
        self.literals: List[Optional[List[List[str]]]] = [None] * len(self.matchers)
        self.counted = [False] * len(self.matchers)
        self.ready = bytearray(len(self.matchers))
        self.all_mask = (1 << len(self.matchers)) - 1

    @property
    def marked(self) -> Marked:
        """The marker scan over every matcher (the search without the automaton's wheel), built
        when first needed: a small input is scanned without it (see SMALL_INPUT)."""
        if self._marked is None:
            self._marked = Marked(self.matchers, range(len(self.matchers)), self._cached_prefilter())
        return self._marked

    def _cached_prefilter(self) -> Optional[Prefilter]:
        """The marker scan over every matcher from the cache (built and kept there when it is
        missing), with each matcher's literal test; None without a cache."""
        if self.cache is None:
            return None
        from doctor.parse import exactscan

        key = self.cache.key("logscan.marked", exactscan.fingerprint(__name__), self._spec())
        data = self.cache.read("explain", key)
        pf = Prefilter.restore(data, len(self.matchers)) if isinstance(data, dict) else None
        prepared = pf is not None and exactscan.valid_literals(data.get("literals"), data.get("counted"),
                                                               len(self.matchers))
        if not prepared:
            pf = Prefilter(self.matchers)
            self._prepare_all()
            data = dict(pf.data(), literals=self.literals, counted=self.counted)
            self.cache.write("explain", key, data)
        self._take_literals(data)
        return pf

    def load_literals(self) -> None:
        """Every matcher's literal test and ``counted`` flag from the cache (worked out and kept
        there when missing). A small input tries each of its lines with every matcher, and
        working them out from the patterns costs ~0.2 s of a one-line explain; the cache holds
        them for ~5 ms. Without a cache, each is worked out when a line first needs it."""
        if self.cache is None or all(self.ready):
            return
        from doctor.parse import exactscan

        key = self.cache.key("logscan.literals", exactscan.fingerprint(__name__), self._spec())
        data = self.cache.read("explain", key)
        if not (isinstance(data, dict) and exactscan.valid_literals(data.get("literals"), data.get("counted"),
                                                                    len(self.matchers))):
            self._prepare_all()
            data = {"literals": self.literals, "counted": self.counted}
            self.cache.write("explain", key, data)
        self._take_literals(data)

    def _spec(self) -> List[List[Any]]:
        """What of the matchers a cached entry is keyed by: a matcher's key and context decide
        its ``counted`` flag (kept with the literal tests) and the automaton's plan."""
        return [[m.pattern, m.ignore_case, m.key, m.context] for m in self.matchers]

    def _prepare_all(self) -> None:
        for index in range(len(self.matchers)):
            if not self.ready[index]:
                self.prepare(index)

    def _take_literals(self, data: Dict[str, Any]) -> None:
        """What prepare() would work out, from a cached entry or a plan (already validated)."""
        for index, (literals, counted) in enumerate(zip(data["literals"], data["counted"])):
            if not self.ready[index]:
                self.literals[index], self.counted[index], self.ready[index] = literals, counted, 1

    @property
    def prefilter(self) -> Prefilter:
        return self.marked.prefilter

    @property
    def exact(self) -> Any:
        """The automaton search (doctor.parse.exactscan.ExactSearch), or None without its wheel."""
        if not AUTOMATON:
            return None
        if self._exact is None:
            from doctor.parse import exactscan

            module = exactscan.load()
            self._exact = False
            if module is not None:
                data = self._plan(exactscan)
                self._exact = exactscan.ExactSearch(module, data)
                self._take_literals(data)
            if self._exact and self._exact.rest:
                self._rest = Marked(self.matchers, self._exact.rest)
        return self._exact or None

    def _plan(self, exactscan: Any) -> Dict[str, Any]:
        if self.cache is None:
            return exactscan.plan(self.matchers)
        key = self.cache.key("logscan.exact", exactscan.fingerprint(), self._spec())
        data = self.cache.read("explain", key)
        if not exactscan.valid(data, len(self.matchers)):
            data = exactscan.plan(self.matchers)
            self.cache.write("explain", key, data)
        return data

    def search(self) -> Tuple[Any, Optional[Marked]]:
        """What finds candidate lines: the automaton and the marker scan over the matchers it
        leaves (usually none), or no automaton and the marker scan over all."""
        exact = self.exact
        if exact is not None:
            return exact, self._rest
        return None, self.marked

    def prepare(self, index: int) -> None:
        m = self.matchers[index]
        self.literals[index] = line_literals(m.pattern, m.ignore_case)
        self.counted[index] = plain_literals(m.pattern, m.ignore_case) and not m.key and not m.context
        self.ready[index] = 1

    def context_regex(self, index: int) -> "Pattern[str]":
        r = self.lookbehind[index]
        if r is None:
            r = self.lookbehind[index] = re.compile(self.matchers[index].context or "")
        return r

    def regex(self, index: int) -> "Pattern[str]":
        r = self.regexes[index]
        if r is None:
            m = self.matchers[index]
            r = self.regexes[index] = re.compile(m.pattern, re.IGNORECASE if m.ignore_case else 0)
        return r


def _mask(indexes: Iterable[int]) -> int:
    out = 0
    for i in indexes:
        out |= 1 << i
    return out


def _bits(mask: int) -> List[int]:
    """The indexes of the set bits, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class ScanTimeout(Exception):
    """The scanner's deadline passed (a regex can take long on a crafted line: the deadline is
    checked before each candidate line)."""


class LogScanner:
    """Feed bytes, then ``finish()``: the first line of every (matcher, key), with context.

    Memory stays flat whatever the input: the buffer holds the unread tail, ``keep`` recent
    lines for context and lookback; every line longer than ``max_line`` bytes is matched on its
    first ``max_line`` bytes and counted in ``cut_lines``; a hit keeps at most KEEP_CHARS of each
    string; and besides each matcher's first hit at most ``max_hits`` hits holding ``max_kept``
    characters are kept (a matcher keeps at most its ``max_keys`` keys): the hits past those
    bounds are counted in ``dropped``, like repeats of a kept hit in its ``count``.
    """

    def __init__(self, matchers: Union[Sequence[Matcher], "Compiled"], context: int = 2, max_line: int = MAX_LINE,
                 max_hits: int = MAX_HITS, max_kept: int = MAX_KEPT,
                 deadline: Optional[float] = None, clock: Callable[[], float] = time.monotonic):
        compiled = matchers if isinstance(matchers, Compiled) else Compiled(matchers)
        self.compiled_matchers = compiled
        self.matchers = compiled.matchers
        self.compiled = compiled.regexes
        self.lookbehind = compiled.lookbehind
        self.literals = compiled.literals
        self.counted = compiled.counted
        self.ready = compiled.ready
        self.context = context
        self.max_line = max_line
        self.max_hits = max_hits
        self.max_kept = max_kept
        self.deadline = deadline  # on ``clock``: past it, ScanTimeout
        self.clock = clock
        self.keep = max([context] + [m.lookback for m in self.matchers])
        self.hits: Dict[Tuple[int, str], Hit] = {}
        self._keys: Dict[int, int] = {}
        self._matched: Set[int] = set()  # matchers with a kept hit
        # counted matchers (see Compiled.counted) that have their hit: its mask, and the hits
        self._done = 0
        self._counting: Dict[int, Hit] = {}
        self._once = 0  # ``once`` matchers that have their hit: their lines are passed by
        self._kept_hits = 0
        self._kept_chars = 0
        self._pending: List[Hit] = []  # hits still collecting lines after them
        self._recent: List[str] = []  # the last `keep` complete lines (decoded), for context
        self._buf = b""
        self._skipping = False  # inside an overlong line: drop bytes until its newline
        self.lines = 0
        self.bytes = 0
        self.cut_lines = 0
        self.dropped = 0

    @property
    def prefilter(self) -> Prefilter:
        return self.compiled_matchers.prefilter

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
            self._region(buf, end)
        rest = buf[end:]
        if len(rest) > self.max_line:
            rest = rest[: self.max_line]
            self._skipping = True
            self.cut_lines += 1
        self._buf = rest

    def finish(self) -> List[Hit]:
        if self._buf:
            self._region(self._buf + b"\n", len(self._buf) + 1)
            self._buf = b""
        self._pending = []
        return sorted(self.hits.values(), key=lambda h: (h.line, h.matcher))

    # -- scanning --

    def _region(self, buf: bytes, end: int) -> None:
        """Scan the complete lines ``buf[:end]`` (``buf[end - 1]`` is a newline)."""
        buf, end = self._cut_long(buf, end)
        self._fill_pending(buf, 0, end)
        if self.bytes <= SMALL_INPUT:  # every line tried with every matcher's literal test
            self.compiled_matchers.load_literals()
            self._scan(buf, 0, end, every=True)
            self._remember(buf, end)
            return
        exact, marked = self.compiled_matchers.search()
        translated = None
        if marked is not None:
            pf = marked.prefilter
            translated = buf.translate(pf.table) if pf.regex is not None else buf
        pos = 0
        while pos < end:
            stop = end
            if end - pos > PIECE:
                nl = buf.rfind(b"\n", pos, pos + PIECE)
                stop = nl + 1 if nl >= 0 else buf.find(b"\n", pos + PIECE) + 1
            self._scan(buf, pos, stop, exact=exact, marked=marked, translated=translated)
            pos = stop
        self._remember(buf, end)

    def _cut_long(self, buf: bytes, end: int) -> Tuple[bytes, int]:
        """``buf`` with every complete line longer than ``max_line`` bytes cut to that many."""
        limit = self.max_line
        pos, last = 0, 0
        parts: List[bytes] = []
        while end - 1 - pos > limit:  # lines from pos on may be too long
            nl = buf.rfind(b"\n", pos, pos + limit + 1)
            if nl >= 0:  # every line from pos to nl fits
                pos = nl + 1
                continue
            nl = buf.find(b"\n", pos + limit)
            parts.append(buf[last: pos + limit])
            last = nl  # keeps the newline
            self.cut_lines += 1
            pos = nl + 1
        if not parts:
            return buf, end
        parts.append(buf[last:])
        out = b"".join(parts)
        return out, end - (len(buf) - len(out))

    def _scan(self, buf: bytes, begin: int, end: int, every: bool = False, exact: Any = None,
              marked: Optional[Marked] = None, translated: Optional[bytes] = None) -> None:
        """The candidate lines of ``buf[begin:end]`` (complete lines), matched for real: with
        ``every``, every line is a candidate of every matcher (a small input); else those the
        automaton ``exact`` and the marker scan ``marked`` (over ``translated``) find. A line is
        known by its newline until it is decoded (its start costs a search back)."""
        compiled = self.compiled_matchers
        candidates: Dict[int, int] = {}  # a line's newline -> mask of matchers
        loose: Set[int] = set()  # lines an automaton string found that is not "pure" (below)
        find = buf.find
        if every:
            pos = begin
            while pos < end:
                nl = find(b"\n", pos, end)
                candidates[nl] = compiled.all_mask
                pos = nl + 1
        shortcut = exact is not None and exact.find is not None
        if shortcut:
            masks, pure = exact.masks, exact.pure
            before, nl = -1, -1  # the newlines before and after the current line
            # overlapping matches: none is hidden inside another; none holds a newline, so each
            # lies in one line (they come by their ends: a line's matches come together)
            once = self._once
            for k, pos, _ in exact.find(memoryview(buf)[begin:end], True):
                if masks[k] & once == masks[k]:
                    continue  # stands for matchers that need no more lines
                pos += begin
                if before < pos < nl:
                    candidates[nl] |= masks[k]
                else:
                    if pos > nl:
                        before = nl
                    else:  # not in order: never seen, but cheap to get right
                        before = buf.rfind(b"\n", 0, pos)
                    nl = find(b"\n", pos, end)
                    candidates[nl] = candidates.get(nl, 0) | masks[k]
                if not pure[k]:
                    loose.add(nl)
        if marked is not None and translated is not None:
            regex = marked.prefilter.regex
            if regex is not None:
                tmasks = marked.token_masks
                nl = -1
                for m in regex.finditer(translated, begin, end):
                    pos = m.start()
                    if pos > nl:
                        nl = find(b"\n", pos, end)
                        candidates[nl] = candidates.get(nl, 0) | tmasks[m.lastgroup]  # type: ignore[index]
                    else:
                        candidates[nl] |= tmasks[m.lastgroup]  # type: ignore[index]
            for anchor, mask in marked.anchor_masks:
                pos = find(anchor, begin, end)
                while pos >= 0:
                    nl = find(b"\n", pos, end)
                    candidates[nl] = candidates.get(nl, 0) | mask
                    pos = find(anchor, nl, end)
        lineno, counted = self.lines, begin  # lineno: the newlines before ``counted``
        count, rfind = buf.count, buf.rfind
        deadline, clock = self.deadline, self.clock
        attempt = self._try
        all_mask, every_index = compiled.all_mask, range(len(self.matchers))
        done, counting, once = self._done, self._counting, self._once
        for nl in sorted(candidates):
            mask = candidates[nl]
            if mask & once and mask != all_mask:  # (a small input's lines: _try passes them by)
                mask &= ~once
                if not mask:
                    continue
            if shortcut and mask & done == mask and nl not in loose:
                # found only by plain texts of matchers that have their hit and count the lines
                # holding those texts: counted without decoding the line (nor numbering it)
                if mask & (mask - 1):
                    for index in _bits(mask):
                        counting[index].count += 1
                else:
                    counting[mask.bit_length() - 1].count += 1
                continue
            if deadline is not None and clock() > deadline:
                raise ScanTimeout()
            start = rfind(b"\n", 0, nl) + 1
            lineno += count(b"\n", counted, start)
            counted = start
            text = buf[start:nl].decode("utf-8", errors="replace").rstrip("\r")
            if mask & (mask - 1):
                for index in (every_index if mask == all_mask else _bits(mask)):
                    attempt(index, text, lineno + 1, buf, start)
            else:  # one matcher, most often
                attempt(mask.bit_length() - 1, text, lineno + 1, buf, start)
            done, once = self._done, self._once
        self.lines = lineno + count(b"\n", counted, end)

    def _try(self, index: int, text: str, lineno: int, buf: bytes, start: int) -> None:
        if self._once >> index & 1:
            return
        if not self.ready[index]:
            self.compiled_matchers.prepare(index)
        literals = self.literals[index]
        if literals is not None:
            for alt in literals:
                for t in alt:
                    if t not in text:
                        break
                else:
                    break  # every text of this alternative is in the line
            else:
                return
        m = None
        spec = self.matchers[index]
        if self.counted[index] and literals is not None:  # its pattern is the text it holds: it matches
            hit = self.hits.get((index, ""))
            if hit is not None:
                hit.count += 1
                return
            key = ""
        else:
            m = (self.compiled[index] or self.compiled_matchers.regex(index)).search(text)
            if m is None:
                return
            look = None if not spec.context else self.lookbehind[index] or self.compiled_matchers.context_regex(index)
            if look is not None and not look.search(text) and \
                    not any(look.search(t) for t in self._before(buf, start, spec.lookback)):
                return
            key = m.group(spec.key) if spec.key and m.group(spec.key) is not None else ""
            key = key[:KEEP_CHARS]
        slot = (index, key)
        hit = self.hits.get(slot)
        if hit is not None:
            hit.count += 1
            return
        first = index not in self._matched
        if (key and self._keys.get(index, 0) >= spec.max_keys) or \
                (not first and (self._kept_hits >= self.max_hits or self._kept_chars >= self.max_kept)):
            self.dropped += 1
            return
        self._keys[index] = self._keys.get(index, 0) + (1 if key else 0)
        groups = {k: v[:KEEP_CHARS] for k, v in m.groupdict().items() if v is not None} if m is not None else {}
        before = [t[:KEEP_CHARS] for t in self._before(buf, start, self.context)]
        hit = Hit(spec.id, key, lineno, text.rstrip()[:KEEP_CHARS], groups, before=before)
        if first:
            self._matched.add(index)
        else:
            self._kept_hits += 1
            self._kept_chars += len(key) + len(hit.text) + sum(map(len, before)) + sum(map(len, groups.values()))
        self.hits[slot] = hit
        if spec.once:
            self._once |= 1 << index
        elif self.counted[index]:
            self._counting[index] = hit
            self._done |= 1 << index
        if self.context:
            after = [t[:KEEP_CHARS] for t in _lines_after(buf, start, self.context)]
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
        lines = [t[:KEEP_CHARS] for t in _lines_from(buf, start, end, need)]
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


def scan_text(text: str, matchers: Union[Sequence[Matcher], Compiled], context: int = 2) -> List[Hit]:
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
