"""The `fix` and `rollback` commands (docs/fix.md), ready for the main CLI:
``app.command("fix")(fix_command)`` and ``app.command("rollback")(rollback_command)``."""
from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Dict, List, Optional

import typer

from doctor.cli.options import (IMAGE, IMAGE_TAR, LANG, MATRIX, NPU_SMI_TIMEOUT, PLATFORM, PULL, PYTHON, ROOT, STAGE,
                                image_request, pick_language)
from doctor.errors import UsageError
from doctor.i18n import tr

VERBOSE = typer.Option(False, "-v", "--verbose", help="Stream pip's output (it always goes to the log file).")
DOCKERFILE_DOCTOR = "/opt/ascend-doctor/venv/bin/python"  # where the repository's Dockerfile installs the doctor

def fix_command(
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
    installer: str = typer.Option("pip", "--installer", help="pip (default) or uv (when on PATH)."),
    apply: bool = typer.Option(False, "--apply", help="Carry the plan out as one transaction (else: dry run)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    requirements: Optional[str] = typer.Option(None, "--requirements", help="Write the pins as a requirements/constraints file."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Do not run the smoke test after --apply."),
    step_timeout: float = typer.Option(3600.0, "--step-timeout", help="Seconds one pip/build step may take."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan object (and the result) as JSON, nothing else on stdout."),
    lang: Optional[str] = LANG,
    verbose: bool = VERBOSE,
    matrix: List[str] = MATRIX,
    npu_smi_timeout: float = NPU_SMI_TIMEOUT,
    serve_args: Optional[str] = typer.Option(None, "--serve-args", help="Your `vllm serve ...` command line: its tuning findings become manual steps."),
    serve_args_file: Optional[str] = typer.Option(None, "--serve-args-file", help="Your launch script (exports and the vllm serve command)."),
    model: Optional[str] = typer.Option(None, "--model", help="The model directory the serve command loads."),
    tuning_patch: Optional[str] = typer.Option(None, "--tuning-patch", help="Write the launch-script changes as a unified diff to this file (needs --serve-args-file)."),
    image: Optional[str] = IMAGE,
    image_tar: Optional[str] = IMAGE_TAR,
    platform: Optional[str] = PLATFORM,
    pull: bool = PULL,
) -> None:
    """Plan (and with --apply carry out) a pinned, ordered reinstall that makes the stack consistent."""
    from doctor.shell.apply import apply_plan, detect_installer, target_from_facts
    from doctor.usecases.check import CheckOptions, gather, load_matrix_or_exit, parse_target, run_check
    from doctor.plan.builder import PlanOptions, plan_for, requirements_text
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.txn import planned_state_dir, state_dir

    language = pick_language(lang)
    if installer not in ("pip", "uv"):
        raise UsageError(f"--installer {installer!r}: use pip or uv")
    if vllm_from not in ("index", "source"):
        raise UsageError(f"--vllm-from {vllm_from!r}: use index or source")
    if step_timeout <= 0:
        raise UsageError("--step-timeout must be positive")
    if apply and (snapshot or site_packages):
        raise UsageError("--apply changes a live environment: use --python, not --from or --site-packages")
    if tuning_patch and not serve_args_file:
        raise UsageError("--tuning-patch writes a diff of a launch script: give it with --serve-args-file")
    img = image_request(image, image_tar, platform, pull, lang)
    if apply and img.wanted:
        raise UsageError(tr("image.error.apply", language))
    opts = CheckOptions(root=root, python=python, site_packages=list(site_packages), snapshot=snapshot, stage=stage,
                        matrix=list(matrix), npu_smi_timeout=npu_smi_timeout, serve_args=serve_args,
                        serve_args_file=serve_args_file, model=model, image=img)
    mx = load_matrix_or_exit(opts.matrix)
    wanted = parse_target(target)
    facts = gather(opts, dict(os.environ))
    if facts.python is not None and not facts.python.found and not site_packages and not snapshot:
        raise UsageError(f"cannot run the target interpreter: {facts.python.error or python}")
    ctx0 = make_context(facts, mx, stage)
    before = run_rules(ctx0)
    if facts.image is not None:  # official images' documented deviations, as check reports them
        from doctor.rules.image import judge_image

        before, judgement = judge_image(before, facts, mx.images)
    env = dict(os.environ)
    # an image's plan runs in a Dockerfile step, where the doctor is the repository Dockerfile's venv
    doctor_python = DOCKERFILE_DOCTOR if facts.image is not None else sys.executable
    choice = detect_installer(installer, facts, env, doctor_python)
    prefix = facts.python.prefix if facts.python else None
    # a dry run creates nothing; --apply uses the state directory it will really write to
    state = str(state_dir(prefix, env)) if apply and prefix else planned_state_dir(prefix)
    popts = PlanOptions(installer=choice.installer, target=wanted, prefer=prefer, with_mooncake=with_mooncake,
                        vllm_from=vllm_from, vllm_repo=vllm_repo, doctor_python=doctor_python,
                        constraint_file=os.path.join(state, "constraints.txt"), src_dir=os.path.join(state, "src"))

    def verdict_for(version: str):
        return run_rules(make_context(facts, mx, stage, version))

    plan = plan_for(facts, mx, verdict_for, ctx0.hardware, popts)
    doc = plan.to_json(language)
    doc["installer_notes"] = choice.notes
    if requirements:
        indexes: List[str] = []
        for s in plan.steps:
            for u in s.extra_index_urls:
                if u not in indexes:
                    indexes.append(u)
        try:
            with open(requirements, "w", encoding="utf-8") as fh:
                fh.write(requirements_text(plan, indexes))
        except OSError as e:
            raise UsageError(f"--requirements {requirements}: {e.strerror or e}")
        if not as_json:
            _err(tr("fix.requirements", language, path=requirements))
    if tuning_patch:
        doc["tuning_patch"] = _write_tuning_patch(before, str(serve_args_file), tuning_patch, language, quiet=as_json)
    if not apply:
        if as_json:
            if facts.image is not None:
                from doctor.render_image import image_json

                doc["image"] = image_json(facts.image, judgement, language)
            sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        else:
            if facts.image is not None:
                from doctor.render_image import fix_notes

                for line in fix_notes(facts.image, judgement, language):
                    _out(line)
            print_plan(plan, language)
            _out(tr("fix.dry", language))
        raise typer.Exit(before.exit_code())

    target_env = target_from_facts(facts)
    runnable = plan.runnable
    if not as_json:
        print_plan(plan, language)
    result = None
    if runnable:
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError("refusing to change the environment without confirmation: pass --yes")
            if not typer.confirm(tr("fix.confirm", language, n=len(runnable), python=target_env.python), err=True):
                raise typer.Exit(1)
        result = apply_plan(plan, target_env, choice, env, verbose=verbose, show_progress=True,
                            say=_err, step_timeout=step_timeout, lang=language)
    final = run_check(opts)
    code = final.verdict.exit_code()
    smoke = _smoke(no_smoke, final.ctx.stage, target_env.python, language)
    if smoke is not None and smoke["exit_code"] not in (0,) and code in (0, 4):
        code = 3
    if as_json:
        doc["result"] = {
            "applied": result is not None,
            "transaction": result.txn_id if result else None,
            "journal": str(result.journal) if result else None,
            "log": str(result.log) if result else None,
            "changed": {n: {"before": a, "after": b} for n, (a, b) in result.changed.items()} if result else {},
            "check_before": {"exit_code": before.exit_code(), "root_cause": before.root_cause},
            "check_after": {"exit_code": final.verdict.exit_code(), "root_cause": final.verdict.root_cause,
                            "findings": [f.to_json(language) for f in final.verdict.findings]},
            "smoke": smoke,
            "exit_code": code,
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        if result is not None:
            _out(tr("fix.applied", language, id=result.txn_id, python=target_env.python))
            for n, (a, b) in result.changed.items():
                _out(f"  {n}: {a or '-'} -> {b or '-'}")
        print_before_after(before, final.verdict, language)
        if smoke is not None:
            _out(tr("fix.smoke_result", language, code=smoke["exit_code"]) + (f" ({smoke['why']})" if smoke.get("why") else ""))
        from doctor.render import print_check

        print_check(final.verdict, stage=final.ctx.stage, target_row=final.ctx.release.key if final.ctx.release else None,
                    timings=final.timings, lang=language, verbose=False, exit_code=code)
    raise typer.Exit(code)


def _write_tuning_patch(verdict, script: str, out: str, lang: str, quiet: bool) -> Dict:
    """The tuning findings' edits as a unified diff of the launch script; nothing else is touched."""
    from doctor.plan.tuning_patch import PatchError, apply_edits, edits_of, unified_diff

    edits = edits_of(verdict.findings)
    try:
        with open(script, "r", encoding="utf-8") as fh:
            old = fh.read()
        new = apply_edits(old, [e for e, _ in edits])
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--serve-args-file {script}: {getattr(e, 'strerror', None) or e}")
    except PatchError as e:
        raise UsageError(f"--tuning-patch: {script}: {e}")
    result: Dict = {"path": None, "script": script,
                    "edits": [dict(e.to_json(), finding=fid) for e, fid in edits]}
    if new == old:
        if not quiet:
            _out(tr("fix.no_patch", lang))
        return result
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(unified_diff(old, new, os.path.basename(script)))
    except OSError as e:
        raise UsageError(f"--tuning-patch {out}: {e.strerror or e}")
    result["path"] = out
    result["apply"] = shlex.join(["patch", "-p1", "-d", os.path.dirname(os.path.abspath(script)), "-i", os.path.abspath(out)])
    if not quiet:
        _out(tr("fix.patch", lang, script=script, path=out, n=len(edits)))
        _out("  " + result["apply"])
    return result


def _smoke(skip: bool, stage: str, python: str, lang: str) -> Optional[Dict]:
    """Run `ascend-doctor smoke` in the target interpreter (a process of its own: it imports torch)."""
    if skip:
        return None
    if stage == "build":
        _err(tr("fix.smoke_skip", lang, why=tr("fix.smoke_skip.build_stage", lang)))
        return None
    from doctor.usecases.smoke import run_configured_stages

    try:  # the stages configured in the smoke configuration file (docs/smoke.md)
        report = run_configured_stages(python)
    except UsageError as e:
        return {"exit_code": 2, "why": str(e)}
    return {"exit_code": report.exit_code(), "why": report.verdict.root_cause,
            "stages": [s.to_json(lang) for s in report.stages]}


def _out(text: str) -> None:
    print(text)


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def print_plan(plan, lang: str, file=None) -> None:
    from doctor.plan.builder import note_text
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    stream = file or sys.stdout
    wide = None if os.environ.get("COLUMNS") or (hasattr(stream, "isatty") and stream.isatty()) else 120
    console = Console(file=stream, highlight=False, width=wide)
    console.print(Text(tr("fix.header", lang, target=plan.target, row=plan.row), style="bold"))
    console.print(Text(tr("fix.why", lang, why=plan.choice_why.text(lang)), style="dim"))
    pins = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1), title=tr("fix.pins", lang), title_justify="left")
    pins.add_column("name", style="cyan", no_wrap=True)
    pins.add_column("version")
    for name in sorted(plan.pins):
        pins.add_row(name, plan.pins[name])
    console.print(pins)
    if plan.empty:
        console.print(Text(tr("fix.empty", lang), style="green"))
    auto = [s for s in plan.steps if s.runs]
    hand = [s for s in plan.steps if not s.runs]
    if auto:
        console.print(Text(tr("fix.steps", lang), style="bold"))
        for i, s in enumerate(auto, 1):
            line = Text(f"{i}. [{s.kind}/{s.action}] ", style="bold")
            line.append(s.why.text(lang))
            console.print(line)
            if s.argv:
                env = " ".join(f"{k}={v}" for k, v in s.env.items())
                console.print(Text("   $ " + (env + " " if env else "") + shlex.join(s.argv), style="dim"), soft_wrap=True)
    if hand:
        console.print(Text(tr("fix.manual", lang), style="bold yellow"))
        for s in hand:
            console.print(Text(f"- [{s.kind}] {s.why.text(lang)}"))
            console.print(Text(f"   $ {s.command}", style="dim"), soft_wrap=True)
    for key, items in (("fix.residual", [note_text(m, lang) for m in plan.expected_residual]),
                       ("fix.alternatives", [a.get("how") or f"--prefer {a['prefer']}: vllm-ascend {a['target']}"
                                         + (f" ({'; '.join(a['needs'])})" if a.get("needs") else "")
                                         for a in plan.alternatives]),
                       ("fix.notes", [note_text(m, lang) for m in plan.notes])):
        if items:
            console.print(Text(tr(key, lang), style="bold"))
            for it in items:
                console.print(Text(f"- {it}", style="dim"), soft_wrap=True)


def print_before_after(before, after, lang: str) -> None:
    first = {}
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
) -> None:
    """Undo the last `fix --apply` on this environment (its journal and file backups)."""
    from doctor.shell.apply import rollback_last, target_from_facts
    from doctor.usecases.check import CheckOptions, gather, run_check

    language = pick_language(lang)
    opts = CheckOptions(root=root, python=python, stage=stage, matrix=list(matrix))
    facts = gather(opts, dict(os.environ))
    target_env = target_from_facts(facts)
    if not yes and not sys.stdin.isatty():
        raise UsageError("refusing to change the environment without confirmation: pass --yes")
    if not yes and not typer.confirm(tr("fix.confirm_rollback", language, python=target_env.python), err=True):
        raise typer.Exit(1)
    result = rollback_last(target_env, dict(os.environ), force=force)
    final = run_check(opts)
    code = final.verdict.exit_code()
    if as_json:
        sys.stdout.write(json.dumps({"transaction": result.txn_id,
                                     "restored": {n: {"before": a, "after": b} for n, (a, b) in result.restored.items()},
                                     "exit_code": code}, ensure_ascii=False, indent=2) + "\n")
    else:
        _out(tr("fix.rolled", language, id=result.txn_id))
        for n, (a, b) in result.restored.items():
            _out(f"  {n}: {a or '-'} -> {b or '-'}")
    raise typer.Exit(code)
