"""The streaming scanner: it must find exactly what a line-by-line regex search finds, whatever
the chunking, with flat memory on endless or line-less input."""
from __future__ import annotations

import functools
import os
import random
import re
import sys
import threading
from pathlib import Path

import pytest

from doctor.explain.classifiers import CLASSIFIERS
from doctor.parse import logscan
from doctor.parse.logscan import LogScanner, Matcher, PatternError, required, scan_text
from tests.explain_kit import catalog
import doctor_fork
from shipped import matrix as shipped_matrix

REPO = Path(__file__).resolve().parents[1]
NOISE = [
    "INFO 09-21 03:11:40 [loggers.py:123] Engine 000: Avg prompt throughput: 8932.9 tokens/s, Running: 15 reqs",
    "[INFO] HCCL(534123,python3):2025-09-04-05:33:53.402.379 [hccl_communicator.cc:1102] Entry-HcclCommInitRootInfo: ranks[8], rank[3]",
    "INFO:     10.143.45.252:50391 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "[INFO] RUNTIME(684682,python3):2025-09-19-20:21:14.399.989 [stream.cc:728] 44046 SetupStream: Alloc stream, flag=0xa9",
    "INFO 10-18 06:32:26 [scheduler.py:1093] 调度器状态: 运行 45 个请求, 等待 6 个请求",
    "Requirement already satisfied: numpy in /usr/local/python3.11.13/lib/python3.11/site-packages (1.26.4)",
    "",
]


@pytest.fixture(autouse=True, params=["automaton", "marker"])
def search(request, monkeypatch):
    """Each test through the automaton (the ahocorasick-rs wheel) and its fallback, the marker
    scan: they must find the same."""
    monkeypatch.setattr(logscan, "AUTOMATON", request.param == "automaton")
    return request.param


def examples():
    m = shipped_matrix()
    rows = list(m.signatures) + list(m.code_forms) + list(m.codes) + list(m.libraries) + list(CLASSIFIERS)
    out = []
    for r in rows:
        out.extend(line for line in r.example.splitlines() if line.strip())
        out.extend(r.near_miss)
    return out


def make_log(seed: int, n: int = 900) -> str:
    rnd = random.Random(seed)
    lines = examples()
    out = []
    for _ in range(n):
        out.append(rnd.choice(lines) if rnd.random() < 0.3 else rnd.choice(NOISE))
    return "\n".join(out) + "\n"


@functools.lru_cache(maxsize=None)
def _rx(pattern: str, flags: int = 0):
    """Compiled once: the catalog has more patterns than re.search's cache holds (512)."""
    return re.compile(pattern, flags)


def brute_force(text: str, matchers) -> set:
    """What a plain line-by-line search finds: the first line of every (matcher, key)."""
    seen = {}
    lines = text.split("\n")
    for no, line in enumerate(lines, 1):
        for m in matchers:
            hit = _rx(m.pattern, re.I if m.ignore_case else 0).search(line)
            if not hit:
                continue
            if m.context and not any(_rx(m.context).search(prev) for prev in lines[max(0, no - 1 - m.lookback): no]):
                continue
            key = (hit.group(m.key) or "") if m.key else ""
            seen.setdefault((m.id, key), no)
    return {(mid, key, no) for (mid, key), no in seen.items()}


def found(hits) -> set:
    return {(h.matcher, h.key, h.line) for h in hits}


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])  # a second random log in the full suite
def test_prefilter_misses_nothing_a_plain_search_finds(seed):
    text = make_log(seed)
    cat = catalog()
    assert found(scan_text(text, cat.compiled)) == _brute_force_of_log(seed)


@functools.lru_cache(maxsize=None)
def _brute_force_of_log(seed: int) -> set:
    """The same for both searches (the automaton's and the marker scan's): searched once."""
    return brute_force(make_log(seed), catalog().matchers)


@pytest.mark.parametrize("sizes", [[1], [7], [4093], [65536], "random"])
@pytest.mark.slow  # ~1 s of CPU or more: random chunkings of whole logs
def test_chunking_does_not_change_the_result(sizes):
    text = make_log(5, 800).encode("utf-8")
    cat = catalog()
    whole = LogScanner(cat.compiled)
    whole.feed(text)
    expected = [(h.matcher, h.key, h.line, h.text, h.before, h.after, h.count) for h in whole.finish()]
    rnd = random.Random(9)
    scanner = LogScanner(cat.compiled)
    pos = 0
    while pos < len(text):
        size = rnd.randint(1, 3000) if sizes == "random" else sizes[0]
        scanner.feed(text[pos:pos + size])
        pos += size
    got = [(h.matcher, h.key, h.line, h.text, h.before, h.after, h.count) for h in scanner.finish()]
    assert got == expected
    assert scanner.lines == whole.lines == text.count(b"\n")


def test_context_lines_and_lookback_across_chunks():
    m = Matcher("t", r"boom", context=r"^ctx$", lookback=3)
    scanner = LogScanner([m], context=2)
    for part in (b"a\nctx\nb\n", b"c\nbo", b"om\nd\ne\nf\n"):
        scanner.feed(part)
    (hit,) = scanner.finish()
    assert (hit.line, hit.before, hit.after) == (5, ["b", "c"], ["d", "e"])
    far = LogScanner([m])
    far.feed(b"ctx\n1\n2\n3\nboom\n")
    assert far.finish() == []  # the context line is 4 lines up, the lookback 3


def test_overlong_line_is_cut_and_the_count_goes_on():
    """A line longer than max_line that has not ended is cut: its first max_line bytes are
    scanned, the rest is skipped up to its newline; memory stays at max_line per line."""
    m = Matcher("t", r"needle(?P<n>\d)", key="n")
    scanner = LogScanner([m], max_line=1000)
    scanner.feed(b"needle1 " + b"x" * 5000)
    scanner.feed(b"x" * 5000 + b" needle2\nneedle3\n")
    hits = scanner.finish()
    assert [(h.key, h.line, h.text[:7]) for h in hits] == [("1", 1, "needle1"), ("3", 2, "needle3")]
    assert scanner.cut_lines == 1 and scanner.lines == 2
    assert len(hits[0].text) <= 1000


def test_crlf_and_invalid_utf8():
    hits = scan_text("ok\r\nImportError: libatb.so: cannot open shared object file\r\n", catalog().compiled)
    assert any(h.text.endswith("No such file or directory") or h.text.endswith("object file") for h in hits)
    scanner = LogScanner(catalog().compiled)
    scanner.feed(b"\xff\xfe garbage \x80\nOSError: libatb.so: cannot open shared object file: No such file or directory\n")
    assert any(h.line == 2 for h in scanner.finish())


def test_a_pattern_without_literal_text_is_refused():
    for bad in (r".*", r"\d+", r"(?:ab)?c", r"x|yz+"):
        with pytest.raises(PatternError):
            required(bad)
    assert required(r"ab(?:cd|ef)gh")  # each alternative carries a literal


def test_fifo_is_streamed(tmp_path):
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)

    def writer():
        with open(fifo, "w") as f:
            f.write("INFO start\nOSError: libatb.so: cannot open shared object file: No such file or directory\n")

    t = threading.Thread(target=writer)
    t.start()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "explain", "--json", str(fifo)], capture_output=True,
                          text=True, env=env, timeout=60)
    t.join(timeout=10)
    assert proc.returncode == 0, proc.stderr
    assert "libatb" in proc.stdout
