"""Options and helpers shared by the command modules, defined once so that every command
spells and documents them the same way."""
from __future__ import annotations

import math
from typing import Any, Optional

import typer

from doctor.cli.common import image_request, pick_language  # noqa: F401  (the commands import them from here)
from doctor.limits import MAX_OPTION_SECONDS


def _finite(value: Optional[float]) -> Optional[float]:
    # nan compares false with everything (a timeout of nan seconds "fires" at once) and inf
    # overflows the waits below: both are refused here, for every float option of the CLI
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"{value} is not a finite number.")
    if value is not None and abs(value) > MAX_OPTION_SECONDS:  # 1e18 overflowed the waits as inf did
        raise typer.BadParameter(f"{value:g} is out of range (at most {MAX_OPTION_SECONDS:.0f} seconds).")
    return value


def float_option(default: Optional[float], *names: str, **kwargs: Any) -> Any:
    """Every float option of the CLI: a number of seconds, never nan nor inf."""
    return typer.Option(default, *names, callback=_finite, **kwargs)


ROOT = typer.Option("/", "--root", help="Read the host below this directory (an image, a mounted disk).")
PYTHON = typer.Option(None, "--python", help="Target interpreter (default: the active venv/conda env, else python3).")
SITE = typer.Option([], "--site-packages", help="Read packages from this directory (repeatable; no interpreter).")
STAGE = typer.Option("auto", "--stage", help="build: skip hardware; runtime: judge it; auto: build when no NPU is visible.")
JSON = typer.Option(False, "--json", help="Print one JSON object on stdout and nothing else.")
LANG = typer.Option(None, "--lang", help="en or zh (default: from LANG).")
MATRIX = typer.Option([], "--matrix", help="Extra matrix overlay file (repeatable).")
NPU_SMI_TIMEOUT = float_option(5.0, "--npu-smi-timeout", help="Seconds to wait for npu-smi.")
NPU_SMI = typer.Option(None, "--npu-smi",
                       help="Run this npu-smi (with --root, nothing inside the root is run unless named).")


HCCN_TOOL = typer.Option(None, "--hccn-tool", help="Run this hccn_tool for the NPU network checks (default: only on the live host).")
HCCN_TIMEOUT = float_option(5.0, "--hccn-timeout", help="Seconds to wait for each hccn_tool call.")
IMAGE = typer.Option(None, "--image", help="Judge a Docker image (from the local engine, docker SDK) without running it.")
IMAGE_TAR = typer.Option(None, "--image-tar", help="Judge a `docker save` or OCI-layout tarball (no daemon needed).")
PLATFORM = typer.Option(None, "--platform", help="Variant of a multi-platform image: linux/arm64 or linux/amd64.")
PULL = typer.Option(False, "--pull", help="Pull --image first (with --platform, that variant).")
MAX_IMAGE_ENTRIES = typer.Option(None, "--max-image-entries",
                                 help="Most entries an image's layers may hold, in all (default 1000000).")
MAX_IMAGE_DISK = typer.Option(None, "--max-image-disk",
                              help="Most MiB reading an image may write to the temporary directory (default 2048).")
