"""The `smoke` command: a tiny inference on the NPU (or the CPU) in the target interpreter."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from doctor.cli.options import JSON, LANG, PYTHON, pick_language
from doctor.errors import UsageError
from doctor.i18n import tr


def smoke_command(
    python: Optional[str] = PYTHON,
    device: str = typer.Option("npu", "--device", help="npu (default) or cpu (to test the harness without an NPU)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds before the run counts as hung."),
    as_json: bool = JSON,
    lang: Optional[str] = LANG,
) -> None:
    """Run a smoke inference (import, device, matmul, greedy decode of a tiny transformer)."""
    from doctor.shell.host import Host
    from doctor.shell.prefetch import default_python
    from doctor.render import check_json, print_check
    from doctor.shell.smoke import run_smoke

    if device not in ("npu", "cpu"):
        raise UsageError(f"--device {device!r}: use npu or cpu")
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    language = pick_language(lang)
    if python and os.sep in python and not os.path.exists(python):
        raise UsageError(f"--python {python}: no such file")
    host = Host()
    result = run_smoke(host, python or default_python(host.env), device, timeout)
    code = result.verdict.exit_code()
    timings = {f"smoke.{s['step']}": s.get("ms", 0) for s in result.steps}
    if as_json:
        sys.stdout.write(check_json(result.verdict, stage="runtime", target={"device": device}, timings=timings,
                                    lang=language) + "\n")
    else:
        print_check(result.verdict, stage="runtime", target_row=None, timings=timings, lang=language,
                    verbose=False, exit_code=code,
                    header=tr("render.smoke_header", language, device=device, python=result.command.argv[0]))
    raise typer.Exit(code)
