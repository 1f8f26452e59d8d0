"""fleet check --kubectl. No Kubernetes API server can run here (no container runtime, nothing to
download), so kubectl itself is the one thing faked: a script on PATH that answers `get pods -o
json` with a pod list in the API's shape and runs `exec POD -- CMD...` as that pod's node would
(its own `ascend-doctor` first on PATH). Everything on our side is real."""
from __future__ import annotations

import json
import os
import sys

import pytest
from fakehost import REPO, FakeHost
from fakehost.fleet import node, wrapper
import doctor_fork

FAKE_KUBECTL = """#!/bin/sh
# FAKE kubectl for tests (see the module docstring): get pods / exec only.
echo "$@" >> '{log}'
while [ "$1" = "--context" ] || [ "$1" = "--namespace" ]; do shift 2; done
if [ "$1" = "get" ]; then cat '{pods}'; exit 0; fi
if [ "$1" = "exec" ]; then
  pod="$2"; shift 2
  [ "$1" = "--container" ] && shift 2
  [ "$1" = "--" ] && shift
  PATH="{bins}/$pod:$PATH" exec "$@"
fi
echo "error: unknown command" >&2; exit 1
"""


def pod(name, phase="Running", node_name="worker"):
    return {"metadata": {"name": name, "namespace": "serving"}, "spec": {"nodeName": node_name},
            "status": {"phase": phase}}


@pytest.fixture(scope="module")
def kube(tmp_path_factory):
    base = tmp_path_factory.mktemp("kube")
    bins = base / "bins"
    for n, name in ((1, "vllm-0"), (2, "vllm-1")):
        fake = node(FakeHost(base / name), n)
        script = wrapper(fake)
        script.write_text(script.read_text().rstrip("\n") + f" --serve-args-file '{fake.p('/vllm-workspace/launch.sh')}'\n")
        (bins / name).mkdir(parents=True)
        (bins / name / "ascend-doctor").symlink_to(script)
    (base / "pods.json").write_text(json.dumps({"kind": "PodList", "items": [
        pod("vllm-0", node_name="a2-1"), pod("vllm-1", node_name="a2-2"), pod("vllm-2", phase="Pending")]}))
    tool = base / "path" / "kubectl"
    tool.parent.mkdir()
    tool.write_text(FAKE_KUBECTL.format(log=base / "calls.log", pods=base / "pods.json", bins=bins))
    tool.chmod(0o755)
    return base


@pytest.mark.slow  # ~0.5 s of CPU or more: fake kubectl pods, one doctor run each
def test_exec_into_every_running_pod(kube, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{kube / 'path'}:{os.environ['PATH']}")
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fleet", "check", "--kubectl", "app=vllm", "-n", "serving",
                           "--container", "vllm", "--timeout", "60", "--json"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    doc = json.loads(proc.stdout)
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert nodes["vllm-0"]["answered"] and nodes["vllm-1"]["answered"]
    assert not nodes["vllm-2"]["answered"] and nodes["vllm-2"]["error"] == "pod is Pending"
    assert proc.returncode == 3  # a pod that is not running is reported, and counts
    calls = (kube / "calls.log").read_text().splitlines()
    assert calls[0] == "--namespace serving get pods --selector app=vllm --output json"
    assert "--namespace serving exec vllm-0 --container vllm -- ascend-doctor snapshot" in calls
    rows = {r["item"]: r["values"] for r in doc["rows"]}
    assert rows["HCCL_IF_IP"] == {"vllm-0": "192.0.2.2", "vllm-1": "192.0.2.3"}


def test_selector_matching_nothing_is_a_usage_error(kube, tmp_path):
    empty = tmp_path / "pods.json"
    empty.write_text('{"items": []}')
    tool = tmp_path / "bin" / "kubectl"
    tool.parent.mkdir()
    tool.write_text((kube / "path" / "kubectl").read_text().replace(str(kube / "pods.json"), str(empty)))
    tool.chmod(0o755)
    env = dict(os.environ, PYTHONPATH=str(REPO), PATH=f"{tool.parent}:{os.environ['PATH']}")
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fleet", "check", "--kubectl", "app=none"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "no pod matches the selector app=none" in proc.stderr
