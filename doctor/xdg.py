"""The doctor's directories, in one place (the XDG Base Directory layout).

    config  $XDG_CONFIG_HOME/ascend-doctor  (~/.config/...)       smoke.toml, the matrix overlay
    cache   $XDG_CACHE_HOME/ascend-doctor   (~/.cache/...)        rows, the catalogue, build logs
    state   $XDG_STATE_HOME/ascend-doctor   (~/.local/state/...)  transactions of a read-only env

Each takes the environment to read (a mapping, ``os.environ`` when None). The home directory is
$HOME, else the account's (``os.path.expanduser``): never a literal ``~``, which would name a
directory called "~" under the working directory.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Optional

APP = "ascend-doctor"


def _env(env: Optional[Mapping[str, str]]) -> Mapping[str, str]:
    return os.environ if env is None else env


def home(env: Optional[Mapping[str, str]] = None) -> Path:
    return Path(_env(env).get("HOME") or os.path.expanduser("~"))


def config_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return Path(_env(env).get("XDG_CONFIG_HOME") or home(env) / ".config")


def cache_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return Path(_env(env).get("XDG_CACHE_HOME") or home(env) / ".cache")


def state_home(env: Optional[Mapping[str, str]] = None) -> Path:
    return Path(_env(env).get("XDG_STATE_HOME") or home(env) / ".local" / "state")


def config_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return config_home(env) / APP


def cache_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return cache_home(env) / APP


def state_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    return state_home(env) / APP
