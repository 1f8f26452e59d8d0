"""State that cannot be turned against its owner (issue 21, items 1, 2, 3 and 16). The state
directory travels with the environment (a copied venv, a Docker layer, a prefix another user can
write) and `rollback` often runs as root: each test plants what an attacker (or a crash) could
leave there, runs the real doctor on a real venv, and checks that nothing outside the
environment is written, deleted or killed, and that what cannot be trusted is reported with what
to do by hand."""
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakehost import REPO, FakeHost
from fakehost import wheelhouse as wh
import doctor_fork

TXN = "20250101-120000-4242"


@pytest.fixture
def fake(tmp_path):
    host = FakeHost(tmp_path / "host")
    host.venv({})
    return host


def doctor(fake, *args, timeout=120):
    env = dict(fake.env, PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "doctor", *args, "--python", str(fake.python)]
    return doctor_fork.run(argv, cwd=fake.workdir, env=env, capture_output=True, text=True, timeout=timeout)


def venv(fake) -> Path:
    return fake.python.parent.parent


def plant(fake, status="installing", name=TXN, **fields) -> Path:
    """A transaction directory as the doctor writes one (journal.json valid for its schema)."""
    d = venv(fake) / ".ascend-doctor" / "transactions" / name
    d.mkdir(parents=True)
    (d / "backup").mkdir()
    journal = {"id": name, "status": status, "started": "2025-01-01T12:00:00", "pid": 4242, "pid_start": "1",
               "python": str(fake.python), "prefix": str(venv(fake)), "roots": [str(fake.site)], "before": [],
               "backups": {}, "backup_dir": str(d / "backup"), "rollback_kind": "undo", "steps": [], "current": None}
    journal.update(fields)
    (d / "journal.json").write_text(json.dumps(journal))
    tracked = [str(fake.site), str(fake.python.parent)]
    (d / "snapshot.json").write_text(json.dumps({"roots": tracked, "files": [], "dirs": tracked}))
    return d


def files_of(d: Path) -> dict:
    return {str(p): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def victims(tmp_path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.conf").write_text("keep me\n")
    (outside / "b.conf").write_text("and me\n")
    return outside


# -- item 1: a planted unfinished transaction never reaches outside the environment ----------


def test_planted_snapshot_roots_never_make_rollback_delete_or_write_outside(fake, tmp_path):
    outside = victims(tmp_path)
    before = files_of(outside)
    attacker = tmp_path / "attacker"
    (attacker / str(outside / "a.conf").lstrip("/")).parent.mkdir(parents=True)
    (attacker / str(outside / "a.conf").lstrip("/")).write_text("PWNED\n")
    d = plant(fake, backups={"x": {"version": None, "files": [str(outside / "a.conf")]}}, backup_dir=str(attacker))
    (d / "snapshot.json").write_text(json.dumps({"roots": [str(outside)], "files": [], "dirs": [str(outside)]}))
    proc = doctor(fake, "rollback", "--yes")
    assert files_of(outside) == before, proc.stderr
    assert proc.returncode == 2 and "cannot be trusted" in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == shlex.join(["mv", "--", str(d), str(d) + ".damaged"])
    assert json.loads((d / "journal.json").read_text())["status"] == "installing"  # never acted on


def test_planted_backups_of_paths_outside_are_never_restored(fake, tmp_path):
    outside = victims(tmp_path)
    before = files_of(outside)
    d = plant(fake, backups={"x": {"version": None, "files": [str(outside / "a.conf")]}})
    planted = d / "backup" / str(outside / "a.conf").lstrip("/")
    planted.parent.mkdir(parents=True)
    planted.write_text("PWNED\n")
    proc = doctor(fake, "rollback", "--yes")
    assert files_of(outside) == before
    assert proc.returncode == 2 and "outside this environment" in proc.stderr, proc.stderr


def test_a_journal_made_for_another_environment_is_not_acted_on(fake, tmp_path):
    """A venv copied elsewhere (or a Docker layer) brings its state: its journal names the old
    place's site directories, which are not this environment's."""
    other = tmp_path / "elsewhere" / "lib" / "python3" / "site-packages"
    other.mkdir(parents=True)
    (other / "precious.py").write_text("x = 1\n")
    d = plant(fake, roots=[str(other)], prefix=str(tmp_path / "elsewhere"))
    (d / "snapshot.json").write_text(json.dumps({"roots": [str(other)], "files": [], "dirs": [str(other)]}))
    proc = doctor(fake, "rollback", "--yes")
    assert (other / "precious.py").read_text() == "x = 1\n"
    assert proc.returncode == 2 and "was made for" in proc.stderr, proc.stderr


# -- item 2: only a process group the doctor can prove is its own is killed ---------------------


def sleeper():
    return subprocess.Popen(["sleep", "60"], start_new_session=True)


def start_time(pid):
    with open(f"/proc/{pid}/stat", "rb") as fh:
        data = fh.read()
    return data[data.rfind(b")") + 2:].split()[19].decode()


@pytest.mark.parametrize("how", ["pgid-of-another-group", "leader-without-marker"])
def test_a_planted_current_process_never_gets_another_group_killed(fake, how):
    victim, decoy = sleeper(), sleeper()
    try:
        if how == "pgid-of-another-group":  # a live pid with its true start time, and someone else's group
            current = {"pid": decoy.pid, "pgid": victim.pid, "start": start_time(decoy.pid)}
        else:  # a real group leader with its start time, but not one the doctor started
            current = {"pid": victim.pid, "pgid": victim.pid, "start": start_time(victim.pid)}
        d = plant(fake, status="downloading", current=current)
        started = time.monotonic()
        proc = doctor(fake, "rollback", "--yes")
        assert victim.poll() is None and decoy.poll() is None, "an unrelated process group was killed"
        assert proc.returncode in (0, 3, 4), proc.stderr
        assert json.loads((d / "journal.json").read_text())["status"] == "aborted"  # closed: it changed nothing
        assert time.monotonic() - started < 20  # not waited for either: it is not the transaction's
    finally:
        for p in (victim, decoy):
            p.kill()
            p.wait()


# -- item 3: state files are never written through planted links -------------------------------


def test_a_planted_lock_symlink_is_refused_not_truncated(fake, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"v" * 2300)
    state = venv(fake) / ".ascend-doctor"
    state.mkdir()
    os.symlink(victim, state / "lock")
    # with no transaction there is nothing to roll back: the lock is not even opened
    proc = doctor(fake, "rollback", "--yes")
    assert victim.read_bytes() == b"v" * 2300
    assert proc.returncode == 2 and "nothing to roll back" in proc.stderr, proc.stderr
    plant(fake)  # one to finish: rollback takes the lock, and refuses the planted one
    proc = doctor(fake, "rollback", "--yes")
    assert victim.read_bytes() == b"v" * 2300
    assert proc.returncode == 2 and "is a symbolic link" in proc.stderr, proc.stderr


@pytest.mark.parametrize("mode", [0o777, 0o775])
def test_a_state_directory_others_can_write_is_refused_with_the_command_that_fixes_it(fake, mode):
    d = plant(fake)
    state = venv(fake) / ".ascend-doctor"
    os.chmod(state, mode)
    proc = doctor(fake, "rollback", "--yes")
    assert proc.returncode == 2 and "can be written by others" in proc.stderr, proc.stderr
    command = proc.stderr.strip().splitlines()[-1]
    assert command == shlex.join(["chmod", "go-w", "--", str(state)])
    assert json.loads((d / "journal.json").read_text())["status"] == "installing"
    subprocess.run(command, shell=True, check=True)
    again = doctor(fake, "rollback", "--yes")
    assert "can be written by others" not in again.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the state directory to another user")
def test_a_state_directory_of_another_user_is_refused(fake):
    d = plant(fake)
    state = venv(fake) / ".ascend-doctor"
    for p in [state, *state.rglob("*")]:
        os.lchown(p, 12345, 12345)
    proc = doctor(fake, "rollback", "--yes")
    assert proc.returncode == 2 and "belongs to uid 12345" in proc.stderr, proc.stderr
    assert json.loads((d / "journal.json").read_text())["status"] == "installing"


# -- item 16: a damaged journal of an unfinished transaction blocks, with the command that clears it


def test_a_truncated_journal_blocks_rollback_and_fix_until_set_aside(fake):
    d = plant(fake)
    text = (d / "journal.json").read_text()
    (d / "journal.json").write_text(text[: len(text) // 2])  # a crash, a full disk, or planted
    proc = doctor(fake, "rollback", "--yes")
    assert proc.returncode == 2 and "cannot be trusted" in proc.stderr and "nothing to roll back" not in proc.stderr
    command = proc.stderr.strip().splitlines()[-1]
    assert command == shlex.join(["mv", "--", str(d), str(d) + ".damaged"])
    fix = doctor(fake, "fix", "--apply", "--yes", "--no-smoke", "--offline", "--root", str(fake.root))
    assert fix.returncode == 2 and fix.stderr.strip().splitlines()[-1] == command, fix.stderr[-2000:]
    subprocess.run(command, shell=True, check=True, cwd="/")  # runs as printed
    after = doctor(fake, "rollback", "--yes")
    assert after.returncode == 2 and "nothing to roll back" in after.stderr, after.stderr


# -- end to end: real pip against the wheelhouse --------------------------------------------------

RECORD_FSYNC = """
import os, sys
log = open(os.environ["FSYNC_LOG"], "a", buffering=1)
real_fsync = os.fsync


def fsync(fd):
    real_fsync(fd)
    try:
        log.write("sync " + os.readlink(f"/proc/self/fd/{fd}") + "\\n")
    except OSError:
        pass


os.fsync = fsync
from doctor.shell.runtime import proc
real_stream = proc.stream


def stream(argv, *a, **k):
    log.write("run " + " ".join(map(str, argv)) + "\\n")
    return real_stream(argv, *a, **k)


proc.stream = stream
from doctor.cli.main import main
main(sys.argv[1:])
"""


@pytest.mark.slow  # ~0.5 s of CPU or more: real pip against the wheelhouse
def test_snapshot_backups_and_journal_are_synced_before_the_install_runs_and_links_are_not_followed(tmp_path, house):
    fake = FakeHost(tmp_path / "host")
    wh.SCENARIOS["seed_001"][0](fake, house["template"])
    state = fake.python.parent.parent / ".ascend-doctor"
    state.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, state / "constraints.txt")
    os.symlink(victim, state / "last")
    log = tmp_path / "fsync.log"
    dirs = [house["dirs"][k] for k in (wh.PYPI, wh.CPU, wh.ASCEND)]
    argv = [sys.executable, "-c", RECORD_FSYNC, "fix", "--apply", "--yes", "--no-smoke", *fake.args()]
    proc = subprocess.run(argv, env=dict(wh.pip_env(fake.env, dirs), PYTHONPATH=str(REPO), FSYNC_LOG=str(log)),
                          cwd=fake.workdir, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 4), proc.stderr[-2000:]
    assert victim.read_text() == "precious\n"  # the pins and the last id were not written through the links
    assert not (state / "constraints.txt").is_symlink() and "vllm" in (state / "constraints.txt").read_text()
    lines = log.read_text().splitlines()
    first_install = next(i for i, line in enumerate(lines) if line.startswith("run ") and " install " in line)
    synced = {line[5:] for line in lines[:first_install] if line.startswith("sync ")}
    txn = next(p for p in (state / "transactions").iterdir())
    assert str(txn / "snapshot.json") in synced
    backups = [str(p) for p in (txn / "backup").rglob("*") if p.is_file()]
    assert backups and set(backups) <= synced, sorted(set(backups) - synced)[:5]
    journal_syncs = [i for i, line in enumerate(lines[:first_install]) if line.startswith("sync ") and ".journal.json" in line]
    assert journal_syncs, "the journal was not synced before the install phase"


def test_rollback_says_nothing_to_roll_back_before_it_asks_for_yes(fake):
    """`rollback </dev/null` (no --yes, no terminal) with no transaction: "nothing to roll back",
    exit 2 (docs/fix.md), not a request for a confirmation of nothing; with one to finish, the
    confirmation is still asked for."""
    env = dict(fake.env, PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "doctor", "rollback", "--python", str(fake.python)]
    proc = doctor_fork.run(argv, cwd=fake.workdir, env=env, capture_output=True, text=True, timeout=120, input="")
    assert proc.returncode == 2 and "nothing to roll back" in proc.stderr and "--yes" not in proc.stderr, proc.stderr
    assert not (venv(fake) / ".ascend-doctor").exists()
    plant(fake)
    proc = doctor_fork.run(argv, cwd=fake.workdir, env=env, capture_output=True, text=True, timeout=120, input="")
    assert proc.returncode == 2 and "pass --yes" in proc.stderr, proc.stderr



def test_a_journal_string_that_is_not_utf8_is_saved_as_its_escape_never_a_crash(tmp_path):
    """A lone surrogate in a journal's data (JSON allows ``\\udc9b``, so a crafted journal reads
    back with one; a path that was not UTF-8 decodes to one): saving the journal writes it as
    its escape, UTF-8 text that reads back as the same string, never an UnicodeEncodeError (the
    rollback of such a journal was an internal error)."""
    from doctor.shell.transaction.journal import Journal

    d = tmp_path / "txn"
    d.mkdir()
    weird = "/srv/env/lib/vllm-0.9.1\udc9b2J\udcff.dist-info \ud800"
    j = Journal(d, {"id": "x", "status": "committed", "roots": [weird]})
    j.save()
    written = (d / "journal.json").read_bytes()
    written.decode("utf-8")
    assert json.loads(written)["roots"] == [weird]
