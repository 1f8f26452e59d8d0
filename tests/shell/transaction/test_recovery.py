"""Transactions that survive a dead doctor (issue 9, items 1-3 and 9): rollback never races an
orphaned pip, a failed rollback can be finished, a broken import is never committed, and a
transaction that fails at its start leaves nothing behind. Real pip, real signals, real
processes; the long run of the same harness is bench/faults.py."""
import errno
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakehost import faults
from fakehost import wheelhouse as wh
from fakehost.dists import Stub
import pidref

from doctor.shell.runtime import proc
from doctor.shell.transaction import files as txn_files
from doctor.shell.transaction import journal as J
from doctor.shell.transaction import processes, statedir
from doctor.shell.transaction.lock import Lock
from doctor.shell.transaction.roots import Roots


# -- the processes of a transaction (unit, real processes) ---------------------------------------


def marked_child(argv, txn_id="t", **kw):
    """A step as the transaction starts it: its own session, the transaction's marker."""
    return subprocess.Popen(argv, start_new_session=True, env=processes.marked(os.environ, txn_id), **kw)


def test_a_recorded_step_process_is_found_and_waited_for(tmp_path):
    d = tmp_path / "t"
    child = marked_child(["sh", "-c", "sleep 60 & wait"], txn_id="t")
    try:
        j = J.Journal(d, {"id": "t", "current": processes.record_process(child.pid)})
        assert processes.owned_group(j.data["current"], "t") == child.pid
        # a pid that now belongs to another process (another start time) is not ours
        assert processes.owned_group(dict(processes.record_process(child.pid), start="1"), "t") is None
        started = time.monotonic()
        processes.wait_for_leftovers(j, timeout=10, grace=0.2)  # kills the group after the grace period
        assert time.monotonic() - started < 5 and processes.owned_group(j.data["current"], "t") is None
    finally:
        child.kill()
        child.wait()


def test_grandchildren_left_in_the_group_count_as_the_transactions(tmp_path):
    leader = marked_child(["sh", "-c", "sleep 60 & echo $!; exit 0"], stdout=subprocess.PIPE, text=True)
    grandchild = pidref.hold(int(leader.stdout.readline()))
    leader.wait()
    try:
        j = J.Journal(tmp_path / "t", {"id": "t", "current": {"pid": leader.pid, "pgid": leader.pid, "start": "x"}})
        assert processes.owned_group(j.data["current"], "t") == leader.pid  # the leader is gone, its group is not
        processes.wait_for_leftovers(j, timeout=10, grace=0.1)
        assert not proc.group_alive(leader.pid)
    finally:
        pidref.kill(grandchild)


def test_restore_skips_identical_files_even_where_nothing_can_be_written(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.py").write_text("a = 1\n")
    os.symlink("a.py", site / "link.py")
    backup = tmp_path / "backup"
    files = [str(site / "a.py"), str(site / "link.py")]
    txn_files.backup_files(files, backup)
    roots = Roots.of([str(site)], str(tmp_path), None)
    if not faults.can_make_read_only(tmp_path):
        pytest.skip("cannot make a directory read-only here")
    with faults.read_only(site):
        assert txn_files.restore_files(files, backup, roots) == []  # nothing changed: nothing to write
        (backup / str(site / "a.py").lstrip("/")).write_text("a = 2\n")
        assert txn_files.restore_files(files, backup, roots) == [str(site / "a.py")]  # a real difference


def test_backups_of_unfinished_or_failed_transactions_are_never_pruned(tmp_path):
    from doctor.shell.transaction.undo import prune_old_backups

    base = tmp_path / "transactions"
    full = {"before": [], "after": [], "backups": {}, "roots": [], "prefix": "/p"}
    for name, status in (("20250101-000001-1", "committed"), ("20250101-000002-1", "rollback-failed"),
                         ("20250101-000003-1", "installing"), ("20250101-000004-1", "rolled-back"),
                         ("20250101-000005-1", "committed"), ("20250101-000006-1", "broken")):
        (base / name / "backup").mkdir(parents=True)
        (base / name / "journal.json").write_text(json.dumps(dict(full, id=name, status=status)))
    prune_old_backups(tmp_path, keep="20250101-000005-1")
    kept = sorted(d.name[-3:-2] for d in base.iterdir() if (d / "backup").is_dir())
    assert kept == ["2", "3", "5", "6"]  # failed, unfinished, the last, and one that cannot be trusted


def test_a_full_disk_at_the_start_leaves_no_journal(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir()

    def full(self):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(statedir.os, "fsync", full)
    with pytest.raises(OSError):
        J.Journal.create(state)
    assert list((state / "transactions").iterdir()) == []
    assert J.unfinished(state) == []


def test_the_first_journal_is_never_seen_half_written(tmp_path, monkeypatch):
    """A doctor killed (SIGKILL: nothing cleans up) while it writes its first journal leaves at
    most the journal's temporary file: that transaction changed nothing, and it must not block
    the next fix as a journal that cannot be trusted (an empty journal.json did)."""
    state = tmp_path / "state"
    state.mkdir()
    opened = []
    real = statedir.write_new
    monkeypatch.setattr(statedir, "write_new", lambda path, *a, **k: opened.append(Path(path).name) or real(path, *a, **k))
    j = J.Journal.create(state)
    assert opened and all(name.startswith(".journal.json.") for name in opened)  # journal.json only by rename
    assert J.read(j.dir).data["status"] == "started"
    for name, content in (("20250101-000001-1", b""), ("20250101-000002-1", b'{"id": "2025')):
        d = state / "transactions" / name
        d.mkdir()
        (d / ".journal.json.4242.0a1b2c3d.tmp").write_bytes(content)  # killed before the rename
    assert [t.id for t in J.transactions(state)] == [j.id] and [t.id for t in J.unfinished(state)] == [j.id]
    (state / "transactions" / "20250101-000001-1" / "backup").mkdir()  # more than that: not skipped
    assert [t.id for t in J.unfinished(state)][0] == "20250101-000001-1"


def test_a_running_fix_is_named_not_taken_for_one_left_unfinished(tmp_path):
    """A second fix started while the first installs sees the first's unfinished journal: it
    must say that a fix is running (the lock's holder), not tell the user to roll it back."""
    from doctor.errors import UsageError
    from doctor.shell.transaction import Target, refuse_if_unfinished

    prefix = tmp_path / "venv"
    prefix.mkdir()
    target = Target(python=str(prefix / "bin" / "python"), prefix=str(prefix), base_prefix="/usr", roots=[])
    state = statedir.state_dir(str(prefix), {})
    J.Journal.create(state).update(status="installing", before=[], backups={}, roots=[], prefix=str(prefix))
    with Lock(state / "lock", f"fix --apply on {target.python}"):
        with pytest.raises(UsageError, match=f"another ascend-doctor fix or rollback is changing this environment "
                                             f"\\(pid {os.getpid()}, fix --apply"):
            refuse_if_unfinished(target, {})
    with pytest.raises(UsageError, match="did not finish \\(installing\\); roll it back first"):
        refuse_if_unfinished(target, {})  # its doctor is gone: now it is one left unfinished


# -- end to end: real pip, real signals ----------------------------------------------------------


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_fix_with_under_400_kb_free_refuses_and_leaves_nothing(tmp_path, house):
    if os.geteuid() != 0:
        pytest.skip("needs a small tmpfs (root)")
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    state = faults.state_dir(fake)
    state.mkdir(exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k,mode=0700", "tmpfs", str(state)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        before = faults.tree(fake)
        proc_ = faults.run(fake, house["list"], "fix", "--apply", "--yes", "--no-smoke",
                           "--target", "vllm-ascend==0.11.0")
        assert proc_.returncode == 2, proc_.stderr
        line = proc_.stderr.strip().splitlines()[-1]
        assert "KB free on the file system of" in line and "nothing was changed" in line, line
        assert not (state / "transactions").exists() or list((state / "transactions").iterdir()) == []
        assert faults.tree(fake) == before
    finally:
        subprocess.run(["umount", str(state)], capture_output=True)


@pytest.mark.slow
def test_read_only_site_packages_rolls_back_cleanly(tmp_path, house):
    """pip cannot write: the first step fails, nothing changed, and the rollback (which has
    nothing to write) says so instead of "rollback incomplete"."""
    if not faults.can_make_read_only(tmp_path):
        pytest.skip("cannot make a directory read-only here")
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    before = faults.tree(fake)
    with faults.read_only(fake.site):
        proc_ = faults.run(fake, house["list"], "fix", "--apply", "--yes", "--no-smoke",
                           "--target", "vllm-ascend==0.11.0")
    assert proc_.returncode == 1, proc_.stderr
    assert "rolled back, the environment is as it was" in proc_.stderr, proc_.stderr[-2000:]
    assert faults.tree(fake) == before
    assert faults.journal(fake)["status"] == "rolled-back"


@pytest.mark.slow
def test_a_failed_rollback_is_finished_later_from_the_kept_backups(tmp_path, house):
    if not faults.can_make_read_only(tmp_path):
        pytest.skip("cannot make a directory read-only here")
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    before = faults.tree(fake)
    fixed = faults.run(fake, house["list"], "fix", "--apply", "--yes", "--no-smoke", "--target", "vllm-ascend==0.11.0")
    assert fixed.returncode in (0, 4), fixed.stderr[-2000:]
    with faults.read_only(fake.site):
        failed = faults.run(fake, house["list"], "rollback", "--yes")
    assert failed.returncode == 1 and "is incomplete" in failed.stderr and "backups kept in" in failed.stderr
    j = faults.journal(fake)
    assert j["status"] == "rollback-failed" and Path(j["backup_dir"]).is_dir()
    command = failed.stderr.strip().splitlines()[-1]
    assert shlex.split(command)[-3:-1] == ["rollback", "--python"]  # spelled as this doctor runs (doctor.program)
    # a new fix is refused while it is pending, and says what to run
    refused = faults.run(fake, house["list"], "fix", "--apply", "--yes", "--no-smoke")
    assert refused.returncode == 2 and "could not be rolled back" in refused.stderr
    assert refused.stderr.strip().splitlines()[-1] == command
    assert Path(j["backup_dir"]).is_dir()  # and nothing was pruned
    done = faults.run(fake, house["list"], "rollback", "--yes")
    assert done.returncode in (0, 3, 4), done.stderr[-2000:]
    assert faults.tree(fake) == before
    assert faults.journal(fake)["status"] == "rolled-back-later"


def poisoned_house(house, dest: Path, name: str, version: str, init: str):
    dirs = {}
    import shutil

    for k, d in house["dirs"].items():
        dirs[k] = dest / k
        shutil.copytree(d, dirs[k])
    folder = wh.ASCEND if (name, version) in wh.ASCEND_PACKAGES else wh.PYPI
    (dirs[folder] / wh.wheel_name(name, version)).unlink()
    stub = Stub(name, version)
    wh.write_wheel(dirs[folder], stub, extra_files={f"{stub.module}/__init__.py": init.encode()})
    return [dirs[wh.PYPI], dirs[wh.CPU], dirs[wh.ASCEND]]


@pytest.mark.slow
def test_a_package_that_raises_on_import_is_never_committed(tmp_path, house):
    """--no-smoke (the Dockerfile recipe) used to commit a vllm-ascend that raises on import."""
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    before = faults.tree(fake)
    dirs = poisoned_house(house, tmp_path / "house", "vllm-ascend", "0.11.0",
                          "raise ImportError('cannot import name ops from vllm_ascend')\n")
    proc_ = faults.run(fake, dirs, "fix", "--apply", "--yes", "--no-smoke", "--target", "vllm-ascend==0.11.0")
    assert proc_.returncode == 1, proc_.stderr[-2000:]
    err = proc_.stderr.strip().splitlines()[-1]
    assert "the import check failed" in err and "import vllm_ascend" in err and "rolled back" in err, err
    assert faults.tree(fake) == before


@pytest.mark.slow
def test_the_missing_driver_is_not_a_reason_to_roll_back(tmp_path, house):
    """torch_npu cannot load libascend_hal.so where there is no driver: at the build stage it is
    only located; at run time its import fails for the driver alone: not verified, committed."""
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    dirs = poisoned_house(house, tmp_path / "house", "torch-npu", "2.7.1.post1",  # the row's recommended build
                          "raise ImportError('libascend_hal.so: cannot open shared object file: "
                          "No such file or directory')\n")
    build = faults.run(fake, dirs, "fix", "--apply", "--yes", "--no-smoke", "--json", "--stage", "build",
                       "--target", "vllm-ascend==0.11.0")
    assert build.returncode in (0, 4), build.stderr[-2000:]
    checks = {c["module"]: c for c in json.loads(build.stdout)["result"]["verification"]["checks"]}
    assert checks["torch_npu"]["how"] == "locate" and checks["torch_npu"]["ok"]
    assert checks["vllm_ascend"]["how"] == "import" and checks["vllm_ascend"]["ok"]
    assert checks["torch"]["how"] == "import"
    # the same at run time (NPU devices in the fake root): imported, fails for the driver only
    fake2 = faults.fresh_host(tmp_path / "host2", house["template"])
    runtime = faults.run(fake2, dirs, "fix", "--apply", "--yes", "--no-smoke", "--target", "vllm-ascend==0.11.0")
    assert "rolled back" not in runtime.stderr, runtime.stderr[-2000:]
    assert "not verified: their import needs the NPU driver (libascend_hal.so)" in runtime.stdout
    assert "torch_npu" in runtime.stdout


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGHUP], ids=["kill-9", "sighup"])
def test_killed_doctor_then_rollback_at_once_is_byte_identical(tmp_path, house, sig):
    dirs = faults.big_house(house["dirs"], tmp_path / "big-house")
    rng = random.Random(int(os.environ.get("FAULT_SEED", "9")))
    fake = faults.fresh_host(tmp_path / "host", house["template"])
    trial = faults.interrupt_install(fake, dirs, sig, faults.random_delay(rng))
    assert trial.killed, trial
    assert trial.doctor_code == (-9 if sig == signal.SIGKILL else 1), trial  # SIGHUP: it rolled back itself
    assert trial.identical, trial
    assert faults.journal(fake)["status"] in ("rolled-back", "aborted")


# -- the import check (unit: the plan is pure, the run uses this very interpreter) ---------------


def test_what_is_imported_and_what_only_located():
    from doctor.facts import Distribution
    from doctor.shell.transaction.verify import plan_checks

    dists = [Distribution("torch", "2.7.1"), Distribution("torch-npu", "2.7.1"), Distribution("triton-ascend", "3.2.0"),
             Distribution("vllm-ascend", "0.11.0"), Distribution("opencv-python-headless", "4.10")]
    records = {"torch": ["torch/__init__.py", "functorch/__init__.py", "torch-2.7.1.dist-info/METADATA"],
               "torch-npu": ["torch_npu/__init__.py"], "triton-ascend": ["triton/__init__.py"],
               "vllm-ascend": ["vllm_ascend/__init__.py"], "opencv-python-headless": ["cv2/__init__.py"]}
    build = [(c.dist, c.module, c.how) for c in plan_checks(dists, records, npu=False)]
    assert build == [("torch", "torch", "import"), ("opencv-python-headless", "cv2", "import"),
                     ("torch-npu", "torch_npu", "locate"), ("triton-ascend", "triton", "locate"),
                     ("vllm-ascend", "vllm_ascend", "import")]
    assert all(c.how == "import" for c in plan_checks(dists, records, npu=True))


def installed(site: Path, name: str, init: str, record_extra: str = ""):
    from doctor.facts import Distribution

    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(init)
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(f"{name}/__init__.py,,{len(init)}\n{record_extra}")
    return Distribution(name.replace("_", "-"), "1.0", location=str(site), metadata_path=str(info))


def test_the_import_check_tells_broken_from_driver_missing(tmp_path):
    from doctor.shell.transaction.verify import verify

    site = tmp_path / "site"
    ok = installed(site, "good_pkg", "X = 1\n")
    broken = installed(site, "broken_pkg", "raise ImportError('cannot import name ops')\n")
    driver = installed(site, "torch_npu", "raise OSError('libascend_hal.so: cannot open shared object file')\n")
    gone = installed(site, "short_pkg", "Y = 2\n", record_extra="short_pkg/missing.py,,10\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    result = verify(sys.executable, [ok, broken, driver, gone], env, npu=True, timeout=60)
    by = {c.module: c for c in result.checks}
    assert by["good_pkg"].ok and by["short_pkg"].ok
    assert by["broken_pkg"].failed and "cannot import name ops" in by["broken_pkg"].detail
    assert by["torch_npu"].driver_missing and not by["torch_npu"].failed
    assert any("short_pkg/missing.py is missing" in p for p in result.record_problems)
    assert len(result.failed) == 2 and not list(site.rglob("*.pyc"))  # and nothing written
    located = verify(sys.executable, [driver], env, npu=False, timeout=60)
    assert located.checks[0].how == "locate" and located.checks[0].ok and not located.failed


def test_a_hanging_import_is_a_failure_with_its_name(tmp_path):
    from doctor.shell.transaction.verify import verify

    site = tmp_path / "site"
    hang = installed(site, "hang_pkg", "import time\ntime.sleep(60)\n")
    result = verify(sys.executable, [hang], dict(os.environ, PYTHONPATH=str(site)), npu=True, timeout=2)
    assert result.failed and "did not finish its imports within 2s while importing hang_pkg" in result.error


@pytest.mark.parametrize("state", ["none", "empty", "other files"])
def test_rollback_with_nothing_to_roll_back_leaves_the_environment_byte_identical(tmp_path, state):
    """No transaction in the environment (no state directory, an empty one, one without a
    transaction): "nothing to roll back", and not one file or directory made or changed (no lock,
    no state directory, nothing under the XDG state home)."""
    from conftest import _inodes

    from doctor.errors import UsageError
    from doctor.shell.transaction import rollback_last
    from doctor.shell.transaction.target import Target

    prefix = tmp_path / "venv"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python").write_text("")
    if state != "none":
        (prefix / statedir.STATE_NAME).mkdir(mode=0o700)
    if state == "other files":
        (prefix / statedir.STATE_NAME / "transactions").mkdir(mode=0o700)
    env = {"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "xdg-state")}
    target = Target(python=str(prefix / "bin" / "python"), prefix=str(prefix), base_prefix="/usr", roots=[])
    before = (_inodes(tmp_path), sorted(str(p) for p in tmp_path.rglob("*")))
    with pytest.raises(UsageError, match="nothing to roll back"):
        rollback_last(target, env)
    assert (_inodes(tmp_path), sorted(str(p) for p in tmp_path.rglob("*"))) == before
