"""How printed commands start the doctor.

Rules and plans write their follow-up commands as ``ascend-doctor ...`` (pure: they know nothing
of how the doctor was started). Those words are only right when the ``ascend-doctor`` a shell
finds on PATH is this doctor; otherwise (a venv nobody activated, ``python -m doctor``) the
command line spells the running entry point instead, the way pip commands name the doctor's own
interpreter. The command line (doctor/cli/invocation.py) decides once per run and sets it here;
every Command is spelled through :func:`spelled` when it is shown or written as JSON.
"""
from __future__ import annotations

from typing import Sequence, Tuple

DOCTOR = "ascend-doctor"

_program: Tuple[str, ...] = (DOCTOR,)


def use(program: Sequence[str]) -> None:
    """Spell ``ascend-doctor`` as ``program`` (argv words) from now on."""
    global _program
    _program = tuple(program) or (DOCTOR,)


def program() -> Tuple[str, ...]:
    return _program


def spelled(argv: Sequence[str]) -> Tuple[str, ...]:
    """``argv`` as the user must type it: a leading ``ascend-doctor`` becomes the program."""
    if argv and argv[0] == DOCTOR:
        return _program + tuple(argv[1:])
    return tuple(argv)


def spelled_text(command: str) -> str:
    """A shell line that starts with ``ascend-doctor`` (a step's ``command``), spelled the same way."""
    import shlex

    if command == DOCTOR or command.startswith(DOCTOR + " "):
        return shlex.join(_program) + command[len(DOCTOR):]
    return command


# The optional extras of pyproject.toml ([project.optional-dependencies]), for the install hints:
# the doctor is not on PyPI, so ``pip install 'ascend-doctor[image]'`` cannot work; the hint
# installs the extra's requirements into the doctor's own environment instead
# (tests/test_install_hints.py keeps these the same as pyproject.toml's).
IMAGE_EXTRA = ("docker>=6", "zstandard>=0.19; python_version < '3.14'")
FLEET_EXTRA = ("ray>=2.9",)


def requirements(extra: Sequence[str], names: Sequence[str] = ()) -> Tuple[str, ...]:
    """The requirements of ``extra`` whose marker holds for this Python (only those named
    ``names``, when given), without their markers."""
    import sys

    out = []
    for req in extra:
        spec, _, marker = (p.strip() for p in req.partition(";"))
        if marker and not _marker_holds(marker, sys.version_info[:2]):
            continue
        name = spec.split(">")[0].split("=")[0].split("<")[0].split("!")[0].split("~")[0].strip()
        if names and name not in names:
            continue
        out.append(spec)
    return tuple(out)


def _marker_holds(marker: str, version: Tuple[int, int]) -> bool:
    """The one marker form the extras use: ``python_version < 'X.Y'`` (anything else holds)."""
    import re

    m = re.fullmatch(r"python_version\s*<\s*['\"](\d+)\.(\d+)['\"]", marker)
    return version < (int(m.group(1)), int(m.group(2))) if m else True


def own_pip_install(*requirements: str) -> str:
    """A pip command that installs ``requirements`` into the doctor's own environment, as one
    shell line that runs as printed in any shell (no venv need be active): the doctor's
    interpreter, quoted, ``-m pip install``."""
    import shlex
    import sys

    return shlex.join([sys.executable or "python3", "-m", "pip", "install", *requirements])
