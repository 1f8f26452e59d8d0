"""ascend-doctor profile: the real Level1 fixture, the real kernel tables, generated decode loops
of every header variant, --compare, hostile files. Figures are checked against values computed
here again from the events (json.load and plain loops), not against numbers copied from a run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import profilegen as pg
from fakehost import REPO
import doctor_fork

DATA = REPO / "tests" / "data" / "profile"
LEVEL1 = DATA / "mstt_level1_trace_view.json"


def cli_process(*args, timeout=300):
    """`python -m doctor profile ARGS`, a real process (the tests where its boundary matters: a
    FIFO or a 2 GB file that must not be read, the console entry)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), LANG="C.UTF-8")
    return doctor_fork.run([sys.executable, "-m", "doctor", "profile", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def cli(*args):
    """The same command line in this process (the command's own entry, its output and exit code;
    ~0.2 s of CPU less than starting an interpreter for it)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from doctor.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with pytest.MonkeyPatch.context() as mp, redirect_stdout(out), redirect_stderr(err):
        mp.setenv("LANG", "C.UTF-8")
        try:
            main(["profile", *args])
        except SystemExit as e:
            code = 0 if e.code is None else e.code
    return subprocess.CompletedProcess(["profile", *args], code, out.getvalue(), err.getvalue())


def profile_json(*args):
    proc = cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def ascend_pt(tmp_path: Path, trace: Path, name="worker_1_20240102120000000_ascend_pt") -> Path:
    root = tmp_path / name
    (root / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_bytes(trace.read_bytes())
    return root


# -- independent arithmetic over raw events ----------------------------------------------------


def _rel(ts, base):
    s = str(ts)
    whole, _, frac = s.partition(".")
    return int(whole) - base + (float("0." + frac) if frac else 0.0)


def _union(spans):
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def independent_shares(events):
    """Device busy share and the share of idle time the device waited on the host, from the raw
    events: the ProfilerStep window (else the device span), the union of the device tasks, and
    for each idle gap the HostToDevice flow of the kernel after it (launched after the gap began:
    the host's)."""
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    base = int(str(next(e["ts"] for e in events if "ts" in e)).partition(".")[0])
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M"
               and e.get("name") == "thread_name"}
    hw = [e for e in events if e.get("ph") == "X" and (names.get(e["pid"]) == "Ascend Hardware" or (
        names.get(e["pid"]) == "Communication" and not threads.get((e["pid"], e["tid"]), "").startswith("Plane")))]
    kernels = sorted((_rel(e["ts"], base), _rel(e["ts"], base) + float(e["dur"]), e["tid"]) for e in hw)
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    if steps:
        lo = min(_rel(e["ts"], base) for e in steps)
        hi = max(_rel(e["ts"], base) + float(e["dur"]) for e in steps)
    else:
        lo, hi = kernels[0][0], max(k[1] for k in kernels)
    busy = _union([(s, e) for s, e, _ in kernels if s < hi and e > lo])
    busy_us = sum(min(e, hi) - max(s, lo) for s, e in busy)
    starts = {e["id"]: _rel(e["ts"], base) for e in events if e.get("ph") == "s" and e.get("cat") == "HostToDevice"}
    launch = {(e["tid"], _rel(e["ts"], base)): starts.get(e["id"]) for e in events
              if e.get("ph") == "f" and e.get("cat") == "HostToDevice"}
    idle = host = 0.0
    edges = [lo] + [x for s, e in busy for x in (s, e)] + [hi]
    for g0, g1 in zip(edges[0::2], edges[1::2]):
        if g1 <= g0:
            continue
        idle += g1 - g0
        nxt = [k for k in kernels if k[0] >= g1 - 1e-6]
        if not nxt:
            host += g1 - g0  # nothing launched until the step ends: the host's
            continue
        t = launch.get((nxt[0][2], nxt[0][0]))
        if t is not None and t > g0:
            host += g1 - g0
    return busy_us / (hi - lo), host / idle, busy_us


# -- the real Level1 fixture -------------------------------------------------------------------


def test_real_level1_fixture_is_host_bound_with_the_traces_own_shares(tmp_path):
    events = json.loads(LEVEL1.read_text())
    busy_share, host_share, busy_us = independent_shares(events)
    doc = profile_json(str(ascend_pt(tmp_path, LEVEL1)))
    s = doc["summary"]
    assert s["bound"] == "host"
    assert s["device_busy_share"] == pytest.approx(busy_share, abs=0.002)
    assert s["idle_host_wait_share"] == pytest.approx(host_share, abs=0.005)
    assert 0 <= s["idle_host_wait_share"] <= 1 and s["idle_host_wait_share"] > 0.9
    rank = doc["ranks"][0]
    # the trace's own Overlap Analysis lane agrees on the compute time
    assert rank["overlap_lane_us"]["Computing"] == pytest.approx(busy_us, rel=0.01)
    assert s["step_method"] == "profiler_step" and s["steps"] == 1
    assert rank["task_queue"] is True
    assert rank["identity"]["profiler_level"] == "Level1" and rank["identity"]["profiler_level_inferred"]
    assert {a["id"] for a in doc["advice"]} >= {"graph_mode", "cpu_binding"}
    assert all(a["source"].startswith("http") for a in doc["advice"])
    assert "pmu" in {m["id"] for m in doc["cannot_tell"]}


def test_real_fixture_text_report_puts_the_verdict_first(tmp_path):
    proc = cli_process(str(ascend_pt(tmp_path, LEVEL1)))
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert "host-bound" in first and "profile " in first
    zh = doctor_fork.run([sys.executable, "-m", "doctor", "profile", str(ascend_pt(tmp_path, LEVEL1, "b_ascend_pt")),
                         "--lang", "zh"], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert zh.returncode == 0 and "Host 瓶颈" in zh.stdout.splitlines()[0]


def test_every_input_form_of_the_same_trace_gives_the_same_verdict(tmp_path):
    root = ascend_pt(tmp_path, LEVEL1)
    forms = [root, root / "ASCEND_PROFILER_OUTPUT", root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"]
    shares = {profile_json(str(p))["summary"]["device_busy_share"] for p in forms}
    assert len(shares) == 1


# -- real kernel tables ------------------------------------------------------------------------


def test_real_kernel_table_with_pipe_utilization_measures_the_cube(tmp_path):
    doc = profile_json(str(DATA / "mstt_kernel_details_pipe.csv"))
    rank = doc["ranks"][0]
    assert rank["pmu"]["columns"] == "PipeUtilization" and rank["pmu"]["measured"]
    # the matmuls of the fixture run with mac ~0.74-0.82 and mte2 ~0.94-0.96 (MSPROF: memory bound
    # when mte2 / max(mac, vec) > 1): the kernels are memory bound, measured
    assert doc["summary"]["device_kind"] in (None, "memory") and rank["pmu"]["memory_bound_share"] > 0.5
    assert "pmu" not in {m["id"] for m in doc["cannot_tell"]}
    assert rank["identity"]["kernel_table_era"].startswith("torch_npu 5.0.rc3")


def test_real_kernel_table_with_step_ids_and_hccl_rows(tmp_path):
    doc = profile_json(str(DATA / "mstt_kernel_details_arithmetic.csv"))
    rank = doc["ranks"][0]
    assert doc["summary"]["step_method"] == "table_step" and doc["summary"]["steps"] == 1  # every row is step 1
    assert rank["communication"]["total_us"] > 0
    assert rank["pmu"]["columns"] == "ArithmeticUtilization" and not rank["pmu"]["measured"]
    assert any(o["core"] == "HCCL" for o in rank["top_ops"])
    assert doc["summary"]["basis"] == "idle"  # no trace: the cause of idle time is not recorded
    assert "idle_cause" in {m["id"] for m in doc["cannot_tell"]}


def test_a_kernel_table_alone_states_the_idle_time_as_the_basis_of_host_bound():
    """No flows: the host wait measured is 0, the verdict is read from the idle time, and the headline
    says so (never "waits on the host 0.0%" next to host-bound)."""
    doc = profile_json(str(DATA / "mstt_kernel_details_pipe.csv"))
    s = doc["summary"]
    assert s["bound"] == "host" and s["basis"] == "idle" and s["host_wait_share"] == 0
    idle = f"{100 * s['idle_share']:.1f}%"
    for lang in ("en", "zh"):
        head = cli(str(DATA / "mstt_kernel_details_pipe.csv"), "--lang", lang).stdout.splitlines()[0]
        assert idle in head and "0.0%" not in head, head
    head = cli(str(DATA / "mstt_kernel_details_pipe.csv"), "--lang", "en").stdout.splitlines()[0]
    assert f"the device is idle {idle} of the step time; with no host-device flows in this input, idle is read " \
           "as waiting on the host" in head


@pytest.mark.slow  # ~1 s of CPU or more: generated profiles
def test_every_set_line_has_a_value(tmp_path):
    """A `set:` line is something to paste: an option with its value, never a bare `--max-num-seqs`."""
    flags = {"--enable-chunked-prefill"}  # takes no value
    inputs = [str(DATA / "mstt_kernel_details_pipe.csv"), str(DATA / "mstt_kernel_details_arithmetic.csv")]
    inputs += [str(write(tmp_path / n, p)) for n, p in (("h", pg.HOST_BOUND), ("c", pg.COMM_BOUND),
                                                        ("d", replace(pg.DEVICE_BOUND, pmu="PipeUtilization")))]
    seen = 0
    for path in inputs:
        for line in cli(path).stdout.splitlines():
            if line.lstrip().startswith("set: "):
                seen += 1
                setting = line.split("set: ", 1)[1].split("  (")[0].strip()
                assert setting in flags or " " in setting or "=" in setting, line
        for a in profile_json(path)["advice"]:
            if a.get("setting"):
                assert a["setting"] in flags or " " in a["setting"] or "=" in a["setting"], a
    assert seen


# -- generated decode loops: the four verdicts --------------------------------------------------


def write(tmp_path, p, name=None, **kw):
    return pg.write_ascend_pt(tmp_path, p, name=name, **kw)


@pytest.mark.parametrize("scenario,bound", [(pg.HOST_BOUND, "host"), (pg.DEVICE_BOUND, "device"),
                                            (pg.COMM_BOUND, "communication"), (pg.BALANCED, "balanced")])
@pytest.mark.slow  # ~1 s of CPU or more: generated profiles
def test_generated_profiles_get_their_verdict(tmp_path, scenario, bound):
    root = write(tmp_path, scenario)
    doc = profile_json(str(root))
    s = doc["summary"]
    assert s["bound"] == bound, s
    events = json.loads((root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    busy_share, host_share, _ = independent_shares(events)
    # one window over the whole capture (anchor steps cover the same device time, minus the head)
    assert s["device_busy_share"] == pytest.approx(busy_share, abs=0.05)
    assert s["steps"] == scenario.steps
    assert s["step_method"] == "anchor" and "GatherV2" in s["step_anchor"]


@pytest.mark.parametrize("version", pg.VERSIONS)
@pytest.mark.parametrize("pmu", [None, "PipeUtilization"])
@pytest.mark.slow  # ~1 s of CPU or more: generated profiles
def test_every_header_variant_reads_the_same(tmp_path, version, pmu):
    p = replace(pg.DEVICE_BOUND, version=version, pmu=pmu, scopes="profiler_step")
    doc = profile_json(str(write(tmp_path, p)))
    rank = doc["ranks"][0]
    assert doc["summary"]["bound"] == "device"
    assert doc["summary"]["step_method"] == "profiler_step" and doc["summary"]["steps"] == p.steps
    assert rank["identity"]["torch_npu_version"] == pg.TORCH_NPU_OF[version]
    era = {"5.0.rc3": "torch_npu 5.0.rc3", "7.3.0": "torch_npu 7.1.0", "26.0.0": "torch_npu 26.0.0"}[version]
    assert rank["identity"]["kernel_table_era"].startswith(era)
    assert rank["pmu"]["measured"] is bool(pmu)
    if pmu:
        assert doc["summary"]["device_kind"] == "memory" and doc["summary"]["device_kind_measured"]
    assert rank["top_ops"][0]["name"] == "MatMulV2"  # the table's Type, not the kernel name


def test_level0_has_no_idle_cause_and_says_how_to_collect_it(tmp_path):
    doc = profile_json(str(write(tmp_path, replace(pg.HOST_BOUND, level="Level0"))))
    assert doc["summary"]["basis"] == "idle" and doc["summary"]["bound"] == "host"
    missing = {m["id"]: m for m in doc["cannot_tell"]}
    assert "Level1" in missing["idle_cause"]["collect"]


def test_msprof_layout(tmp_path):
    root = pg.write_msprof(tmp_path, pg.HOST_BOUND)
    doc = profile_json(str(root))
    assert doc["layout"] == "msprof" and doc["summary"]["bound"] == "host"
    assert doc["ranks"][0]["identity"]["kernel_table_era"].startswith("msprof")


def test_vllm_scopes_mark_the_steps(tmp_path):
    doc = profile_json(str(write(tmp_path, replace(pg.HOST_BOUND, scopes="vllm"))))
    assert doc["summary"]["step_method"] == "vllm_scope" and doc["summary"]["steps"] == pg.HOST_BOUND.steps


# -- the decode-loop shapes ----------------------------------------------------------------------


def test_prefill_spike_malloc_in_the_loop_and_idle_between_requests(tmp_path):
    p = replace(pg.HOST_BOUND, prefill_steps=(10,), malloc_steps=(20, 24), idle_before={15: 300_000.0})
    doc = profile_json(str(write(tmp_path, p)))
    rank = doc["ranks"][0]
    jitter = {j["index"]: j for j in rank["jitter"]}
    assert 10 in jitter and jitter[10]["reason"] == "prefill"
    assert jitter[10]["tokens"] == p.batch + p.prefill_tokens and jitter[10]["typical_tokens"] == p.batch
    assert any("PromptFlashAttention" in k["name"] for k in jitter[10]["new_kernels"])
    assert rank["allocations"]["calls"] == 2 and rank["allocations"]["steps_with_calls"] == 2
    assert "allocation" in {a["id"] for a in doc["advice"]} and "chunked_prefill" in {a["id"] for a in doc["advice"]}
    # the 300 ms without a request is not part of any step
    assert doc["summary"]["dropped_idle_us"] == pytest.approx(300_000.0, rel=0.02)
    assert max(s["wall_us"] for s in rank["steps"]) < 100_000


@pytest.mark.parametrize("version", ["5.0.rc3", "7.3.0"])
def test_memory_record_shows_the_reserved_memory_rising_inside_the_loop(tmp_path, version):
    p = replace(pg.HOST_BOUND, version=version, malloc_steps=(0, 20, 24))
    root = write(tmp_path, p)
    g = pg.simulate(p)
    (root / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv").write_text(pg.memory_record_csv(g, 20480.0, 512.0))
    doc = profile_json(str(root))
    m = doc["ranks"][0]["memory"]
    # three allocations: the one of the first step is held by its end, the two later ones rise inside the loop
    assert m["component"] == "PTA" and m["peak_reserved_mb"] == pytest.approx(20480 + 3 * 512)
    assert m["reserved_after_first_step_mb"] == pytest.approx(20480 + 512)
    assert m["rise_in_loop_mb"] == pytest.approx(2 * 512)
    assert m["peak_allocated_mb"] == pytest.approx((20480 + 3 * 512) * 0.8)
    assert doc["ranks"][0]["identity"]["profile_memory"] is True
    assert "memory" not in {c["id"] for c in doc["cannot_tell"]}
    text = cli(str(root)).stdout
    assert "1,024 MB more inside the loop (peak 22,016 MB)" in text, text


def test_memory_record_flat_after_the_first_step_and_a_broken_one(tmp_path):
    p = replace(pg.HOST_BOUND, malloc_steps=(0,))
    root = write(tmp_path, p)
    out = root / "ASCEND_PROFILER_OUTPUT" / "memory_record.csv"
    out.write_text(pg.memory_record_csv(pg.simulate(p)))
    m = profile_json(str(root))["ranks"][0]["memory"]
    assert m["rise_in_loop_mb"] == 0 and m["peak_reserved_mb"] == pytest.approx(20480 + 512)
    out.write_text("Name,Size\nx,1\n")  # not a memory record: said in the notes, the rest still read
    doc = profile_json(str(root))
    assert doc["ranks"][0]["memory"] is None and doc["summary"]["bound"] == "host"
    assert any(n.startswith("memory_record unreadable") and "not a memory record" in n for n in doc["ranks"][0]["notes"])


@pytest.mark.parametrize("wait_ms,slow", [(0.5, True), (0.05, False)])
@pytest.mark.slow  # ~1 s of CPU or more: generated profiles
def test_communication_json_wait_ratio_names_a_rank_waiting_on_its_peer(tmp_path, wait_ms, slow):
    root = write(tmp_path, pg.COMM_BOUND)
    doc_in = pg.communication_json(steps=3, transit_ms=1.0, wait_ms=wait_ms, sync_ms=0.1)
    (root / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text(json.dumps(doc_in))
    doc = profile_json(str(root))
    c = doc["ranks"][0]["communication"]["operators"]
    # the operators of every step, not the groups' totals
    ops = [v for step in doc_in.values() for k, v in step["collective"].items() if k != "Total Op Info"]
    wait = sum(o["Communication Time Info"]["Wait Time(ms)"] for o in ops)
    transit = sum(o["Communication Time Info"]["Transit Time(ms)"] for o in ops)
    assert c["ops"] == len(ops) == 6 and c["wait_ms"] == pytest.approx(wait) and c["transit_ms"] == pytest.approx(transit)
    assert c["wait_ratio"] == pytest.approx(wait / (wait + transit), abs=1e-4) and c["waits_on_slower_peer"] is slow
    text = cli(str(root)).stdout
    assert ("waits on a slower peer" in text) is slow and "communication.json: 6 operator(s)" in text, text
    (root / "ASCEND_PROFILER_OUTPUT" / "communication.json").write_text("{" * 10)
    doc = profile_json(str(root))
    assert doc["ranks"][0]["communication"]["operators"] is None
    assert any(n.startswith("communication.json unreadable") for n in doc["ranks"][0]["notes"])


@pytest.mark.slow  # ~0.5 s of CPU or more: generated multi-rank traces read and judged
def test_tensor_parallel_ranks_find_the_slow_rank(tmp_path):
    parent = tmp_path / "vllm_profile"
    for r, scale in enumerate((1.0, 1.0, 1.25, 1.0)):
        write(parent, replace(pg.COMM_BOUND, rank=r, compute_scale=scale, wait_scale=1.25, comm_us=40.0))
    doc = profile_json(str(parent))
    assert doc["layout"] == "torch_npu_cluster" and doc["summary"]["ranks"] == 4
    assert doc["slow_rank"]["rank"] == "rank 2"
    assert doc["slow_rank"]["spreads"]["compute"] > 0.05
    assert "slow_rank" in {a["id"] for a in doc["advice"]}


@pytest.mark.slow  # ~0.5 s of CPU or more: generated multi-rank traces read and judged
def test_balanced_ranks_have_no_slow_rank(tmp_path):
    parent = tmp_path / "p"
    for r in range(2):
        write(parent, replace(pg.COMM_BOUND, rank=r))
    doc = profile_json(str(parent))
    assert doc["slow_rank"]["rank"] is None


def test_cluster_step_trace_of_msprof_analyze(tmp_path):
    d = tmp_path / "cluster_analysis_output"
    d.mkdir()
    (d / "cluster_step_trace_time.csv").write_bytes((DATA / "mstt_cluster_step_trace_time.csv").read_bytes())
    doc = profile_json(str(tmp_path))
    assert len(doc["cluster"]) == 8
    # Computing is within 2 % across the 8 ranks: no slow rank by compute, free time varies a lot
    assert doc["slow_rank"]["rank"] is None and doc["slow_rank"]["spreads"]["free"] > 0.3


# -- --compare ---------------------------------------------------------------------------------


@pytest.mark.slow  # ~0.5 s of CPU or more: generated multi-rank traces read and judged
def test_compare_finds_a_planted_regression(tmp_path):
    before = write(tmp_path / "a", pg.HOST_BOUND)
    after = write(tmp_path / "b", replace(pg.HOST_BOUND, launch_us=40.0, malloc_steps=(5, 9, 13)))
    proc = cli("--compare", str(before), str(after), "--json")
    assert proc.returncode == 0, proc.stderr
    c = json.loads(proc.stdout)["comparison"]
    assert c["regression"] is True
    changes = {x["figure"]: x for x in c["changes"]}
    assert changes["step_p50_us"]["change"] > 0.15 and changes["step_p50_us"]["worse"]
    assert changes["step_host_wait_p50_us"]["worse"] and changes["alloc_calls_per_step"]["worse"]
    assert len(c["steps"]) == pg.HOST_BOUND.steps
    text = cli("--compare", str(before), str(after))
    assert text.returncode == 0 and "slower" in text.stdout.splitlines()[0]
    same = json.loads(cli("--compare", str(before), str(before), "--json").stdout)["comparison"]
    assert same["regression"] is False and same["notable"] == []


# -- raw and hostile inputs --------------------------------------------------------------------


def test_a_raw_directory_says_how_to_run_the_offline_analysis(tmp_path):
    root = pg.write_raw(tmp_path / "vllm_profile")
    proc = cli(str(root))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert "not analysed yet" in lines[0]
    command = lines[-1]
    assert command.startswith("python3 -c ") and "analyse(" in command and str(tmp_path / "vllm_profile") in command
    import shlex

    argv = shlex.split(command)
    assert argv[0] == "python3" and argv[1] == "-c"
    compile(argv[2], "<printed>", "exec")  # the code runs as printed (torch_npu itself is not here)


@pytest.mark.parametrize("args", [[str(DATA / "mstt_kernel_details_pipe.csv")],
                                  [str(DATA / "mstt_kernel_details_pipe.csv"), "--json"],
                                  ["--compare", str(DATA / "mstt_kernel_details_pipe.csv"),
                                   str(DATA / "mstt_kernel_details_pipe.csv")]])
def test_a_release_the_matrix_does_not_know_is_refused_as_check_refuses_it(args):
    """`--release 9.9.9` is refused in one line, exit 2, as `check --target vllm-ascend==9.9.9` is
    (never advice "for vllm-ascend v9.9.9"); a known release is taken in the matrix's spelling."""
    proc = cli(*args, "--release", "9.9.9")
    assert proc.returncode == 2 and proc.stdout == "", proc
    assert proc.stderr.strip().splitlines() == [
        "ascend-doctor: error: --release 9.9.9: not in the matrix (see ascend-doctor matrix show)"]
    known = cli(str(DATA / "mstt_kernel_details_pipe.csv"), "--release", "v0.11.0rc3")
    assert known.returncode == 0 and "for vllm-ascend v0.11.0rc3 (from --release)" in known.stdout


@pytest.mark.parametrize("content,what", [
    ('[{"ph":"X","name":"k","pid":1,"tid":1,"ts":"1","dur":', "truncated"),
    ('{"traceEvents": 5}', "not a list"),
    ('[1, 2, "x"]', "no event"),
    ("", "empty"),
    ('[{"ph": "X", "ts": [1], "dur": {}, "pid": "x"}]', "no event"),
    ("\x00\x01\x02", "not a Chrome trace"),
    ('[' * 200000, "nested too deeply"),
])
def test_hostile_traces_are_one_line_and_exit_2(tmp_path, content, what):
    p = tmp_path / "trace_view.json"
    p.write_text(content)
    proc = cli(str(p))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1 and what in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_2gb_line_is_refused_without_reading_it(tmp_path):
    p = tmp_path / "trace_view.json"
    with open(p, "wb") as fh:
        fh.write(b'[{"name": "')
        fh.truncate(2 << 30)  # sparse: 2 GB of NUL bytes inside one string
    proc = cli_process(str(p), timeout=60)
    # NUL is no JSON string character: refused at the first one, long before a 1 MB event
    assert proc.returncode == 2 and "not valid JSON at byte ~11" in proc.stderr
    p.write_text('[{"name": "' + "x" * (3 << 20) + '"}]')
    proc = cli_process(str(p), timeout=60)
    assert proc.returncode == 2 and "longer than 1 MB" in proc.stderr
    csvp = tmp_path / "kernel_details.csv"
    with open(csvp, "wb") as fh:
        fh.write(b"Name,Type,Duration(us)\n")
        fh.truncate(2 << 30)
    proc = cli_process(str(csvp), timeout=60)
    assert proc.returncode == 2 and "line longer than" in proc.stderr


def test_a_trace_cut_after_a_complete_event_is_read_and_says_so(tmp_path):
    text = LEVEL1.read_text()
    cut = text.rstrip().rstrip("]").rstrip()
    p = tmp_path / "trace_view.json"
    p.write_text(cut)
    doc = profile_json(str(p))
    assert "trace_truncated_end" in doc["ranks"][0]["notes"]


def test_fifo_and_devices_are_refused(tmp_path):
    fifo = tmp_path / "trace_view.json"
    os.mkfifo(fifo)
    proc = cli_process(str(fifo), timeout=30)
    assert proc.returncode == 2 and "regular file" in proc.stderr
    proc = cli_process("/dev/zero", timeout=30)
    assert proc.returncode == 2


def test_terminal_escapes_in_names_never_reach_the_terminal(tmp_path):
    events = json.loads(LEVEL1.read_text())
    for e in events:
        if e.get("ph") == "X" and e.get("pid") == 800:
            e["name"] = "\x1b]0;pwned\x07\x1b[2J" + e["name"]
    p = tmp_path / "trace_view.json"
    p.write_text(json.dumps(events))
    proc = cli(str(p))
    assert proc.returncode == 0 and "\x1b" not in proc.stdout and "\x07" not in proc.stdout
