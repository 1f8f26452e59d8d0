"""ascend-doctor profile against msprof-analyze advisor on the same files, in one run, with the
floor beside them (json.load of the trace: what any reader that parses the JSON pays).

    python bench/profile_bench.py                      # ~500 MB and ~50 MB generated decode loops + the real Level1 fixture
    python bench/profile_bench.py --mb 100 --msprof-analyze /path/to/venv/bin/msprof-analyze
    python bench/profile_bench.py --skip-peer          # the doctor and the floor only

The traces are written under $PROFILE_BENCH_DIR (default /tmp/ascend-doctor-profile-bench), never
in the repository, and reused while their size fits. msprof-analyze comes from the package index,
in a venv of its own (it pins its own pandas, numpy...):
python3 -m venv /tmp/msprof-venv && /tmp/msprof-venv/bin/pip install msprof-analyze, then
MSPROF_ANALYZE=/tmp/msprof-venv/bin/msprof-analyze (default: .cache/msprof-venv in the checkout).
Each tool runs as a child process; its wall time, CPU time and peak RSS (getrusage of the child)
are printed, and what each concluded. Targets (issue 24): 500 MB in <= 15 s and <= 300 MB RSS
for ascend-doctor.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("PROFILE_BENCH_DIR", "/tmp/ascend-doctor-profile-bench"))  # big traces: never in the repo
DEFAULT_MSPROF = Path(os.environ.get("MSPROF_ANALYZE", str(REPO / ".cache" / "msprof-venv" / "bin" / "msprof-analyze")))
sys.path.insert(0, str(REPO / "tests"))


def measure(argv: List[str], cwd: Optional[Path] = None, timeout: float = 1800) -> Tuple[float, float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS MB, exit code, output) of a child process. CPU time
    is what the run costs whatever else the machine is doing (2 cores shared here)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    with tempfile.TemporaryFile() as sink:  # a file, not a pipe: nothing to drain while it runs
        proc = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT,
                                env=dict(os.environ, PYTHONPATH=str(REPO)))
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                sink.seek(0)
                out = sink.read().decode("utf-8", "replace")
                return time.monotonic() - t0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, \
                    proc.returncode, out
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                sink.seek(0)
                return time.monotonic() - t0, 0.0, 0.0, -9, sink.read()[-20_000:].decode("utf-8", "replace") + \
                    "\n(timed out)"
            time.sleep(0.05)


def write_big(target_mb: int) -> Path:
    """A torch_npu directory whose trace_view.json is about ``target_mb`` MB: one simulated block of
    decode steps, repeated with its timestamps and flow ids shifted (a long capture of one server)."""
    import profilegen as pg

    root = WORK / f"decode_{target_mb}mb_ascend_pt"
    trace = root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    if trace.exists() and abs(trace.stat().st_size / 1e6 - target_mb) < target_mb * 0.2:
        return root
    shutil.rmtree(root, ignore_errors=True)
    trace.parent.mkdir(parents=True)
    p = replace(pg.HOST_BOUND, steps=40, layers=28, prefill_steps=(13,), malloc_steps=(27,))
    g = pg.simulate(p)
    span = int(g.steps[-1][1] - g.steps[0][0]) + 1000
    meta = [e for e in g.events if e["ph"] == "M"]
    body = [e for e in g.events if e["ph"] != "M"]
    with open(trace, "w") as fh:
        fh.write("[\n" + ",\n".join(json.dumps(e) for e in meta))
        r = -1
        while fh.tell() < target_mb * 1e6 - 5e6:  # whole blocks (~10 MB each): the nearest size
            r += 1
            shift = r * span
            for e in body:
                e2 = dict(e)
                if "ts" in e2:
                    whole, _, frac = e2["ts"].partition(".")
                    e2["ts"] = f"{int(whole) + shift}.{frac}"
                if "id" in e2:
                    e2["id"] = str(int(e2["id"]) + (r << 48))
                    e2["name"] = f"HostToDevice{e2['id']}"
                fh.write(",\n" + json.dumps(e2))
        fh.write("\n]\n")
    (root / "profiler_info_0.json").write_text(json.dumps(pg.profiler_info(p)))
    return root


def fixture_dir() -> Path:
    root = WORK / "mstt_level1_ascend_pt"
    out = root / "ASCEND_PROFILER_OUTPUT"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tests" / "data" / "profile" / "mstt_level1_trace_view.json", out / "trace_view.json")
    return root


def advisor_findings(text: str) -> List[str]:
    """The problem rows of msprof-analyze's terminal table (| No. | type | description | advice |)."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|", line)
        if m:
            rows.append(f"{m.group(2)}: {m.group(3)[:110]}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--small-mb", type=int, default=50, help="a second, smaller trace msprof-analyze finishes")
    ap.add_argument("--peer-big", action="store_true", help="also run msprof-analyze on the --mb trace (> 30 min)")
    ap.add_argument("--msprof-analyze", default=str(DEFAULT_MSPROF))
    ap.add_argument("--skip-peer", action="store_true", help="do not run msprof-analyze")
    ap.add_argument("--timeout", type=float, default=1800)
    a = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    big = write_big(a.mb)
    small = write_big(a.small_mb)
    size = (big / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").stat().st_size
    small_size = (small / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").stat().st_size
    print(f"traces: {size / 1e6:.0f} MB and {small_size / 1e6:.0f} MB, generated or reused in "
          f"{time.monotonic() - t0:.0f} s", flush=True)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    peer = Path(a.msprof_analyze)
    rows = []
    print(f"{'input':34} {'tool':28} {'wall':>9} {'CPU':>9} {'peak RSS':>9}  conclusion", flush=True)
    for label, root in (("real Level1 fixture (635 KB)", fixture_dir()),
                        (f"generated decode loop ({small_size / 1e6:.0f} MB)", small),
                        (f"generated decode loop ({size / 1e6:.0f} MB)", big)):
        trace = root / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
        runs = [("floor: json.load", [sys.executable, "-c", f"import json; json.load(open({str(trace)!r}))"]),
                ("ascend-doctor profile", [sys.executable, "-m", "doctor", "profile", str(root), "--json"])]
        if not a.skip_peer and peer.exists() and (root != big or a.peer_big):
            runs.append(("msprof-analyze advisor all", [str(peer), "advisor", "all", "-d", str(root)]))
        for name, argv in runs:
            out_dir = WORK / "peer_out"
            out_dir.mkdir(exist_ok=True)
            seconds, cpu, rss, code, out = measure(argv, cwd=out_dir, timeout=a.timeout)
            if name.startswith("ascend-doctor") and code == 0:
                s = json.loads(out)["summary"]
                said = (f"{s['bound']}-bound, device busy {s['device_busy_share']:.1%}, idle waiting on the host "
                        f"{s['idle_host_wait_share']:.1%}, {s['steps']} steps ({s['step_method']})")
            elif name.startswith("msprof") and code == 0:
                found = advisor_findings(out)
                said = f"{len(found)} problem(s): " + "; ".join(found)[:300]
            else:
                said = "" if code == 0 else f"exit {code}: {out.strip().splitlines()[-1][:200] if out.strip() else ''}"
            rows.append((label, name, seconds, rss, said))
            print(f"{label:34} {name:28} {seconds:7.1f} s {cpu:7.1f} s {rss:6.0f} MB  {said}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
