"""Benchmark of `ascend-doctor fix` on the scenarios of issue 4 (a benchmark, not a test).

For every scenario of tests/fakehost/wheelhouse.py (seed 001's image, torch moved by
`pip install vllm`, CUDA torch with nvidia-*, triton next to triton-ascend, numpy 2, a fresh
install, --target upgrade and downgrade) it measures, against the metadata-faithful wheelhouse
with real pip and real uv:

- plan: the pure plan computation (facts already gathered), and the `fix --json` dry run,
- apply: `fix --apply` wall time with pip and with `--installer uv`,
- consistency: does `check` pass (exit 0) after the doctor's fix, and after the commands users
  actually ran (seed 001, cases-public.json)?

Usage: .venv/bin/python bench/fix_bench.py [--repeat N] [--no-uv] [--scenario NAME ...] [--resolver]
(--resolver: only the plan time with the resolver, pip and uv, next to the --offline plan)
uv is taken from PATH, else installed from PyPI into a bench venv (`pip install uv`).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fakehost import FakeHost  # noqa: E402
from fakehost import wheelhouse as wh  # noqa: E402


def find_uv(base: Path) -> str:
    uv = shutil.which("uv")
    if uv:
        return uv
    env_dir = base / "uv-venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, capture_output=True)
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "uv"], check=True)
    return str(env_dir / "bin" / "uv")


def build(name: str, base: Path, dirs, template: Path) -> FakeHost:
    fake = FakeHost(base)
    builder = wh.SCENARIOS[name][0]
    if builder is wh.torch_moved:
        builder(fake, template, wh.pip_env(fake.env, dirs))
    else:
        builder(fake, template)
    return fake


def doctor(fake: FakeHost, env, *args) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "doctor"] + list(args) + fake.args()
    return subprocess.run(argv, env=env, cwd=fake.workdir, capture_output=True, text=True, timeout=600)


def plan_ms(fake: FakeHost, extra) -> float:
    from doctor.usecases.check import CheckOptions, gather
    from doctor.shell.install.installer import Installer
    from doctor.matrix import load_matrix
    from doctor.plan.builder import PlanOptions, plan_for
    from doctor.rules.engine import make_context, run_rules

    matrix = load_matrix()
    facts = gather(CheckOptions(root=str(fake.root), python=str(fake.python), cwd=str(fake.workdir)), env=dict(fake.env))
    target = extra[1].split("==")[1] if extra else None
    start = time.perf_counter()
    ctx = make_context(facts, matrix, "auto")
    opts = PlanOptions(installer=Installer("pip", str(fake.python), (str(fake.python), "-m", "pip")), target=target)
    plan_for(facts, matrix, lambda v: run_rules(make_context(facts, matrix, "auto", v)), ctx.hardware, opts)
    return (time.perf_counter() - start) * 1000


def resolver_bench(names, repeat: int, no_uv: bool) -> int:
    """Plan time (the `fix --json` dry run, wall) with the resolver (pip; uv with --installer uv)
    next to the matrix-only plan (--offline), in the same run, on the same hosts."""
    base = Path(tempfile.mkdtemp(prefix="fix-bench-resolver-"))
    try:
        dirs = list(wh.build(base / "house").values())
        template = wh.template_venv(base)
        uv = None if no_uv else find_uv(base)
        print(f"{'scenario':<12} {'offline s':>9} {'pip s':>7} {'uv s':>7} {'files':>5} {'status':>9}")
        for name in names:
            _, extra, _, _ = wh.SCENARIOS[name]
            fake = build(name, base / name, dirs, template)
            env = wh.pip_env(fake.env, dirs)
            if uv:
                env["PATH"] = os.path.dirname(uv) + os.pathsep + env.get("PATH", "")
            cols = {"offline": [], "pip": [], "uv": []}
            status, files = "-", 0
            for _ in range(repeat):
                for key, args in (("offline", ["--offline"]), ("pip", []), ("uv", ["--installer", "uv"] if uv else None)):
                    if args is None:
                        continue
                    t0 = time.perf_counter()
                    proc = doctor(fake, env, "fix", "--json", *args, *extra)
                    cols[key].append(time.perf_counter() - t0)
                    if key == "pip":
                        import json

                        res = json.loads(proc.stdout).get("resolution") or {}
                        status, files = res.get("status", "-"), len(res.get("files", []))
            med = {k: (statistics.median(v) if v else None) for k, v in cols.items()}
            print(f"{name:<12} {med['offline']:9.2f} {med['pip']:7.2f} "
                  f"{('%.2f' % med['uv']) if med['uv'] is not None else '-':>7} {files:>5} {status:>9}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-uv", action="store_true")
    ap.add_argument("--scenario", action="append")
    ap.add_argument("--resolver", action="store_true", help="only the plan time: resolver (pip, uv) vs --offline")
    args = ap.parse_args()
    names = args.scenario or sorted(wh.SCENARIOS)
    if args.resolver:
        return resolver_bench(names, args.repeat, args.no_uv)
    base = Path(tempfile.mkdtemp(prefix="fix-bench-"))
    try:
        dirs = list(wh.build(base / "house").values())
        template = wh.template_venv(base)
        uv = None if args.no_uv else find_uv(base)
        rows = []
        n = 0
        for name in names:
            _, extra, naive, _ = wh.SCENARIOS[name]
            plan, dry, pip_s, uv_s = [], [], [], []
            ok_doctor = ok_uv = True
            for _ in range(args.repeat):
                for installer in (["pip"] + (["uv"] if uv else [])):
                    n += 1
                    fake = build(name, base / f"run{n}", dirs, template)
                    env = wh.pip_env(fake.env, dirs)
                    if uv:
                        env["PATH"] = os.path.dirname(uv) + os.pathsep + env.get("PATH", "")
                    if installer == "pip":
                        plan.append(plan_ms(fake, extra))
                        t0 = time.perf_counter()
                        doctor(fake, env, "fix", "--json", *extra)
                        dry.append(time.perf_counter() - t0)
                    t0 = time.perf_counter()
                    proc = doctor(fake, env, "fix", "--apply", "--yes", "--no-smoke", "--installer", installer, *extra)
                    took = time.perf_counter() - t0
                    good = proc.returncode == 0 and fake.judge()["exit_code"] == 0
                    if installer == "pip":
                        pip_s.append(took)
                        ok_doctor &= good
                    else:
                        uv_s.append(took)
                        ok_uv &= good
                    if not good:
                        print(f"{name}/{installer}: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}",
                              file=sys.stderr)
            naive_ok = 0
            for command in naive:
                n += 1
                fake = build(name, base / f"naive{n}", dirs, template)
                subprocess.run([str(fake.python), "-m"] + command, env=wh.pip_env(fake.env, dirs), capture_output=True,
                               timeout=600)
                naive_ok += fake.judge()["exit_code"] == 0
            rows.append((name, statistics.median(plan), statistics.median(dry), statistics.median(pip_s),
                         statistics.median(uv_s) if uv_s else None, ok_doctor, ok_uv if uv_s else None,
                         naive_ok, len(naive)))
        print(f"{'scenario':<12} {'plan ms':>8} {'dry-run s':>9} {'apply pip s':>11} {'apply uv s':>10} "
              f"{'doctor ok':>9} {'uv ok':>6} {'naive ok':>9}")
        for name, p, d, ps, us, okd, oku, nok, nn in rows:
            print(f"{name:<12} {p:8.1f} {d:9.2f} {ps:11.2f} {('%.2f' % us) if us is not None else '-':>10} "
                  f"{'yes' if okd else 'NO':>9} {('yes' if oku else 'NO') if oku is not None else '-':>6} {f'{nok}/{nn}':>9}")
        total = len(rows)
        naive_total = sum(r[8] for r in rows)
        print(f"\nconsistent after the doctor's fix (pip): {sum(r[5] for r in rows)}/{total} scenarios"
              + (f"; with uv: {sum(1 for r in rows if r[6])}/{total}" if uv else ""))
        print(f"consistent after the naive pip commands: {sum(r[7] for r in rows)}/{naive_total} commands, "
              f"{sum(1 for r in rows if r[7] == r[8])}/{total} scenarios")
        print(f"uv: {uv or 'not used'}; pip: {subprocess.run([str(template / 'bin' / 'python'), '-m', 'pip', '--version'], capture_output=True, text=True).stdout.split(' from')[0]}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
