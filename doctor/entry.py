"""Console entry point: start the slow probe processes, then run the command.

Signals are trapped first: a SIGTERM or SIGHUP (an SSH session that drops) while the doctor is
still importing must not leave the started processes behind, nor print a traceback.

``check`` is run by a front end of its own, without typer (importing typer and building the
command costs ~30 ms of a ~100 ms check): ``parse_check`` reads exactly the command lines that
the typer command would read without a word (every option of check, ``--opt value`` and
``--opt=value``, the last of a repeated option winning, as click does) into the same
parameters, and the same body runs them (doctor/cli/check_command.py). Anything else, --help,
-h, an option it does not know, a value that does not convert, --requirements, is handed to the
typer app, which says what it always said: the output and the exit codes are typer's own.
"""
from __future__ import annotations

import math
import os
import sys
from typing import Any, Dict, Optional, Sequence

from doctor.limits import MAX_OPTION_SECONDS

# check's options: name -> (parameter, kind). A test holds this table to the typer command's.
CHECK_OPTIONS: Dict[str, tuple] = {
    "--root": ("root", "str"),
    "--python": ("python", "str"),
    "--site-packages": ("site_packages", "list"),
    "--from": ("snapshot", "str"),
    "--stage": ("stage", "str"),
    "--target": ("target", "str"),
    "--json": ("as_json", "flag"),
    "--lang": ("lang", "str"),
    "-v": ("verbose", "flag"),
    "--verbose": ("verbose", "flag"),
    "--fail-on": ("fail_on", "str"),
    "--matrix": ("matrix", "list"),
    "--npu-smi-timeout": ("npu_smi_timeout", "seconds"),
    "--npu-smi": ("npu_smi", "str"),
    "--serve-args": ("serve_args", "str"),
    "--serve-args-file": ("serve_args_file", "str"),
    "--mooncake-master": ("mooncake_master", "str"),
    "--hccn-tool": ("hccn_tool", "str"),
    "--hccn-timeout": ("hccn_timeout", "seconds"),
    "--model": ("model", "str"),
    "--verify-weights": ("verify_weights", "flag"),
    "--verify-sample": ("verify_sample", "int"),
    "--image": ("image", "str"),
    "--image-tar": ("image_tar", "str"),
    "--platform": ("platform", "str"),
    "--pull": ("pull", "flag"),
    "--max-image-entries": ("max_image_entries", "int"),
    "--max-image-disk": ("max_image_disk", "int"),
}
CHECK_DEFAULTS: Dict[str, Any] = {
    "root": "/", "python": None, "site_packages": [], "snapshot": None, "stage": "auto", "target": None,
    "as_json": False, "lang": None, "verbose": False, "fail_on": "fail", "matrix": [], "npu_smi_timeout": 5.0,
    "npu_smi": None, "serve_args": None, "serve_args_file": None, "mooncake_master": None, "hccn_tool": None,
    "hccn_timeout": 5.0, "model": None, "verify_weights": False, "verify_sample": 3, "image": None,
    "image_tar": None, "platform": None, "pull": False, "max_image_entries": None, "max_image_disk": None,
    "requirements": [],
}
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
    params = {k: (list(v) if isinstance(v, list) else v) for k, v in CHECK_DEFAULTS.items()}
    value: Any
    for dest, value in raw.items():
        kind = next(k for d, k in CHECK_OPTIONS.values() if d == dest)
        try:
            if kind == "seconds":
                value = float(value)  # click's FLOAT is float(); the CLI refuses nan, inf and more
                if not math.isfinite(value) or abs(value) > MAX_OPTION_SECONDS:  # than MAX_OPTION_SECONDS
                    return None
            elif kind == "int":
                value = int(value)  # click's INT
        except ValueError:
            return None
        params[dest] = value
    return params


def main() -> None:
    from doctor.shell.runtime import proc

    proc.install_signal_handlers()
    args = sys.argv[1:]
    params = parse_check(args[1:]) if args[:1] == ["check"] and COMPLETE_VAR not in os.environ else None
    try:
        from doctor.shell.runtime.prefetch import for_command_line

        for_command_line(args)
        if params is not None:
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
    if params is None:
        cli_main()
        return
    run_guarded(lambda: as_click_runs(lambda: run_check_command(**params)), args)

