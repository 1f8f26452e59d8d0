"""Output of image checks: the image block above the verdict, its JSON (the read progress is
doctor.shell.host.progress.ByteBar)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:  # rich is imported when a bar is shown
    pass

from doctor.facts import ImageFacts
from doctor.i18n import tr
from doctor.textsafe import clean

STEP_MAX = 200  # a Dockerfile step shown on one line; the whole text is in --json


def short_id(digest: Optional[str]) -> str:
    if not digest:
        return ""
    algo, _, hexpart = digest.partition(":")
    return f"{algo}:{hexpart[:12]}" if hexpart else digest


def one_line(text: str, limit: int = STEP_MAX) -> str:
    """A Dockerfile step on one line, safe for a terminal (it is the image's data)."""
    text = clean(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def image_lines(img: ImageFacts, judgement, lang: str) -> List[str]:
    """The lines shown above the verdict: the image, its digest and base, what it is built on,
    and the layer each failing package came from."""
    # every value here is the image's data (names, digests, base, steps): cleaned for the terminal
    shown = clean(img.ref)
    if img.source == "tar" and img.names and img.names[0] != img.ref:
        shown = f"{clean(img.names[0])} ({clean(img.ref)})"  # the tag the archive gives it, and the file
    out = [tr("image.show.image", lang, ref=shown, platform=clean(img.platform or "?"), id=clean(short_id(img.id)),
              layers=len(img.layers))]
    if img.digest:
        out.append(tr("image.show.digest", lang, digest=clean(img.digest)))
    if judgement is not None and judgement.base:
        out.append(tr("image.show.base", lang, base=clean(judgement.base),
                      how=tr(f"image.how.{judgement.base_source}", lang)))
    else:
        out.append(tr("image.show.no_base", lang))
    if judgement is not None and judgement.official is not None:
        out.append(tr("image.show.official", lang, image=judgement.official.ref))
    elif judgement is not None and judgement.built_on is not None:
        out.append(tr("image.show.built_on", lang, release=judgement.built_on.vllm_ascend))
    for o in judgement.origins if judgement is not None else []:
        if o.layer is None:
            out.append("  " + tr("image.show.origin_unknown", lang, finding=o.finding, package=clean(o.package),
                                  version=clean(o.version)))
        else:
            out.append("  " + tr("image.show.origin", lang, finding=o.finding, package=clean(o.package),
                                  version=clean(o.version), layer=o.layer, layers=len(img.layers),
                                  step=one_line(o.created_by) or "?"))
    return out


def fix_command(img: ImageFacts) -> str:
    """The `fix` that shows this image's plan, as it can be run here."""
    import shlex

    argv = ["ascend-doctor", "fix", "--image-tar" if img.source == "tar" else "--image", img.ref]
    if len(img.available_platforms) > 1 and img.platform:
        argv += ["--platform", img.platform]
    from doctor.program import spelled

    return clean(shlex.join(spelled(argv)))


def print_image(img: ImageFacts, judgement, lang: str, file=None, failing: bool = False,
                part: str = "all") -> None:
    """The image lines: ``part`` "identity" is the first (what was read, above the verdict),
    "detail" the others (digest, base, the layer each problem came from) and the fix command."""
    from rich.text import Text

    from doctor import terminal

    console = terminal.console(file=file or sys.stdout, highlight=False, soft_wrap=True)
    lines = image_lines(img, judgement, lang)
    for i, line in enumerate(lines):
        if (part == "identity" and i > 0) or (part == "detail" and i == 0):
            continue
        console.print(Text(line, style="bold" if i == 0 else ""))
    if failing and part != "identity":
        console.print(Text(tr("image.show.fix", lang)))
        console.print(Text("  " + fix_command(img)))


def image_json(img: ImageFacts, judgement, lang: str) -> Dict[str, Any]:
    doc: Dict[str, Any] = {
        "ref": img.ref, "source": img.source, "platform": img.platform, "machine": img.machine, "id": img.id,
        "digest": img.digest, "names": list(img.names), "created": img.created or None,
        "base": judgement.base if judgement else img.base,
        "base_source": (judgement.base_source if judgement else img.base_source) or None,
        "official": judgement.official.ref if judgement and judgement.official else None,
        "built_on": judgement.built_on.vllm_ascend if judgement and judgement.built_on else None,
        "layers": [{"index": x.index, "digest": x.digest, "created_by": x.created_by, "size": x.size} for x in img.layers],
        "origins": [{"finding": o.finding, "package": o.package, "version": o.version, "layer": o.layer,
                     "created_by": o.created_by} for o in (judgement.origins if judgement else [])],
        "deviations": [{"finding": e.finding, "package": e.package, "version": e.version, "image": e.image.ref,
                        "dockerfile": e.image.dockerfile, "step": e.deviation.step, "summary": e.deviation.summary,
                        "source": e.image.source} for e in (judgement.excused if judgement else [])],
    }
    return doc


def fix_notes(img: ImageFacts, judgement, lang: str) -> List[str]:
    """Above `fix --image`'s plan: the image, where its steps run, what the vendor chose."""
    out = image_lines(img, judgement, lang)
    out.append(tr("image.fix.where", lang, ref=clean(img.names[0] if img.names else img.ref)))
    if judgement is not None and judgement.excused:
        packages = []
        for e in judgement.excused:
            item = clean(f"{e.package} {e.version}")
            if item not in packages:
                packages.append(item)
        out.append(tr("image.fix.vendor", lang, packages=", ".join(packages)))
    return out
