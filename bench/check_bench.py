"""Benchmark: `ascend-doctor check --json` beside its floor and its peer, in one interleaved run.

    python bench/check_bench.py [--runs 15] [--venv DIR] [--rebuild] [--baseline REF]

Builds (once, cached in bench/.work/) a virtualenv with the real torch CPU build and more than
200 real distributions from the package index, plus the metadata of the Ascend stack
(torch-npu, vllm, vllm-ascend as installed distributions, since the real ones need an NPU);
``--venv DIR`` uses an existing one instead (the stack's metadata is added to it once). Then it
times, interleaved (a load spike hits every command alike):

- ``ascend-doctor check --json --python VENV``: the doctor as users run it, installed (not
  editable) in an environment of its own, like pipx;
- the floor: a fresh ``VENV/python -c`` that reads every distribution's METADATA through
  importlib.metadata (what any tool that looks at the installed packages pays);
- the peer: ``VENV/python -m pip check``;
- ``VENV/python -c pass``: the interpreter's own start.

It prints median and min wall seconds and the median CPU seconds of each, and the ratios
(issue 26's targets: check <= 0.10 s and <= 1.2x the floor). ``--baseline REF`` also installs the
doctor of a git ref (e.g. ``main``) in a venv of its own and times it in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work"
VENV = WORK / "serving-venv"
# Real packages that make up a typical serving environment's long tail (their dependencies
# bring the total above 200 distributions).
PACKAGES = [
    "torch==2.13.0", "transformers", "fastapi[standard]", "pandas", "scipy", "scikit-learn", "matplotlib",
    "jupyterlab", "boto3", "sphinx", "pytest", "sentencepiece", "tiktoken", "openai", "aiohttp", "pydantic",
    "prometheus-client", "pyzmq", "msgspec", "numba", "ray", "datasets", "accelerate", "safetensors",
    "protobuf", "grpcio", "opencv-python-headless", "pillow", "einops", "lark", "partial-json-parser",
]


def doctor_exe(source: Path = REPO, name: str = "doctor-venv") -> str:
    """The doctor from a checkout, installed (not editable) in a venv of its own, as pipx does."""
    venv = WORK / name
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(source)], check=True, timeout=900)
    else:  # refresh the doctor itself from the checkout, keep its dependencies
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", "--force-reinstall", str(source)],
                       check=True, timeout=900)
    return str(venv / "bin" / "ascend-doctor")


def baseline_exe(ref: str) -> str:
    """The doctor of a git ref (``git archive``), installed like the checkout's."""
    src = WORK / "baseline-src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref], check=True,
                             capture_output=True, timeout=300).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True, timeout=300)
    return doctor_exe(src, "baseline-venv")


def build(rebuild: bool) -> Path:
    python = VENV / "bin" / "python"
    marker = VENV / ".bench-ready"
    if marker.exists() and not rebuild:
        return python
    if VENV.exists():
        shutil.rmtree(VENV)
    WORK.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
    print(f"installing {len(PACKAGES)} packages and their dependencies into {VENV} (several minutes, once)")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True, timeout=3600)
    add_ascend_stack(python)
    marker.write_text("ok\n")
    return python


def add_ascend_stack(python: Path) -> None:
    """The metadata of torch-npu / vllm / vllm-ascend as pip would leave it (from the tests' kit)."""
    sys.path.insert(0, str(REPO / "tests"))
    from fakehost.dists import Stub, write_installed

    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    for stub in (Stub("torch-npu", "2.13.0", requires=["torch==2.13.0"]), Stub("vllm", "0.11.0"),
                 Stub("vllm-ascend", "0.11.0rc3")):
        write_installed(Path(site), stub)


def count_dists(python: Path) -> int:
    out = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(len(list(m.distributions())))"],
                         capture_output=True, text=True, check=True, timeout=120).stdout
    return int(out.strip())


CPU: Dict[str, list] = {}  # command -> CPU seconds (user + system, children included) per run


def timed(argv, runs: int, env=None, name: str = "") -> list:
    """Wall seconds per run; the CPU seconds go to CPU[name] (steadier on a loaded machine)."""
    import resource

    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=600)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.setdefault(name, []).append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return times


FLOOR = "import importlib.metadata as m; [d.metadata['Version'] for d in m.distributions()]"


def use_venv(path: Path) -> Path:
    python = path / "bin" / "python"
    marker = path / ".bench-ready"
    if not python.exists():
        raise SystemExit(f"--venv {path}: no bin/python")
    if not marker.exists():
        add_ascend_stack(python)
        marker.write_text("ok\n")
    return python


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--venv", type=Path, help="time against this existing virtualenv instead of building one")
    ap.add_argument("--baseline", metavar="REF", help="also time the doctor of this git ref (e.g. main)")
    args = ap.parse_args()
    python = use_venv(args.venv) if args.venv else build(args.rebuild)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    exe = doctor_exe()
    check = ["check", "--json", "--python", str(python)]
    doctor = "ascend-doctor check --json"
    commands = {doctor: [exe] + check}
    if args.baseline:
        commands[f"{args.baseline}: check --json"] = [baseline_exe(args.baseline)] + check
    floor, peer, bare = "floor: importlib.metadata", "peer: pip check", "python -c pass"
    commands[floor] = [str(python), "-c", FLOOR]
    commands[peer] = [str(python), "-m", "pip", "check"]
    commands[bare] = [str(python), "-c", "pass"]
    for argv in commands.values():  # warm the page cache, the .pyc files and the doctor's caches
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=600)
    results: Dict[str, list] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved: a load spike hits every command alike
        for name, argv in commands.items():
            results[name] += timed(argv, 1, env, name)
    med = {name: statistics.median(times) for name, times in results.items()}
    cpu = {name: statistics.median(CPU[name]) for name in results}
    print(f"\n{count_dists(python)} distributions in {python.parent.parent}; {args.runs} runs each, interleaved; "
          f"CPU count {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'command':30} {'median s':>9} {'min s':>7} {'CPU s':>7} {'vs floor':>9} {'CPU vs floor':>13}")
    for name, times in results.items():
        print(f"{name:30} {med[name]:9.3f} {min(times):7.3f} {cpu[name]:7.3f} {med[name] / med[floor]:8.2f}x "
              f"{cpu[name] / cpu[floor]:12.2f}x")
    print(f"\ncheck / floor: {med[doctor] / med[floor]:.2f}x wall, {cpu[doctor] / cpu[floor]:.2f}x CPU, "
          f"{min(results[doctor]) / min(results[floor]):.2f}x best-of-run (target <= 1.2x)")
    print(f"check: {med[doctor]:.3f} s wall (target <= 0.10 s), {cpu[doctor]:.3f} s CPU; "
          f"pip check / check: {med[peer] / med[doctor]:.1f}x; check - python -c pass: {med[doctor] - med[bare]:.3f} s")
    probe = subprocess.run(commands[doctor], capture_output=True, text=True, env=env, timeout=600)
    print("\ndoctor's own timings (ms):", json.loads(probe.stdout)["timings_ms"])


if __name__ == "__main__":
    main()
