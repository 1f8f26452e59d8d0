"""The ``ascend-doctor`` command line: thin typer commands over the pipeline modules."""
from __future__ import annotations

import sys
from typing import List, Optional, Sequence, Tuple

import typer

from doctor import __version__
from doctor.cli.options import (HCCN_TIMEOUT, HCCN_TOOL, IMAGE, IMAGE_TAR, MAX_IMAGE_DISK, MAX_IMAGE_ENTRIES, JSON, LANG, MATRIX, NPU_SMI, NPU_SMI_TIMEOUT,
                                PLATFORM, PULL, PYTHON, ROOT, SITE, STAGE, image_request, pick_language)
from doctor.errors import UsageError

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

VERBOSE = typer.Option(False, "-v", "--verbose", help="Show evidence and per-probe timings.")
SERVE_ARGS = typer.Option(None, "--serve-args", help="Your `vllm serve ...` command line: its --kv-transfer-config is checked.")
SERVE_ARGS_FILE = typer.Option(None, "--serve-args-file", help="A file with the `vllm serve` command (a launch script with exports is fine).")
MOONCAKE_MASTER = typer.Option(None, "--mooncake-master", help="Probe mooncake_master: HOST:PORT[:METRICS_PORT] (metrics default 9003).")
MODEL = typer.Option(None, "--model", help="A model directory to check: config.json, every weight shard, tokenizer files.")
VERIFY_WEIGHTS = typer.Option(False, "--verify-weights", help="Hash a sample of the shards against their published sha256.")
VERIFY_SAMPLE = typer.Option(3, "--verify-sample", help="Shards --verify-weights hashes (0: every shard with a published hash).")


@app.command()
def check(
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    site_packages: List[str] = SITE,
    snapshot: Optional[str] = typer.Option(None, "--from", help="Judge a snapshot written by `ascend-doctor snapshot`."),
    stage: str = STAGE,
    target: Optional[str] = typer.Option(None, "--target", help="Judge against another release: vllm-ascend==X."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    fail_on: str = typer.Option("fail", "--fail-on", help="fail (default) or warn: exit 3 on warnings too."),
    matrix: List[str] = MATRIX,
    npu_smi_timeout: float = NPU_SMI_TIMEOUT,
    npu_smi: Optional[str] = NPU_SMI,
    serve_args: Optional[str] = SERVE_ARGS,
    serve_args_file: Optional[str] = SERVE_ARGS_FILE,
    mooncake_master: Optional[str] = MOONCAKE_MASTER,
    hccn_tool: Optional[str] = HCCN_TOOL,
    hccn_timeout: float = HCCN_TIMEOUT,
    model: Optional[str] = MODEL,
    verify_weights: bool = VERIFY_WEIGHTS,
    verify_sample: int = VERIFY_SAMPLE,
    image: Optional[str] = IMAGE,
    image_tar: Optional[str] = IMAGE_TAR,
    platform: Optional[str] = PLATFORM,
    pull: bool = PULL,
    max_image_entries: Optional[int] = MAX_IMAGE_ENTRIES,
    max_image_disk: Optional[int] = MAX_IMAGE_DISK,
    requirements: List[str] = typer.Option([], "--requirements", help="Judge the environment as it would be after `pip install -r FILE` (nothing is installed; docs/guard.md)."),
) -> None:
    """Probe every layer of the stack and give one verdict, root cause first."""
    options = dict(locals())  # the parameters, by name: the front end (doctor/entry.py) passes the same
    from doctor.cli.check_command import run_check_command

    raise typer.Exit(run_check_command(**options))


@app.command()
def snapshot(
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    site_packages: List[str] = SITE,
    npu_smi_timeout: float = NPU_SMI_TIMEOUT,
    npu_smi: Optional[str] = NPU_SMI,
    serve_args: Optional[str] = SERVE_ARGS,
    serve_args_file: Optional[str] = SERVE_ARGS_FILE,
    mooncake_master: Optional[str] = MOONCAKE_MASTER,
    hccn_tool: Optional[str] = HCCN_TOOL,
    hccn_timeout: float = HCCN_TIMEOUT,
    ping_npu: List[str] = typer.Option([], "--ping-npu", help="DEVICE:ADDRESS: ping another node's NPU from this device (repeatable; fleet check --ping sets it)."),
    model: Optional[str] = MODEL,
    image: Optional[str] = IMAGE,
    image_tar: Optional[str] = IMAGE_TAR,
    platform: Optional[str] = PLATFORM,
    pull: bool = PULL,
    max_image_entries: Optional[int] = MAX_IMAGE_ENTRIES,
    max_image_disk: Optional[int] = MAX_IMAGE_DISK,
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the snapshot to FILE instead of stdout."),
) -> None:
    """Write every observed fact as JSON on stdout (secrets in env vars redacted)."""
    from doctor.i18n import tr
    from doctor.shell.host.progress import waiting
    from doctor.usecases.check import CheckOptions, gather, snapshot_json

    with waiting(output is not None, tr("render.probing", pick_language(None))):
        facts = gather(CheckOptions(root=root, python=python, site_packages=list(site_packages),
                                    npu_smi_timeout=npu_smi_timeout, npu_smi=npu_smi, serve_args=serve_args,
                                    serve_args_file=serve_args_file, mooncake_master=mooncake_master,
                                    hccn_tool=hccn_tool, hccn_timeout=hccn_timeout, ping_npu=list(ping_npu), model=model,
                                    image=image_request(image, image_tar, platform, pull, None, max_image_entries,
                                                        max_image_disk)))
    text = snapshot_json(facts) + "\n"
    if output is None:
        sys.stdout.write(text)
        return
    from doctor.shell.host.files import write_atomic

    try:
        write_atomic(output, text)
    except OSError as e:
        raise UsageError(f"--output {output}: {e.strerror or e}") from None


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
            result = make_app(named_command(args))(args=args, prog_name="ascend-doctor", standalone_mode=False)
        except typer.Exit as e:
            return e.exit_code
        return result if isinstance(result, int) else 0

    run_guarded(body, sys.argv[1:] if argv is None else list(argv))
