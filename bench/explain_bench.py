"""Benchmark: `ascend-doctor explain` on a 100 MB serving log, side by side with `grep -E` over
the same patterns and `grep -F` over the literal needles, in the same run, with the ratios.

    python bench/explain_bench.py [--size-mb 100] [--runs 3] [--rebuild] [--work DIR]

The log ($TMPDIR/ascend-doctor-bench/explain-<N>mb.log, written once and reused; --rebuild
writes it again) is what a busy vllm-ascend node
writes: vLLM engine and access lines, CANN plog lines (HCCL, RUNTIME, DEVMM, PROFILING), ATB,
Mooncake, MindIE, pip and progress bars, in fixed proportions with random values, plus the
`example` line of every signature, code form and classifier, spread through the file (the real
errors the doctor must find in the noise). explain runs twice: as installed (its candidate search
in the ahocorasick-rs wheel) and as where that wheel is missing (the pure-Python marker scan),
and the two reports must be the same. Each tool runs as its own process; wall time is
measured around it, CPU time and peak RSS come from getrusage(RUSAGE_CHILDREN) of a small helper
that runs that process alone. `explain` on an empty log is shown too: the doctor's fixed cost
(interpreter, imports, matrix, compiling the scan); and on one pasted error line, what users run
most (every matcher tries the line, then the description pass reads it). Targets (issues 26 and
21): explain <= 1 s and <= 2x `grep -E`, peak RSS < 100 MB.

grep gets every pattern the doctor uses, translated from Python's syntax to POSIX ERE
(lookarounds dropped, \\d -> [0-9], named and non-capturing groups made plain), with LC_ALL=C;
patterns that do not translate are counted and left out. `grep -F` over the literal needles the
doctor's prefilter derives (each needle's longest exact run of 3+ bytes; needles without one
are counted and left out) is the floor for any scan that reads every byte.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = Path(tempfile.gettempdir()) / "ascend-doctor-bench"
sys.path.insert(0, str(REPO))

# runs the doctor as where the ahocorasick-rs wheel is missing: importing it fails
NO_WHEEL = ("import runpy, sys\n"
            "sys.modules['ahocorasick_rs'] = None\n"
            "sys.argv[0] = 'ascend-doctor'\n"
            "runpy.run_module('doctor', run_name='__main__', alter_sys=True)\n")

TARGET_SECONDS = 1.0
TARGET_GREP_RATIO = 2.0
TARGET_RSS_MB = 100


# ---------------------------------------------------------------------------------------------
# the log


def _hex(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _ts(r: random.Random) -> str:
    return f"{r.randint(1, 12):02d}-{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"


def _plog(r: random.Random) -> str:
    return (f"2025-09-{r.randint(1, 28):02d}-{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
            f".{r.randint(0, 999):03d}.{r.randint(0, 999):03d}")


def _ip(r: random.Random) -> str:
    return f"{r.choice([10, 172, 192])}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"


def _pid(r: random.Random) -> int:
    return r.randint(1000, 999999)


# (weight, line maker): the shapes of real lines from vLLM, vllm-ascend, CANN, ATB, Mooncake,
# MindIE and pip, with the values randomised.
TEMPLATES: List[Tuple[int, Callable[[random.Random], str]]] = [
    (8, lambda r: f"INFO {_ts(r)} [loggers.py:123] Engine 000: Avg prompt throughput: {r.uniform(0, 9000):.1f} tokens/s, "
                  f"Avg generation throughput: {r.uniform(0, 900):.1f} tokens/s, Running: {r.randint(0, 64)} reqs, "
                  f"Waiting: {r.randint(0, 9)} reqs, GPU KV cache usage: {r.uniform(0, 100):.1f}%, "
                  f"Prefix cache hit rate: {r.uniform(0, 100):.1f}%"),
    (10, lambda r: f"(APIServer pid={_pid(r)}) INFO {_ts(r)} [logger.py:43] Received request chatcmpl-{_hex(r, 32)}: "
                   f"prompt: None, params: SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, "
                   f"repetition_penalty=1.0, temperature=0.7, top_p=0.95, top_k=-1, min_p=0.0, seed=None, "
                   f"max_tokens={r.randint(16, 4096)}), lora_request: None."),
    (10, lambda r: f"INFO:     {_ip(r)}:{r.randint(1024, 65535)} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"),
    (2, lambda r: f"(VllmWorker rank={r.randint(0, 15)} pid={_pid(r)}) INFO {_ts(r)} [model_runner_v1.py:{r.randint(100, 3000)}] "
                  f"Loading model weights took {r.uniform(1, 80):.4f} GB"),
    (6, lambda r: f"[INFO] HCCL({_pid(r)},python3):{_plog(r)} [hccl_communicator.cc:{r.randint(100, 9000)}][{_pid(r)}]"
                  f"Entry-HcclCommInitRootInfo: ranks[{r.choice([8, 16, 32])}], rank[{r.randint(0, 31)}], rootinfo: "
                  f"host ip[{_ip(r)}] port[{r.randint(60000, 60015)}] nicDeploy[1] "
                  f"identifier[{_ip(r)}%enp189s0f0_60000_0_{r.randint(10 ** 15, 10 ** 16)}], deviceLogicId[{r.randint(0, 7)}]"),
    (8, lambda r: f"[INFO] RUNTIME({_pid(r)},python3):{_plog(r)} [stream.cc:{r.randint(100, 2000)}] {_pid(r)} SetupStream: "
                  f"Alloc stream, stream_id={r.randint(0, 2000)}, device_id={r.randint(0, 7)}, priority=0, flag=0x{_hex(r, 2)}"),
    (3, lambda r: f"[EVENT] PROFILING({_pid(r)},python3):{_plog(r)} [msprof_callback_impl.cpp:{r.randint(100, 400)}] "
                  f">>> (tid:{_pid(r)}) MsprofCtrlCallback called, type: {r.randint(1, 8)}"),
    (3, lambda r: f"[rank{r.randint(0, 7)}]:[W{r.randint(100, 1231)} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
                  f"{r.randint(0, 59):02d}.{r.randint(0, 10 ** 9)} compiler_depend.ts:{r.randint(20, 200)}] Warning: Device do "
                  f"not support double dtype now, dtype cast repalce with float. (function operator())"),
    (6, lambda r: f"[2025-09-{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d},"
                  f"{r.randint(0, 999):03d}] [INFO] [request_id=cmpl-{_hex(r, 16)}] Received request with "
                  f"{r.randint(1, 32768)} prompt tokens and max_tokens={r.randint(1, 4096)}"),
    (2, lambda r: f"DEBUG {_ts(r)} [__init__.py:{r.randint(20, 200)}] Checking if "
                  f"{r.choice(['TPU', 'CUDA', 'ROCm', 'HPU', 'XPU', 'CPU', 'Neuron'])} platform is available."),
    (3, lambda r: f"I{r.randint(100, 1231)} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}."
                  f"{r.randint(0, 999999):06d} {_pid(r)} transfer_engine.cpp:{r.randint(50, 900)}] Transfer Engine starting. "
                  f"Server: {_ip(r)}:{r.randint(1024, 65535)}, Metadata: P2PHANDSHAKE, ip_or_host_name: , "
                  f"rpc_port: {r.randint(1024, 65535)}"),
    (2, lambda r: f"Requirement already satisfied: {r.choice(['numpy', 'torch', 'transformers', 'pydantic', 'fastapi', 'uvicorn', 'msgspec', 'pyzmq', 'sentencepiece', 'tokenizers'])} "
                  f"in /usr/local/python3.11.{r.randint(1, 13)}/lib/python3.11/site-packages "
                  f"(from vllm==0.{r.randint(7, 11)}.{r.randint(0, 2)}) ({r.randint(0, 4)}.{r.randint(0, 40)}.{r.randint(0, 9)})"),
    (2, lambda r: f"Loading safetensors checkpoint shards: {r.randint(0, 100):3d}% Completed | {r.randint(1, 64)}/64 "
                  f"[00:{r.randint(0, 59):02d}<00:{r.randint(0, 59):02d},  {r.uniform(0, 9):.2f}it/s]"),
    (3, lambda r: f"Processed prompts: {r.randint(0, 100)}%|{'█' * r.randint(0, 10)}{' ' * r.randint(0, 10)}| "
                  f"{r.randint(0, 1000)}/1000 [01:{r.randint(0, 59):02d}<00:{r.randint(0, 59):02d}, {r.uniform(1, 99):.2f}it/s, "
                  f"est. speed input: {r.uniform(100, 9999):.2f} toks/s, output: {r.uniform(10, 999):.2f} toks/s]"),
    (4, lambda r: '{"timestamp": "2025-09-%02dT%02d:%02d:%02d.%06dZ", "level": "info", "event": "request_completed", '
                  '"request_id": "%s", "latency_ms": %.1f, "prompt_tokens": %d, "completion_tokens": %d}'
                  % (r.randint(1, 28), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59), r.randint(0, 999999),
                     _hex(r, 32), r.uniform(1, 9999), r.randint(1, 9999), r.randint(1, 9999))),
    (5, lambda r: f"[INFO] DEVMM({_pid(r)},python3):{_plog(r)} [devmm_svm.c:{r.randint(100, 2000)}][{_pid(r)}] devmm alloc "
                  f"success. (va=0x{_hex(r, 12)}, size={r.randint(4096, 10 ** 10)}, flag=0x{_hex(r, 4)}, devid={r.randint(0, 7)})"),
    (5, lambda r: f"[2025-09-{r.randint(1, 28):02d} {r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}."
                  f"{r.randint(0, 999999):06d}] [{_pid(r)}] [{_pid(r)}] [atb] [info] [operation_base.cpp:{r.randint(100, 900)}] "
                  f"{r.choice(['LinearOperation', 'SelfAttentionOperation', 'RopeOperation', 'PagedAttentionOperation'])}_"
                  f"{r.randint(0, 99)} setup start, runnerGraph: {r.randint(0, 9)} workspace size:{r.randint(0, 10 ** 9)}"),
    (2, lambda r: f"INFO {_ts(r)} [scheduler.py:{r.randint(100, 2000)}] 调度器状态: 运行 {r.randint(0, 64)} 个请求, "
                  f"等待 {r.randint(0, 9)} 个请求, 显存使用率 {r.uniform(0, 100):.1f}%"),
    (1, lambda r: f"WARNING {_ts(r)} [utils.py:{r.randint(100, 2000)}] The model's config.json does not contain any of the "
                  f"following keys to determine the original maximum length of the model: ['max_position_embeddings', "
                  f"'n_positions', 'max_seq_len', 'seq_length', 'model_max_length', 'max_sequence_length', "
                  f"'max_seq_length', 'seq_len']. Assuming the model's maximum length is {r.choice([2048, 4096, 8192, 32768])}."),
    (3, lambda r: f"  File \"/usr/local/python3.11.13/lib/python3.11/site-packages/vllm/"
                  f"{r.choice(['engine/llm_engine.py', 'v1/engine/core.py', 'entrypoints/openai/api_server.py', 'worker/worker_base.py'])}\", "
                  f"line {r.randint(10, 3000)}, in {r.choice(['step', 'run_engine_core', 'execute_model', '_process_input_queue', '__init__'])}"),
    (3, lambda r: f"{_plog(r)} [{r.choice(['INFO', 'DEBUG'])}] [{r.randint(1000, 99999)}] mindie_llm: text_generator.py:"
                  f"{r.randint(10, 900)} batch_size={r.randint(1, 256)} seq_len={r.randint(1, 32768)} "
                  f"e2e_time={r.uniform(0, 9):.3f}s token/s={r.uniform(1, 9999):.2f}"),
    (1, lambda r: f"INFO {_ts(r)} [gpu_model_runner.py:{r.randint(100, 3000)}] Graph capturing finished in "
                  f"{r.randint(1, 99)} secs, took {r.uniform(0, 2):.2f} GiB"),
    (2, lambda r: f"npu_id={r.randint(0, 7)} chip_id=0 health=OK power={r.uniform(60, 400):.1f}W temp={r.randint(30, 80)}C "
                  f"aicore_usage={r.randint(0, 100)}% hbm_used={r.randint(3000, 65536)}MB/65536MB"),
    (1, lambda r: f"+ export ASCEND_RT_VISIBLE_DEVICES={','.join(str(i) for i in range(r.randint(1, 8)))} "
                  f"HCCL_BUFFSIZE={r.choice([200, 512, 1024])} OMP_NUM_THREADS={r.randint(1, 32)} "
                  f"PYTORCH_NPU_ALLOC_CONF=expandable_segments:True"),
]


def real_errors() -> List[str]:
    """The example line of every signature, code form and classifier: real errors to find."""
    from doctor.explain.classifiers import CLASSIFIERS
    from doctor.matrix import load_matrix

    m = load_matrix(user_overlays=False)
    rows = list(m.signatures) + list(m.code_forms) + list(m.codes) + list(CLASSIFIERS)
    return [line for r in rows if r.example for line in r.example.splitlines() if line.strip()]


def write_log(path: Path, size_mb: int, seed: int = 1) -> int:
    """Write the log; return how many real error lines it holds."""
    r = random.Random(seed)
    weights = [w for w, _ in TEMPLATES]
    makers = [f for _, f in TEMPLATES]
    errors = real_errors()
    size = size_mb * 1024 * 1024
    every = size // (len(errors) + 1)
    written, next_error, k = 0, every, 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        while written < size:
            if written >= next_error and k < len(errors):
                line, k, next_error = errors[k], k + 1, next_error + every
            else:
                line = r.choices(makers, weights)[0](r)
            out.write(line + "\n")
            written += len(line.encode("utf-8")) + 1
    return len(errors)


# ---------------------------------------------------------------------------------------------
# grep's side: the same patterns in POSIX ERE


_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "s": "[[:space:]]", "S": "[^[:space:]]", "w": "[[:alnum:]_]", "W": "[^[:alnum:]_]"}
_CLASS_ESCAPES = {"d": "0-9", "s": "[:space:]", "w": "[:alnum:]_"}


def to_ere(pattern: str) -> Optional[str]:
    """Python regex -> POSIX ERE for GNU grep, or None when it cannot be said there.
    Lookarounds are dropped (grep then matches a little more, never less)."""
    out: List[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            e = pattern[i + 1]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
            elif e in "bB<>":
                out.append("\\" + e)
            elif e.isalnum():
                return None  # \A, \Z, \1, \x.. : not worth translating
            else:
                out.append("\\" + e)
            i += 2
        elif c == "[":
            j, body = i + 1, []
            if j < n and pattern[j] == "^":
                body.append("^")
                j += 1
            has_bracket = has_dash = False
            while j < n and (pattern[j] != "]" or j == i + 1):
                ch = pattern[j]
                if ch == "\\" and j + 1 < n:
                    e = pattern[j + 1]
                    if e in _CLASS_ESCAPES:
                        body.append(_CLASS_ESCAPES[e])
                    elif e == "]":
                        has_bracket = True
                    elif e == "-":
                        has_dash = True
                    elif e.isalnum():
                        return None
                    else:
                        body.append(e)
                    j += 2
                    continue
                body.append(ch)
                j += 1
            if j >= n:
                return None
            start = 1 if body[:1] == ["^"] else 0
            text = "".join(body[start:])
            out.append("[" + ("^" if start else "") + ("]" if has_bracket else "") + text + ("-" if has_dash else "") + "]")
            i = j + 1
        elif c == "(" and pattern.startswith("(?", i):
            if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
                depth, j = 0, i
                while j < n:  # skip the whole lookaround
                    if pattern[j] == "\\":
                        j += 2
                        continue
                    if pattern[j] == "(":
                        depth += 1
                    elif pattern[j] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                i = j + 1
                if i < n and pattern[i] in "?*+":
                    i += 1
            elif pattern.startswith("(?:", i):
                out.append("(")
                i += 3
            elif pattern.startswith("(?P<", i):
                out.append("(")
                i = pattern.index(">", i) + 1
            else:
                return None  # inline flags and the like
        elif c in "*+?}" and i + 1 < n and pattern[i + 1] == "?":
            out.append(c)  # lazy quantifiers: grep has none, the greedy one matches the same lines
            i += 2
        else:
            out.append(c)
            i += 1
    ere = "".join(out)
    return ere or None


def grep_patterns(path: Path) -> Tuple[int, int]:
    """Write the ERE file for grep; return (translated, left out)."""
    from doctor.explain.catalog import Catalog
    from doctor.matrix import load_matrix

    catalog = Catalog.from_matrix(load_matrix(user_overlays=False))
    good, bad = [], 0
    for m in catalog.matchers:
        ere = to_ere(m.pattern)
        ok = ere is not None and subprocess.run(["grep", "-E", "-e", ere, "/dev/null"], capture_output=True,
                                                 timeout=10).returncode in (0, 1)
        if ok:
            good.append(ere)
        else:
            bad += 1
    path.write_text("\n".join(good) + "\n", encoding="utf-8")
    return len(good), bad


def needle_file(path: Path) -> Tuple[int, int]:
    """The literal text the doctor's prefilter looks for, one line each (for grep -F): each
    needle's longest run of single bytes, when it has one of 3+ bytes (grep -F has no classes).
    Returns (needles written, needles left out)."""
    from doctor.explain.catalog import Catalog
    from doctor.matrix import load_matrix
    from doctor.parse.logscan import exact_runs, required

    catalog = Catalog.from_matrix(load_matrix(user_overlays=False))
    lines, left_out = set(), 0
    for m in catalog.matchers:
        for needle in required(m.pattern, m.ignore_case):
            runs = exact_runs(needle)
            if runs:
                lines.add(max(runs, key=len))
            else:
                left_out += 1
    path.write_bytes(b"\n".join(sorted(lines)) + b"\n")
    return len(lines), left_out


# ---------------------------------------------------------------------------------------------
# running


def run_isolated(argv: Sequence[str], env: Optional[dict] = None) -> Tuple[float, float, float, bytes]:
    """(wall s, CPU s, peak RSS MB, stdout) of one run of ``argv``, under a fresh Python helper
    so that RUSAGE_CHILDREN holds that process alone."""
    helper = (
        "import json, resource, subprocess, sys, time\n"
        "argv = json.loads(sys.argv[1])\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)\n"
        "wall = time.perf_counter() - t\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "sys.stderr.buffer.write(p.stderr)\n"
        "print(json.dumps({'wall': wall, 'cpu': ru.ru_utime + ru.ru_stime, 'rss_kb': ru.ru_maxrss, 'rc': p.returncode,\n"
        "                  'out': p.stdout.decode('utf-8', 'replace')}))\n"
    )
    import json

    done = subprocess.run([sys.executable, "-c", helper, json.dumps(list(argv))], capture_output=True, env=env,
                          cwd=str(REPO), timeout=900)
    if done.returncode != 0:
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        raise SystemExit(f"bench helper failed for {argv[0]}")
    result = json.loads(done.stdout.decode("utf-8").strip().splitlines()[-1])
    if result["rc"] not in (0, 1):
        sys.stderr.write(done.stderr.decode("utf-8", "replace"))
        raise SystemExit(f"{argv[0]} exited with {result['rc']}")
    return result["wall"], result["cpu"], result["rss_kb"] / 1024, result["out"].encode("utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rebuild", action="store_true", help="write the log again")
    ap.add_argument("--work", type=Path, default=WORK, help=f"where the log is kept (default {WORK})")
    args = ap.parse_args()
    if shutil.which("grep") is None:
        raise SystemExit("grep is not on PATH")

    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"explain-{args.size_mb}mb.log"
    if args.rebuild or not log.exists():
        print(f"writing {log} ...", flush=True)
        tmp = log.with_suffix(".part")
        write_log(tmp, args.size_mb)
        tmp.replace(log)
    empty = work / "empty.log"
    empty.write_bytes(b"")
    # what users paste most: one error line (read by every matcher and by the description pass)
    paste = work / "paste.log"
    paste.write_text("RuntimeError: ACL stream synchronize failed, error code is 507035\n")
    errors = len(real_errors())
    ere_file, needles = work / "explain-patterns.ere", work / "explain-needles.txt"
    translated, left_out = grep_patterns(ere_file)
    literal, no_literal = needle_file(needles)

    env = dict(os.environ, PYTHONPATH=str(REPO), LC_ALL="C")
    env.pop("ASCEND_DOCTOR_LANG", None)
    # as installed: bytecode cached (an environment without it compiles every module on each
    # start, about 0.1 s of the doctor's fixed cost); the first, untimed run writes it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "doctor", "explain", "--json", str(empty)], env=env, cwd=str(REPO),
                   capture_output=True, timeout=120)
    doctor = "ascend-doctor explain --json"
    fallback = "explain --json, no ahocorasick-rs"
    grep_e = f"grep -E -c ({translated} patterns)"
    grep_f = f"grep -F -c ({literal} needles)"
    empty_run = "ascend-doctor explain --json (empty log)"
    paste_run = "explain --json (one pasted line)"
    tools = [
        (doctor, [sys.executable, "-m", "doctor", "explain", "--json", str(log)]),
        (grep_e, ["grep", "-a", "-E", "-c", "-f", str(ere_file), str(log)]),
        (grep_f, ["grep", "-a", "-F", "-c", "-f", str(needles), str(log)]),
        (empty_run, [sys.executable, "-m", "doctor", "explain", "--json", str(empty)]),
        (paste_run, [sys.executable, "-m", "doctor", "explain", "--json", str(paste)]),
        (fallback, [sys.executable, "-c", NO_WHEEL, "explain", "--json", str(log)]),
    ]
    results: dict = {}
    for _ in range(args.runs):
        for name, argv in tools:  # interleaved, so load on the machine hits all alike
            results.setdefault(name, []).append(run_isolated(argv, env))

    size = log.stat().st_size / 1024 / 1024
    print(f"\nlog: {log} ({size:.0f} MB, {errors} real error lines in it); {args.runs} runs each, interleaved; "
          f"grep -E: {translated} patterns translated, {left_out} left out (no ERE form); "
          f"grep -F: {literal} needles, {no_literal} left out (classes only)")
    print(f"{'tool':44} {'wall s (median)':>15} {'min':>6} {'CPU s (median)':>15} {'MB/s':>6} {'peak RSS MB':>12}")
    for name, runs in results.items():
        walls = [r[0] for r in runs]
        cpus = [r[1] for r in runs]
        rss = max(r[2] for r in runs)
        med = statistics.median(walls)
        print(f"{name:44} {med:15.2f} {min(walls):6.2f} {statistics.median(cpus):15.2f} {size / med:6.1f} {rss:12.1f}")
    import json

    def med(name: str, k: int) -> float:
        return statistics.median(r[k] for r in results[name])

    doctor_runs = results[doctor]
    found = len(json.loads(doctor_runs[0][3].decode("utf-8")).get("matches", []))
    rss = max(r[2] for r in doctor_runs)
    print(f"\ndoctor: {found} answers; grep -E: {results[grep_e][0][3].decode().strip()} matching lines; "
          f"grep -F: {results[grep_f][0][3].decode().strip()} matching lines")
    for label, k in (("wall", 0), ("CPU", 1)):
        print(f"ratios ({label}): explain / grep -E {med(doctor, k) / med(grep_e, k):.1f}x, "
              f"explain / grep -F {med(doctor, k) / med(grep_f, k):.1f}x; "
              f"explain less its empty-log cost / grep -E "
              f"{(med(doctor, k) - med(empty_run, k)) / med(grep_e, k):.1f}x; "
              f"without the wheel / grep -E {med(fallback, k) / med(grep_e, k):.1f}x")
    same = all(r[3] == doctor_runs[0][3] for r in doctor_runs + results[fallback])
    print(f"reports with and without the ahocorasick-rs wheel: {'the same' if same else 'DIFFERENT'}")
    wall = med(doctor, 0)
    ratio = med(doctor, 1) / med(grep_e, 1)
    verdict = "PASS" if wall <= TARGET_SECONDS and ratio <= TARGET_GREP_RATIO and rss < TARGET_RSS_MB and same else "MISS"
    print(f"targets: <= {TARGET_SECONDS:.0f} s, <= {TARGET_GREP_RATIO:.0f}x grep -E (CPU), < {TARGET_RSS_MB} MB peak RSS: "
          f"{verdict} ({wall:.2f} s, {ratio:.1f}x, {rss:.1f} MB); load average now {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
