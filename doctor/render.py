"""Output: rich tables for people, one JSON object for programs."""
from __future__ import annotations

import json
import os
import sys
from typing import Dict, Optional

from doctor import __version__
from doctor.findings import FAIL, INFO, OK, SKIP, WARN, Verdict
from doctor.i18n import tr

SYMBOL = {OK: "✓", INFO: "i", WARN: "!", FAIL: "✗", SKIP: "-"}
STYLE = {OK: "green", INFO: "cyan", WARN: "yellow", FAIL: "bold red", SKIP: "dim"}
JSON_SCHEMA_VERSION = 1


def check_json(verdict: Verdict, *, stage: str, target: Dict, timings: Dict[str, float], lang: str) -> str:
    counts = verdict.counts()
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool_version": __version__,
        "stage": stage,
        "target": target,
        "summary": {"ok": counts[OK], "info": counts[INFO], "warn": counts[WARN], "fail": counts[FAIL],
                    "skip": counts[SKIP], "root_cause": verdict.root_cause},
        "findings": [f.to_json(lang) for f in verdict.findings],
        "timings_ms": timings,
    }
    return json.dumps(doc, ensure_ascii=False, indent=2)


def print_check(verdict: Verdict, *, stage: str, target_row: Optional[str], timings: Dict[str, float],
                lang: str, verbose: bool, exit_code: int, file=None, header: Optional[str] = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    stream = file or sys.stdout
    # Logs and pipes get 120 columns instead of rich's 80, so findings stay on one line.
    wide = None if os.environ.get("COLUMNS") or (hasattr(stream, "isatty") and stream.isatty()) else 120
    console = Console(file=stream, highlight=False, width=wide)
    target = header or (tr("render.target", lang, row=target_row) if target_row else tr("render.no_target", lang))
    console.print(Text(tr("render.header", lang, v=__version__, stage=stage, target=target), style="bold"))
    root = next((f for f in verdict.findings if f.root_cause), None)
    if root:
        line = Text()
        line.append(f"{tr('render.root', lang)}: ", style="bold red")
        line.append(f"{root.id} — {root.title.text(lang)}")
        console.print(line)
        if root.hint:
            console.print(Text(f"  → {root.hint.text(lang)}"))
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1))
    table.add_column("s", no_wrap=True)
    table.add_column("id", no_wrap=True, style="dim")
    table.add_column("finding", overflow="fold")
    skipped = [f for f in verdict.findings if f.status == SKIP]
    for f in verdict.findings:
        if f.status == SKIP and not verbose:
            continue  # summarised below the table: in a build stage they share one reason
        body = Text(f.title.text(lang))
        if f.status in (WARN, FAIL) and f.expected:
            body.append(f"  [{tr('render.expected', lang)}: {f.expected}]", style="dim")
        if f.blocked_by:
            body.append(f"  ({tr('render.blocked', lang, id=f.blocked_by)})", style="dim")
        if f.hint and f.status in (WARN, FAIL, INFO) and not f.root_cause:
            body.append(f"\n→ {f.hint.text(lang)}", style="dim" if f.status == INFO else None)
        if verbose:
            for e in f.evidence:
                if e:
                    body.append(f"\n  · {e}", style="dim")
            if f.source:
                body.append(f"\n  · {tr('render.source', lang)}: {f.source}", style="dim")
        table.add_row(Text(SYMBOL[f.status], style=STYLE[f.status]), f.id, body)
    console.print(table)
    with_commands = [f for f in verdict.findings if f.commands and f.status in (WARN, FAIL)]
    if with_commands:
        # each command on a line of its own, never wrapped, so that it runs when copied
        console.print(Text(tr("render.commands", lang), style="bold"))
        for f in with_commands:
            console.print(Text(f"  # {f.id}", style="dim"))
            for c in f.commands:
                console.print(Text(f"  {c.shell()}"), soft_wrap=True)
    if skipped and not verbose:
        reasons = "; ".join(sorted({x.title.text(lang) for x in skipped}))
        console.print(Text(f"{SYMBOL[SKIP]}  {', '.join(x.id for x in skipped)}: {reasons}", style="dim"))
    if verbose and timings:
        console.print(Text(tr("render.timings", lang) + ": " + ", ".join(f"{k}={v:g}" for k, v in timings.items()), style="dim"))
    counts = verdict.counts()
    if not counts[FAIL] and not counts[WARN]:
        console.print(Text(tr("render.healthy", lang), style="green"))
    console.print(Text(tr("render.summary", lang, code=exit_code, **counts), style="bold"))
