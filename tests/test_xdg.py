"""doctor/xdg.py: the one place the doctor's config, cache and state directories are computed."""
import os
import re
from pathlib import Path

from doctor import xdg

ROOT = Path(__file__).resolve().parents[1]


def test_the_variables_win_then_home():
    env = {"HOME": "/h", "XDG_CONFIG_HOME": "/c", "XDG_CACHE_HOME": "/k", "XDG_STATE_HOME": "/s"}
    assert (xdg.config_dir(env), xdg.cache_dir(env), xdg.state_dir(env)) == \
        (Path("/c/ascend-doctor"), Path("/k/ascend-doctor"), Path("/s/ascend-doctor"))
    assert (xdg.config_dir({"HOME": "/h"}), xdg.cache_dir({"HOME": "/h"}), xdg.state_dir({"HOME": "/h"})) == \
        (Path("/h/.config/ascend-doctor"), Path("/h/.cache/ascend-doctor"), Path("/h/.local/state/ascend-doctor"))
    assert xdg.config_home({"HOME": "/h", "XDG_CONFIG_HOME": ""}) == Path("/h/.config")  # empty is unset


def test_no_home_is_the_accounts_home_never_a_literal_tilde():
    from doctor.usecases.smoke import default_config_path

    got = default_config_path({})
    assert got == Path(os.path.expanduser("~")) / ".config" / "ascend-doctor" / "smoke.toml"
    assert "~" not in str(got) and got.is_absolute()


def test_no_other_module_computes_them():
    pattern = re.compile(r"XDG_(CONFIG|CACHE|STATE|DATA)_HOME|expanduser\(")
    found = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "doctor").rglob("*.py")) if p.name != "xdg.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line) and not line.lstrip().startswith(("#", '"', "XDG_"))
             and "$XDG_" not in line]
    assert not found, found


def test_relative_or_empty_values_are_ignored_as_the_spec_says():
    """A relative value would name a directory below wherever the doctor was started: a
    checkout holding ``.config/ascend-doctor/x.toml`` would overlay the matrix (issue 21)."""
    account = xdg.home({})
    assert account.is_absolute()
    for bad in ("", ".config", "rel/dir", "~", "./x"):
        env = {"HOME": "/h", "XDG_CONFIG_HOME": bad, "XDG_CACHE_HOME": bad, "XDG_STATE_HOME": bad}
        assert (xdg.config_dir(env), xdg.cache_dir(env), xdg.state_dir(env)) == \
            (Path("/h/.config/ascend-doctor"), Path("/h/.cache/ascend-doctor"), Path("/h/.local/state/ascend-doctor")), bad
        got = xdg.home({"HOME": bad})
        assert got.is_absolute() and got == account, bad


def test_a_relative_home_in_the_process_environment_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", "rel")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    assert xdg.config_dir().is_absolute() and not str(xdg.config_dir()).startswith(str(tmp_path))
