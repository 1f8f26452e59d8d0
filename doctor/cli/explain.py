"""The `explain` command, ready for the main CLI: ``app.command("explain")(explain_command)``."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from doctor.cli.options import JSON, LANG, MATRIX, PYTHON, ROOT, float_option, pick_language
from doctor.errors import UsageError
from doctor.i18n import T


def parse_size(text: str) -> int:
    """A byte count: digits with an optional K, M or G (powers of 1024), e.g. 2G, 512M, 100000."""
    raw = text.strip().upper()
    raw = raw[:-2] if raw.endswith("IB") else raw[:-1] if raw.endswith("B") else raw
    scale = 1
    if raw[-1:] in ("K", "M", "G", "T"):
        scale = 1024 ** ("KMGT".index(raw[-1]) + 1)
        raw = raw[:-1]
    if not raw.isdigit() or int(raw) <= 0:
        raise UsageError(T("explain.error.bad_max_bytes", text=repr(text)))
    return int(raw) * scale


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
    max_bytes: Optional[str] = typer.Option(None, "--max-bytes", metavar="SIZE",
                                            help="Read at most this much of all logs together (default 2G; K, M, G suffixes)."),
    max_seconds: Optional[float] = float_option(None, "--max-seconds", metavar="SECONDS",
                                                help="Stop reading after this many seconds (default 600)."),
) -> None:
    """Explain error logs: the cause of each known error, the vendor code tables, generic causes, a fix; with --check, what this host confirms."""
    from doctor.usecases.explain import run_explain  # not on check's start-up path

    if max_seconds is not None and max_seconds <= 0:
        raise UsageError(T("explain.error.bad_max_seconds"))
    raise typer.Exit(run_explain(list(files or []) or "-", pick_language(lang), as_json, matrix,
                                 check=check, root=root, python=python,
                                 max_bytes=parse_size(max_bytes) if max_bytes is not None else None,
                                 max_seconds=max_seconds))
