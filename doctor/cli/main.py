"""The ``ascend-doctor`` command line: thin typer commands over the pipeline modules."""
from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence, Tuple

import typer

from doctor import __version__
from doctor.cli.options import (HCCN_TIMEOUT, HCCN_TOOL, IMAGE, IMAGE_TAR, MAX_IMAGE_DISK, MAX_IMAGE_ENTRIES, JSON, LANG, MATRIX, NPU_SMI, NPU_SMI_TIMEOUT,
                                PLATFORM, PULL, PYTHON, ROOT, SITE, STAGE, image_request, pick_language)
from doctor.errors import DoctorError, UsageError

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
    from doctor.i18n import tr
    from doctor.shell.progress import bytes_bar, waiting
    from doctor.usecases.check import CheckOptions, run_check, target_info

    if fail_on not in ("fail", "warn"):
        raise UsageError(f"--fail-on {fail_on!r}: use fail or warn")
    lang = pick_language(lang)
    if requirements:
        from doctor.cli.guard import check_requirements

        check_requirements(CheckOptions(root=root, python=python, stage=stage, target=target, matrix=list(matrix),
                                        npu_smi_timeout=npu_smi_timeout, npu_smi=npu_smi), requirements, as_json, lang,
                           verbose, fail_on)
    with bytes_bar(verify_weights, "sha256") as progress, \
            waiting(not as_json and not verify_weights, tr("render.probing", lang)):
        result = run_check(CheckOptions(root=root, python=python, site_packages=list(site_packages), snapshot=snapshot,
                                        stage=stage, target=target, matrix=list(matrix), npu_smi_timeout=npu_smi_timeout,
                                        npu_smi=npu_smi, serve_args=serve_args, serve_args_file=serve_args_file,
                                        mooncake_master=mooncake_master, hccn_tool=hccn_tool, hccn_timeout=hccn_timeout,
                                        model=model, verify_weights=verify_weights, verify_sample=verify_sample,
                                        progress=progress, image=image_request(image, image_tar, platform, pull, lang,
                                                            max_image_entries, max_image_disk)))
    code = result.verdict.exit_code(fail_on)
    if as_json:
        from doctor.render import check_json

        text = check_json(result.verdict, stage=result.ctx.stage, target=target_info(result.ctx), timings=result.timings,
                          lang=lang)
        if result.facts.image is not None:
            from doctor.render_image import with_image

            text = with_image(text, result, lang)
        sys.stdout.write(text + "\n")
    else:
        from doctor.render import print_check
        from doctor.usecases.check import no_ascend_stack

        if result.facts.image is not None:
            from doctor.render_image import print_image

            print_image(result.facts.image, result.image, lang, part="identity")
        print_check(result.verdict, stage=result.ctx.stage, target_row=result.ctx.release.key if result.ctx.release else None,
                    timings=result.timings, lang=lang, verbose=verbose, exit_code=code, no_ascend=no_ascend_stack(result))
        if result.facts.image is not None:  # detail: digest, base, the layer each problem came from
            print_image(result.facts.image, result.image, lang, failing=code != 0, part="detail")
    raise typer.Exit(code)


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
    from doctor.shell.progress import waiting
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
    from doctor.shell.files import write_atomic

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
    and every child process ends with the doctor (signals included: shell/proc.py)."""
    from doctor.shell import proc

    from doctor import program
    from doctor.cli.invocation import doctor_program

    proc.install_signal_handlers()
    code = 0
    try:
        program.use(doctor_program(os.environ))
        args = sys.argv[1:] if argv is None else argv
        result = make_app(named_command(args))(args=args, prog_name="ascend-doctor", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except typer.Exit as e:
        code = e.exit_code
    except DoctorError as e:
        _say(f"ascend-doctor: error: {e.text(_error_lang(sys.argv[1:] if argv is None else argv))}")
        code = e.exit_code
    except (KeyboardInterrupt, proc.Terminated) as e:
        code = _stopped(e)
    except Exception as e:
        stop = proc.stop_behind(e)
        if stop is not None:
            code = _stopped(stop)
        elif type(e).__name__ == "NoArgsIsHelpError":  # bare `ascend-doctor` (or a group): its help, as pip does
            print(e.ctx.get_help())  # type: ignore[attr-defined]
            code = 0
        elif hasattr(e, "exit_code") and hasattr(e, "format_message"):  # click usage errors
            _say(f"ascend-doctor: error: {e.format_message()}")
            code = e.exit_code
        elif type(e).__name__ == "Abort":
            code = 130
        else:
            if os.environ.get("ASCEND_DOCTOR_DEBUG"):
                raise
            _say(f"ascend-doctor: internal error: {type(e).__name__}: {e} "
                 "(set ASCEND_DOCTOR_DEBUG=1 for a traceback)")
            code = 1
    finally:
        proc.kill_all()
        program.use([program.DOCTOR])  # an in-process caller (a test) starts from the plain name
    stopped = proc.signalled()
    if stopped is not None and code in (0, 3, 4):
        code = 128 + stopped  # a signal whose exception Python swallowed still ends the run as stopped
    sys.exit(code)


def _stopped(stop: BaseException) -> int:
    """Ctrl-C or SIGTERM/SIGHUP: the children die now; the exit code says which."""
    from doctor.shell import proc

    proc.kill_all()
    if isinstance(stop, proc.Terminated):
        _say(f"ascend-doctor: terminated by signal {stop.signum}")
        return 128 + stop.signum
    _say("ascend-doctor: interrupted")
    return 130


def _error_lang(args: List[str]) -> str:
    """The language of an error message: the command line's --lang (when it is one the doctor
    speaks), else the environment's; never an error of its own."""
    from doctor.i18n import LANGS, resolve_lang

    option = None
    for i, a in enumerate(args):
        if a == "--lang" and i + 1 < len(args):
            option = args[i + 1]
        elif a.startswith("--lang="):
            option = a.split("=", 1)[1]
    return resolve_lang(option if option in LANGS else None, os.environ)


def _say(line: str) -> None:
    """stderr may be gone (the terminal of a dropped SSH session): never fail on it. A message
    quotes data (a path, a name from a file): its control characters are shown escaped."""
    from doctor.textsafe import clean_block

    try:
        print(clean_block(line), file=sys.stderr)
    except OSError:
        pass
