"""Benchmark: `ascend-doctor check --json` against `pip check` and torch's collect_env.

Builds (once, cached in bench/.work/) a virtualenv with the real torch CPU build and more than
200 real distributions from the package index, plus the metadata of the Ascend stack
(torch-npu, vllm, vllm-ascend as installed distributions, since the real ones need an NPU), then
times each command several times in the same run and prints medians and ratios.

    python bench/check_bench.py [--runs 9] [--rebuild] [--baseline REF]

The doctor is timed the way users run it: installed (not editable) in an environment of its own,
like pipx, looking at the serving environment with --python. ``--baseline REF`` also installs
the doctor of a git ref (e.g. ``main``) in a venv of its own and times both in the same run,
interleaved, each also without its prefetch (the CLI entered directly, as ``python -c``), to
show what the prefetch of the interpreter and npu-smi probes buys.
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
from typing import Dict, List

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


def no_prefetch(exe: str) -> List[str]:
    """The same doctor entered at its CLI, past the entry point that prefetches."""
    python = str(Path(exe).parent / "python")
    return [python, "-c", "import sys; sys.argv[0] = 'ascend-doctor'; from doctor.cli.main import main; main()"]


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--baseline", metavar="REF", help="also time the doctor of this git ref (e.g. main)")
    ap.add_argument("--doctor-only", action="store_true", help="leave out pip check and collect_env")
    args = ap.parse_args()
    python = build(args.rebuild)
    env = dict(os.environ, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    exe = doctor_exe()
    check = ["check", "--json", "--python", str(python)]
    commands = {"ascend-doctor check --json": [exe] + check}
    if args.baseline:
        base = baseline_exe(args.baseline)
        commands["  ... without prefetch"] = no_prefetch(exe) + check
        commands[f"{args.baseline}: check --json"] = [base] + check
        commands[f"  ... {args.baseline} without prefetch"] = no_prefetch(base) + check
    if not args.doctor_only:
        commands["pip check"] = [str(python), "-m", "pip", "check"]
        commands["torch.utils.collect_env"] = [str(python), "-m", "torch.utils.collect_env"]
    for argv in commands.values():  # warm the page cache and the doctor's matrix cache
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, timeout=600)
    results: Dict[str, list] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved: a load spike hits every command alike
        for name, argv in commands.items():
            results[name] += timed(argv, 1, env, name)
    doctor = statistics.median(results["ascend-doctor check --json"])
    print(f"\n{count_dists(python)} distributions in {VENV}; {args.runs} runs each; CPU count {os.cpu_count()}")
    print(f"{'command':36} {'median s':>9} {'min s':>7} {'max s':>7} {'vs doctor':>10} {'CPU s':>7}")
    for name, times in results.items():
        med = statistics.median(times)
        print(f"{name:36} {med:9.3f} {min(times):7.3f} {max(times):7.3f} {med / doctor:9.1f}x "
              f"{statistics.median(CPU[name]):7.3f}")
    print(f"load average: {os.getloadavg()[0]:.1f} (CPU s: median user+system seconds of the process and its children)")
    probe = subprocess.run(commands["ascend-doctor check --json"], capture_output=True, text=True, env=env, timeout=600)
    print("\ndoctor's own timings (ms):", json.loads(probe.stdout)["timings_ms"])


if __name__ == "__main__":
    main()
