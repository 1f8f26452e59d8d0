"""fleet check --ray on a real local multi-node Ray cluster (ray.cluster_utils.Cluster): three
nodes, each told to use a different fake host (its own `ascend-doctor` first on the node's PATH);
one node is killed while its doctor still runs. And Ray's own version refusal, said plainly."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
import time

import pytest
from fakehost import REPO, FakeHost
from fakehost.fleet import node, wrapper
from fakehost.hccn import install, node_ports
import doctor_fork

# Ray is imported by the tests that use it, not here: importing it costs ~0.7 s of CPU in every
# xdist worker that collects this file.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                                reason="Ray is the optional extra ascend-doctor[fleet]")


def node_env(fake: FakeHost) -> dict:
    return {"PATH": f"{fake.base / 'bin'}:/usr/local/bin:/usr/bin:/bin"}


# Ray gives a starting node 30 s to register with the GCS, a constant in ray/_private/node.py that
# no setting moves (its loop asks services.get_node until then); on a loaded 2-core machine a
# raylet took longer, three starts in a row. The test waits for the registration itself, as long
# as that takes up to REGISTER_S: what it judges runs once, as written.
REGISTER_S = 300.0


def wait_for_registration(monkeypatch) -> None:
    import ray._private.services as services

    real = services.get_node

    def get_node(gcs_address, node_id):
        end = time.monotonic() + REGISTER_S
        while True:
            try:
                return real(gcs_address, node_id)
            except RuntimeError:  # "GCS cannot find the node": not registered yet
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)

    monkeypatch.setattr(services, "get_node", get_node)


@pytest.mark.slow
def test_one_task_per_alive_node_and_a_node_killed_mid_run(tmp_path, monkeypatch):
    import ray
    from ray.cluster_utils import Cluster

    from doctor.usecases.fleet import FleetCheckOptions, run_fleet_check

    wait_for_registration(monkeypatch)
    fakes = []
    for n in (1, 2, 3):
        fake = node(FakeHost(tmp_path / f"node{n}"), n, drifted=(n == 2))
        if n == 3:  # its driver call hangs: the node is still working when it is killed
            ports = node_ports(3, count=4)
            ports[0].hang = True
            install(fake, ports)
        script = wrapper(fake)
        script.write_text(script.read_text().rstrip("\n")
                          + f" --serve-args-file '{fake.p('/vllm-workspace/launch.sh')}' --hccn-timeout 50\n")
        fakes.append(fake)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "env_vars": node_env(fakes[0]),
                                                            "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, env_vars=node_env(fakes[1]))
        doomed = cluster.add_node(num_cpus=1, env_vars=node_env(fakes[2]))
        cluster.wait_for_nodes(timeout=REGISTER_S)
        killed = threading.Event()
        answered = []

        def progress(title, total):
            assert total == 3
            def tick(reply):
                answered.append(reply)
                if len(answered) == 2 and not killed.is_set():
                    killed.set()
                    cluster.remove_node(doomed, allow_graceful=False)
            return tick

        opts = FleetCheckOptions(ray=cluster.address, timeout=40.0)
        report = run_fleet_check(opts, progress)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
    assert killed.is_set()
    assert len(report.nodes) == 3
    answered_nodes = [n for n in report.nodes if n.answered]
    dead = [n for n in report.nodes if not n.answered]
    assert len(answered_nodes) == 2 and len(dead) == 1 and dead[0].error
    # each node ran its own doctor: one of them is the drifted node 2
    torch_npu = next(r for r in report.rows if r.item == "torch-npu")
    assert sorted(torch_npu.values.values()) == ["2.10.0", "2.8.0"]
    assert report.exit_code() == 3
    unanswered = [f for f in report.findings if f.id == "fleet.node" and dead[0].name in str(f.title)]
    assert unanswered and unanswered[0].status == "fail"


def test_version_mismatch_is_said_plainly():
    """Ray's own check (the real function, fed another cluster's metadata) and our one line."""
    import ray
    from ray._private.utils import check_version_info

    from doctor.i18n import tr
    from doctor.shell.fleet.ray_cluster import version_mismatch

    with pytest.raises(RuntimeError) as err:
        check_version_info({"ray_version": "2.9.3", "python_version": "3.10.12"}, "node 10.0.0.5:6379")
    versions = version_mismatch(str(err.value))
    assert versions == {"cluster_ray": "2.9.3", "cluster_python": "3.10.12", "ray": ray.__version__,
                        "python": ".".join(map(str, sys.version_info[:3]))}
    line = tr("fleet.ray.mismatch_python", "en", address="10.0.0.5:6379", **versions)
    assert "runs Ray 2.9.3 on Python 3.10.12" in line and "a Python 3.10.12 environment with Ray 2.9.3" in line
    assert "\n" not in line


@pytest.mark.slow  # ~0.5 s of CPU or more: a real interpreter and a doctor run
def test_ray_missing_and_no_cluster_are_one_line_usage_errors(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), RAY_ADDRESS="")
    code = ("import sys; sys.modules['ray'] = None; sys.argv = ['ascend-doctor'] + sys.argv[1:];"
            "from doctor.cli.main import main; main(sys.argv[1:])")
    proc = subprocess.run([sys.executable, "-c", code, "fleet", "check", "--ray"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert f"{sys.executable} -m pip install 'ray>=2.9'" in proc.stderr and "ascend-doctor[" not in proc.stderr
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fleet", "check", "--ray", "127.0.0.1:1"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "cannot connect to the Ray cluster at 127.0.0.1:1" in proc.stderr, proc.stderr
    assert not proc.stdout


def test_the_node_task_keeps_a_bounded_output_whatever_the_doctor_there_prints():
    """What runs on each node (shipped by value, no Ray needed to test it): a node whose doctor
    prints without end is read to the end but only MAX_STDOUT of it is kept and sent back
    (communicate() held all of it on the node and in the reply); stderr keeps its tail."""
    import resource

    from doctor.shell.fleet import ray_task

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = ray_task.run_snapshot(["sh", "-c", "head -c 200000000 /dev/zero; head -c 100000 /dev/zero | tr '\\0' e >&2; "
                                 "echo last >&2"], 120, max_stdout=1 << 20)
    assert (out["returncode"], out["timed_out"], len(out["stdout"])) == (0, False, 1 << 20)
    assert out["stderr"].endswith("eeeelast\n") and len(out["stderr"]) == ray_task.MAX_STDERR
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 << 10  # KiB; communicate(): ~400 MB
    late = ray_task.run_snapshot(["sh", "-c", "sleep 60 & echo started"], 1.5)
    assert late["timed_out"] and late["stdout"] == "started\n" and late["seconds"] < 10


def test_a_node_that_answers_as_the_deadline_passes_is_read_not_cancelled():
    """ray.wait's protocol with a clock that passes the deadline while two tasks finish: the last
    look (timeout 0) reads them; only the task still running is left to cancel."""
    from doctor.shell.fleet.ray_cluster import drain

    now = [0.0]
    finished = {"a"}

    def wait(pending, num_returns, timeout):
        if timeout == 0:
            ready = [r for r in pending if r in finished]
        else:
            now[0] += timeout  # nothing else finished in time: the whole wait passes
            finished.update({"b", "c"})  # ...and two answer just as it returns
            ready = [r for r in pending if r in finished][:num_returns]
        return ready, [r for r in pending if r not in ready]

    read = []
    left = drain(wait, ["a", "b", "c", "d"], 10.0, read.append, clock=lambda: now[0])
    assert read[:1] == ["a"] and sorted(read) == ["a", "b", "c"] and left == ["d"]
    assert drain(wait, [], 10.0, read.append, clock=lambda: now[0]) == []
