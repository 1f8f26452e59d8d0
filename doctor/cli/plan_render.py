"""How a fix plan is printed: the pins, the resolver's verdict, the steps (one command per
line), the hand steps and the notes (``fix``, ``fix --bundle``)."""
from __future__ import annotations

import os
import sys

from doctor.i18n import tr


def print_plan(plan, lang: str, file=None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from doctor.plan.builder import note_text
    from doctor.plan.steps import kind_of

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
    if plan.pins:
        console.print(pins)
    print_resolution(plan, lang, console)
    if plan.empty:
        console.print(Text(tr("fix.empty", lang), style="green"))
    first_run = next((i for i, s in enumerate(plan.steps) if s.runs), len(plan.steps))
    first = [s for s in plan.steps[:first_run] if s.kind == "vendor"]
    auto = [s for s in plan.steps if s.runs]
    hand = [s for s in plan.steps if not s.runs and s not in first]
    if first and auto:
        console.print(Text(tr("plan.first", lang), style="bold yellow"))
        for s in first:
            console.print(Text(f"- [{s.kind}] {s.why.text(lang)}"), soft_wrap=True)
    else:
        hand = first + hand
    if auto:
        console.print(Text(tr("fix.steps", lang), style="bold"))
        for i, s in enumerate(auto, 1):
            line = Text(f"{i}. [{s.kind}/{s.action}] ", style="bold")
            line.append(s.why.text(lang))
            console.print(line)
            for shown in kind_of(s).show(s, lang):
                console.print(Text("   $ " + shown, style="dim"), soft_wrap=True)
    if hand:
        console.print(Text(tr("fix.manual", lang), style="bold yellow"))
        for s in hand:
            console.print(Text(f"- [{s.kind}] {s.why.text(lang)}"), soft_wrap=True)
            for shown in kind_of(s).show(s, lang):
                console.print(Text(f"   $ {shown}", style="dim"), soft_wrap=True)
    for key, items in (("residual", [note_text(m, lang) for m in plan.expected_residual]),
                       ("alternatives", [(a["how"].text(lang) if hasattr(a.get("how"), "text") else a.get("how"))
                                         or f"--prefer {a['prefer']}: vllm-ascend {a['target']}"
                                         + (f" ({'; '.join(a['needs'])})" if a.get("needs") else "")
                                         for a in plan.alternatives]),
                       ("notes", [note_text(m, lang) for m in plan.notes])):
        if items:
            console.print(Text(tr(f"fix.{key}", lang), style="bold"))
            for it in items:
                console.print(Text(f"- {it}", style="dim"), soft_wrap=True)


def human_size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def print_resolution(plan, lang: str, console) -> None:
    """Whether the resolver proved the plan: the total download, or pip's own message, the
    hosts that did not answer and what works instead (one runnable command per line)."""
    from rich.text import Text

    from doctor.i18n import tr

    res = plan.resolution or {}
    status = res.get("status")
    if status == "resolved":
        key = "plan.status.resolved_bundle" if res.get("source") == "bundle" else "plan.status.resolved"
        line = tr(key, lang, installer=res.get("installer", "pip"), files=len(res.get("files", [])),
                  size=human_size(res.get("download_bytes", 0)))
        if res.get("unknown_sizes"):
            line += tr("plan.status.unknown_sizes", lang, n=res["unknown_sizes"])
        console.print(Text(line, style="dim"), soft_wrap=True)
    elif status == "not resolved" and plan.runnable:
        key = {"offline": "plan.status.not_resolved", "source-build": "plan.status.source_build"}.get(
            res.get("why"), "plan.status.no_interpreter")
        console.print(Text(tr(key, lang), style="yellow"), soft_wrap=True)
    elif status == "failed":
        failure = res.get("failure", {})
        console.print(Text(tr("plan.status.failed", lang, kind=failure.get("kind")), style="bold red"), soft_wrap=True)
        for x in (failure.get("message") or "").splitlines():
            console.print(Text("  " + x), soft_wrap=True)
        for h in failure.get("hosts", []):
            console.print(Text("  " + tr("plan.status.host", lang, host=h["host"], how=h["how"]), style="red"), soft_wrap=True)
        rem = plan.remedies
        if rem is not None and (rem.notes or rem.commands):
            console.print(Text(tr("plan.status.what_works", lang), style="bold"))
            for n in rem.notes:
                console.print(Text("- " + n.text(lang)), soft_wrap=True)
            for c in rem.commands:
                console.print(Text("- " + c.label.text(lang)), soft_wrap=True)
                console.print(Text(c.shell(), style="dim"), soft_wrap=True)
