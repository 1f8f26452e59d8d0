"""The body of ``check``: what it runs and prints once its options are parsed, with no typer.

Both command lines end here: the typer command (doctor/cli/main.py) and the front end that
parses check's options itself (doctor/entry.py), so the two cannot say different things.
"""
from __future__ import annotations

import sys
from typing import List, Optional

from doctor.cli.common import image_request, pick_language
from doctor.errors import UsageError


def run_check_command(
    root: str = "/",
    python: Optional[str] = None,
    site_packages: Optional[List[str]] = None,
    snapshot: Optional[str] = None,
    stage: str = "auto",
    target: Optional[str] = None,
    as_json: bool = False,
    lang: Optional[str] = None,
    verbose: bool = False,
    fail_on: str = "fail",
    matrix: Optional[List[str]] = None,
    npu_smi_timeout: float = 5.0,
    npu_smi: Optional[str] = None,
    serve_args: Optional[str] = None,
    serve_args_file: Optional[str] = None,
    mooncake_master: Optional[str] = None,
    hccn_tool: Optional[str] = None,
    hccn_timeout: float = 5.0,
    model: Optional[str] = None,
    verify_weights: bool = False,
    verify_sample: int = 3,
    image: Optional[str] = None,
    image_tar: Optional[str] = None,
    platform: Optional[str] = None,
    pull: bool = False,
    max_image_entries: Optional[int] = None,
    max_image_disk: Optional[int] = None,
    requirements: Optional[List[str]] = None,
) -> int:
    """Probe, judge, print; the exit code (``--requirements`` ends in the guard's command)."""
    from doctor.i18n import tr
    from doctor.shell.host.progress import bytes_bar, waiting
    from doctor.usecases.check import CheckOptions, run_check, target_info

    site_packages = list(site_packages or [])
    matrix = list(matrix or [])
    if fail_on not in ("fail", "warn"):
        raise UsageError(f"--fail-on {fail_on!r}: use fail or warn")
    lang = pick_language(lang)
    if requirements:
        from doctor.cli.guard import check_requirements

        check_requirements(CheckOptions(root=root, python=python, stage=stage, target=target, matrix=matrix,
                                        npu_smi_timeout=npu_smi_timeout, npu_smi=npu_smi), list(requirements), as_json,
                           lang, verbose, fail_on)
    with bytes_bar(verify_weights, "sha256") as progress, \
            waiting(not as_json and not verify_weights, tr("render.probing", lang)):
        result = run_check(CheckOptions(root=root, python=python, site_packages=site_packages, snapshot=snapshot,
                                        stage=stage, target=target, matrix=matrix, npu_smi_timeout=npu_smi_timeout,
                                        npu_smi=npu_smi, serve_args=serve_args, serve_args_file=serve_args_file,
                                        mooncake_master=mooncake_master, hccn_tool=hccn_tool, hccn_timeout=hccn_timeout,
                                        model=model, verify_weights=verify_weights, verify_sample=verify_sample,
                                        progress=progress, image=image_request(image, image_tar, platform, pull, lang,
                                                            max_image_entries, max_image_disk)))
    code = result.verdict.exit_code(fail_on)
    if as_json:
        from doctor.render import check_json

        text = check_json(result.verdict, stage=result.ctx.stage, target=target_info(result.ctx), timings=result.timings,
                          lang=lang)
        if result.facts.image is not None:
            from doctor.render_image import with_image

            text = with_image(text, result, lang)
        sys.stdout.write(text + "\n")
    else:
        from doctor.render import print_check
        from doctor.usecases.check import no_ascend_stack

        if result.facts.image is not None:
            from doctor.render_image import print_image

            print_image(result.facts.image, result.image, lang, part="identity")
        print_check(result.verdict, stage=result.ctx.stage, target_row=result.ctx.release.key if result.ctx.release else None,
                    timings=result.timings, lang=lang, verbose=verbose, exit_code=code, no_ascend=no_ascend_stack(result))
        if result.facts.image is not None:  # detail: digest, base, the layer each problem came from
            print_image(result.facts.image, result.image, lang, failing=code != 0, part="detail")
    return code
