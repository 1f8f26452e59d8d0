"""fleet compare / check output: one table of layers x nodes (rows that break their rule
highlighted), the cross-node findings, one summary line; or one JSON object."""
from __future__ import annotations

import os
import sys
from typing import Dict, Optional, Tuple

from doctor import __version__
from doctor.findings import EXIT_FAIL, EXIT_WARN, FAIL, INFO, OK, SKIP, WARN, Verdict
from doctor.fleet.compare import FleetReport, Node
from doctor.i18n import tr
from doctor.render import json_text
from doctor.textsafe import clean

SYMBOL = {OK: "✓", INFO: "i", WARN: "!", FAIL: "✗", SKIP: "-"}
STYLE = {OK: "green", INFO: "cyan", WARN: "yellow", FAIL: "bold red", SKIP: "dim"}
JSON_SCHEMA_VERSION = 1


def verdict_cell(node: Node, lang: str) -> str:
    if node.facts is None:
        return tr("fleet.table.no_answer", lang)
    v = node.verdict
    if v is None:
        return "-"
    counts = v.counts()
    code = v.exit_code()
    if code == EXIT_FAIL:
        return f"✗ {counts[FAIL]} fail ({clean(v.root_cause)})"
    if code == EXIT_WARN:
        return f"! {counts[WARN]} warn"
    return "✓ ok"


def _verdict_json(v: Optional[Verdict]) -> Optional[Dict]:
    if v is None:
        return None
    counts = v.counts()
    return {"exit_code": v.exit_code(), "root_cause": v.root_cause,
            "summary": {k: counts[k] for k in (OK, INFO, WARN, FAIL, SKIP)},
            "problems": [f.id for f in v.findings if f.status in (FAIL, WARN)]}


def report_json(report: FleetReport, lang: str) -> str:
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "tool_version": __version__,
        "exit_code": report.exit_code(),
        "nodes": [{"name": n.name, "answered": n.answered, "error": n.error, "verdict": _verdict_json(n.verdict)}
                  for n in report.nodes],
        "rows": [{"layer": r.layer, "item": r.item, "rule": r.rule, "differs": r.differs, "bad": r.bad,
                  "values": r.values} for r in report.rows],
        "findings": [f.to_json(lang) for f in report.findings],
    }
    return json_text(doc)


def verdict_line(report: FleetReport, lang: str) -> Tuple[str, str]:
    """The first line of the report: (text, style)."""
    counts = {s: sum(1 for f in report.findings if f.status == s) for s in (FAIL, WARN)}
    code = report.exit_code()
    if code == 0:
        return "✓ " + tr("fleet.healthy", lang), "green"
    key = "fleet.verdict.fail" if counts[FAIL] else ("fleet.verdict.warn" if code == EXIT_WARN else "fleet.verdict.other")
    symbol = "✗ " if counts[FAIL] or code not in (EXIT_WARN,) else "! "
    return symbol + tr(key, lang, fail=counts[FAIL], warn=counts[WARN], nodes=len(report.nodes), code=code), \
        "bold red" if symbol == "✗ " else "yellow"


def print_report(report: FleetReport, lang: str, verbose: bool = False, file=None) -> None:
    """The verdict first, then what is wrong with what to do, then the table of layers x nodes
    (fitted to the width: a version, an address or a URL is never split), then the counts."""
    from rich.text import Text

    from doctor import terminal
    from doctor.render import print_fitted_table

    # host names, values and findings come from the nodes: every one is data (a Text is never
    # read as markup, so root@[fd00::1] stays whole; clean() shows control characters escaped)
    stream = file or sys.stdout
    names = [n.name for n in report.nodes]
    tty = hasattr(stream, "isatty") and stream.isatty()
    width = None if os.environ.get("COLUMNS") or tty else max(120, 40 + 26 * len(names))
    console = terminal.console(file=stream, highlight=False, width=width)
    text, style = verdict_line(report, lang)
    console.print(Text(text, style=style), soft_wrap=True)
    problems = [f for f in report.findings if f.status in (FAIL, WARN, INFO) or verbose]
    for f in problems:
        line = Text()
        line.append(f"{SYMBOL[f.status]} ", style=STYLE[f.status])
        line.append(f"{f.id}  ", style="dim")
        line.append(clean(f.title.text(lang)))
        if f.observed:
            line.append(f"\n    {clean(f.observed)}", style="dim")
        if f.hint and f.status in (FAIL, WARN):
            line.append(f"\n    → {clean(f.hint.text(lang))}")
        console.print(line, soft_wrap=True)
    headers = [Text(tr("fleet.table.layer", lang)), Text(tr("fleet.table.item", lang))] + [Text(clean(n)) for n in names]
    rows = []
    for row in report.rows:
        style = "bold red" if row.bad and row.rule != "show" else ("yellow" if row.differs and row.rule == "show" else "")
        cells = [Text(clean(row.values.get(n) or "-"), style=style) if n in row.values else Text("") for n in names]
        rows.append([Text(clean(row.layer), style="dim"), Text(clean(row.item), style=style), *cells])
    rows.append([Text(""), Text(tr("fleet.table.verdict", lang), style="bold"),
                 *[Text(verdict_cell(n, lang), style=_verdict_style(n)) for n in report.nodes]])
    print_fitted_table(console, None, headers, rows, boxed=False)
    counts = {s: sum(1 for f in report.findings if f.status == s) for s in (FAIL, WARN)}
    console.print(Text(tr("fleet.summary", lang, nodes=len(report.nodes), answered=sum(1 for n in report.nodes if n.answered),
                          fail=counts[FAIL], warn=counts[WARN], code=report.exit_code()), style="bold"))


def _verdict_style(node: Node) -> str:
    if node.facts is None or node.verdict is None:
        return "bold red"
    code = node.verdict.exit_code()
    return "bold red" if code == EXIT_FAIL else ("yellow" if code == EXIT_WARN else "green")
