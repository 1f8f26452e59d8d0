"""What ``fix`` and ``rollback`` print, text and ``--json``: the plan (the pins, the resolver's
verdict, the steps, the hand steps, the other ways and the notes), a bundle written, and after
--apply the verdict, the undo command and the detail. Every command is a line of its own,
indented and never wrapped or padded, so that it runs when copied; words go on their own lines."""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from doctor.cli.invocation import Rerun
from doctor.findings import Command, cmd
from doctor.i18n import T, join, tr
from doctor.render import COMMAND, console_lines, print_json

STEP = "   "  # indent of a step's command and words under its title


def print_plan(plan, lang: str, file=None, rerun: Optional[Rerun] = None, dry_run: bool = False,
               image_ref: Optional[str] = None, carry: Optional["CarryOut"] = None) -> None:
    """``rerun(**changes)`` rebuilds the command that made the plan with one option changed (the
    other ways are offered as commands); without it they are offered as ``ascend-doctor fix ...``.
    ``dry_run``: the verdict (nothing changed, and what carries the plan out: ``carry``, by
    default the same command with --apply) comes right after the header, before the detail;
    ``image_ref``: the plan is for that image, carried out by a Dockerfile built FROM it (an image
    is not changed in place)."""
    from doctor.plan.builder import note_text
    from doctor.plan.steps import kind_of

    out = console_lines(file)
    out(tr("fix.header", lang, target=plan.target, row=plan.row), "bold")
    failed = (plan.resolution or {}).get("status") == "failed"
    if dry_run:
        print_dry_run_verdict(out, plan, lang, rerun, image_ref, carry)
    if failed or not dry_run:
        print_resolution(plan, lang, out)
    out(tr("fix.why", lang, why=plan.choice_why.text(lang)), "dim")
    if plan.pins:
        out(tr("fix.pins", lang), "bold")
        width = max(len(n) for n in plan.pins)
        for name in sorted(plan.pins):
            out.parts(("  " + name.ljust(width) + "  ", "cyan"), (plan.pins[name], None))
    if dry_run and not failed:
        print_resolution(plan, lang, out)
    if plan.empty and not dry_run:
        out(tr("fix.empty", lang), "green")
    first_run = next((i for i, s in enumerate(plan.steps) if s.runs), len(plan.steps))
    first = [s for s in plan.steps[:first_run] if s.kind == "vendor"]
    auto = [s for s in plan.steps if s.runs]
    hand = [s for s in plan.steps if not s.runs and s not in first]
    if first and auto:
        out(tr("plan.first", lang), "bold yellow")
        for s in first:
            _hand_step(out, s, lang)
    else:
        hand = first + hand
    if auto:
        out(tr("fix.steps", lang), "bold")
        for i, s in enumerate(auto, 1):
            out.parts((f"{i}. [{s.kind}/{s.action}] ", "bold"), (s.why.text(lang), None))
            for shown in kind_of(s).show(s, lang):  # an image's steps run in it: Dockerfile lines
                out(STEP + ("RUN " if image_ref is not None else "") + shown, "cyan")
    if hand:
        out(tr("fix.manual", lang), "bold yellow")
        for s in hand:
            _hand_step(out, s, lang)
    residual = [note_text(m, lang) for m in plan.expected_residual]
    if residual:
        out(tr("fix.residual", lang), "bold")
        for it in residual:
            out(f"- {it}", "dim")
    others = [alternative_command(a, rerun) for a in plan.alternatives]
    if others:
        out(tr("fix.alternatives", lang), "bold")
        for c in others:
            out(f"- {c.label.text(lang)}" if c.label is not None else "-")
            out(STEP + c.shell(), "cyan")
    notes = [note_text(m, lang) for m in plan.notes]
    if notes:
        out(tr("fix.notes", lang), "bold")
        for it in notes:
            out(f"- {it}", "dim")


@dataclass(frozen=True)
class CarryOut:
    """What carries out a dry run's plan: the words (``key`` with ``values``) and the command,
    None when no command here can (--apply changes a live environment only)."""

    key: str
    command: Optional[Command]
    values: Dict[str, object] = field(default_factory=dict)


def carry_out(rerun: Rerun, facts, snapshot: Optional[str], site_packages: Sequence[str]) -> CarryOut:
    """The plan carried out: the same command with --apply, never one the doctor refuses. A plan
    from a snapshot is carried out on the host the snapshot was taken from, with the interpreter
    (and root) it records in place of --from; a plan from --site-packages needs the interpreter of
    the environment that owns them, which only the user can name."""
    if snapshot:
        py = facts.python if facts is not None else None
        if py is None or py.source != "interpreter" or not py.executable:
            return CarryOut("fix.dry_snapshot_no_python", None)
        root = facts.host.root if facts.host.root not in ("", "/") else None
        return CarryOut("fix.dry_snapshot", rerun(apply=True, snapshot=None, python=py.executable, root=root,
                                                  site_packages=None))
    if site_packages:
        return CarryOut("fix.dry_site_packages", None, {"dirs": join(list(site_packages))})
    return CarryOut("fix.dry", rerun(apply=True))


def print_dry_run_verdict(out, plan, lang: str, rerun: Optional[Rerun], image_ref: Optional[str],
                          carry: Optional[CarryOut] = None) -> None:
    """What the dry run comes to, and the one thing to run: nothing to change; the plan cannot
    be proven (the resolver's message follows); the command that carries it out (``carry``, by
    default the same command with --apply), or why none here can; for an image the Dockerfile
    lines (an image is not changed in place); or that only hand steps are left."""
    if plan.empty:
        out(tr("fix.empty", lang), "green")
        return
    if (plan.resolution or {}).get("status") == "failed":
        return  # print_resolution says why, and what works instead
    if image_ref is not None and plan.runnable:
        out(tr("fix.dry_image", lang, ref=image_ref), "bold")
        out(COMMAND[:2] + f"FROM {image_ref}", "cyan")
        unresolved = []
        for i, s in enumerate(plan.runnable, 1):
            if s.argv:
                out(COMMAND[:2] + "RUN " + _argv_shell(s), "cyan")
            else:
                unresolved.append(str(i))
        if unresolved:
            out(tr("fix.dry_image.unresolved", lang, steps=", ".join(unresolved)), "yellow")
        return
    if plan.runnable and rerun is not None:
        carry = carry or CarryOut("fix.dry", rerun(apply=True))
        out(tr(carry.key, lang, **carry.values), "bold")
        if carry.command is not None:
            out(COMMAND[:2] + carry.command.shell(), "cyan")
        return
    out(tr("fix.dry_nothing", lang), "bold")


def _argv_shell(step) -> str:
    import shlex

    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in step.env.items())
    return (env + " " if env else "") + shlex.join(step.argv)


def _hand_step(out, s, lang: str) -> None:
    from doctor.plan.builder import note_text

    out(f"- [{s.kind}] {s.why.text(lang)}")
    if s.hint is not None:
        out(f"{STEP}→ {note_text(s.hint, lang)}", "dim")
    if s.command:
        out(STEP + s.command, "cyan")


def alternative_command(a: dict, rerun: Optional[Rerun]) -> Command:
    """An alternative plan as the command that makes it, labelled with what it is."""
    how = a.get("how")
    change: Dict[str, str]
    label: object
    if a.get("again"):  # the same command (vendor_only: once the vendor layers are in)
        change, label = {}, T("plan.alt.again")
    elif a.get("vllm_from") == "source":
        change, label = {"vllm_from": "source"}, how
    elif a.get("prefer") == "target":
        change = {"target": f"vllm-ascend=={a['target']}"}
        label = T("plan.alt.target", target=a["target"], how=how or "")
    else:
        change = {"prefer": a["prefer"]}
        label = T(f"plan.alt.{a['prefer']}", target=a["target"], needs=join(a.get("needs") or [], "sep.semi"))
    if rerun is not None:
        return rerun(label=label if hasattr(label, "text") else None, **change)
    argv = ["ascend-doctor", "fix"]
    for k, v in change.items():
        argv += ["--" + k.replace("_", "-"), v]
    return cmd(*argv, label=label if hasattr(label, "text") else None)


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def print_resolution(plan, lang: str, out) -> None:
    """Whether the resolver proved the plan: the total download, or pip's own message, the
    hosts that did not answer and what works instead (one runnable command per line)."""
    res = plan.resolution or {}
    status = res.get("status")
    if status == "resolved":
        key = "plan.status.resolved_bundle" if res.get("source") == "bundle" else "plan.status.resolved"
        line = tr(key, lang, installer=res.get("installer", "pip"), files=len(res.get("files", [])),
                  size=human_size(res.get("download_bytes", 0)))
        if res.get("unknown_sizes"):
            line += tr("plan.status.unknown_sizes", lang, n=res["unknown_sizes"])
        out(line, "dim")
    elif status == "not resolved" and plan.runnable:
        key = {"offline": "plan.status.not_resolved", "source-build": "plan.status.source_build"}.get(
            str(res.get("why")), "plan.status.no_interpreter")
        out(tr(key, lang), "yellow")
    elif status == "failed":
        failure = res.get("failure", {})
        out(tr("plan.status.failed", lang, kind=failure.get("kind")), "bold red")
        for x in (failure.get("message") or "").splitlines():
            out("  " + x)
        for h in failure.get("hosts", []):
            out("  " + tr("plan.status.host", lang, host=h["host"], how=h["how"]), "red")
        rem = plan.remedies
        if rem is not None and (rem.notes or rem.commands):
            out(tr("plan.status.what_works", lang), "bold")
            for n in rem.notes:
                out("- " + n.text(lang))
            for c in rem.commands:
                out("- " + c.label.text(lang))
                out(COMMAND + c.shell(), "cyan")


def _out(text: str) -> None:
    from doctor import terminal

    terminal.say(text)


def say_err(text: str) -> None:
    from doctor import terminal

    terminal.say(text, sys.stderr)


def show_bundle(made, out) -> None:
    """``fix --bundle DIR`` without --apply: the bundle written (and the command that uses it on
    the node), or the plan with the resolver's message when it could not be proven
    (``made.manifest`` is None)."""
    plan = made.plan
    if made.manifest is None:
        if out.as_json:
            print_json(plan.to_json(out.lang))
        else:
            print_plan(plan, out.lang)
        return
    if out.as_json:
        print_json({"bundle": made.directory, "manifest": made.manifest, "plan": plan.to_json(out.lang)})
        return
    lang, tp = out.lang, made.platform
    _out(tr("bundle.written", lang, path=made.directory, files=len(made.manifest["files"]), size=human_size(made.size),
            target=plan.target, platform=tp.platforms[0], python=tp.python_version))
    _out(tr("bundle.then", lang))
    _out(cmd("ascend-doctor", "fix", "--apply", "--bundle", made.directory).shell())


def fix_json(outcome, rerun: Optional[Rerun], lang: str, apply: bool) -> Dict:
    """fix --json: the plan, each other way with the command that makes it, the image judged
    (a dry run) and, after --apply, the result."""
    doc = outcome.doc
    for a, shown in zip(outcome.plan.alternatives, doc.get("alternatives") or []):
        shown["command"] = alternative_command(a, rerun).shell()
    if not apply:
        image = outcome.facts.image if outcome.facts is not None else None
        if image is not None:
            from doctor.render_image import image_json

            doc["image"] = image_json(image, outcome.image_judgement, lang)
        return doc
    if outcome.unresolvable:  # refused before any change
        return doc
    result, final, before = outcome.result, outcome.final, outcome.before
    doc["result"] = {
        "applied": result is not None,
        "transaction": result.txn_id if result else None,
        "journal": str(result.journal) if result else None,
        "log": str(result.log) if result else None,
        "changed": {n: {"before": a, "after": b} for n, (a, b) in result.changed.items()} if result else {},
        "verification": result.verification.to_json() if result else None,
        "check_before": {"exit_code": before.exit_code(), "root_cause": before.root_cause},
        "check_after": {"exit_code": final.verdict.exit_code(), "root_cause": final.verdict.root_cause,
                        "findings": [f.to_json(lang) for f in final.verdict.findings]},
        "smoke": outcome.smoke,
        "exit_code": outcome.exit_code,
    }
    return doc


def show_fix(outcome, out, rerun: Optional[Rerun], apply: bool, smoke_wanted: bool, snapshot: Optional[str] = None,
             site_packages: Sequence[str] = ()) -> None:
    """fix's report once the use case ran (the plan itself was shown as it was made);
    ``snapshot``/``site_packages``: what the plan was made from (--from, --site-packages)."""
    lang = out.lang
    if outcome.messages and not out.as_json:
        say_err(tr("fix.requirements", lang, path=outcome.messages[0]))
    if out.as_json:
        if apply and not outcome.unresolvable and outcome.smoke_skipped:
            say_err(tr("fix.smoke_skip", lang, why=tr("fix.smoke_skip.build_stage", lang)))
        print_json(fix_json(outcome, rerun, lang, apply))
        return
    if outcome.tuning_patch is not None:
        print_tuning_patch(outcome.tuning_patch, lang)
    if not apply:
        image = outcome.facts.image if outcome.facts is not None else None
        image_ref = None
        if image is not None:
            from doctor.render_image import fix_notes

            for line in fix_notes(image, outcome.image_judgement, lang):
                _out(line)
            image_ref = image.names[0] if image.names else image.ref
        carry = carry_out(rerun, outcome.facts, snapshot, site_packages) if rerun is not None else None
        print_plan(outcome.plan, lang, rerun=rerun, dry_run=True, image_ref=image_ref, carry=carry)
        return
    if outcome.unresolvable:  # the plan was shown with the resolver's message; nothing changed
        return
    result, final, code = outcome.result, outcome.final, outcome.exit_code
    assert final is not None
    # the verdict first, then how to undo it, then the detail
    *stages, verdict = apply_verdict_lines(final.verdict, outcome.smoke, outcome.smoke_skipped, smoke_wanted, code, lang)
    _out(verdict)
    if result is not None:
        from doctor.shell.transaction import rollback_argv

        _out(tr("fix.applied", lang, id=result.txn_id))
        _out("  " + cmd(*rollback_argv(outcome.target_python or "python3")).shell())
    for line in stages:
        _out(line)
    if result is not None:
        for n, (a, b) in result.changed.items():
            _out(f"  {n}: {a or '-'} -> {b or '-'}")
        for line in verification_lines(result.verification, lang):
            _out(line)
    print_before_after(outcome.before, final.verdict, lang)
    from doctor.render import print_check

    print_check(final.verdict, stage=final.ctx.stage, target_row=final.ctx.release.key if final.ctx.release else None,
                timings=final.timings, lang=lang, verbose=False, exit_code=code, summary=False)


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


def verification_lines(v, lang: str) -> List[str]:
    """What the import check before the commit did: imported, only located, not verified."""
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


def show_rollback(outcome, out) -> None:
    result = outcome.result
    if out.as_json:
        print_json({"transaction": result.txn_id,
               "restored": {n: {"before": a, "after": b} for n, (a, b) in result.restored.items()},
               "note": result.note, "exit_code": outcome.exit_code})
        return
    _out(tr("fix.rolled", out.lang, id=result.txn_id))
    for n, (a, b) in result.restored.items():
        _out(f"  {n}: {a or '-'} -> {b or '-'}")
