"""The `explain` command, ready for the main CLI: ``app.command("explain")(explain_command)``."""
from __future__ import annotations

from typing import Any, List

import typer

from doctor.cli import params as p
from doctor.cli.options import takes
from doctor.cli.params import Opt
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


EXPLAIN = (
    p.JSON, p.LANG, p.MATRIX.but(kind="paths"),
    Opt("check", ("--check",), "flag", False, "Also run check on this host and confirm the causes found."),
    p.ROOT, p.PYTHON,
    Opt("max_bytes", ("--max-bytes",), "str", None, "Read at most this much of all logs together (default 2G; K, M, G suffixes).",
        metavar="SIZE"),
    Opt("max_seconds", ("--max-seconds",), "seconds", None, "Stop reading after this many seconds (default 600).",
        metavar="SECONDS"),
)


@takes(*EXPLAIN)
def explain_command(
    files: List[str] = typer.Argument(None, metavar="[LOG...|-]",
                                      help="Logs or tracebacks to explain ('-' reads stdin); several logs of one job "
                                           "(one per node or rank) are read together to find where a failure started."),
    **params: Any,
) -> None:
    """Explain error logs: the cause of each known error, the vendor code tables, generic causes, a fix; with --check, what this host confirms."""
    from doctor.usecases.explain import run_explain  # not on check's start-up path

    max_bytes, max_seconds = params["max_bytes"], params["max_seconds"]
    if max_seconds is not None and max_seconds <= 0:
        raise UsageError(T("explain.error.bad_max_seconds"))
    out = p.output(params)
    raise typer.Exit(run_explain(list(files or []) or "-", out.lang, out.as_json, params["matrix"],
                                 check=params["check"], root=params["root"], python=params["python"],
                                 max_bytes=parse_size(max_bytes) if max_bytes is not None else None,
                                 max_seconds=max_seconds))
