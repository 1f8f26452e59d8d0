"""The `fix` and `rollback` commands (docs/fix.md), ready for the main CLI:
``app.command("fix")(fix_command)`` and ``app.command("rollback")(rollback_command)``."""
from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Dict, List, Optional

import typer

if TYPE_CHECKING:
    from rich.status import Status

from doctor.cli.options import (IMAGE, IMAGE_TAR, MAX_IMAGE_DISK, MAX_IMAGE_ENTRIES, LANG, MATRIX, NPU_SMI, NPU_SMI_TIMEOUT, PLATFORM, PULL, PYTHON, ROOT,
                                STAGE, float_option, image_request, pick_language)
from doctor.errors import UsageError
from doctor.findings import cmd
from doctor.i18n import tr
from doctor.cli.plan_render import print_plan

VERBOSE = typer.Option(False, "-v", "--verbose", help="Stream pip's output (it always goes to the log file).")

def fix_command(
    ctx: typer.Context,
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    site_packages: List[str] = typer.Option([], "--site-packages", help="Plan from these directories (no interpreter: no --apply)."),
    snapshot: Optional[str] = typer.Option(None, "--from", help="Plan from a snapshot (no --apply)."),
    stage: str = STAGE,
    target: Optional[str] = typer.Option(None, "--target", help="Reconcile to another release: vllm-ascend==X."),
    prefer: Optional[str] = typer.Option(None, "--prefer", help="keep-cann or keep-release, when CANN/driver are too old for the release."),
    with_mooncake: bool = typer.Option(False, "--with-mooncake", help="Also install the row's Mooncake."),
    vllm_from: str = typer.Option("index", "--vllm-from", help="index (wheel, --no-deps) or source (VLLM_TARGET_DEVICE=empty build from the git tag)."),
    vllm_repo: str = typer.Option("https://github.com/vllm-project/vllm", "--vllm-repo", help="git URL (or a mirror) for --vllm-from source."),
    installer: str = typer.Option("auto", "--installer", help="auto (default: uv resolves, and installs where the target allows it; pip otherwise), pip, or uv (everything, printed commands too)."),
    apply: bool = typer.Option(False, "--apply", help="Carry the plan out as one transaction (else: dry run)."),
    offline: bool = typer.Option(False, "--offline", help="Do not ask the resolver: the matrix-only plan, marked 'not resolved'."),
    bundle: Optional[str] = typer.Option(None, "--bundle", help="Write a bundle for an offline node to DIR; with --apply, install only from DIR."),
    bundle_platform: List[str] = typer.Option([], "--bundle-platform", help="Bundle: the target's wheel platform tag (repeatable; default: from --from or this host)."),
    python_version: Optional[str] = typer.Option(None, "--python-version", help="Bundle: the target's Python (3.11; default: from --from or this host)."),
    abi: List[str] = typer.Option([], "--abi", help="Bundle: the target's ABI tag (cp311; repeatable)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    requirements: Optional[str] = typer.Option(None, "--requirements", help="Write the pins as a requirements/constraints file."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Do not run the smoke test after --apply."),
    step_timeout: float = float_option(3600.0, "--step-timeout", help="Seconds one pip/build step may take."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan object (and the result) as JSON, nothing else on stdout."),
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    matrix: List[str] = MATRIX,
    npu_smi_timeout: float = NPU_SMI_TIMEOUT,
    npu_smi: Optional[str] = NPU_SMI,
    serve_args: Optional[str] = typer.Option(None, "--serve-args", help="Your `vllm serve ...` command line: its tuning findings become manual steps."),
    serve_args_file: Optional[str] = typer.Option(None, "--serve-args-file", help="Your launch script (exports and the vllm serve command)."),
    model: Optional[str] = typer.Option(None, "--model", help="The model directory the serve command loads."),
    tuning_patch: Optional[str] = typer.Option(None, "--tuning-patch", help="Write the launch-script changes as a unified diff to this file (needs --serve-args-file)."),
    image: Optional[str] = IMAGE,
    image_tar: Optional[str] = IMAGE_TAR,
    platform: Optional[str] = PLATFORM,
    pull: bool = PULL,
    max_image_entries: Optional[int] = MAX_IMAGE_ENTRIES,
    max_image_disk: Optional[int] = MAX_IMAGE_DISK,
) -> None:
    """Plan (and with --apply carry out) a pinned, ordered reinstall that makes the stack consistent."""
    from doctor.cli.invocation import rerun_of
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.fix import Declined, FixOptions, make_bundle, run_fix

    language = pick_language(lang)
    rerun = rerun_of(ctx)
    opts = FixOptions(
        check=CheckOptions(root=root, python=python, site_packages=list(site_packages), snapshot=snapshot, stage=stage,
                           matrix=list(matrix), npu_smi_timeout=npu_smi_timeout, npu_smi=npu_smi, serve_args=serve_args,
                           serve_args_file=serve_args_file, model=model,
                           image=image_request(image, image_tar, platform, pull, language, max_image_entries,
                                               max_image_disk)),
        target=target, prefer=prefer, with_mooncake=with_mooncake, vllm_from=vllm_from, vllm_repo=vllm_repo,
        installer=installer, apply=apply, requirements=requirements, offline=offline, bundle=bundle,
        platform=list(bundle_platform), python_version=python_version, abi=list(abi), smoke=not no_smoke,
        step_timeout=step_timeout, verbose=verbose, lang=language, tuning_patch=tuning_patch)

    def resolving(installer_kind: str) -> "_busy":
        return _busy(tr("plan.resolving", language, installer=installer_kind), language, enabled=not as_json)

    if bundle and not apply:
        from doctor.cli.bundle import print_bundle

        made = make_bundle(opts, dict(os.environ), resolving)
        print_bundle(made, as_json, language)
        raise typer.Exit(made.exit_code)

    def confirm(n: int, target_python: str) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise UsageError("refusing to change the environment without confirmation: pass --yes")
        return typer.confirm(tr("fix.confirm", language, n=n, python=target_python), err=True)

    def show_plan(plan) -> None:
        if not as_json:
            print_plan(plan, language, rerun=rerun)

    try:
        from doctor.shell.host.progress import waiting

        outcome = run_fix(opts, dict(os.environ), confirm, say=_err, show_plan=show_plan, resolving=resolving,
                          probing=lambda: waiting(not as_json, tr("render.probing", language)))
    except Declined:
        raise typer.Exit(1)
    if outcome.messages and not as_json:
        _err(tr("fix.requirements", language, path=outcome.messages[0]))
    plan, doc, before = outcome.plan, outcome.doc, outcome.before
    add_alternative_commands(doc, plan, rerun)
    if outcome.tuning_patch is not None and not as_json:
        print_tuning_patch(outcome.tuning_patch, language)
    if not apply:
        image_facts = outcome.facts.image if outcome.facts is not None else None
        if as_json:
            if image_facts is not None:
                from doctor.render_image import image_json

                doc["image"] = image_json(image_facts, outcome.image_judgement, language)
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        else:
            image_ref = None
            if image_facts is not None:
                from doctor.render_image import fix_notes

                for line in fix_notes(image_facts, outcome.image_judgement, language):
                    _out(line)
                image_ref = image_facts.names[0] if image_facts.names else image_facts.ref
            print_plan(plan, language, rerun=rerun, dry_run=True, image_ref=image_ref)
        raise typer.Exit(outcome.exit_code)

    if outcome.unresolvable:  # the plan was shown with the resolver's message; nothing changed
        if as_json:
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        raise typer.Exit(outcome.exit_code)
    result, final, smoke, code = outcome.result, outcome.final, outcome.smoke, outcome.exit_code
    assert final is not None
    if outcome.smoke_skipped and as_json:
        _err(tr("fix.smoke_skip", language, why=tr("fix.smoke_skip.build_stage", language)))
    if as_json:
        doc["result"] = {
            "applied": result is not None,
            "transaction": result.txn_id if result else None,
            "journal": str(result.journal) if result else None,
            "log": str(result.log) if result else None,
            "changed": {n: {"before": a, "after": b} for n, (a, b) in result.changed.items()} if result else {},
            "verification": result.verification.to_json() if result else None,
            "check_before": {"exit_code": before.exit_code(), "root_cause": before.root_cause},
            "check_after": {"exit_code": final.verdict.exit_code(), "root_cause": final.verdict.root_cause,
                            "findings": [f.to_json(language) for f in final.verdict.findings]},
            "smoke": smoke,
            "exit_code": code,
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        # the verdict first, then how to undo it, then the detail
        *stages, verdict = apply_verdict_lines(final.verdict, smoke, outcome.smoke_skipped, not no_smoke, code, language)
        _out(verdict)
        if result is not None:
            from doctor.shell.transaction import rollback_argv

            _out(tr("fix.applied", language, id=result.txn_id))
            _out("  " + cmd(*rollback_argv(outcome.target_python or "python3")).shell())
        for line in stages:
            _out(line)
        if result is not None:
            for n, (a, b) in result.changed.items():
                _out(f"  {n}: {a or '-'} -> {b or '-'}")
            for line in verification_lines(result.verification, language):
                _out(line)
        print_before_after(before, final.verdict, language)
        from doctor.render import print_check

        print_check(final.verdict, stage=final.ctx.stage, target_row=final.ctx.release.key if final.ctx.release else None,
                    timings=final.timings, lang=language, verbose=False, exit_code=code, summary=False)
    raise typer.Exit(code)


def add_alternative_commands(doc: dict, plan, rerun) -> None:
    """--json: each other way carries the command that makes it (as the text report prints it)."""
    from doctor.cli.plan_render import alternative_command

    for a, shown in zip(plan.alternatives, doc.get("alternatives") or []):
        shown["command"] = alternative_command(a, rerun).shell()


def apply_verdict_lines(final, smoke, smoke_skipped: bool, smoke_wanted: bool, code: int, lang: str):
    """The last lines after --apply: the check after the fix, the smoke stages, and the verdict
    naming every stage that fails (the exit code follows from them, never from one alone)."""
    from doctor.findings import FAIL, WARN

    counts = final.counts()
    failing = []
    if counts[FAIL]:
        check = tr("fix.after.fail", lang, n=counts[FAIL], root=final.root_cause or "-")
        failing.append(tr("fix.stage.check", lang))
    elif counts[WARN]:
        check = tr("fix.after.warn", lang, n=counts[WARN])
    else:
        check = tr("fix.after.ok", lang)
    yield tr("fix.after", lang, result=check, counts=tr("render.counts", lang, **counts))
    if smoke is not None:
        bad = [s["name"] for s in smoke.get("stages") or [] if s.get("status") == FAIL]
        if smoke.get("exit_code") == 0:
            yield tr("fix.smoke.ok", lang, stages=", ".join(s["name"] for s in smoke.get("stages") or []) or "-")
        else:
            what = ", ".join(bad) if bad else (smoke.get("why") or tr("fix.smoke.not_run", lang))
            yield tr("fix.smoke.fail", lang, code=smoke.get("exit_code"), what=what)
            failing.append(tr("fix.stage.smoke", lang, what=what))
    elif smoke_skipped:
        yield tr("fix.smoke_skip", lang, why=tr("fix.smoke_skip.build_stage", lang))
    elif not smoke_wanted:
        yield tr("fix.smoke_skip", lang, why="--no-smoke")
    if failing:
        yield tr("fix.verdict.fail", lang, stages=tr("sep.semi", lang).join(failing), code=code)
    elif code == 4:
        yield tr("fix.verdict.warn", lang, code=code)
    else:
        yield tr("fix.verdict.ok", lang, code=code)


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


def verification_lines(v, lang: str) -> List[str]:
    """What the import check before the commit did: imported, only located, not verified."""
    from doctor.i18n import tr

    out = []
    imported = [c.module for c in v.checks if c.ok and c.how == "import"]
    located = [c.module for c in v.checks if c.ok and c.how == "locate"]
    driver = [c.module for c in v.checks if c.driver_missing]
    if imported:
        out.append("  " + tr("shell.verify.imported", lang, modules=", ".join(imported)))
    if located:
        out.append("  " + tr("shell.verify.located", lang, modules=", ".join(located)))
    if driver:
        out.append("  " + tr("shell.verify.driver_missing", lang, modules=", ".join(driver)))
    return out


def print_tuning_patch(patch, lang: str) -> None:
    if patch.get("path") is None:
        _out(tr("fix.no_patch", lang))
        return
    _out(tr("fix.patch", lang, script=patch["script"], path=patch["path"], n=len(patch["edits"])))
    _out(patch["apply"])


def _out(text: str) -> None:
    from doctor import terminal

    terminal.say(text)


def _err(text: str) -> None:
    from doctor import terminal

    terminal.say(text, sys.stderr)


def print_before_after(before, after, lang: str) -> None:
    first: Dict[str, str] = {}
    for f in before.findings:
        first.setdefault(f.id, f.status)
    rows = []
    seen = set()
    for f in after.findings:
        if f.id in seen:
            continue
        seen.add(f.id)
        old = first.get(f.id, "-")
        if old != f.status:
            rows.append(f"  {f.id}: {old} -> {f.status}")
    for fid, st in first.items():
        if fid not in seen:
            rows.append(f"  {fid}: {st} -> -")
    if rows:
        _out(tr("fix.before_after", lang) + ":")
        for r in rows:
            _out(r)


def rollback_command(
    root: str = ROOT,
    python: Optional[str] = PYTHON,
    force: bool = typer.Option(False, "--force", help="Roll back even if the environment changed since the fix."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    lang: Optional[str] = LANG,
    stage: str = STAGE,
    matrix: List[str] = MATRIX,
    npu_smi: Optional[str] = NPU_SMI,
) -> None:
    """Undo the last `fix --apply` on this environment (its journal and file backups), or finish
    one that a killed doctor or a failed rollback left unfinished."""
    from doctor.usecases.check import CheckOptions
    from doctor.usecases.fix import Declined, run_rollback

    language = pick_language(lang)
    opts = CheckOptions(root=root, python=python, stage=stage, matrix=list(matrix), npu_smi=npu_smi)

    def confirm(target_python: str) -> bool:
        if yes:
            return True
        if not sys.stdin.isatty():
            raise UsageError("refusing to change the environment without confirmation: pass --yes")
        return typer.confirm(tr("fix.confirm_rollback", language, python=target_python), err=True)

    try:
        outcome = run_rollback(opts, dict(os.environ), force, confirm, say=_err)
    except Declined:
        raise typer.Exit(1)
    result, code = outcome.result, outcome.exit_code
    if as_json:
        sys.stdout.write(json.dumps({"transaction": result.txn_id,
                                     "restored": {n: {"before": a, "after": b} for n, (a, b) in result.restored.items()},
                                     "note": result.note, "exit_code": code}, ensure_ascii=False, indent=2) + "\n")
    else:
        _out(tr("fix.rolled", language, id=result.txn_id))
        for n, (a, b) in result.restored.items():
            _out(f"  {n}: {a or '-'} -> {b or '-'}")
    raise typer.Exit(code)
