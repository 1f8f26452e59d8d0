"""Console entry point: start the slow probe processes, then run the command.

Signals are trapped first: a SIGTERM or SIGHUP (an SSH session that drops) while the doctor is
still importing must not leave the started processes behind, nor print a traceback.

``check`` is run by a front end of its own, without typer (importing typer and building the
command costs ~30 ms of a ~100 ms check): ``parse_check`` reads exactly the command lines that
the typer command would read without a word (every option of check, ``--opt value`` and
``--opt=value``, the last of a repeated option winning, as click does) into the same
parameters, both read from the same declarations (doctor/cli/params.py: CHECK), and the same
body runs them (doctor/cli/check_command.py). Anything else, --help,
-h, an option it does not know, a value that does not convert, --requirements, is handed to the
typer app, which says what it always said: the output and the exit codes are typer's own.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, Optional, Sequence, Tuple

from doctor.cli import params

# check's options, from their declarations: flag -> (parameter, kind). A test holds this table
# to the typer command's.
CHECK_OPTIONS: Dict[str, Tuple[str, str]] = {flag: (o.name, o.kind) for o in params.CHECK for flag in o.flags}
CHECK_DEFAULTS: Dict[str, Any] = params.defaults(params.CHECK + (params.REQUIREMENTS,))
COMPLETE_VAR = "_ASCEND_DOCTOR_COMPLETE"  # click's shell completion: typer answers it


def parse_check(args: Sequence[str]) -> Optional[Dict[str, Any]]:
    """The parameters the typer ``check`` command receives for ``check ARGS`` (ARGS without the
    word check), or None for a command line the typer app must answer."""
    raw: Dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, text = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        spec = CHECK_OPTIONS.get(name)
        if spec is None:  # --help, -h, --requirements, a typo, a word, "--", "-vv"
            return None
        dest, kind = spec
        if kind == "flag":
            if eq:
                return None  # "does not take a value": click says so
            raw[dest] = True
        else:
            if not eq:
                i += 1
                if i >= len(args):
                    return None  # "requires an argument"
                text = args[i]  # taken whatever it looks like, as click takes it
            if kind == "list":
                raw.setdefault(dest, []).append(text)
            else:
                raw[dest] = text  # a repeated option: the last one counts
        i += 1
    parsed = params.defaults(params.CHECK + (params.REQUIREMENTS,))
    value: Any
    for dest, value in raw.items():
        kind = next(k for d, k in CHECK_OPTIONS.values() if d == dest)
        try:
            if kind == "seconds":
                value = float(value)  # click's FLOAT is float(); the CLI refuses nan, inf and more
                if params.out_of_range(value):
                    return None
            elif kind == "int":
                value = int(value)  # click's INT
        except ValueError:
            return None
        parsed[dest] = value
    return parsed


def main() -> None:
    from doctor.shell.runtime import proc

    proc.install_signal_handlers()
    args = sys.argv[1:]
    parsed = parse_check(args[1:]) if args[:1] == ["check"] and COMPLETE_VAR not in os.environ else None
    try:
        from doctor.shell.runtime.prefetch import for_command_line

        for_command_line(args)
        if parsed is not None:
            from doctor.cli.check_command import run_check_command
            from doctor.cli.runner import as_click_runs, run_guarded
        else:
            from doctor.cli.main import main as cli_main
    except Exception as e:  # a stop that arrived while a class was being defined comes wrapped
        stop = proc.stop_behind(e)
        if stop is None:
            raise
        proc.kill_all()
        sys.exit(128 + stop.signum if isinstance(stop, proc.Terminated) else 130)
    except (proc.Terminated, KeyboardInterrupt) as e:
        proc.kill_all()
        sys.exit(128 + e.signum if isinstance(e, proc.Terminated) else 130)
    if parsed is None:
        cli_main()
        return
    run_guarded(lambda: as_click_runs(lambda: run_check_command(parsed)), args)

