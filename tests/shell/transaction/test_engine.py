"""The transaction engine on its own, on temporary directories (as pip tests its uninstall
stash): a fake environment (a prefix with a site-packages directory and distributions in it),
no pip and no CLI. Every change is undone byte for byte (contents, modes, times); a crash in
the middle is finished by rollback; nothing outside the environment's roots is ever touched;
state that cannot be trusted is refused."""
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from doctor.errors import UsageError
from doctor.shell.transaction import journal as J
from doctor.shell.transaction import placing, statedir
from doctor.shell.transaction.engine import Transaction
from doctor.shell.transaction.files import has_record, restore_files
from doctor.shell.transaction.roots import Roots
from doctor.shell.transaction.rollback import rollback_last
from doctor.shell.transaction.runner import StepFailed
from doctor.shell.transaction.states import TxnState
from doctor.shell.transaction.target import Target


def tree(*dirs: Path) -> dict:
    out = {}
    for d in dirs:
        for p in sorted(Path(d).rglob("*")):
            if ".ascend-doctor" in p.parts:
                continue
            st = os.lstat(p)
            if p.is_symlink():
                out[str(p)] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p)] = (hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
            else:
                out[str(p)] = ("dir",)
    return out


def dist(site: Path, name: str, version: str, files: dict) -> None:
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    record = []
    for rel, text in files.items():
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))
        record.append(f"{rel},,")
    record += [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n")


@pytest.fixture
def env(tmp_path):
    prefix = tmp_path / "env"
    site = prefix / "lib" / "python3.11" / "site-packages"
    dist(site, "alpha", "1.0", {"alpha/__init__.py": "A = 1\n", "alpha/core.py": "def f():\n    return 1\n"})
    dist(site, "beta", "2.0", {"beta/__init__.py": "B = 2\n"})
    os.chmod(site / "alpha" / "core.py", 0o640)
    (prefix / "bin").mkdir()
    target = Target(python=str(prefix / "bin" / "python"), prefix=str(prefix), base_prefix="/usr", roots=[str(site)])
    return target, prefix, site


def stage_tree(tmp_path: Path, prefix: Path, site: Path) -> Path:
    """A staged ``make install DESTDIR=stage`` of a Mooncake-like build: a Python package and
    native files under the prefix."""
    stage = tmp_path / "stage"
    for dest, data in ((site / "mooncake" / "__init__.py", b"NEW = 1\n"), (site / "mooncake" / "engine.so", b"\x7fELF"),
                       (prefix / "lib" / "libtransfer_engine.so", b"new lib"), (prefix / "bin" / "mooncake_master", b"#!x")):
        p = stage / str(dest).lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return stage


def old_mooncake(prefix: Path, site: Path) -> None:
    (site / "mooncake").mkdir()
    (site / "mooncake" / "__init__.py").write_text("OLD = 1\n")
    (site / "mooncake" / "stale.py").write_text("gone after the swap\n")
    (prefix / "lib").mkdir(exist_ok=True)
    (prefix / "lib" / "libtransfer_engine.so").write_bytes(b"old lib")
    os.symlink("libtransfer_engine.so", prefix / "lib" / "libtransfer_engine.so.0")


def test_removing_distributions_and_undoing_is_byte_identical(env):
    target, prefix, site = env
    before = tree(prefix)
    with Transaction.open(target, {}) as txn:
        txn.start()
        assert has_record(txn.before["alpha"])
        txn.begin(["alpha"])
        assert txn.journal.status == TxnState.INSTALLING
        txn.remove(["alpha"])
        assert not (site / "alpha").exists() and not list(site.glob("alpha-*"))
        (site / "half-written.py").write_text("a killed pip's file\n")
        assert txn.fail("test") == []
    assert tree(prefix) == before


def test_placing_a_staged_tree_is_undone_and_rolled_back_later(env, tmp_path):
    target, prefix, site = env
    old_mooncake(prefix, site)
    before = tree(prefix)
    with Transaction.open(target, {}) as txn:
        txn.start()
        txn.begin([])
        placed = txn.place(stage_tree(tmp_path, prefix, site))
        assert str(site / "mooncake") in placed and not (site / "mooncake" / "stale.py").exists()
        assert (prefix / "lib" / "libtransfer_engine.so").read_bytes() == b"new lib"
        assert txn.fail("test") == []
    assert tree(prefix) == before
    # committed, then undone by rollback later
    with Transaction.open(target, {}) as txn:
        txn.start()
        txn.begin([])
        txn.place(stage_tree(tmp_path / "again", prefix, site))
        txn.commit()
    assert tree(prefix) != before
    result = rollback_last(target, {})
    assert tree(prefix) == before and result.txn_id
    assert not list(prefix.rglob("*ascend-doctor-old*"))


def test_a_crash_while_placing_is_finished_by_rollback(env, tmp_path, monkeypatch):
    target, prefix, site = env
    old_mooncake(prefix, site)
    before = tree(prefix)
    real, count = placing.put, [0]

    def put_then_crash(src, dest, whole):
        real(src, dest, whole)
        count[0] += 1
        if count[0] == 2:
            raise SystemExit("the doctor is gone")  # nothing after this runs: no undo, no journal update

    monkeypatch.setattr(placing, "put", put_then_crash)
    with pytest.raises(SystemExit):
        with Transaction.open(target, {}) as txn:
            txn.start()
            txn.begin([])
            txn.place(stage_tree(tmp_path, prefix, site))
    monkeypatch.setattr(placing, "put", real)
    assert tree(prefix) != before
    with pytest.raises(UsageError, match="roll it back first"):
        with Transaction.open(target, {}):
            pass
    rollback_last(target, {})
    assert tree(prefix) == before


def test_a_build_placing_outside_the_environment_is_refused_before_anything_is_written(env, tmp_path):
    target, prefix, site = env
    outside = tmp_path / "outside"
    stage = tmp_path / "stage"
    (stage / str(site / "mooncake").lstrip("/")).mkdir(parents=True)
    (stage / str(site / "mooncake" / "__init__.py").lstrip("/")).write_text("x")
    (stage / str(outside / "evil.so").lstrip("/")).parent.mkdir(parents=True)
    (stage / str(outside / "evil.so").lstrip("/")).write_bytes(b"x")
    before = tree(prefix)
    with Transaction.open(target, {}) as txn:
        txn.start()
        txn.begin([])
        with pytest.raises(StepFailed, match="outside the places"):
            txn.place(stage)
        assert txn.fail("test") == []
    assert not outside.exists() and tree(prefix) == before


def test_restore_never_writes_through_a_link_that_leads_out_of_the_environment(env, tmp_path):
    target, prefix, site = env
    outside = tmp_path / "outside"
    outside.mkdir()
    backup = tmp_path / "backup"
    src = backup / str(site / "evil" / "x.py").lstrip("/")
    src.parent.mkdir(parents=True)
    src.write_text("PWNED\n")
    os.symlink(outside, site / "evil")  # site-packages/evil -> outside
    roots = target.allowed()
    assert not roots.inside(str(site / "evil" / "x.py")) and roots.inside(str(site / "alpha" / "core.py"))
    assert not roots.inside(str(site / ".." / ".." / "x")) and not roots.inside("relative/x")
    assert restore_files([str(site / "evil" / "x.py")], backup, roots) == [str(site / "evil" / "x.py")]
    assert list(outside.iterdir()) == []


def test_the_roots_of_an_environment_are_its_own():
    roots = Roots.of(["/v/lib/python3.11/site-packages"], "/v", "/v/bin")
    assert roots.tracked == ("/v/lib/python3.11/site-packages", "/v/bin")
    assert roots.inside("/v/lib/python3.11/site-packages/torch/__init__.py")
    assert roots.inside("/usr/local/lib/libtransfer_engine.so")  # a source build's default prefix
    assert not roots.inside("/etc/passwd") and not roots.inside("/v") and not roots.inside("/vx/lib/a")


@pytest.mark.parametrize("damage, words", [
    (lambda t: t[: len(t) // 2], "damaged"),
    (lambda t: t.replace('"installing"', '"pwned"'), "not a transaction state"),
    (lambda t: t.replace('"before": []', '"before": "x"'), "'before'"),
    (lambda t: t.replace('"id": "20250101-120000-1"', '"id": "other"'), "not the name of its directory"),
    (lambda t: t.replace('"backups": {}, ', ''), "has no backups"),
    (lambda t: t.replace('"current": null', '"current": {"pid": "1", "pgid": 1}'), "'current'"),
])
def test_a_journal_that_does_not_fit_its_schema_is_damaged(tmp_path, damage, words):
    d = tmp_path / "transactions" / "20250101-120000-1"
    d.mkdir(parents=True)
    data = {"id": d.name, "status": "installing", "before": [], "backups": {}, "roots": [], "prefix": "/p",
            "current": None}
    text = json.dumps(data)
    (d / "journal.json").write_text(text)
    assert isinstance(J.read(d), J.Journal)
    (d / "journal.json").write_text(damage(text))
    found = J.read(d)
    assert isinstance(found, J.Damaged) and words in found.reason, found
    assert found.message().endswith(f"mv -- {d} {d}.damaged")


def test_state_files_are_never_followed_or_read_past_their_cap(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("secret")
    os.symlink(victim, tmp_path / "link")
    with pytest.raises(statedir.UntrustedState, match="symbolic link"):
        statedir.read_state(tmp_path / "link", 100)
    with pytest.raises(statedir.UntrustedState, match="symbolic link"):
        statedir.write_new(tmp_path / "link", b"x")
    statedir.replace_file(tmp_path / "link", b"new")  # replaces the link itself
    assert victim.read_text() == "secret" and (tmp_path / "link").read_text() == "new"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(statedir.UntrustedState, match="not a regular file"):
        statedir.read_state(tmp_path / "fifo", 100)  # and it does not hang
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(statedir.UntrustedState, match="larger than 100 bytes"):
        statedir.read_state(tmp_path / "big", 100)
    assert statedir.read_state(tmp_path / "none", 100) is None
