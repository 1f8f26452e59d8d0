"""The `fix` and `rollback` commands (docs/fix.md), ready for the main CLI:
``app.command("fix")(fix_command)`` and ``app.command("rollback")(rollback_command)``. Each
parses its options, runs its use case (doctor/usecases/fix.py) and hands the outcome to
doctor/cli/fix_render.py."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Mapping, Optional

import typer

if TYPE_CHECKING:
    from rich.status import Status

    from doctor.usecases.fix import FixOptions

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt
from doctor.errors import UsageError
from doctor.i18n import T, tr

YES = Opt("yes", ("--yes", "-y"), "flag", False, "Do not ask for confirmation.")
FIX = (
    p.ROOT, p.PYTHON, p.SITE.but(help="Plan from these directories (no interpreter: no --apply)."),
    p.SNAPSHOT.but(help="Plan from a snapshot (no --apply)."), p.STAGE,
    p.TARGET.but(help="Reconcile to another release: vllm-ascend==X."),
    Opt("prefer", ("--prefer",), "str", None, "keep-cann or keep-release, when CANN/driver are too old for the release."),
    Opt("with_mooncake", ("--with-mooncake",), "flag", False, "Also install the row's Mooncake."),
    Opt("vllm_from", ("--vllm-from",), "str", "index",
        "index (wheel, --no-deps) or source (VLLM_TARGET_DEVICE=empty build from the git tag)."),
    Opt("vllm_repo", ("--vllm-repo",), "str", "https://github.com/vllm-project/vllm",
        "git URL (or a mirror) for --vllm-from source."),
    Opt("installer", ("--installer",), "str", "auto",
        "auto (default: uv resolves, and installs where the target allows it; pip otherwise), pip, or uv "
        "(everything, printed commands too)."),
    Opt("apply", ("--apply",), "flag", False, "Carry the plan out as one transaction (else: dry run)."),
    Opt("offline", ("--offline",), "flag", False, "Do not ask the resolver: the matrix-only plan, marked 'not resolved'."),
    Opt("bundle", ("--bundle",), "str", None, "Write a bundle for an offline node to DIR; with --apply, install only from DIR."),
    Opt("bundle_platform", ("--bundle-platform",), "list", [],
        "Bundle: the target's wheel platform tag (repeatable; default: from --from or this host)."),
    Opt("python_version", ("--python-version",), "str", None,
        "Bundle: the target's Python (3.11; default: from --from or this host)."),
    Opt("abi", ("--abi",), "list", [], "Bundle: the target's ABI tag (cp311; repeatable)."),
    YES,
    Opt("requirements", ("--requirements",), "str", None, "Write the pins as a requirements/constraints file."),
    Opt("no_smoke", ("--no-smoke",), "flag", False, "Do not run the smoke test after --apply."),
    Opt("step_timeout", ("--step-timeout",), "seconds", 3600.0, "Seconds one pip/build step may take."),
    p.JSON.but(help="Print the plan object (and the result) as JSON, nothing else on stdout."), p.LANG,
    p.VERBOSE.but(help="Stream pip's output (it always goes to the log file)."), p.MATRIX, p.NPU_SMI_TIMEOUT, p.NPU_SMI,
    p.SERVE_ARGS.but(help="Your `vllm serve ...` command line: its tuning findings become manual steps."),
    p.SERVE_ARGS_FILE.but(help="Your launch script (exports and the vllm serve command)."),
    p.MODEL.but(help="The model directory the serve command loads."),
    Opt("tuning_patch", ("--tuning-patch",), "str", None,
        "Write the launch-script changes as a unified diff to this file (needs --serve-args-file)."),
    *p.IMAGE_OPTIONS,
)
# FixOptions' own fields that are options of the same name (doctor/usecases/fix.py)
FIX_OWN = ("target", "prefer", "with_mooncake", "vllm_from", "vllm_repo", "installer", "apply", "requirements", "offline",
           "bundle", "python_version", "step_timeout", "verbose", "tuning_patch")
FIX_CHECK = ("root", "python", "site_packages", "snapshot", "stage", "matrix", "npu_smi_timeout", "npu_smi", "serve_args",
             "serve_args_file", "model", *(o.name for o in p.IMAGE_OPTIONS), "lang")  # what the plan is made from


def fix_options(params: Mapping[str, Any], lang: str) -> "FixOptions":
    from doctor.usecases.fix import FixOptions

    return FixOptions(check=p.check_options({k: params[k] for k in FIX_CHECK}),
                      platform=list(params["bundle_platform"]), abi=list(params["abi"]), smoke=not params["no_smoke"],
                      lang=lang, **{k: params[k] for k in FIX_OWN})


@takes(*FIX)
def fix_command(ctx: typer.Context, **params: Any) -> None:
    """Plan (and with --apply carry out) a pinned, ordered reinstall that makes the stack consistent."""
    from doctor.cli.fix_render import print_plan, say_err, show_bundle, show_fix
    from doctor.cli.invocation import rerun_of
    from doctor.usecases.fix import Declined, make_bundle, run_fix

    out = p.output(params)
    rerun = rerun_of(ctx)
    opts = fix_options(params, out.lang)

    def resolving(installer_kind: str) -> "_busy":
        return _busy(tr("plan.resolving", out.lang, installer=installer_kind), out.lang, enabled=not out.as_json)

    if opts.bundle and not opts.apply:
        made = make_bundle(opts, dict(os.environ), resolving)
        show_bundle(made, out)
        raise typer.Exit(made.exit_code)

    def confirm(n: int, target_python: str) -> bool:
        return _confirmed(params["yes"], tr("fix.confirm", out.lang, n=n, python=target_python))

    def show_plan(plan) -> None:
        if not out.as_json:
            print_plan(plan, out.lang, rerun=rerun)

    try:
        from doctor.shell.host.progress import waiting

        outcome = run_fix(opts, dict(os.environ), confirm, say=say_err, show_plan=show_plan, resolving=resolving,
                          probing=lambda: waiting(not out.as_json, tr("render.probing", out.lang)))
    except Declined:
        raise typer.Exit(1)
    show_fix(outcome, out, rerun, apply=opts.apply, smoke_wanted=opts.smoke, snapshot=opts.check.snapshot,
             site_packages=opts.check.site_packages)
    raise typer.Exit(outcome.exit_code)


def _confirmed(yes: bool, question: str) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(T("fix.error.needs_yes"))
    return typer.confirm(question, err=True)


class _busy:
    """A spinner on stderr while the resolver runs (only on a terminal, never with --json), with
    what it is doing (which index, how many packages) and the seconds it has waited."""

    def __init__(self, text: str, lang: str = "en", enabled: bool = True):
        self.text = text
        self.lang = lang
        self.enabled = enabled
        self.status: Optional["Status"] = None
        self.began = 0.0

    def __enter__(self):
        import time

        self.began = time.monotonic()
        if self.enabled and sys.stderr.isatty():
            from doctor import terminal

            self.status = terminal.console(stderr=True).status(self.text)
            self.status.__enter__()
        return self

    def update(self, key: str, **values) -> None:
        if self.status is not None:
            self.status.update(tr(key, self.lang, **values))

    def __exit__(self, *exc):
        if self.status is not None:
            self.status.__exit__(*exc)


ROLLBACK = (p.ROOT, p.PYTHON,
            Opt("force", ("--force",), "flag", False, "Roll back even if the environment changed since the fix."),
            YES, p.JSON.but(help="Print the result as JSON."), p.LANG, p.STAGE, p.MATRIX, p.NPU_SMI)


@takes(*ROLLBACK)
def rollback_command(**params: Any) -> None:
    """Undo the last `fix --apply` on this environment (its journal and file backups), or finish
    one that a killed doctor or a failed rollback left unfinished."""
    from doctor.cli.fix_render import say_err, show_rollback
    from doctor.usecases.fix import Declined, run_rollback

    out = p.output(params)
    opts = p.check_options({k: params[k] for k in ("root", "python", "stage", "matrix", "npu_smi")})

    def confirm(target_python: str) -> bool:
        return _confirmed(params["yes"], tr("fix.confirm_rollback", out.lang, python=target_python))

    try:
        outcome = run_rollback(opts, dict(os.environ), params["force"], confirm, say=say_err)
    except Declined:
        raise typer.Exit(1)
    show_rollback(outcome, out)
    raise typer.Exit(outcome.exit_code)
