"""The automaton search of explain (doctor/parse/exactscan.py, the ahocorasick-rs wheel): it
takes every shipped matcher, its plan is kept in the cache and refused there when malformed,
and explain answers the same with the wheel and without it (its pure-Python fallback).
tests/test_explain_fastpath.py compares both searches with a plain line-by-line scan."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

from doctor.parse import exactscan, logscan
from doctor.parse.logscan import Compiled, LogScanner, Matcher, required
from doctor.shell.host import cache
from tests.explain_kit import catalog
from tests.test_explain_fastpath import NOISE, examples, mined

REPO = Path(__file__).resolve().parents[1]
# runs the doctor as if the wheel were not installed: importing it fails
NO_WHEEL = ("import runpy, sys\n"
            "sys.modules['ahocorasick_rs'] = None\n"
            "sys.argv[0] = 'ascend-doctor'\n"
            "runpy.run_module('doctor', run_name='__main__', alter_sys=True)\n")


def test_the_wheel_is_installed_here():
    """A declared dependency on Linux x86_64 and aarch64: the tests run both searches."""
    assert exactscan.load() is not None


def test_every_shipped_matcher_is_in_the_automaton():
    """A matcher the automaton cannot take (a needle without a window of at most VARIANTS
    exact strings) falls to the marker scan: a second pass over every byte of the log."""
    compiled = catalog().compiled
    exact = compiled.exact
    covered = 0
    for mask in exact.masks:
        covered |= mask
    assert exact.rest == [], [compiled.matchers[i].id for i in exact.rest]
    assert covered == compiled.all_mask, [m.id for i, m in enumerate(compiled.matchers) if not covered >> i & 1]


@pytest.mark.slow  # ~1 s of CPU or more: every pattern against every line
def test_each_pattern_is_in_every_line_its_matchers_match():
    """Every example or mined line a matcher's regex matches holds one of the matcher's exact
    strings (what the fast path tests show on whole logs, here line by line with the string)."""
    compiled = catalog().compiled
    exact = compiled.exact
    strings = {i: [p for p, mask in zip(exact.patterns, exact.masks) if mask >> i & 1] for i in range(len(compiled.matchers))}
    checked = 0
    for line in examples() + mined() + NOISE:
        raw = line.encode("utf-8")
        for i, m in enumerate(compiled.matchers):
            if compiled.regex(i).search(line):
                assert any(p in raw for p in strings[i]), (m.id, line)
                checked += 1
    assert checked > 500


def test_sure_strings_are_the_plain_texts_of_counted_matchers():
    compiled = catalog().compiled
    exact = compiled.exact
    for p, mask, sure in zip(exact.patterns, exact.masks, exact.sure):
        assert sure & ~mask == 0
        for i in logscan._bits(sure):
            compiled.prepare(i)
            assert compiled.counted[i]
            assert p.decode("utf-8") in [t for alt in compiled.literals[i] or [] for t in alt]
    assert any(exact.sure), "the shipped requires: HCCL|NPU|... counts its lines without decoding them"


@pytest.mark.parametrize("pattern, want", [
    (r"HcclCommInitRootInfo failed|HcclCommInitRootInfoConfig failed",
     {b"HcclCommInitRootInfo failed", b"HcclCommInitRootInfoConfig failed"}),  # not the shared prefix alone
    (r"(?i)soc[_ ]?version", None),  # 7 case-folded letters: 128 strings
    (r"E[0-9A-Z]\d{4}", None),  # E, 36 classes, 10 digits: 360 strings of 3 bytes
])
def test_windows(pattern, want):
    got = {s for n in required(pattern, score=exactscan.score) for s in exactscan.strings(n)}
    assert 0 < len(got) <= exactscan.VARIANTS * 2
    assert all(b"\n" not in s and len(s) >= logscan.MIN_NEEDLE for s in got)
    if want is not None:  # (each cut to the longest window)
        assert got == {w[:exactscan.WINDOW] for w in want}


def test_a_needle_without_a_window_goes_to_the_marker_scan():
    """[0-9a-z]{8}! has no window of 3 atoms with at most VARIANTS strings (36 x 36 x 1 is
    too many): its matcher is left to the marker scan, and found there."""
    matchers = [Matcher("hex", r"[0-9a-z]{8}!"), Matcher("plain", r"plain text here")]
    compiled = Compiled(matchers)
    assert compiled.exact.rest == [0]
    data = b"".join(b"noise line %d\n" % i for i in range(20000)) + b"deadbeef!\nplain text here\n"
    for automaton in (True, False):
        logscan.AUTOMATON = automaton
        try:
            scanner = LogScanner(Compiled(matchers))
            scanner.feed(data)
            assert [(h.matcher, h.line) for h in scanner.finish()] == [("hex", 20001), ("plain", 20002)]
        finally:
            logscan.AUTOMATON = True


def test_a_once_matcher_keeps_its_first_hit_and_passes_its_other_lines_by():
    """A ``once`` matcher (a signature's requires and unless) keeps its first hit, counted 1,
    with the automaton and with the marker scan alike; the other matchers on its lines still
    match (and count)."""
    matchers = [Matcher("once", r"HCCL|NPU", once=True), Matcher("plain", r"plain text here"),
                Matcher("regex", r"HCCL (?P<n>\d+) plain", key="n")]
    data = b"".join(b"noise line %d\n" % i for i in range(20000))
    data += b"NPU first\n" + b"HCCL 1 plain text here\n" * 3 + b"HCCL 2 plain\n"
    for automaton in (True, False):
        logscan.AUTOMATON = automaton
        try:
            scanner = LogScanner(Compiled(matchers))
            scanner.feed(data)
            got = [(h.matcher, h.key, h.line, h.count) for h in scanner.finish()]
            assert got == [("once", "", 20001, 1), ("plain", "", 20002, 3), ("regex", "1", 20002, 3),
                           ("regex", "2", 20005, 1)], automaton
        finally:
            logscan.AUTOMATON = True


@pytest.mark.slow  # ~0.5 s of CPU or more: the marker scan built over every pattern
def test_without_the_wheel_the_marker_scan_runs(monkeypatch):
    monkeypatch.setitem(sys.modules, "ahocorasick_rs", None)
    assert exactscan.load() is None
    compiled = Compiled(catalog().matchers)
    exact, marked = compiled.search()
    assert exact is None and marked is compiled.marked


# ---------------------------------------------------------------------------------------------
# the plan in the cache


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "ascend-doctor" / "explain"


@pytest.mark.slow  # ~0.5 s of CPU or more: the marker scan built over every pattern
def test_the_plan_is_cached_and_read_back(cache_home, monkeypatch):
    matchers = catalog().matchers
    first = Compiled(matchers, cache=cache)
    assert first.exact is not None
    (entry,) = cache_home.glob("*.json")
    assert json.loads(entry.read_text()) == json.loads(shipped_plan())

    def no_build(_matchers):
        raise AssertionError("built again although cached")

    monkeypatch.setattr(exactscan, "plan", no_build)
    second = Compiled(matchers, cache=cache)
    assert second.exact.patterns == first.exact.patterns and second.exact.masks == first.exact.masks


def _same_marked(marked, want):
    pf, wpf = marked.prefilter, want.prefilter
    assert (pf.regex.pattern, pf.table, pf.owners, pf.anchors, pf.marked, pf.density) == \
           (wpf.regex.pattern, wpf.table, wpf.owners, wpf.anchors, wpf.marked, wpf.density)
    assert marked.token_masks == want.token_masks and marked.anchor_masks == want.anchor_masks


@pytest.mark.slow  # ~0.5 s of CPU or more: the marker scan built over every pattern
def test_the_marker_scan_is_cached_and_read_back(cache_home, monkeypatch):
    """Without the wheel, the marker scan's build (it parses every pattern) is kept in the cache
    too, and read back the same."""
    monkeypatch.setattr(logscan, "AUTOMATON", False)
    matchers = catalog().matchers
    first = Compiled(matchers, cache=cache).marked
    assert len(list(cache_home.glob("*.json"))) == 1

    def no_build(self, _matchers):
        raise AssertionError("built again although cached")

    with monkeypatch.context() as m:
        m.setattr(logscan.Prefilter, "__init__", no_build)
        again = Compiled(matchers, cache=cache)
        _same_marked(again.marked, first)
        assert all(again.ready)  # every literal test from the cache


def test_a_malformed_cached_marker_scan_is_built_again(cache_home, monkeypatch):
    """Each way an entry can be wrong is built again and written anew. A slice of the matchers
    is enough (the entry's form is the same), and keeps the six rebuilds cheap."""
    monkeypatch.setattr(logscan, "AUTOMATON", False)
    matchers = catalog().matchers[:60]
    first = Compiled(matchers, cache=cache).marked
    (entry,) = cache_home.glob("*.json")
    data = json.loads(entry.read_text())
    for bad in ("not json", dict(data, owners=[[99999]]), dict(data, source="(?P<x>"), dict(data, literals=[]),
                dict(data, source="(?P<t0>a)"), dict(data, code=[[300, 1]])):
        entry.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        _same_marked(Compiled(matchers, cache=cache).marked, first)
        assert json.loads(entry.read_text()) == data  # written anew


N = len(catalog().matchers)


@lru_cache(maxsize=None)
def shipped_plan() -> str:
    """The plan of the shipped matchers, as JSON text (made once: it parses every pattern)."""
    return json.dumps(exactscan.plan(catalog().matchers))


def _entry(fields):
    """A plan entry for the shipped matchers with some fields replaced (JSON text)."""
    if isinstance(fields, str):
        return fields
    data = json.loads(shipped_plan())
    data.update(fields)
    return json.dumps(data)


MALFORMED = [
    "not json", "[]", {"rest": None}, {"extra": 1},
    {"patterns": ["abc"], "owners": [[99999]], "sure": [[]]},  # no such matcher
    {"patterns": ["a\nb"], "owners": [[0]], "sure": [[]]},  # a newline: in no line
    {"patterns": [""], "owners": [[0]], "sure": [[]]},
    {"patterns": ["abc"], "owners": [[0]], "sure": [[1]]},  # sure but not an owner
    {"patterns": ["\u4e2d"], "owners": [[0]], "sure": [[]]},  # not one byte a character
    {"patterns": ["abc"], "owners": [[True]], "sure": [[]]},
    {"patterns": ["abc", "abd"], "owners": [[0]], "sure": [[]]},
    {"literals": []}, {"counted": [1] * N}, {"literals": [[["a"], []]] * N}, {"literals": [[[""]]] * N},
    {"literals": [["a"]] * N}, {"counted": [True] * (N - 1)},
]


@pytest.mark.parametrize("bad", MALFORMED)
@pytest.mark.slow  # ~1 s of CPU or more: the automaton built per case
def test_a_malformed_plan_is_not_valid(bad):
    text = _entry(bad)
    assert not exactscan.valid(json.loads(text) if text.startswith(("{", "[")) else None, len(catalog().matchers))


# each kind of damage once through the cache, on a slice of the matchers (the entry's form is the
# same; a rebuild of the whole catalogue parses every pattern: 0.5 s each)
@pytest.mark.parametrize("damage", ["not json", "no such matcher", "one count short"])
def test_a_malformed_cached_plan_is_built_again(cache_home, damage):
    matchers = catalog().matchers[:60]
    assert Compiled(matchers, cache=cache).exact is not None
    (entry,) = cache_home.glob("*.json")
    want = json.loads(entry.read_text())
    bad = {"not json": "not json",
           "no such matcher": json.dumps(dict(want, patterns=["abc"], owners=[[99999]], sure=[[]])),
           "one count short": json.dumps(dict(want, counted=[True] * (len(matchers) - 1)))}[damage]
    assert not exactscan.valid(json.loads(bad) if bad.startswith("{") else None, len(matchers))
    entry.write_text(bad)
    again = Compiled(matchers, cache=cache)
    assert again.exact.patterns == [p.encode("latin-1") for p in want["patterns"]]
    assert json.loads(entry.read_text()) == want  # written anew


def test_the_key_changes_with_the_matchers(cache_home):
    assert Compiled([Matcher("a", "alpha beta")], cache=cache).exact is not None
    assert Compiled([Matcher("a", "alpha gamma")], cache=cache).exact is not None
    assert len(list(cache_home.glob("*.json"))) == 2


# ---------------------------------------------------------------------------------------------
# the command, with the wheel and without it


@pytest.mark.slow  # ~1 s of CPU or more: explain twice in subprocesses
def test_explain_answers_the_same_without_the_wheel(tmp_path):
    """A log past SMALL_INPUT with every example and mined case in noise: the JSON report of the
    real command is the same byte for byte through the automaton and through the fallback."""
    import random

    rnd = random.Random(26)
    pool = examples() + mined()
    lines = [rnd.choice(pool) if rnd.random() < 0.2 else rnd.choice(NOISE) for _ in range(6000)]
    log = tmp_path / "mixed.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert log.stat().st_size > 4 * logscan.SMALL_INPUT
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("ASCEND_DOCTOR_LANG", None)
    out = []
    for argv in ([sys.executable, "-m", "doctor"], [sys.executable, "-c", NO_WHEEL]):
        done = subprocess.run(argv + ["explain", "--json", str(log)], capture_output=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr.decode()
        out.append(done.stdout)
    assert out[0] == out[1]
    assert len(json.loads(out[0])["matches"]) > 50
    assert list((tmp_path / "cache" / "ascend-doctor" / "explain").glob("*.json"))  # the plan was kept



@pytest.mark.slow  # ~0.5 s of CPU or more: fresh interpreters with other hash seeds
def test_the_plans_fingerprint_does_not_follow_what_else_is_loaded_nor_the_hash_seed():
    """marshal's output follows reference counts (what else the process loaded: under cProfile
    or after the CLI's imports the key changed, and the cached plan was built again)."""
    import os
    import subprocess
    import sys

    plain = "from doctor.parse import exactscan; print(exactscan.fingerprint())"
    loaded = "import doctor.cli.explain, doctor.explain.catalog, cProfile; " + plain
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONHASHSEED=seed)).stdout
            for code in (plain, loaded) for seed in ("1", "2")}
    assert len(runs) == 1 and runs != {""}


def test_the_plans_fingerprint_is_the_same_in_every_process_and_follows_the_code(monkeypatch):
    """The cached plan is keyed by the code that makes plans, read from the loaded modules (the
    parsers open no file): the same in a new process, different once that code changes."""
    import subprocess
    import sys

    from doctor.parse import exactscan, needles

    code = "from doctor.parse import exactscan; print(exactscan.fingerprint())"
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout
            for _ in range(2)}
    exactscan.fingerprint.cache_clear()
    assert runs == {f"{exactscan.fingerprint()}\n"}
    for module, name in ((needles, "WEAK"), (exactscan, "FOLLOW")):
        monkeypatch.setattr(module, name, getattr(module, name) + 1)
        exactscan.fingerprint.cache_clear()
        changed = exactscan.fingerprint()
        monkeypatch.undo()
        exactscan.fingerprint.cache_clear()
        assert changed != exactscan.fingerprint(), name


# ---------------------------------------------------------------------------------------------
# a small input: every line tried with every matcher, their literal tests from the cache


def _small_scan(compiled, text):
    scanner = LogScanner(compiled)
    scanner.feed(text.encode())
    return [(h.matcher, h.key, h.line, h.count) for h in scanner.finish()]


def test_a_small_input_reads_every_literal_test_from_the_cache(cache_home, monkeypatch):
    """A paste (under SMALL_INPUT) is tried with every matcher: their literal tests, worked out
    from the patterns the first time, are read back from the cache after it, not worked out
    again, and find the same hits."""
    matchers = catalog().matchers
    text = "\n".join(examples()[:40]) + "\n"
    assert len(text.encode()) <= logscan.SMALL_INPUT
    first = _small_scan(Compiled(matchers, cache=cache), text)
    assert first and len(list(cache_home.glob("*.json"))) == 1

    def not_again(*_args):
        raise AssertionError("a literal test worked out again although cached")

    monkeypatch.setattr(logscan, "line_literals", not_again)
    again = Compiled(matchers, cache=cache)
    assert _small_scan(again, text) == first and all(again.ready)


def test_a_malformed_cached_literal_test_is_worked_out_again(cache_home):
    matchers = catalog().matchers[:60]
    text = "\n".join(examples()[:60]) + "\n"
    first = _small_scan(Compiled(matchers, cache=cache), text)
    (entry,) = cache_home.glob("*.json")
    want = json.loads(entry.read_text())
    for bad in ("not json", dict(want, literals=[[["a"], []]] * 60), dict(want, counted=[1] * 60),
                dict(want, counted=want["counted"][:-1])):
        entry.write_text(bad if isinstance(bad, str) else json.dumps(bad))
        assert _small_scan(Compiled(matchers, cache=cache), text) == first
        assert json.loads(entry.read_text()) == want  # written anew


def test_a_cached_literal_test_is_not_read_for_a_matcher_with_a_context(cache_home):
    """A plain-text pattern is ``counted`` (past its first hit, a line holding the text only adds
    to its count); with a context it is not (each line must also pass the context). The context
    is part of the cache's key, so the second matcher never reads the first one's flag."""
    text = "npu 0: device lost\nhost: device lost\n"
    plain = [Matcher("a", "device lost")]
    in_context = [Matcher("a", "device lost", context="npu")]
    assert [(line, count) for _, _, line, count in _small_scan(Compiled(plain, cache=cache), text)] == [(1, 2)]
    assert [(line, count) for _, _, line, count in _small_scan(Compiled(in_context, cache=cache), text)] == [(1, 1)]
    assert len(list(cache_home.glob("*.json"))) == 2
