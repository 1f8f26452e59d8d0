"""The pieces of profile on plain data: intervals, the streaming reader at every chunk boundary,
header aliases, release-aware advice, the verdict thresholds."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

import profilegen as pg
from fakehost import REPO

from doctor.profile import advice, intervals as iv, kernels, trace, view
from doctor.profile.analyse import Idle, StepFigures, analyse
from doctor.profile.verdict import judge
from doctor.shell.profile import files as pf

LEVEL1 = REPO / "tests" / "data" / "profile" / "mstt_level1_trace_view.json"


def test_intervals():
    assert iv.union([(5, 6), (1, 3), (2, 4), (7, 7)]) == [(1, 4), (5, 6)]
    assert iv.subtract([(0, 10)], [(2, 3), (5, 12)]) == [(0, 2), (3, 5)]
    assert iv.intersect([(0, 4), (6, 9)], [(3, 7)]) == [(3, 4), (6, 7)]
    assert iv.gaps([(1, 2), (4, 5)], 0, 6) == [(0, 1), (2, 4), (5, 6)]
    assert iv.clip([(0, 2), (3, 8)], 1, 5) == [(1, 2), (3, 5)]


def _every_kind_of_event(tmp_path):
    """The recorded trace cut to its first 50 events and one of each (ph, cat, args keys) after
    them, written as it was written (json.dumps): tiny chunks cost a Python step per byte."""
    events = json.loads(LEVEL1.read_text())
    seen, kept = set(), events[:50]
    for e in events[50:]:
        kind = (e.get("ph"), e.get("cat"), tuple(sorted(e.get("args", {}))))
        if kind not in seen:
            seen.add(kind)
            kept.append(e)
    path = tmp_path / "trace_view.json"
    path.write_text(json.dumps(kept))
    assert LEVEL1.read_text().startswith(path.read_text()[:300])  # the same writing
    return path


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_the_streaming_reader_matches_json_load_at_any_chunk_size(monkeypatch, tmp_path, chunk):
    path = LEVEL1 if chunk > 64 else _every_kind_of_event(tmp_path)
    monkeypatch.setattr(pf, "CHUNK", chunk)
    events = []
    res = pf.stream_trace(str(path), events.append)
    assert res.complete and events == json.loads(path.read_text())


def test_a_kineto_object_streams_its_events_only(tmp_path, monkeypatch):
    monkeypatch.setattr(pf, "CHUNK", 5)
    doc = {"schemaVersion": 1, "deviceProperties": [{"name": "x" * 50}], "traceEvents": [{"ph": "X", "ts": 1.5}] * 3,
           "traceName": "t"}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    got = []
    res = pf.stream_trace(str(p), got.append)
    assert res.container == "object" and got == doc["traceEvents"]


def test_timestamps_keep_their_nanoseconds():
    b = trace.TraceBuilder()
    b.add({"ph": "X", "pid": 1, "tid": 1, "ts": "1704161511420306.491", "dur": 1.0, "name": "a"})
    b.add({"ph": "X", "pid": 1, "tid": 1, "ts": "1704161511420306.492", "dur": 1.0, "name": "a"})
    t = b.finish()
    ts = t.processes[1].ts
    assert ts[1] - ts[0] == pytest.approx(0.001, abs=1e-9)  # a float of the whole value would lose it


def test_wrong_types_are_skipped_and_counted():
    b = trace.TraceBuilder()
    for e in ([1], "x", {"ph": "X", "ts": [], "dur": 1, "pid": 1}, {"ph": "X", "ts": "1", "dur": "nan", "pid": 1},
              {"ph": "X", "ts": "1", "dur": -1, "pid": 1}, {"ph": "X", "ts": True, "dur": 1, "pid": 1}):
        b.add(e)
    t = b.finish()
    assert t.skipped == 6 and not t.processes


def test_header_aliases_and_cleaning():
    t = kernels.table(["Op Name", "OP Type", "Task Type", "Task Start Time(us)", "Task Duration(us)", "Block Num"],
                      [["mm", "MatMulV2", "AI_CORE", '"1736413971558972.912\t"', "185.5", "24"],
                       ["x", "Cast", "AI_VECTOR_CORE", "N/A", "N/A", "1"]], base_us=1736413971558900)
    assert len(t) == 1 and t.skipped == 1
    assert t.start[0] == pytest.approx(72.912) and t.dur[0] == 185.5 and t.text(t.type[0]) == "MatMulV2"
    assert kernels.first_dim('"81920,4096;8192,512"') == 81920
    with pytest.raises(ValueError):
        kernels.table(["Name", "Type"], [])


ODD_CELLS = ["", "1", "1.5", " 2.5\t", '"3.25"', '"1700000000123.456\t"', "N/A", "na", "NONE", "-", "inf", "nan",
             "-1", "1e400", "1_000", "abc", '"""81920,4096;8192,512"""', "  HCCL ", "1.5.2", "0x10", " -0.0 "]


def test_a_cell_is_the_number_its_cleaned_text_says():
    """number() reads a plain number straight away and anything else cleaned (quotes, TABs);
    either way the value is that of the cleaned text, and only finite numbers count."""
    import math

    def cleaned_then_read(v):
        v = v.strip().strip('"').strip()
        if not v or v.upper() in ("N/A", "NA", "NONE", "-"):
            return None
        try:
            f = float(v)
        except ValueError:
            return None
        return f if math.isfinite(f) else None

    for v in ODD_CELLS:
        assert kernels.number(v) == cleaned_then_read(v), repr(v)


def test_text_cells_that_clean_to_the_same_text_are_one_name_and_short_rows_are_blanks():
    t = kernels.table(["Name", "Type", "Accelerator Core", "Duration(us)", "Input Shapes", "aic_mac_ratio"],
                      [["mm", "MatMul", "AI_CORE", "1", '"""4,8"""', "0.5"],
                       ['"mm"', " MatMul\t", "AI_CORE", "2", "4,8", "N/A"],
                       ["mm", "MatMul", "AI_CORE", "3"],  # a row cut short: the missing cells are blank
                       ["mm", "MatMul", "AI_CORE", "inf", "4,8", "0.5"]])  # no duration: skipped
    assert (len(t), t.rows, t.skipped) == (3, 4, 1)
    assert len(set(t.name)) == 1 and len(set(t.type)) == 1 and t.text(t.name[0]) == "mm"
    assert t.text(t.shapes[0]) == t.text(t.shapes[1]) == "4,8" and t.text(t.shapes[2]) == ""
    m = list(t.metrics["aic_mac_ratio"])
    assert m[0] == 0.5 and m[1] != m[1] and m[2] != m[2]  # N/A and a missing cell: nan


def _figures(p):
    g = pg.simulate(p)
    return analyse(view.from_trace(trace.build(g.events), "r"))


@pytest.fixture(scope="module")
def host_bound():
    f = _figures(pg.HOST_BOUND)
    return f, judge(f.totals)


def _ids(f, v, release):
    return {a.id: a for a in advice.advise(f, v, advice.Releases([release] if release else []))}


@pytest.mark.parametrize("release,graph,setting", [
    ("0.11.0rc3", "graph_mode", advice.FULL_DECODE_ONLY),
    ("0.13.0", "graph_mode", advice.FULL_DECODE_ONLY),
    ("0.10.0rc1", "graph_mode_torchair", advice.TORCHAIR),
    ("0.8.5rc1", "graph_mode_upgrade", None),
])
def test_graph_mode_advice_follows_the_release(host_bound, release, graph, setting):
    f, v = host_bound
    got = _ids(f, v, release)
    assert graph in got and got[graph].setting == setting and got[graph].releases is None
    assert not ({"graph_mode", "graph_mode_torchair", "graph_mode_upgrade"} - {graph}) & set(got)


@pytest.mark.parametrize("release,setting", [
    ("0.9.1", advice.CPU_BINDING), ("0.10.0rc1", "CPU_AFFINITY_CONF=1"), ("0.11.0rc1", advice.CPU_BINDING),
    ("0.14.0rc1", advice.CPU_BINDING), ("0.15.0rc1", None), ("0.18.0", None),
])
def test_cpu_binding_advice_follows_the_release(host_bound, release, setting):
    f, v = host_bound
    assert _ids(f, v, release)["cpu_binding"].setting == setting


def test_unknown_release_gives_every_form_with_its_releases(host_bound):
    f, v = host_bound
    got = _ids(f, v, None)
    assert got["graph_mode"].releases == "v0.11.0rc1+" and got["graph_mode_torchair"].releases
    assert advice.Releases(["0.10.0", "0.13.0"]).at_least("0.11.0rc1") is None
    assert advice.Releases([]).label() is None and advice.Releases(["0.11.0", "0.9.1"]).label() == "v0.9.1 .. v0.11.0"


def test_task_queue_off_is_seen(tmp_path):
    f = _figures(replace(pg.HOST_BOUND, task_queue=False, steps=8))
    got = {a.id: a for a in advice.advise(f, judge(f.totals), advice.Releases([]))}
    assert f.task_queue is False and got["task_queue"].setting == "TASK_QUEUE_ENABLE=1"


def _step(busy, comm_exposed=0.0, host=0.0, other=0.0, unattributed=0.0, comm=None):
    wall = busy + host + other + unattributed
    return StepFigures(0, "s", 0.0, wall, wall, busy, busy - comm_exposed, comm if comm is not None else comm_exposed,
                       comm_exposed, 0.0, Idle(host_late=host, other=other, unattributed=unattributed), 10)


@pytest.mark.parametrize("step,bound", [
    (_step(70, host=30), "host"), (_step(80, host=20), "device"), (_step(60, comm_exposed=25, host=15), "communication"),
    (_step(65, comm_exposed=10, host=20, other=15), "balanced"), (_step(30, comm_exposed=25, host=45), "host"),
    (_step(60, unattributed=40), "host"),
])
def test_verdict_thresholds(step, bound):
    v = judge(step)
    assert v.bound == bound, v.shares
    if step.idle.unattributed:
        assert v.basis == "idle"


def test_msprof_memory_record_is_in_kb():
    from doctor.profile import memory

    b = memory.MemoryRecordBuilder(["Device_id", "Component", "Timestamp(us)", "Total Allocated(KB)",
                                    "Total Reserved(KB)", "Device"], 1000)
    for ts, kb in (("1000.5", 2048), ("1010.0", 4096), ("1020.0", 4096)):
        b.add(["0", "APP", ts, "1024", str(kb), "NPU:0"])
    b.add(["0", "APP", "x", "1", "1", "NPU:0"])
    s = b.finish()
    assert s is not None and b.skipped == 1 and list(s.reserved) == [2.0, 4.0, 4.0] and s.ts[0] == 0.5
    got = memory.summarise(s, [(0.0, 5.0), (5.0, 15.0), (15.0, 25.0)])
    assert got["reserved_after_first_step_mb"] == 2.0 and got["rise_in_loop_mb"] == 2.0 and got["peak_allocated_mb"] == 1.0


def test_memory_record_rows_are_bounded(monkeypatch):
    from doctor.profile import memory

    monkeypatch.setattr(memory, "MAX_SAMPLES", 3)
    b = memory.MemoryRecordBuilder(["Component", "Timestamp(us)", "Total Reserved(MB)"], None)
    for i in range(5):
        b.add(["PTA", f"{100 + i}.0", "1"])
    s = b.finish()
    assert s is not None and len(s.ts) == 3 and b.skipped == 2 and b.rows == 5
