"""The smoke runner: the target scripts (doctor/smoke_target) run by the target interpreter.

The doctor never imports torch or vllm itself (they may be what is broken, and they cost
seconds): each stage is a script run by the user's interpreter through doctor.shell.runtime.proc, with
a timeout, its own process group, and its events in a file of its own, apart from what the
libraries print. What the results mean is decided in doctor.smoke (pure).
"""
from __future__ import annotations

import collections
import os
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Deque, Dict, List, Mapping, Optional, Sequence

from doctor.shell.runtime import proc
from doctor.smoke.collective import RankState
from doctor.smoke.events import ScriptRun, parse_line
from doctor.smoke.vllmlog import read_vllm_log

TARGET_DIR = Path(__file__).resolve().parents[2] / "smoke_target"
MAX_EVENTS = 16 * 1024 * 1024  # bytes of events read back from one script
LOG_TAIL = 60


def script(name: str) -> str:
    return str(TARGET_DIR / f"{name}.py")


def target_env(env: Mapping[str, str], device: str) -> Dict[str, str]:
    out = dict(env)
    out["PYTHONUNBUFFERED"] = "1"
    if device == "cpu":
        # torch autoloads torch_npu through its device-backend entry point; on a machine without
        # a driver that import fails before the CPU is ever used.
        out["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    return out


def read_events(path: Path) -> ScriptRun:
    run = ScriptRun()
    try:
        if not path.is_file():
            return run
        with open(path, "rb") as fh:
            data = fh.read(MAX_EVENTS)
    except OSError:
        return run
    for line in data.decode("utf-8", "replace").splitlines():
        event = parse_line(line)
        if event:
            run.add(event)
    return run


@dataclass
class ScriptResult:
    run: ScriptRun
    finished: proc.Finished
    log: List[str] = field(default_factory=list)       # last lines of stdout+stderr
    figures: Dict[str, object] = field(default_factory=dict)  # from vllm's log

    @property
    def seconds(self) -> float:
        return self.finished.duration_s


def run_script(python: str, name: str, args: Sequence[str], *, env: Mapping[str, str], timeout: float,
               on_line: Optional[Callable[[str], None]] = None, tick: Optional[Callable[[], None]] = None,
               workdir: Optional[str] = None) -> ScriptResult:
    """Run one target script to its end (or its timeout) and read back what it reported."""
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-smoke-") as tmp:
        events = Path(tmp) / "events.jsonl"
        child_env = dict(env)
        child_env["ASCEND_DOCTOR_SMOKE_EVENTS"] = str(events)
        tail: Deque[str] = collections.deque(maxlen=LOG_TAIL)
        interesting: List[str] = []

        def line(text: str) -> None:
            tail.append(text)
            if ("took" in text or "KV cache" in text) and len(interesting) < 1000:
                interesting.append(text)
            if on_line:
                on_line(text)

        finished = proc.stream([python, script(name), *args], timeout, env=child_env, cwd=workdir or tmp,
                               on_line=line, tick=tick, tail=LOG_TAIL)
        run = read_events(events)
    return ScriptResult(run=run, finished=finished, log=list(tail), figures=read_vllm_log(interesting))


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class CollectiveRun:
    ranks: List[RankState]
    sizes: Dict[int, List[Dict[str, object]]]  # rank -> its "size" events
    logs: Dict[int, List[str]]                 # rank -> last lines of its output
    seconds: float


def _tail(path: Path, lines: int = 20, cap: int = 64 * 1024) -> List[str]:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - cap))
            data = fh.read(cap)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-lines:]


GRACE = 5.0  # seconds the other ranks get to finish once one has failed


def run_collective(python: str, device: str, device_ids: Sequence[int], sizes: Sequence[int], *,
                   env: Mapping[str, str], timeout: float, iters: int = 10, warmup: int = 2,
                   tick: Optional[Callable[[int, int], None]] = None) -> CollectiveRun:
    """One process per device, all started together; each may take ``timeout`` seconds in all.
    The ranks' own collective timeout is a quarter of it, so a rank left waiting for a hung peer
    reports that itself; once a rank has failed, the others get GRACE seconds, and the ones
    still running then (the hung ones) are killed and named."""
    n = len(device_ids)
    port = free_port()
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-collective-") as tmp:
        procs: List[Optional[subprocess.Popen]] = []
        states: List[RankState] = []
        errors: Dict[int, str] = {}
        try:
            for rank, dev_id in enumerate(device_ids):
                child_env = dict(env)
                child_env.update({"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": str(n),
                                  "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
                                  "ASCEND_DOCTOR_SMOKE_EVENTS": os.path.join(tmp, f"events.{rank}.jsonl")})
                argv = [python, script("smoke_rank"), "--device", device, "--device-id", str(dev_id),
                        "--sizes", ",".join(str(s) for s in sizes), "--iters", str(iters), "--warmup", str(warmup),
                        "--op-timeout", str(max(10.0, timeout / 4.0))]
                states.append(RankState(rank=rank, device=str(dev_id)))
                log = open(os.path.join(tmp, f"log.{rank}.txt"), "wb")
                try:
                    procs.append(proc.start(argv, env=child_env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT))
                except OSError as e:
                    procs.append(None)
                    errors[rank] = f"cannot start {python}: {e.strerror or e}"
                finally:
                    log.close()
            failed_at: Optional[float] = None
            while time.monotonic() - began < timeout:
                if all(p is None or p.poll() is not None for p in procs):
                    break
                if failed_at is None and any(p is None or (p.poll() is not None and p.returncode != 0) for p in procs):
                    failed_at = time.monotonic()
                if failed_at is not None and time.monotonic() - failed_at > GRACE:
                    break
                if tick:
                    tick(sum(1 for p in procs if p is None or p.poll() is not None), n)
                time.sleep(0.2)
        finally:
            for rank, p in enumerate(procs):
                if p is None:
                    continue
                if p.poll() is None:
                    states[rank].killed = True
                    proc.kill_group(p)
                    try:
                        p.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        pass
                proc.forget(p)
                states[rank].exit_code = p.returncode
        size_events: Dict[int, List[Dict[str, object]]] = {}
        logs: Dict[int, List[str]] = {}
        for rank, state in enumerate(states):
            run = read_events(Path(tmp) / f"events.{rank}.jsonl")
            state.steps = [str(s["step"]) for s in run.steps if s.get("ok")]
            state.running = run.running
            failed = run.failed
            state.error = errors.get(rank) or (str(failed.get("error")) if failed else None)
            state.started_sizes = sum(1 for e in run.other if e.get("event") == "start")
            size_events[rank] = [e for e in run.other if e.get("event") == "size"]
            state.finished_sizes = len(size_events[rank])
            logs[rank] = _tail(Path(tmp) / f"log.{rank}.txt")
    return CollectiveRun(ranks=states, sizes=size_events, logs=logs, seconds=time.monotonic() - began)
