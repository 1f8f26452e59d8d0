"""``[[image]]`` rows (matrices/images.toml): what an official vllm-ascend image contains where it
differs from the wheel's pins, per published tag, with the tag's Dockerfile as the source.

A deviation names the package, the version the image installs and the Dockerfile step that
installs it (a text found in that layer's history, e.g. ``install_daily_deps.sh``): a package
in an image is the vendor's documented deviation only when it came from that very step at that
version; the same package reinstalled by a later layer (a user image built on the official one)
is judged like any other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.matrix.schema import Field, check_pep440, check_text

DEVIATION_SCHEMA: Dict[str, Field] = {
    "package": Field(check_text, required=True, doc="distribution name (any spelling; compared canonically)"),
    "version": Field(check_pep440, required=True,
                     doc="the version the image installs (a local label such as +git... is ignored)"),
    "step": Field(check_text, required=True,
                  doc="text of the Dockerfile step that installs it, as found in the layer history"),
    "summary": Field(check_text, required=True, doc="what the vendor installs and why it differs (English)"),
}

IMAGE_SCHEMA: Dict[str, Field] = {
    "tag": Field(check_text, required=True, doc="the published tag, e.g. v0.30.0rc2-a3"),
    "repository": Field(check_text, required=True, doc="e.g. quay.io/ascend/vllm-ascend"),
    "vllm_ascend": Field(check_pep440, required=True, doc="the vllm-ascend release the image installs"),
    "dockerfile": Field(check_text, required=True, doc="the Dockerfile the tag is built from"),
    "base": Field(check_text, doc="the FROM image of that Dockerfile (its default build arguments)"),
    "deviations": Field(check_text, table=DEVIATION_SCHEMA, doc="packages that differ from the wheel's pins"),
    "source": Field(check_text, required=True, doc="where this is read (URL, or the sdist and file)"),
}


@dataclass(frozen=True)
class Deviation:
    package: str
    version: str
    step: str
    summary: str


@dataclass(frozen=True)
class OfficialImage:
    tag: str
    repository: str
    vllm_ascend: str
    dockerfile: str
    source: str
    base: Optional[str] = None
    deviations: Tuple[Deviation, ...] = ()

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"


def image_from(d: Dict) -> OfficialImage:
    devs = tuple(Deviation(**x) for x in d.get("deviations") or ())
    return OfficialImage(tag=d["tag"], repository=d["repository"], vllm_ascend=d["vllm_ascend"],
                         dockerfile=d["dockerfile"], source=d["source"], base=d.get("base"), deviations=devs)


def by_name(rows: Sequence[OfficialImage], names: Sequence[str]) -> Optional[OfficialImage]:
    """The row whose repository:tag is one of the image's names (docker.io shorthand expanded)."""
    from doctor.parse.oci import repository, tag_of

    wanted = set()
    for n in names:
        repo, tag = tag_of(n)
        wanted.add((repository(repo), tag))
    return next((r for r in rows if (repository(r.repository), r.tag) in wanted), None)


def for_release(rows: Sequence[OfficialImage], vllm_ascend: Optional[str]) -> List[OfficialImage]:
    """Every official image of a vllm-ascend release (the variants share their deviations)."""
    from doctor.versions import same_release

    if not vllm_ascend:
        return []
    return [r for r in rows if same_release(vllm_ascend, r.vllm_ascend)]
