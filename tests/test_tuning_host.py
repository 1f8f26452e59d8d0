"""The tuning layer end to end on fake hosts (recorded /proc and /sys files, npu-smi records,
real virtualenvs), with serve commands from the field reports and the vllm-ascend docs:
check, snapshot/--from, fix and fix --tuning-patch (applied with the real patch tool)."""
import json
import subprocess
from pathlib import Path

import pytest

from fakehost import FakeHost, finding, statuses
from fakehost.scenarios import ascend_host
from fakehost.tuning import DOCKER_SHM, tuned_host

SERVE = Path(__file__).parent / "data" / "serve"
MOONCAKE = Path(__file__).parent / "data" / "mooncake"


def tuning_statuses(doc):
    return {k: v for k, v in statuses(doc).items() if k.startswith("tuning.")}


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    """An A2 container on vllm-ascend 0.11.0rc3 that nobody tuned: docker's /dev/shm, a small
    cpuset on the wrong NUMA node, ondemand CPUs, swap, low open-files limit."""
    fake = FakeHost(tmp_path_factory.mktemp("noisy"))
    ascend_host(fake, "0.11.0rc3")
    tuned_host(fake, governor="ondemand", shm=DOCKER_SHM, allowed="0-7", swap_kb=8 << 20, nofile=(1024, 4096))
    return fake


def test_a_quiet_host_stays_quiet(tmp_path):
    """Nothing configured and nothing readable (an image, the golden kit): no tuning finding."""
    fake = FakeHost(tmp_path)
    ascend_host(fake, "0.11.0rc3")
    assert tuning_statuses(fake.judge()) == {}


def test_an_untuned_host(noisy):
    doc = noisy.judge()
    assert tuning_statuses(doc) == {
        "tuning.cpu_governor": "warn", "tuning.swappiness": "warn", "tuning.numa_balancing": "warn",
        "tuning.thp": "info", "tuning.numa_affinity": "warn", "tuning.shm": "warn", "tuning.nofile": "warn"}
    governor = finding(doc, "tuning.cpu_governor")
    assert governor["commands"][0]["shell"] == "sh -c 'echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor'"


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on a fake host with a launch script
def test_field_report_launch_script_on_two_releases(noisy, tmp_path):
    """Field report 000 tuned --block-size 16 with chunked prefill on: vllm-ascend replaces it from
    v0.11.0rc1, so on 0.11.0rc3 the setting has no effect; the two NPUs need more than docker's /dev/shm."""
    doc = noisy.judge(serve_args_file=str(SERVE / "field-report-000.sh"))
    assert finding(doc, "tuning.block_size")["status"] == "info"
    assert finding(doc, "tuning.shm")["status"] == "fail"  # tp 2 on 64 MB
    assert finding(doc, "tuning.parallel_size")["status"] == "ok"
    # NPU 0 and 1 of the 910B4 record run processes: another container's in this one
    assert finding(doc, "tuning.devices_busy")["status"] == "fail"
    fake = FakeHost(tmp_path)
    ascend_host(fake, "0.10.2rc1")
    tuned_host(fake)
    older = fake.judge(serve_args_file=str(SERVE / "field-report-000.sh"))
    assert "tuning.block_size" not in statuses(older)  # there only prefix caching forced 128


def test_the_docs_own_commands_pass_their_checks(tmp_path):
    fake = FakeHost(tmp_path / "duo")
    ascend_host(fake, "0.18.0", npu="npu-smi-310p-duo.txt")
    tuned_host(fake, numa_nodes=1, bus_node={})
    doc = fake.judge(serve_args_file=str(SERVE / "docs-310p-v0.18.0.sh"))
    bad = {k: v for k, v in tuning_statuses(doc).items() if v in ("warn", "fail")}
    assert bad == {}, bad
    assert finding(doc, "tuning.dtype")["status"] == "ok"


def test_snapshot_keeps_the_tuning_facts(noisy, tmp_path):
    snap = tmp_path / "snap.json"
    proc = noisy.run("snapshot", "--serve-args-file", str(MOONCAKE / "seed001_launch.sh"))
    assert proc.returncode == 0, proc.stderr
    snap.write_text(proc.stdout)
    data = json.loads(proc.stdout)
    assert data["tuning"]["shm"]["size_bytes"] == 64 << 20
    assert data["tuning"]["serve"]["exports"]["ACL_OP_INIT_MODE"] == "1"
    live = noisy.judge(serve_args_file=str(MOONCAKE / "seed001_launch.sh"))
    replay = noisy.run("check", "--json", "--from", str(snap), with_target=False)
    doc = json.loads(replay.stdout)
    assert tuning_statuses(doc) == tuning_statuses(live)


def test_bad_input_is_one_line_and_exit_2(noisy, tmp_path):
    for args, words in ((["--model", str(tmp_path / "nope")], "not a directory"),
                        (["--verify-weights"], "needs --model"),
                        (["--verify-sample", "-1", "--model", str(tmp_path)], "--verify-sample")):
        proc = noisy.run("check", *args)
        assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    proc = noisy.run("fix", "--tuning-patch", str(tmp_path / "p.diff"))
    assert proc.returncode == 2 and "--serve-args-file" in proc.stderr


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on a fake host with a launch script
def test_fix_plans_manual_steps_and_writes_a_patch_that_applies(noisy, tmp_path):
    script = tmp_path / "launch.sh"
    script.write_text((MOONCAKE / "seed001_launch.sh").read_text().replace(
        "export ACL_OP_INIT_MODE=1", "export ACL_OP_INIT_MODE=1\nexport VLLM_USE_V1=0\nexport TASK_QUEUE_ENABLE=0"))
    patch_file = tmp_path / "tuning.patch"
    proc = noisy.run("fix", "--json", "--serve-args-file", str(script), "--tuning-patch", str(patch_file))
    plan = json.loads(proc.stdout)
    manual = [s["command"] for s in plan["steps"] if s["kind"] == "manual"]
    assert "sysctl -w vm.swappiness=0" in manual and "unset VLLM_USE_V1" in manual
    assert plan["tuning_patch"]["path"] == str(patch_file)
    assert {"action": "unset", "name": "VLLM_USE_V1", "value": None, "finding": "tuning.rejected"} in plan["tuning_patch"]["edits"]
    diff = patch_file.read_text()
    assert diff.startswith("--- a/launch.sh\n+++ b/launch.sh\n") and "-export VLLM_USE_V1=0\n" in diff
    before = script.read_text()
    subprocess.run(["patch", "-p1", "-d", str(tmp_path), "-i", str(patch_file)], check=True, capture_output=True, timeout=60)
    after = script.read_text()
    # VLLM_USE_V1 goes; TASK_QUEUE_ENABLE=0 becomes the value the release's tuning guide gives (2)
    assert after != before and "VLLM_USE_V1" not in after and "TASK_QUEUE_ENABLE=0" not in after
    assert [x for x in after.splitlines() if "TASK_QUEUE_ENABLE" in x] == ["export TASK_QUEUE_ENABLE=2"], after
    doc = noisy.judge(serve_args_file=str(script))
    assert "tuning.rejected" not in statuses(doc) and "tuning.env_harmful" not in statuses(doc)
    text = noisy.run("fix", "--serve-args-file", str(script), "--tuning-patch", str(tmp_path / "second.patch"))
    assert "needs no tuning change" in text.stdout and not (tmp_path / "second.patch").exists()


def test_chinese_output(noisy):
    proc = noisy.run("check", "--lang", "zh", "-v", "--serve-args-file", str(SERVE / "field-report-000.sh"))
    assert "调频策略" in proc.stdout and "不起作用" in proc.stdout, proc.stdout[-2000:]
    assert "sh -c 'echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor'" in proc.stdout


@pytest.mark.slow  # ~0.5 s of CPU or more: doctor runs on a fake host with a launch script
def test_the_patch_file_replaces_only_a_regular_file(noisy, tmp_path):
    """--tuning-patch is written like snapshot --output: a FIFO (even one with a reader), a
    symlink to nothing or into /proc is refused (exit 2), a symlink to a regular file is followed."""
    import os

    script = tmp_path / "launch.sh"
    script.write_text("export VLLM_USE_V1=0\nvllm serve /models/q\n")
    fifo = tmp_path / "fifo.patch"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # so that an open for writing would not block
    try:
        (tmp_path / "dangling.patch").symlink_to(tmp_path / "nowhere.patch")
        (tmp_path / "fd1.patch").symlink_to("/proc/self/fd/1")
        for name in ("fifo.patch", "dangling.patch", "fd1.patch"):
            proc = noisy.run("fix", "--serve-args-file", str(script), "--tuning-patch", str(tmp_path / name))
            assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, (name, proc.stderr)
            assert f"--tuning-patch {tmp_path / name}: " in proc.stderr and "not a regular file" in proc.stderr
            assert "VLLM_USE_V1" not in proc.stdout
        assert not (tmp_path / "nowhere.patch").exists()
        with pytest.raises(BlockingIOError):
            os.read(reader, 1)  # nothing was written into the FIFO
    finally:
        os.close(reader)
    (tmp_path / "real.patch").write_text("old")
    (tmp_path / "link.patch").symlink_to("real.patch")
    proc = noisy.run("fix", "--serve-args-file", str(script), "--tuning-patch", str(tmp_path / "link.patch"))
    assert proc.returncode in (0, 3, 4), proc.stderr
    assert (tmp_path / "link.patch").is_symlink() and "-export VLLM_USE_V1=0" in (tmp_path / "real.patch").read_text()


def _jemalloc_finding(doc):
    return [f for f in doc["findings"] if f["id"] == "tuning.env_recommended" and f["title"].startswith("LD_PRELOAD")]


@pytest.mark.parametrize("os_release, lib, commands", [
    ('NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n', None, ["apt-get install -y libjemalloc2"]),
    ('NAME="openEuler"\nID="openEuler"\nVERSION_ID="22.03"\n', None, ["yum install -y jemalloc"]),
    ('NAME="openEuler"\nID="openEuler"\n', "/usr/lib64/libjemalloc.so.2", ["export LD_PRELOAD=/usr/lib64/libjemalloc.so.2"]),
    ('ID=debian\n', "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
     ["export LD_PRELOAD=/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"]),
])
def test_jemalloc_is_looked_for_under_the_judged_root(tmp_path, os_release, lib, commands):
    """The probe reads the root's /etc/os-release and looks for libjemalloc.so.2 where the
    distribution puts it; the export is printed only for a file that exists under the root,
    else the install step of the root's package manager."""
    from doctor.facts import Facts, HostFacts
    from doctor.probes.tuning import probe_tuning
    from doctor.shell.host.root import Host

    fake = FakeHost(tmp_path)
    ascend_host(fake, "0.11.0rc3")
    tuned_host(fake)
    fake.write("/etc/os-release", os_release)
    if lib:
        fake.write(lib, "")
    facts = Facts(tool_version="t", collected_at="now",
                  host=HostFacts(root=str(fake.root), cwd="/", uid=0, gids=[0], machine="aarch64"))
    t = probe_tuning(Host(root=str(fake.root), env={}), facts, None, None)
    assert t.jemalloc_looked and t.jemalloc == lib and t.os_family == ("yum" if "openEuler" in os_release else "apt")
    [f] = _jemalloc_finding(fake.judge(serve_args="vllm serve /m --tensor-parallel-size 2", target="vllm-ascend==0.13.0",
                                       stage="runtime"))
    assert [c["shell"] for c in f.get("commands", [])] == commands
    for c in commands:
        if c.startswith("export "):
            assert (fake.root / c.split("=", 1)[1].lstrip("/")).is_file()  # the file it preloads is there
