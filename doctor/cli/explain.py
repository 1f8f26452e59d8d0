"""The `explain` command, ready for the main CLI: ``app.command("explain")(explain_command)``."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from doctor.cli.options import JSON, LANG, MATRIX, PYTHON, ROOT, pick_language


def explain_command(
    files: List[str] = typer.Argument(None, metavar="[LOG...|-]",
                                      help="Logs or tracebacks to explain ('-' reads stdin); several logs of one job "
                                           "(one per node or rank) are read together to find where a failure started."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
    matrix: List[Path] = MATRIX,
    check: bool = typer.Option(False, "--check", help="Also run check on this host and confirm the causes found."),
    root: str = ROOT,
    python: Optional[str] = PYTHON,
) -> None:
    """Explain error logs: the cause of each known error, the vendor code tables, generic causes, a fix; with --check, what this host confirms."""
    from doctor.usecases.explain import run_explain  # not on check's start-up path

    raise typer.Exit(run_explain(list(files or []) or "-", pick_language(lang), as_json, matrix,
                                 check=check, root=root, python=python))
