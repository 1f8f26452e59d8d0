"""The body of ``check``: what it runs and prints once its options are parsed, with no typer.

Both command lines end here: the typer command (doctor/cli/main.py) and the front end that
parses check's options itself (doctor/entry.py), from the same declarations
(doctor/cli/params.py: CHECK), so the two cannot say different things.
"""
from __future__ import annotations

from typing import Any, Mapping

from doctor.cli.params import check_options, output
from doctor.errors import UsageError
from doctor.i18n import T

# what --requirements judges the environment with (the guard's path reads no other option)
REQUIREMENTS_READS = ("root", "python", "stage", "target", "matrix", "npu_smi_timeout", "npu_smi")


def run_check_command(params: Mapping[str, Any]) -> int:
    """Probe, judge, print; the exit code (``--requirements`` ends in the guard's command)."""
    from doctor.i18n import tr
    from doctor.render import show_check
    from doctor.shell.host.progress import bytes_bar, waiting
    from doctor.usecases.check import no_ascend_stack, run_check, target_info

    fail_on = params["fail_on"]
    if fail_on not in ("fail", "warn"):
        raise UsageError(T("check.error.bad_fail_on", value=repr(fail_on)))
    out = output(params)
    if params.get("requirements"):
        from doctor.cli.guard import check_requirements

        check_requirements(check_options({k: params[k] for k in REQUIREMENTS_READS}), list(params["requirements"]),
                           out.as_json, out.lang, out.verbose, fail_on)
    with bytes_bar(params["verify_weights"], "sha256") as progress, \
            waiting(not out.as_json and not params["verify_weights"], tr("render.probing", out.lang)):
        result = run_check(check_options(params, progress=progress))
    code = result.verdict.exit_code(fail_on)
    chosen = not params.get("python") and not params.get("site_packages") and not params.get("snapshot") \
        and (params.get("root") or "/") == "/" and not params.get("image") and not params.get("image_tar")
    show_check(result, out, code, target=target_info(result.ctx), no_ascend=no_ascend_stack(result), python_chosen=chosen)
    return code
