"""The doctor's directories, in one place (the XDG Base Directory layout).

    config  $XDG_CONFIG_HOME/ascend-doctor  (~/.config/...)       smoke.toml, the matrix overlay
    cache   $XDG_CACHE_HOME/ascend-doctor   (~/.cache/...)        rows, the catalogue, build logs
    state   $XDG_STATE_HOME/ascend-doctor   (~/.local/state/...)  transactions of a read-only env

Each takes the environment to read (a mapping, ``os.environ`` when None). The home directory is
$HOME, else the account's (the password database): never a literal ``~``, which would name a
directory called "~" under the working directory. A relative or empty value of any of these is
ignored, as the XDG spec says: it would name a directory below wherever the doctor was started
(a checkout someone else wrote, holding a matrix overlay or a cache entry of their choosing).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

APP = "ascend-doctor"


def _env(env: Optional[Mapping[str, str]]) -> Mapping[str, str]:
    return os.environ if env is None else env


def _absolute(env: Optional[Mapping[str, str]], name: str) -> Optional[Path]:
    value = _env(env).get(name) or ""
    return Path(value) if os.path.isabs(value) else None


def _account_home() -> Path:
    """The process's $HOME when absolute (what ``~`` means to the user's shell), else the
    account's entry in the password database, else /."""
    found = os.path.expanduser("~")
    if not os.path.isabs(found):
        try:
            import pwd

            found = pwd.getpwuid(os.geteuid()).pw_dir
        except (ImportError, KeyError, OSError):
            found = "/"
    return Path(found if os.path.isabs(found) else "/")


def home(env: Optional[Mapping[str, str]] = None) -> Path:
    return _absolute(env, "HOME") or _account_home()


def config_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return _absolute(env, "XDG_CONFIG_HOME") or home(env) / ".config"


def cache_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return _absolute(env, "XDG_CACHE_HOME") or home(env) / ".cache"


def state_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return _absolute(env, "XDG_STATE_HOME") or home(env) / ".local" / "state"


def config_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return config_home(env) / APP


def cache_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return cache_home(env) / APP


def state_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return state_home(env) / APP
