"""Real torch.profiler traces from real torch on the CPU: the Kineto container shape
({"traceEvents": [...]}, float ts), ProfilerStep#N from a schedule and vllm-ascend's scope names
from record_function. A CPU trace has no NPU lane: the report says so and judges nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fakehost import REPO
from fakehost.shared import once_per_run
from fakehost.torchenv import torch_python
import doctor_fork

SCRIPT = r"""
import sys, torch
from torch.profiler import profile, schedule, tensorboard_trace_handler, record_function, ProfilerActivity
root = sys.argv[1]
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))
x = torch.randn(32, 256)
for mode in ("steps", "scopes"):
  kw = dict(schedule=schedule(wait=0, warmup=1, active=4)) if mode == "steps" else {}
  with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
               on_trace_ready=tensorboard_trace_handler(f"{root}/{mode}", worker_name="dp0_pp0_tp0_rank0"),
               **kw) as prof:
    for i in range(5):
        with record_function("prepare input"):
            y = x * 1.0
        with record_function("forward"):
            y = model(y)
        with record_function("sample_token"):
            y.argmax(-1)
        if mode == "steps":
            prof.step()
"""


def _record(root):
    proc = subprocess.run([str(torch_python()), "-c", SCRIPT, str(root)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """Both traces from one torch process, made once per test run (the xdist workers that run
    these tests share them)."""
    root = once_per_run(tmp_path_factory, "torch-traces", _record)
    out = {}
    for mode in ("steps", "scopes"):
        files = sorted((root / mode).glob("*.pt.trace.json"))
        assert files, list(root.iterdir())
        out[mode] = files[0]
    return out


def cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return doctor_fork.run([sys.executable, "-m", "doctor", "profile", *args], capture_output=True, text=True, env=env,
                          timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["steps", "scopes"])
def test_a_real_cpu_trace_is_read_and_judged_as_what_it_is(traces, mode):
    path = traces[mode]
    raw = json.loads(path.read_text())
    assert isinstance(raw, dict) and isinstance(raw["traceEvents"], list)  # the Kineto container
    proc = cli(str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["summary"]["bound"] is None  # no NPU lane: nothing about the device is claimed
    assert doc["ranks"][0]["identity"]["producer"] == "torch"
    assert [m["id"] for m in doc["cannot_tell"]] == ["device"]
    text = cli(str(path))
    assert text.returncode == 0 and "no device activity" in text.stdout.splitlines()[0]


@pytest.mark.slow
def test_step_markers_of_a_real_trace(traces):
    """The markers the step finder reads are in a real trace by name (cat user_annotation)."""
    from doctor.profile import trace as tr
    from doctor.profile import view
    from doctor.shell.profile import files as pf

    for mode, want in (("steps", "ProfilerStep#"), ("scopes", "prepare input")):
        b = tr.TraceBuilder()
        pf.stream_trace(str(traces[mode]), b.add)
        rank = view.from_trace(b.finish(), mode)
        names = [n for n in rank.markers.name if n.startswith(want)]
        assert len(names) == (4 if mode == "steps" else 5), rank.markers.name
        assert rank.host_lane and rank.host_ops > 50 and not len(rank)
