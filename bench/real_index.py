"""Benchmark of `ascend-doctor fix` on seed 001 against the REAL package index (a benchmark, not a test).

Seed 001 is the official vllm-ascend 0.11.0rc3 image: vllm 0.11.2+empty (a local build, installed
editable) beside vllm-ascend 0.11.0rc3, torch 2.7.1+cpu, torch-npu 2.7.1. The host is the kit's
(tests/fakehost/kit.py `seed_001_official_image`, a venv with pip), with real wheels from the
index wherever one can be had here: numpy 1.26.4, transformers 4.57.1, torch-npu 2.7.1 and
vllm-ascend 0.11.0rc3 are installed from the index (--no-deps). Two stay stubs with the real
metadata: torch 2.7.1+cpu (it is on https://download.pytorch.org/whl/cpu only, which this machine
cannot reach) and vllm 0.11.2+empty (a local build no index has). The doctor runs with this
machine's own pip configuration (its pip.conf files and PIP_* variables), as a user's would.

Measured, in one run:

- the dry run (`fix --json`): cold (empty doctor and uv caches), uv-warm (uv's cache warm, the
  doctor's resolution cache empty) and warm (both warm), each split into the index's time (the
  resolver subprocesses and the metadata reads) and the doctor's own;
- with --pip: the same dry run with `--installer pip` (pip downloads whole wheels: minutes);
- `fix --apply --yes --no-smoke` right after a dry run: wall time, whether it resolved again,
  bytes downloaded, the import check, then `check`'s exit code and what it still reports;
- with --naive: what the seed did by hand, `pip install vllm==0.11.0 torch_npu==2.8.0`, on a copy
  of the same host: wall time, bytes downloaded, `check`'s exit code afterwards;
- that no step of the plan names a CUDA-only distribution.

Usage: .venv/bin/python bench/real_index.py [--pip] [--naive] [--no-apply] [--work DIR] [--keep]
"""
from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from fakehost import FakeHost  # noqa: E402
from fakehost import wheelhouse as wh  # noqa: E402
from fakehost.kit import SCENARIOS  # noqa: E402

REAL = ["numpy==1.26.4", "transformers==4.57.1", "torch-npu==2.7.1", "vllm-ascend==0.11.0rc3"]
NAIVE = ["vllm==0.11.0", "torch_npu==2.8.0"]


def build_host(base: Path, template: Path, env: Dict[str, str]) -> FakeHost:
    fake = FakeHost(base)
    fake.venv({}, template=template)  # a venv with pip, as the image's Python has
    SCENARIOS["seed_001_official_image"](fake)
    # --force-reinstall: the kit's stubs carry the same versions
    subprocess.run([str(fake.python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", *REAL], env=env,
                   check=True,
                   timeout=1800)
    return fake


def user_env(fake: FakeHost, cache: Path) -> Dict[str, str]:
    """This machine's environment (its pip configuration included) with the host's CANN
    variables, and the doctor's and uv's caches where the bench says."""
    env = dict(os.environ)
    env.update({k: v for k, v in fake.env.items() if k not in ("XDG_CONFIG_HOME", "HOME", "PATH")})
    env["XDG_CACHE_HOME"] = str(cache / "xdg")
    env["UV_CACHE_DIR"] = str(cache / "uv")
    return env


@contextlib.contextmanager
def environ(env: Dict[str, str]):
    old = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(old)


def dry_run(fake: FakeHost, env: Dict[str, str], installer: str = "auto") -> Dict:
    """fix (dry run) in this process, with the time spent in the resolver's subprocesses and
    metadata reads (the index's time) told apart from the doctor's own."""
    import doctor.shell.runtime.proc as proc
    import doctor.shell.install.wheelmeta as wm
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.fix import FixOptions, run_fix

    index = [0.0]
    run0, meta0 = proc.run, wm.fill_metadata

    def run(argv, timeout, **kw):
        t = time.monotonic()
        try:
            return run0(argv, timeout, **kw)
        finally:
            if any(w in ("compile", "--dry-run") for w in argv[:5]):
                index[0] += time.monotonic() - t

    def meta(*a, **k):
        t = time.monotonic()
        try:
            return meta0(*a, **k)
        finally:
            index[0] += time.monotonic() - t

    proc.run, wm.fill_metadata = run, meta
    try:
        with environ(env):
            opts = FixOptions(check=CheckOptions(root=str(fake.root), python=str(fake.python),
                                                 npu_smi=fake.npu_smi_binary(), cwd=str(fake.workdir)),
                              installer=installer)
            t = time.monotonic()
            out = run_fix(opts, env, confirm=lambda *a: True, say=lambda s: None)
            wall = time.monotonic() - t
    finally:
        proc.run, wm.fill_metadata = run0, meta0
    doc = out.plan.to_json("en")
    res = doc.get("resolution") or {}
    return {"wall": wall, "index": index[0], "doctor": wall - index[0], "status": res.get("status"),
            "reused": bool(res.get("reused")), "files": len(res.get("files") or []),
            "bytes": res.get("download_bytes"), "excluded": [e["name"] for e in res.get("excluded") or []],
            "cuda_in_steps": cuda_in_steps(doc, out.plan.cuda_only), "pins": doc.get("pins"),
            "failure": (res.get("failure") or {}).get("message")}


def cuda_in_steps(doc: Dict, patterns) -> List[str]:
    out = []
    for s in doc.get("steps") or []:
        for p in s.get("packages") or []:
            name = p.split("==")[0].split("[")[0].lower().replace("_", "-")
            if any(fnmatch.fnmatch(name, pat) for pat in patterns):
                out.append(p)
    return out


def doctor_cli(fake: FakeHost, env: Dict[str, str], *args: str, timeout: float = 7200) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "doctor", *args, *fake.args()]
    return subprocess.run(argv, env=dict(env, PYTHONPATH=str(REPO)), cwd=fake.workdir, capture_output=True, text=True,
                          timeout=timeout)


def check_after(fake: FakeHost, env: Dict[str, str]) -> Dict:
    proc = doctor_cli(fake, env, "check", "--json")
    doc = json.loads(proc.stdout)
    left = [f"{f['id']} ({f['status']})" for f in doc["findings"] if f["status"] in ("warn", "fail")]
    return {"exit": proc.returncode, "left": left}


def apply(fake: FakeHost, env: Dict[str, str]) -> Dict:
    t = time.monotonic()
    proc = doctor_cli(fake, env, "fix", "--apply", "--yes", "--no-smoke", "--json")
    wall = time.monotonic() - t
    try:
        doc = json.loads(proc.stdout)
    except ValueError:  # the doctor stopped with an error line (a rolled-back transaction)
        return {"wall": wall, "exit": proc.returncode, "reused": None, "error": proc.stderr.strip().splitlines()[-1:]}
    res, result = doc.get("resolution") or {}, doc.get("result") or {}
    ver = result.get("verification") or {}
    failed = [f"{c['module']}: {c['detail'][:120]}" for c in ver.get("checks") or [] if not c["ok"] and not c["driver_missing"]]
    return {"wall": wall, "exit": proc.returncode, "reused": bool(res.get("reused")), "bytes": res.get("download_bytes"),
            "import_failed": failed, "stderr": proc.stderr.strip().splitlines()[-2:]}


def naive(fake: FakeHost, env: Dict[str, str], work: Path) -> Dict:
    report = work / "naive-report.json"
    t = time.monotonic()
    proc = subprocess.run([str(fake.python), "-m", "pip", "install", "-q", "--report", str(report), *NAIVE], env=env,
                          capture_output=True, text=True, timeout=7200)
    wall = time.monotonic() - t
    size = 0
    with contextlib.suppress(OSError, ValueError):
        from doctor.parse.pipreport import parse_report
        from doctor.shell.install.resolver import fill_sizes

        pkgs = parse_report(report.read_text())
        fill_sizes(pkgs, env, 60)
        size = sum(p.size or 0 for p in pkgs)
    return {"wall": wall, "exit": proc.returncode, "bytes": size, "stderr": proc.stderr.strip().splitlines()[-2:]}


def mb(n: Optional[int]) -> str:
    return f"{(n or 0) / 1e6:,.0f} MB"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pip", action="store_true", help="also the dry run with --installer pip (minutes)")
    ap.add_argument("--naive", action="store_true", help="also pip install vllm==0.11.0 torch_npu==2.8.0 (GBs)")
    ap.add_argument("--no-apply", action="store_true")
    ap.add_argument("--work", help="work directory (default: a new temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="real-index-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        template = wh.template_venv(work)
        cold = work / "cache"
        fake = build_host(work / "host", template, dict(os.environ))
        env = user_env(fake, cold)
        rows = []
        rows.append(("dry run, cold (no doctor or uv cache)", dry_run(fake, env)))
        rows.append(("dry run, warm (the resolution reused)", dry_run(fake, env)))
        shutil.rmtree(cold / "xdg", ignore_errors=True)
        rows.append(("dry run, uv's cache warm, the doctor's empty", dry_run(fake, env)))
        if args.pip:
            rows.append(("dry run, --installer pip", dry_run(fake, dict(env, XDG_CACHE_HOME=str(work / "pip-xdg")),
                                                             installer="pip")))
        print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'':48} {'wall s':>7} {'index s':>8} {'doctor s':>9} {'reused':>6} {'files':>5} {'download':>10}")
        for name, r in rows:
            print(f"{name:48} {r['wall']:7.1f} {r['index']:8.1f} {r['doctor']:9.1f} {str(r['reused']):>6} "
                  f"{r['files']:5d} {mb(r['bytes']):>10}  {r['status']}" + (f": {r['failure'][:100]}" if r["failure"] else ""))
        first = rows[0][1]
        print(f"left out of the closure: {', '.join(first['excluded']) or '-'}; CUDA-only in any step: "
              f"{', '.join(first['cuda_in_steps']) or 'none'}")
        print(f"pins: {first['pins']}")
        if not args.no_apply:
            a = apply(fake, env)
            again = "unknown (no JSON)" if a.get("reused") is None else str(not a["reused"])
            print(f"fix --apply after the dry run: {a['wall']:.1f} s, exit {a['exit']}, resolved again: {again}, "
                  f"downloaded {mb(a.get('bytes')) if a.get('bytes') is not None else 'see the dry run'}")
            for line in a.get("import_failed") or []:
                print(f"  import check failed: {line}")
            for line in a.get("stderr") or a.get("error") or []:
                print(f"  {line}")
            c = check_after(fake, env)
            print(f"check afterwards: exit {c['exit']}; still reported: {', '.join(c['left']) or 'nothing'}")
        if args.naive:
            copy = build_host(work / "naive", template, dict(os.environ))
            n = naive(copy, user_env(copy, work / "naive-cache"), work)
            print(f"by hand (pip install {' '.join(NAIVE)}): {n['wall']:.1f} s, exit {n['exit']}, "
                  f"downloaded {mb(n['bytes'])}")
            for line in n.get("stderr") or []:
                print(f"  {line}")
            c = check_after(copy, user_env(copy, work / "naive-cache"))
            print(f"check afterwards: exit {c['exit']}; reported: {', '.join(c['left']) or 'nothing'}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
