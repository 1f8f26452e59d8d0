"""What the commands share that needs no typer: the check front end (doctor/entry.py) runs
``check`` without importing typer, and the typer commands take these from doctor.cli.options."""
from __future__ import annotations

import os
from typing import Optional

from doctor.errors import UsageError


def pick_language(option: Optional[str]) -> str:
    """--lang checked, else the language of LC_ALL / LC_MESSAGES / LANG."""
    from doctor.i18n import resolve_lang

    if option not in (None, "en", "zh"):
        raise UsageError(f"--lang {option!r}: use en or zh")
    return resolve_lang(option, os.environ)


def image_request(image: Optional[str], image_tar: Optional[str], platform: Optional[str], pull: bool,
                  lang: Optional[str] = None, max_entries: Optional[int] = None, max_disk: Optional[int] = None):
    """The --image/--image-tar/--platform/--pull/--max-image-* options of check, snapshot and fix
    (None when none is given: a host check loads none of the image code)."""
    if not (image or image_tar or platform or pull or max_entries or max_disk):
        return None
    from doctor.usecases.image import ImageRequest

    return ImageRequest(image=image, image_tar=image_tar, platform=platform, pull=pull,
                        lang=pick_language(lang), max_entries=max_entries, max_disk_mb=max_disk)
