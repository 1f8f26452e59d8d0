"""``[[image]]`` rows (matrices/images.toml): what an official vllm-ascend image contains where it
differs from the wheel's pins, per published tag, with the tag's Dockerfile as the source.

A deviation names the package, the version the image installs and the Dockerfile step that
installs it (a text found in that layer's history, e.g. ``install_daily_deps.sh``): a package
in an image is the vendor's documented deviation only when it came from that very step at that
version; the same package reinstalled by a later layer (a user image built on the official one)
is judged like any other.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from doctor.record import record

from doctor.matrix.model import column
from doctor.matrix.schema import check_pep440, check_text

if TYPE_CHECKING:
    from doctor.matrix.model import Matrix


@record(frozen=True)
class Deviation:
    package: str = column(check_text, required=True, doc="distribution name (any spelling; compared canonically)")
    version: str = column(check_pep440, required=True,
                          doc="the version the image installs (a local label such as +git... is ignored)")
    step: str = column(check_text, required=True,
                       doc="text of the Dockerfile step that installs it, as found in the layer history")
    summary: str = column(check_text, required=True, doc="what the vendor installs and why it differs (English)")


@record(frozen=True)
class OfficialImage:
    tag: str = column(check_text, required=True, doc="the published tag, e.g. v0.30.0rc2-a3")
    repository: str = column(check_text, required=True, doc="e.g. quay.io/ascend/vllm-ascend")
    vllm_ascend: str = column(check_pep440, required=True, doc="the vllm-ascend release the image installs")
    dockerfile: str = column(check_text, required=True, doc="the Dockerfile the tag is built from")
    source: str = column(check_text, required=True, doc="where this is read (URL, or the sdist and file)")
    base: Optional[str] = column(check_text, doc="the FROM image of that Dockerfile (its default build arguments)")
    deviations: Tuple[Deviation, ...] = column(check_text, table=Deviation,
                                              doc="packages that differ from the wheel's pins")

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"


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


def vllm_step(version: str) -> str:
    """The text the layer history shows for the steps of a Dockerfile built with ARG VLLM_TAG=vX
    (docker lists the build arguments in scope in front of every RUN: `RUN |2 VLLM_REPO=...
    VLLM_TAG=v0.11.2 /bin/sh -c ...`): the vendor's vLLM build, not one a later layer made."""
    return f"VLLM_TAG=v{version}"


def official_images(matrix: "Matrix") -> List[OfficialImage]:
    """The [[image]] rows, plus for each release whose image variants build another vLLM than the
    row's (`vllm_by_image`) that variant's vLLM as a documented deviation of its official tag."""
    from doctor.matrix.model import IMAGE_VARIANTS

    rows = list(matrix.images)
    by_tag = {(r.repository, r.tag): i for i, r in enumerate(rows)}
    for rel in matrix.releases:
        for variant, version in sorted(rel.vllm_by_image.items()):
            suffix, dockerfile = IMAGE_VARIANTS[variant]
            tag = f"v{rel.vllm_ascend}{suffix}"
            ref = next((i for i in rel.images if i.endswith(":" + tag)), f"quay.io/ascend/vllm-ascend:{tag}")
            repository = ref.rsplit(":", 1)[0]
            dev = Deviation(package="vllm", version=version, step=vllm_step(version),
                            summary=f"vLLM v{version} ({dockerfile} ARG VLLM_TAG) instead of the release's vLLM {rel.vllm}")
            key = (repository, tag)
            if key in by_tag:
                old = rows[by_tag[key]]
                rows[by_tag[key]] = OfficialImage(tag=old.tag, repository=old.repository, vllm_ascend=old.vllm_ascend,
                                                  dockerfile=old.dockerfile, source=old.source, base=old.base,
                                                  deviations=old.deviations + (dev,))
            else:
                by_tag[key] = len(rows)
                rows.append(OfficialImage(tag=tag, repository=repository, vllm_ascend=rel.vllm_ascend,
                                          dockerfile=dockerfile, source=rel.source_of("vllm_by_image"),
                                          deviations=(dev,)))
    return rows
