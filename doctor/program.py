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
