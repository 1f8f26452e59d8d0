"""The scanner's fast path (prefilter over whole chunks, then the Python logic on candidate
lines only) must give exactly what a plain line-by-line scan gives: every hit with its key,
line, text, groups, context and count, the line count, the cut lines and the dropped hits.

``reference`` below is that plain scan, written as simply as the rules read; it is compared
with the streaming scanner on the shipped examples and near misses, the mined cases, the test
logs, and random logs built from them (needles split across feeds, CRLF, invalid UTF-8, lines
longer than the cut and than a feed)."""
from __future__ import annotations

import json
import random
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.explain.classifiers import CLASSIFIERS
from doctor.parse import logscan
from doctor.parse.logscan import KEEP_CHARS, MAX_HITS, MAX_KEPT, MAX_LINE, Compiled, Hit, LogScanner, required
from tests.explain_kit import catalog, matrix

DATA = Path(__file__).resolve().parent / "data"


# Each comparison three ways: through the automaton (the ahocorasick-rs wheel), through the
# marker scan (its pure-Python fallback), and as a small input (every line tried with every
# matcher's literal test). One test makes all three against one reference scan (the costly part).
PATHS = ("automaton", "marker", "small")


@contextmanager
def scan_path(name: str) -> Iterator[None]:
    saved = logscan.SMALL_INPUT, logscan.AUTOMATON
    logscan.SMALL_INPUT = 1 << 40 if name == "small" else 0
    logscan.AUTOMATON = name == "automaton"
    try:
        yield
    finally:
        logscan.SMALL_INPUT, logscan.AUTOMATON = saved


def test_the_automaton_is_there_to_be_compared():
    assert catalog().compiled.exact is not None, "the ahocorasick-rs wheel is a dependency: installed here"


_REGEX: Dict[Tuple[str, int], "re.Pattern[str]"] = {}
_REFERENCE: Dict[tuple, Tuple[List[Hit], int, int, int]] = {}


def _rx(pattern: str, flags: int = 0) -> "re.Pattern[str]":
    """re.search(pattern) compiled once: the catalog has more patterns than re's own cache
    holds (512), so re.search recompiled them on every line."""
    rx = _REGEX.get((pattern, flags))
    if rx is None:
        rx = _REGEX[(pattern, flags)] = re.compile(pattern, flags)
    return rx


def reference(data: bytes, compiled: Compiled, context: int = 2, max_line: int = MAX_LINE,
              max_hits: int = MAX_HITS, max_kept: int = MAX_KEPT) -> Tuple[List[Hit], int, int, int]:
    """(hits, lines, cut lines, dropped hits) of a plain scan: every line, every matcher. The
    same input gives the same answer on each of the three paths: made once."""
    key = (data, id(compiled), context, max_line, max_hits, max_kept)
    if key not in _REFERENCE:
        _REFERENCE[key] = _reference(data, compiled, context, max_line, max_hits, max_kept)
    return _REFERENCE[key]


def _reference(data: bytes, compiled: Compiled, context: int, max_line: int, max_hits: int,
               max_kept: int) -> Tuple[List[Hit], int, int, int]:
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()  # the newline ending the last line starts no line
    cut = sum(1 for r in raw if len(r) > max_line)
    lines = [r[:max_line].decode("utf-8", errors="replace").rstrip("\r") for r in raw]
    shown = [t.rstrip() for t in lines]
    hits: Dict[Tuple[int, str], Hit] = {}
    keys: Dict[int, int] = {}
    matched = set()
    kept_hits = kept_chars = dropped = 0
    for no, text in enumerate(lines):
        for index, spec in enumerate(compiled.matchers):
            if spec.once and index in matched:
                continue  # only its first hit counts
            m = _rx(spec.pattern, re.IGNORECASE if spec.ignore_case else 0).search(text)
            if m is None:
                continue
            if spec.context and not any(_rx(spec.context).search(t)
                                        for t in [text] + shown[max(0, no - spec.lookback): no]):
                continue
            key = (m.group(spec.key) or "") if spec.key else ""
            key = key[:KEEP_CHARS]
            if (index, key) in hits:
                hits[(index, key)].count += 1
                continue
            first = index not in matched
            if (key and keys.get(index, 0) >= spec.max_keys) or \
                    (not first and (kept_hits >= max_hits or kept_chars >= max_kept)):
                dropped += 1
                continue
            keys[index] = keys.get(index, 0) + (1 if key else 0)
            groups = {k: v[:KEEP_CHARS] for k, v in m.groupdict().items() if v is not None}
            before = [t[:KEEP_CHARS] for t in shown[max(0, no - context): no]]
            hit = Hit(spec.id, key, no + 1, shown[no][:KEEP_CHARS], groups, before=before,
                      after=[t[:KEEP_CHARS] for t in shown[no + 1: no + 1 + context]])
            if first:
                matched.add(index)
            else:
                kept_hits += 1
                kept_chars += len(key) + len(hit.text) + sum(map(len, before)) + sum(map(len, groups.values()))
            hits[(index, key)] = hit
    return sorted(hits.values(), key=lambda h: (h.line, h.matcher)), len(lines), cut, dropped


def streamed(data: bytes, compiled: Compiled, sizes: Sequence[int] = (), **kw) -> Tuple[List[Hit], int, int, int]:
    scanner = LogScanner(compiled, **kw)
    pos, k = 0, 0
    while pos < len(data):
        size = sizes[k % len(sizes)] if sizes else len(data)
        scanner.feed(data[pos:pos + size])
        pos, k = pos + size, k + 1
    return scanner.finish(), scanner.lines, scanner.cut_lines, scanner.dropped


def same(data: bytes, compiled: Compiled, sizes: Sequence[int] = (), **kw) -> None:
    want = reference(data, compiled, **kw)
    for name in PATHS:
        with scan_path(name):
            got = streamed(data, compiled, sizes, **kw)
        assert got[1:] == want[1:], name
        assert [vars(h) for h in got[0]] == [vars(h) for h in want[0]], name


# ---------------------------------------------------------------------------------------------
# the lines to build logs from


def examples() -> List[str]:
    m = matrix()
    rows = list(m.signatures) + list(m.code_forms) + list(m.codes) + list(m.libraries) + list(CLASSIFIERS)
    out: List[str] = []
    for r in rows:
        out.extend(line for line in r.example.splitlines() if line.strip())
        out.extend(getattr(r, "near_miss", []) or [])
    return out


def mined() -> List[str]:
    out: List[str] = []
    for path in sorted(DATA.glob("explain_*.jsonl")):
        for row in path.read_text(encoding="utf-8").splitlines():
            if row.strip():
                out.append(json.loads(row)["text"])
    return out


def logs() -> List[Tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(DATA.glob("explain_*.log"))]


NOISE = [
    "INFO 09-21 03:11:40 [loggers.py:123] Engine 000: Avg prompt throughput: 8932.9 tokens/s, Running: 15 reqs",
    "[INFO] HCCL(534123,python3):2025-09-04-05:33:53.402.379 [hccl_communicator.cc:1102] Entry-HcclCommInitRootInfo",
    "INFO:     10.143.45.252:50391 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "  File \"/usr/local/python3.11.13/lib/python3.11/site-packages/vllm/v1/engine/core.py\", line 12, in step",
    "INFO 10-18 06:32:26 [scheduler.py:1093] 调度器状态: 运行 45 个请求, 等待 6 个请求",
    "error code is  ret is retCode err= vllm failed not found",  # the weak needles, without their codes
    "",
]


@pytest.mark.slow  # ~1 s of CPU or more: every case, three scan paths
def test_every_example_and_mined_case_alone():
    """Each line alone, as the mined tests feed them: one hit set per case."""
    compiled = catalog().compiled
    for text in examples() + mined():
        same(text.encode("utf-8"), compiled)


def test_the_test_logs():
    compiled = catalog().compiled
    for _name, data in logs():
        same(data, compiled)
        same(data, compiled, sizes=[997])


# seeds 0 and 1 (whole feeds, small pieces) in the fast loop; two more trials of each in the full suite
@pytest.mark.parametrize("seed", [0, 1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)])
def test_random_logs_of_every_case_fed_in_random_pieces(seed, monkeypatch):
    if seed % 2:  # scanned in small pieces of lines too (a feed is split at PIECE bytes)
        monkeypatch.setattr(logscan, "PIECE", 997)
    rnd = random.Random(seed)
    pool = examples() + mined() + NOISE
    lines = [rnd.choice(pool) if rnd.random() < 0.4 else rnd.choice(NOISE) for _ in range(800)]
    data = "\n".join(lines).encode("utf-8")
    compiled = catalog().compiled
    same(data, compiled, sizes=[rnd.randint(1, 5000) for _ in range(50)])
    same(data, compiled)  # one feed: many pieces when PIECE is small


@pytest.mark.slow  # ~0.5 s of CPU or more: every case, scanned more than one way
def test_bounds_agree_on_a_log_of_many_keys():
    compiled = catalog().compiled
    data = b"".join(b"ImportError: lib%d.so: cannot open shared object file\nERR%05d\nEE%04d: x\n" % (i, i, i)
                    for i in range(300))
    same(data, compiled, max_hits=40, max_kept=5000)
    same(data, compiled, sizes=[333], max_hits=7)


# ---------------------------------------------------------------------------------------------
# random input: needles cut by feed boundaries, CRLF, long lines, bytes that are not UTF-8


def _line_strategy():
    pool = st.sampled_from(examples() + mined()[:200] + NOISE)
    junk = st.binary(max_size=40)
    return st.one_of(pool.map(lambda s: s.encode("utf-8")), junk,
                     st.tuples(pool, st.integers(0, 400)).map(lambda t: t[0].encode() + b"x" * t[1]),
                     st.tuples(st.integers(0, 300), pool).map(lambda t: b"y" * t[0] + t[1].encode()))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(lines=st.lists(_line_strategy(), max_size=30), crlf=st.booleans(), end=st.booleans(),
       sizes=st.lists(st.integers(1, 700), min_size=1, max_size=8), max_line=st.sampled_from([64, 200, MAX_LINE]),
       context=st.integers(0, 3))
@pytest.mark.slow  # ~0.5 s of CPU or more: every case, scanned more than one way
def test_random_input_agrees(lines, crlf, end, sizes, max_line, context):
    data = (b"\r\n" if crlf else b"\n").join(lines) + (b"\n" if end and lines else b"")
    same(data, catalog().compiled, sizes=sizes, max_line=max_line, context=context)


# ---------------------------------------------------------------------------------------------
# the needles: every matcher of whatever signatures exist has one


def test_every_matcher_yields_needles_the_prefilter_looks_for():
    """Signatures are added all the time: each one's pattern (and unless, requires) must give
    the prefilter literal text to look for, and each needle must reach the scan: as a token of
    the regex or through an anchor, with the matcher among its owners."""
    compiled = catalog().compiled
    pf = compiled.prefilter
    covered = set()
    for owners in pf.owners:
        covered |= owners
    for owners in pf.anchors.values():
        covered |= owners
    for index, m in enumerate(compiled.matchers):
        assert required(m.pattern, m.ignore_case), m.id
        assert index in covered, m.id
