"""Which pip or uv carries a plan out (I/O at the edge: PATH lookup and the user's pip
configuration); how their commands are spelled is doctor/shell/installer.py."""
from __future__ import annotations

import shutil
import sys
from typing import Mapping, Optional

from packaging.version import Version

from doctor.errors import UsageError
from doctor.facts import Facts
from doctor.shell.index import IndexConfig, IndexFetchError, pip_index_config
from doctor.shell.installer import Choice, choose


def detect_installer(kind: str, facts: Facts, env: Mapping[str, str], doctor_python: str = sys.executable) -> Choice:
    python = (facts.python.executable if facts.python and facts.python.executable else None) or "python3"
    has_pip = bool(facts.packages and "pip" in facts.packages.dists)
    if not has_pip:
        _doctor_pip_can_target(python)
    uv = shutil.which("uv", path=env.get("PATH")) if kind == "uv" else None
    cfg: Optional[IndexConfig] = None
    if kind == "uv":
        try:
            cfg = pip_index_config(env, prefix=facts.python.prefix if facts.python else None)
        except IndexFetchError as e:
            raise UsageError(str(e))
    try:
        return choose(kind, python, doctor_python, has_pip, uv, cfg)
    except LookupError as e:
        raise UsageError(str(e))


def _doctor_pip_can_target(python: str) -> None:
    """pip's --python option (run pip for another interpreter) exists from pip 22.3 on."""
    from importlib import metadata

    try:
        version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        raise UsageError(f"{python} has no pip and neither has the doctor's interpreter; "
                         f"add one: {python} -m ensurepip")
    if Version(version) < Version("22.3"):
        raise UsageError(f"{python} has no pip and the doctor's pip {version} is older than 22.3 (no --python); "
                         f"add one: {python} -m ensurepip")
