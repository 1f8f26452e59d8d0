"""The command the user ran, rebuilt from its parsed options, so that what the doctor suggests next
("carry it out": ``--apply``; "or prefer the other way": ``--prefer keep-cann``) is the same
command on the same target with one option changed, runnable as printed."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from doctor.findings import Command, cmd
from doctor.i18n import Text

Rerun = Callable[..., Command]
# how the output looks, not what is done: a suggested command leaves them to the reader
PRESENTATION = ("as_json", "lang", "verbose")


def _option(param) -> Optional[str]:
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or list(param.opts) or [None])[0]


def rebuild(ctx, changes: Dict[str, Any]) -> List[str]:
    """argv for ``ctx``'s command with ``changes`` applied (parameter name -> value; None or False
    removes an option). Options left at their defaults are not repeated."""
    argv: List[str] = []
    for param in ctx.command.params:
        if param.param_type_name != "option" or param.name is None or param.name in PRESENTATION:
            continue
        value = changes[param.name] if param.name in changes else ctx.params.get(param.name)
        if value is None or value is False or value == () or value == []:
            continue
        if param.name not in changes and value == param.default:
            continue
        opt = _option(param)
        if opt is None:
            continue
        if getattr(param, "is_flag", False):
            if value:
                argv.append(opt)
            continue
        for v in (value if getattr(param, "multiple", False) else [value]):
            argv += [opt, str(v)]
    return argv


def rerun_of(ctx) -> Rerun:
    """``rerun(label=None, **changes)``: this command again with ``changes``."""
    path = ctx.command_path.split()

    def rerun(label: Optional[Text] = None, **changes: Any) -> Command:
        return cmd(*path, *rebuild(ctx, changes), label=label)

    return rerun



def _which(name: str, path: str) -> Optional[str]:
    """``shutil.which(name, path=path)`` on POSIX, for a bare name (shutil's import, ~2 ms, is
    the only one a check would make for it): the first PATH entry, in order and once each, that
    holds an executable that is not a directory."""
    import os

    seen = set()
    for d in path.split(os.pathsep):
        if d in seen:
            continue
        seen.add(d)
        candidate = os.path.join(d, name)
        if os.path.exists(candidate) and os.access(candidate, os.F_OK | os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def _same_file(a: str, b: str) -> bool:
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def entry_point(argv0: str, executable: str) -> List[str]:
    """The running doctor as an absolute command: the console script that was started, else the
    one installed next to the interpreter (``python -m doctor`` from an installed doctor), else
    ``PYTHON -m doctor``."""
    import os

    from doctor.program import DOCTOR

    if os.path.basename(argv0) == DOCTOR and os.path.isfile(argv0):
        return [os.path.abspath(argv0)]
    beside = os.path.join(os.path.dirname(executable), DOCTOR) if executable else ""
    if beside and os.path.isfile(beside) and os.access(beside, os.X_OK):
        return [beside]
    return [executable or "python3", "-m", "doctor"]


def doctor_program(env, argv0: Optional[str] = None, executable: Optional[str] = None) -> List[str]:
    """How a printed command starts this doctor: plain ``ascend-doctor`` when that name, looked up
    on the user's PATH, is this doctor; else the absolute entry point (nothing on PATH, another
    install first on it, a venv nobody activated)."""
    import sys

    from doctor.program import DOCTOR

    entry = entry_point(sys.argv[0] if argv0 is None else argv0, sys.executable if executable is None else executable)
    found = _which(DOCTOR, env["PATH"]) if env.get("PATH") else None
    if found and len(entry) == 1 and _same_file(found, entry[0]):
        return [DOCTOR]
    return entry
