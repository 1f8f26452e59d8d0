"""Which tests cost the CPU: runs the suite (or the pytest arguments given) with a plugin that
records, per test, the CPU of its worker, of the children it reaped and of the doctors it forked
(tests/doctor_fork.py counts those: the kernel reaps them), then prints the costliest tests and
the fast-loop tests that cost a second or more (the rule for marking a test slow,
docs/development.md).

    python bench/suite_cpu.py [--top 30] [--at-least 1.0] [-- PYTEST ARGS...]

On 2 cores the fast loop's 2 minutes hold about 220 s of CPU: a test of a second or more in it is
a candidate for `@pytest.mark.slow` (the full suite still runs it).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
_OUT = os.environ.get("ASCEND_DOCTOR_TEST_CPU_OUT")


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    fork = sys.modules.get("doctor_fork")
    forked = fork.CPU[0] if fork is not None else 0.0
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime + forked


if _OUT:  # imported by pytest as a plugin (-p suite_cpu)
    import pytest

    _file = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        global _file
        if _file is None:
            _file = open(Path(_OUT) / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a")
        cpu, wall = _cpu(), time.monotonic()
        yield
        slow = item.get_closest_marker("slow") is not None
        _file.write(json.dumps([item.nodeid, round(_cpu() - cpu, 3), round(time.monotonic() - wall, 3), slow]) + "\n")
        _file.flush()


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--at-least", type=float, default=1.0, help="CPU seconds that make a fast-loop test a candidate")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as out:
        env = dict(os.environ, ASCEND_DOCTOR_TEST_CPU_OUT=out,
                   PYTHONPATH=os.pathsep.join(x for x in (str(HERE), os.environ.get("PYTHONPATH")) if x))
        began = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "suite_cpu", *args.pytest_args], cwd=REPO,
                              env=env, timeout=3600)
        wall = time.monotonic() - began
        rows = [json.loads(line) for f in Path(out).glob("*.jsonl") for line in f.read_text().splitlines()]
    if not rows:
        print("no test ran", file=sys.stderr)
        return 1
    by_file: Dict[str, float] = collections.Counter()
    for nodeid, cpu, _, _ in rows:
        by_file[nodeid.split("::")[0]] += cpu
    total = sum(r[1] for r in rows)
    fast = [r for r in rows if not r[3]]
    print(f"{len(rows)} tests in {wall:.0f} s: {total:.0f} s of CPU in the tests ({sum(r[1] for r in fast):.0f} s in "
          f"the {len(fast)} of the fast loop); pytest exit {proc.returncode}")
    print("\nfiles by CPU:")
    for name, cpu in by_file.most_common(args.top):
        print(f"  {cpu:7.1f} s  {name}")
    print("\ntests by CPU:")
    for nodeid, cpu, seconds, slow in sorted(rows, key=lambda r: -r[1])[:args.top]:
        print(f"  {cpu:6.1f} s CPU {seconds:6.1f} s {'slow' if slow else 'fast'}  {nodeid}")
    over = sorted((r for r in fast if r[1] >= args.at_least), key=lambda r: -r[1])
    print(f"\nfast-loop tests of {args.at_least:g} s of CPU or more ({len(over)}, {sum(r[1] for r in over):.0f} s): "
          "candidates for @pytest.mark.slow")
    for nodeid, cpu, _, _ in over:
        print(f"  {cpu:6.1f} s  {nodeid}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
