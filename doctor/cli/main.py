"""The ``ascend-doctor`` command line: thin typer commands over the pipeline modules."""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import typer

from doctor import __version__
from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.errors import UsageError
from doctor.i18n import T

SETTINGS = dict(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command and group inherits it
    help="Environment doctor for LLM serving on Huawei Ascend NPUs: check the stack, explain errors, fix it.",
)
app = typer.Typer(**SETTINGS)  # type: ignore[arg-type]  # the commands defined here; make_app() adds the others


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ascend-doctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def _top(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                      help="Print the version and exit.")) -> None:
    """Environment doctor for LLM serving on Huawei Ascend NPUs: check the stack, explain errors, fix it."""

@app.command()
@takes(*p.CHECK, p.REQUIREMENTS)
def check(**params: Any) -> None:
    """Probe every layer of the stack and give one verdict, root cause first."""
    from doctor.cli.check_command import run_check_command

    raise typer.Exit(run_check_command(params))  # the front end (doctor/entry.py) passes the same


SNAPSHOT = (p.ROOT, p.PYTHON, p.SITE, p.NPU_SMI_TIMEOUT, p.NPU_SMI, p.SERVE_ARGS, p.SERVE_ARGS_FILE, p.MOONCAKE_MASTER,
            p.HCCN_TOOL, p.HCCN_TIMEOUT, p.PING_NPU, p.MODEL, *p.IMAGE_OPTIONS,
            p.Opt("output", ("--output", "-o"), "str", None, "Write the snapshot to FILE instead of stdout."))


@app.command()
@takes(*SNAPSHOT)
def snapshot(**params: Any) -> None:
    """Write every observed fact as JSON on stdout (secrets in env vars redacted)."""
    from doctor.i18n import tr
    from doctor.shell.host.progress import waiting
    from doctor.usecases.check import gather, snapshot_json

    output = params["output"]
    with waiting(output is not None, tr("render.probing", p.pick_language(None))):
        facts = gather(p.check_options(params))
    text = snapshot_json(facts) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    from doctor.shell.host.files import write_atomic

    try:
        write_atomic(output, text)
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--output", value=output, error=e.strerror or str(e))) from None


@app.command("version")
def version() -> None:
    """Print the doctor's version."""
    typer.echo(f"ascend-doctor {__version__}")


# The commands of the other modules, in the order of --help: (name, module, attribute, context
# settings attribute). A group is a typer.Typer, a command a function.
ELSEWHERE: Tuple[Tuple[str, str, str, Optional[str]], ...] = (
    ("smoke", "doctor.cli.smoke", "smoke_command", None),
    ("explain", "doctor.cli.explain", "explain_command", None),
    ("fix", "doctor.cli.fix", "fix_command", None),
    ("rollback", "doctor.cli.fix", "rollback_command", None),
    ("guard", "doctor.cli.guard", "guard_command", "CONTEXT"),
    ("matrix", "doctor.cli.matrix", "matrix_app", None),
    ("mooncake", "doctor.cli.mooncake", "mooncake_app", None),
    ("fleet", "doctor.cli.fleet", "fleet_app", None),
    ("profile", "doctor.cli.profile", "profile_command", None),
)


def make_app(only: Optional[str] = None) -> typer.Typer:
    """Every command, or only the one named: typer builds the options of every registered
    command before it runs one, and a check need not import (nor build) fix, fleet or guard."""
    import importlib

    full = typer.Typer(**SETTINGS)  # type: ignore[arg-type]
    full.registered_callback = app.registered_callback
    full.registered_commands = [c for c in app.registered_commands if only in (None, _command_name(c))]
    for name, module, attribute, context in ELSEWHERE:
        if only not in (None, name):
            continue
        mod = importlib.import_module(module)
        obj = getattr(mod, attribute)
        if isinstance(obj, typer.Typer):
            full.add_typer(obj, name=name)
        else:
            full.command(name, context_settings=getattr(mod, context) if context else None)(obj)
    return full


_COMMANDS: Dict[Tuple[Any, ...], Any] = {}


def _command(only: Optional[str]) -> Any:
    """The click command of make_app(only), built once per process: typer rebuilds every option
    of every command on each call, ~7 ms, paid again by each run of a process that runs many
    (fleet's local node, the tests). A click command keeps no state between invocations; it is
    built again when a command's function was replaced (as a test does)."""
    key = (only, *((c.name, c.callback) for c in app.registered_commands),
           *(getattr(sys.modules.get(module), attribute, None) for _, module, attribute, _ in ELSEWHERE))
    if key not in _COMMANDS:
        _COMMANDS[key] = typer.main.get_command(make_app(only))
    return _COMMANDS[key]


def _command_name(info: "typer.models.CommandInfo") -> str:
    if info.name:
        return info.name
    assert info.callback is not None
    return info.callback.__name__.lower().replace("_", "-")  # typer's own rule


def named_command(argv: Sequence[str]) -> Optional[str]:
    """The command a command line runs, when it names a known one before any top-level option
    (--help, --version: those need every command); None otherwise."""
    known = {_command_name(c) for c in app.registered_commands} | {e[0] for e in ELSEWHERE}
    for arg in argv:
        if arg.startswith("-"):
            return None
        return arg if arg in known else None
    return None


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: every error ends as one line on stderr with the contract's exit code,
    and every child process ends with the doctor (signals included: shell/runtime/proc.py)."""
    from doctor.cli.runner import run_guarded

    def body() -> int:
        args = sys.argv[1:] if argv is None else argv
        try:
            result = _command(named_command(args)).main(args=args, prog_name="ascend-doctor", standalone_mode=False)
        except typer.Exit as e:
            return e.exit_code
        return result if isinstance(result, int) else 0

    run_guarded(body, sys.argv[1:] if argv is None else list(argv))
