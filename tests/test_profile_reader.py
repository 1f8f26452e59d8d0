"""The trace reader's fast way (runs of whole events decoded by one ``json.loads`` each, added to
the columns in one loop: ``usecases.profile.read_trace``) against the plain way (``json.load`` of
the whole file, ``TraceBuilder.add`` on each event): the same columns, names, lanes, flows and
counts on the real fixture, on generated decode loops, and on traces written awkwardly
(whitespace anywhere, escaped quotes and braces in names, unicode and broken UTF-8, fields in any
order, nested args, odd types, late metadata, a Kineto object); and the same error, at the same
byte, on broken ones."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Dict, List

import pytest

import profilegen as pg
from doctor.profile import trace
from doctor.shell.profile import files as pf
from doctor.usecases import profile as up
from fakehost import REPO

LEVEL1 = REPO / "tests" / "data" / "profile" / "mstt_level1_trace_view.json"


def reference(path: Path) -> trace.Trace:
    return trace.build(json.loads(path.read_bytes().decode("utf-8", "replace")))


def snapshot(t: trace.Trace) -> Dict[str, Any]:
    """Everything the analysis reads of a trace (floats by their bytes: nan == nan, -0.0 != 0.0)."""
    return {
        "names": t.names,
        "order": list(t.processes),
        "processes": {pid: (c.ts.tobytes(), c.dur.tobytes(), c.name.tolist(), c.tid.tolist(), c.kind.tolist())
                      for pid, c in t.processes.items()},
        "process_names": t.process_names, "thread_names": t.thread_names, "lanes": t.lanes,
        "launches": {pid: a.tobytes() for pid, a in t.launches.items()},
        "base_us": t.base_us, "events": t.events, "skipped": t.skipped, "container": t.container,
        "flows_h2d": t.flows_h2d, "memory_events": t.memory_events,
    }


class Counting(trace.TraceBuilder):
    """A builder that counts the events that went the careful way (through add)."""

    careful = 0

    def add(self, event: Any) -> None:
        self.careful += 1
        super().add(event)


def fast(path: Path) -> trace.Trace:
    t, _ = up.read_trace(str(path))
    return t


# -- awkward traces ---------------------------------------------------------------------------

NAMES = ['say "hi"', "back\\slash", "}, {", '"}, {"ph": "X"', "中文算子", "emoji \U0001F600", "tab\tand\nnewline",
         "\x1b[31mred\x1b[0m", "", "x" * 300, "a/b", "\u2028sep"]


def _mutate(e: Dict[str, Any], rng: random.Random, late_names: List[str]) -> Any:
    e = json.loads(json.dumps(e))
    r = rng.random()
    if r < 0.04:
        e["name"] = rng.choice(NAMES)
    elif r < 0.06:
        e["name"] = late_names.pop() if late_names else "late"
    elif r < 0.08 and "ts" in e:
        e["ts"] = rng.choice([float(e["ts"]), int(float(e["ts"])), "-" + e["ts"], " " + e["ts"] + " ", e["ts"] + ".",
                              "." + e["ts"].split(".")[-1], "1e3", "nan", True, None, [1],
                              "9" * 400, 10 ** 400, 1e300, "12.5.6", "1_000.5"])
    elif r < 0.10:
        e["dur"] = rng.choice(["5", 5, -1, 1e20, float("nan"), float("inf"), None, 3.25, 0, 10 ** 400])
    elif r < 0.12:
        key = rng.choice(["pid", "tid"])
        e[key] = rng.choice([str(e.get(key, 1)), True, None, 1 << 63, -5, "abc", 4.0, 10 ** 30, str(10 ** 30)])
    elif r < 0.14:
        e["args"] = rng.choice([{"Task Type": 5}, {"Task Type": None}, {"Task Type": "AI_CORE", "deep": {"a": [1, {"b": "}"}]}},
                                {"x": {"y": {"z": {"w": [[], {}]}}}}, "not a dict", {"Task Type": "NEW_TYPE"}])
    elif r < 0.15:
        e["cat"] = rng.choice([None, 7, "new_cat", "HostToDevice"])
    elif r < 0.16 and "id" in e:
        e["id"] = rng.choice([int(e["id"]), "abc", True, None, str(1 << 70)])
    elif r < 0.17:
        e["ph"] = rng.choice(["i", "C", "b", None, 5, "M", "s", "f"])
        if rng.random() < 0.5:
            e["name"] = rng.choice(["[memory]", "NPU MEM", "other"])
    elif r < 0.18:
        return rng.choice([1, "x", [], None, [{"ph": "X"}], 2.5])
    if rng.random() < 0.3:
        items = list(e.items())
        rng.shuffle(items)
        e = dict(items)
    return e


def _write_awkward(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    p = replace_decode(rng)
    events = pg.simulate(p).events
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    late_names = [f"late_{i}_{seed}" for i in range(40)]
    out = [_mutate(e, rng, late_names) for e in body]
    for m in meta:  # metadata anywhere, some of it after the events it names
        out.insert(rng.randrange(len(out) + 1), m)
    seps = [",", ", ", ",\n", " ,\n\t", "\r\n,\r\n  ", ",\n\n"]
    texts = []
    for e in out:
        indent = rng.choice([None, None, None, 0, 2, "\t"])
        text = json.dumps(e, ensure_ascii=rng.random() < 0.5, indent=indent,
                          separators=rng.choice([(", ", ": "), (",", ":"), (" , ", " : ")]) if indent is None else None)
        if isinstance(e, dict) and rng.random() < 0.02:  # a duplicate key: the last one counts
            text = text[:-1] + ', "pid": 77}'
        texts.append(text)
    body_text = "".join((rng.choice(seps) if i else "") + t for i, t in enumerate(texts))
    if seed % 3 == 2:  # a Kineto object, with members before and after the events
        doc = ('{"schemaVersion": 1, "deviceProperties": [{"name": "x", "a": {"b": [1, 2]}}],\n "traceEvents": [\n'
               + body_text + '\n], "traceName": "t}, {"}\n')
    else:
        doc = rng.choice(["", " ", "\n"]) + "[" + rng.choice(["", "\n"]) + body_text + rng.choice(["", "\n", " \n"]) + "]\n"
    data = doc.encode("utf-8", "surrogatepass")
    if seed % 2:  # broken UTF-8 inside a name: both ways read it as U+FFFD
        data = data.replace("中文算子".encode(), b"\xe4\xb8 \xff\xfe", 3)
    path.write_bytes(data)


def replace_decode(rng: random.Random) -> pg.Decode:
    from dataclasses import replace

    base = rng.choice([pg.HOST_BOUND, pg.DEVICE_BOUND, pg.COMM_BOUND, pg.BALANCED])
    return replace(base, steps=rng.randint(6, 12), layers=rng.randint(2, 4), prefill_steps=(1,), malloc_steps=(2,))


# -- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [997, 1 << 14, 1 << 20])
def test_the_real_fixture_reads_the_same_both_ways(monkeypatch, chunk):
    monkeypatch.setattr(pf, "CHUNK", chunk)
    monkeypatch.setattr(pf, "_TAIL", 256)
    assert snapshot(fast(LEVEL1)) == snapshot(reference(LEVEL1))


@pytest.mark.parametrize("scenario", ["HOST_BOUND", "DEVICE_BOUND", "COMM_BOUND", "BALANCED"])
@pytest.mark.slow  # ~1 s of CPU or more: generated traces
def test_generated_decode_loops_read_the_same_and_mostly_the_fast_way(tmp_path, monkeypatch, scenario):
    monkeypatch.setattr(pf, "CHUNK", 1 << 15)
    p = tmp_path / "trace_view.json"
    events = pg.simulate(getattr(pg, scenario)).events
    p.write_text(json.dumps(events))
    assert snapshot(fast(p)) == snapshot(reference(p))
    b = Counting()
    res = pf.stream_trace(str(p), b.add, on_events=b.add_many)
    assert res.events == len(events) and res.complete
    # after the first run (new names, the metadata) events go in the one loop, not through add
    assert b.careful < len(events) * 0.05, (b.careful, len(events))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("chunk", [613, 1 << 13, 1 << 20])
def test_awkward_traces_read_the_same_both_ways(tmp_path, monkeypatch, seed, chunk):
    monkeypatch.setattr(pf, "CHUNK", chunk)
    monkeypatch.setattr(pf, "_TAIL", 512)
    p = tmp_path / "trace_view.json"
    _write_awkward(p, seed)
    got, want = snapshot(fast(p)), snapshot(reference(p))
    assert got == want
    assert want["events"] > 300 and want["skipped"] > 0 and len(want["names"]) > 15


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow  # ~1 s of CPU or more: traces read both ways
def test_broken_traces_fail_the_same_way_at_the_same_byte(tmp_path, monkeypatch, seed):
    """A trace cut or corrupted anywhere: the fast way says what the event-by-event way says
    (the same message and byte), or reads the same events when that way reads them."""
    monkeypatch.setattr(pf, "CHUNK", 1 << 12)
    monkeypatch.setattr(pf, "_TAIL", 256)
    rng = random.Random(seed)
    p = tmp_path / "trace_view.json"
    _write_awkward(p, seed)
    good = p.read_bytes()
    for _ in range(12):
        at = rng.randrange(len(good))
        damage = rng.choice([b"", b"}", b",", b",]", b"\x00", b"{", b'"', b"]", b"1", b"\\x"])
        p.write_bytes(good[:at] + damage + (good[at + rng.randint(0, 3):] if rng.random() < 0.8 else b""))
        outcomes = []
        for bulk in (False, True):
            b = trace.TraceBuilder()
            try:
                res = pf.stream_trace(str(p), b.add, on_events=b.add_many if bulk else None)
                outcomes.append(("read", res.events, res.complete, snapshot(b.finish())))
            except pf.ProfileInputError as e:
                outcomes.append(("error", str(e)))
        assert outcomes[0] == outcomes[1], (at, damage)


def test_a_run_that_does_not_decode_is_read_one_event_at_a_time(tmp_path, monkeypatch):
    """A cut point inside a string (a name holding "}, {") makes a run that does not decode: the
    events of that run go one at a time, and the run after it goes fast again."""
    monkeypatch.setattr(pf, "CHUNK", 1 << 12)
    monkeypatch.setattr(pf, "_TAIL", 64)
    events = [{"ph": "X", "name": "k", "pid": 1, "tid": 1, "ts": f"{1000 + i}.5", "dur": 1.0, "cat": "c"} for i in range(3000)]
    for i in range(0, 3000, 40):
        events[i]["name"] = 'x}, {"ph": "X", "name": "y'
    p = tmp_path / "trace_view.json"
    p.write_text(json.dumps(events))
    b = Counting()
    res = pf.stream_trace(str(p), b.add, on_events=b.add_many)
    assert res.events == 3000
    t = b.finish()
    assert snapshot(t) == snapshot(reference(p))
    assert 0 < b.careful < 3000
