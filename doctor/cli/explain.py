"""The `explain` command, ready for the main CLI: ``app.command("explain")(explain_command)``."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer


def explain_command(
    file: str = typer.Argument("-", metavar="[FILE|-]", help="Log or traceback to explain; '-' reads stdin."),
    as_json: bool = typer.Option(False, "--json", help='Print {"matches": [...]} as JSON.'),
    lang: Optional[str] = typer.Option(None, "--lang", metavar="en|zh", help="en or zh (default: from LC_ALL/LANG)."),
    matrix: List[Path] = typer.Option([], "--matrix", metavar="PATH", help="Extra matrix overlay file (repeatable)."),
) -> None:
    """Match an error log against the known signatures: cause, fix and the check that confirms it."""
    from doctor.usecases.explain import run_explain  # not on check's start-up path

    raise typer.Exit(run_explain(file, lang, as_json, matrix))
