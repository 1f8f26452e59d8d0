"""How a fix plan is printed: the pins, the resolver's verdict, the steps, the hand steps, the
other ways and the notes (``fix``, ``fix --bundle``). Every command is a line of its own, indented
and never wrapped or padded, so that it runs when copied; words go on their own lines."""
from __future__ import annotations

from typing import Optional

from doctor.cli.invocation import Rerun
from doctor.findings import Command, cmd
from doctor.i18n import T, join, tr
from doctor.render import COMMAND, console_lines

STEP = "   "  # indent of a step's command and words under its title


def print_plan(plan, lang: str, file=None, rerun: Optional[Rerun] = None, dry_run: bool = False,
               image_ref: Optional[str] = None) -> None:
    """``rerun(**changes)`` rebuilds the command that made the plan with one option changed (the
    other ways are offered as commands); without it they are offered as ``ascend-doctor fix ...``.
    ``dry_run``: the verdict (nothing changed, and what carries the plan out) comes right after
    the header, before the detail; ``image_ref``: the plan is for that image, carried out by a
    Dockerfile built FROM it (an image is not changed in place)."""
    from doctor.plan.builder import note_text
    from doctor.plan.steps import kind_of

    out = console_lines(file)
    out(tr("fix.header", lang, target=plan.target, row=plan.row), "bold")
    failed = (plan.resolution or {}).get("status") == "failed"
    if dry_run:
        print_dry_run_verdict(out, plan, lang, rerun, image_ref)
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


def print_dry_run_verdict(out, plan, lang: str, rerun: Optional[Rerun], image_ref: Optional[str]) -> None:
    """What the dry run comes to, and the one thing to run: nothing to change; the plan cannot
    be proven (the resolver's message follows); the command that carries it out; for an image
    the Dockerfile lines (an image is not changed in place); or that only hand steps are left."""
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
        out(tr("fix.dry", lang), "bold")
        out(COMMAND[:2] + rerun(apply=True).shell(), "cyan")
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
    if a.get("vllm_from") == "source":
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
