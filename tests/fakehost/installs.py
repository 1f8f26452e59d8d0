"""Virtualenvs and installs for test fixtures (not for the tests of pip itself): with uv when the
test extras brought it (seconds, where venv + pip take tens of seconds and most of a core), from
the same indexes pip is configured with; with venv + pip otherwise."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional, Sequence


def uv_binary() -> Optional[str]:
    """uv comes with the test extras, next to the interpreter running the tests."""
    return shutil.which("uv") or next((str(p) for p in [Path(sys.executable).parent / "uv"] if p.exists()), None)


def uv_index_flags() -> List[str]:
    """pip's index configuration (pip.conf, PIP_*) as uv flags, the way `fix --installer uv`
    reads it; pip takes the best version over all indexes, uv does so with unsafe-best-match."""
    from doctor.shell.install.index import pip_index_config
    from doctor.shell.install.installer import uv_flags

    flags = uv_flags(pip_index_config(dict(os.environ)))
    if "--extra-index-url" in flags and "--index-strategy" not in flags:
        flags += ["--index-strategy", "unsafe-best-match"]
    return flags


def make_venv(python: str, dest: Path, with_pip: bool = True) -> Path:
    """A virtualenv of ``python`` at ``dest`` (emptied first); its interpreter."""
    uv = uv_binary()
    if uv:
        argv = [uv, "venv", "--quiet", "--clear", "--python", python, str(dest)] + (["--seed"] if with_pip else [])
        subprocess.run(argv, check=True, capture_output=True, timeout=300)
    else:
        argv = [python, "-m", "venv", "--clear", str(dest)] + ([] if with_pip else ["--without-pip"])
        subprocess.run(argv, check=True, capture_output=True, timeout=300)
    return dest / "bin" / "python"


def install(python: Path, specs: Sequence[str], timeout: float = 1800, compile: bool = True) -> None:
    """Install ``specs`` (with their dependencies) into the venv of ``python``; ``compile``:
    byte-compiled as pip leaves them (for venvs imported from again and again, by interpreters
    that may not write bytecode themselves)."""
    uv = uv_binary()
    if uv:
        argv = [uv, "pip", "install", "--quiet", "--python", str(python), *specs, *uv_index_flags()]
        argv += ["--compile-bytecode"] if compile else []
    else:
        argv = [str(python), "-m", "pip", "install", "--quiet", *specs] + ([] if compile else ["--no-compile"])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(argv)}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
