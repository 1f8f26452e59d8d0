"""Judging an image: which layer brought each failing package, and the official images' documented
deviations (matrices/images.toml).

Pure: facts (with their ``image`` section), the verdict of the ordinary rules and the matrix rows
in; the adjusted verdict and what to say about the image out. A finding is turned into the
vendor's documented deviation only when every package it is about came, at the documented
version, from the documented Dockerfile step of the official image of the installed vllm-ascend
release; anything a later layer changed is judged as it was.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.facts import Distribution, Facts, ImageFacts, canonical
from doctor.findings import FAIL, INFO, WARN, Finding, Fixable, Verdict, judge
from doctor.i18n import T
from doctor.matrix.images import Deviation, OfficialImage, by_name, for_release

# The packages a finding is about, when its id says so.
PACKAGES_OF: Dict[str, Tuple[str, ...]] = {
    "torch.version": ("torch",), "torch.build": ("torch",), "torch.companions": ("torchvision", "torchaudio"),
    "torch_npu.version": ("torch-npu",), "torch_npu.cann": ("torch-npu",),
    "vllm.version": ("vllm",), "vllm.local_version": ("vllm",),
    "vllm_ascend.installed": ("vllm-ascend",), "vllm_ascend.plugin": ("vllm-ascend",),
    "vllm_ascend.triton": ("triton-ascend", "triton"), "vllm_ascend.numpy": ("numpy",),
    "vllm_ascend.transformers": ("transformers",),
}
_HAVE = re.compile(r"but you have ([A-Za-z0-9][A-Za-z0-9._-]*) (\S+)")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+!-]*")


@dataclass
class Origin:
    """Where a package of a failing finding came from."""

    finding: str
    package: str
    version: str
    layer: Optional[int]
    created_by: str = ""


@dataclass
class Excused:
    finding: str
    package: str
    version: str
    deviation: Deviation
    image: OfficialImage


@dataclass
class ImageJudgement:
    official: Optional[OfficialImage] = None  # the image is named as an official tag
    built_on: Optional[OfficialImage] = None  # official layers recognised in its history
    base: Optional[str] = None
    base_source: str = ""
    excused: List[Excused] = field(default_factory=list)
    origins: List[Origin] = field(default_factory=list)


def packages_of(f: Finding, dists: Dict[str, Distribution]) -> List[str]:
    """Installed distributions a finding is about: by its id, else the ``but you have X V`` of a
    pip-check line, else ``name version`` pairs of installed packages in its text."""
    known = PACKAGES_OF.get(f.id)
    if known is not None:
        present = [n for n in known if n in dists]
        if f.id == "torch.companions":  # only the companion whose version is the one observed
            present = [n for n in present if dists[n].version == f.observed] or present
        return present
    lines = [str(f.observed or "")] + [str(e) for e in f.evidence]
    have = [canonical(m.group(1)) for line in lines for m in _HAVE.finditer(line)]
    if have:
        return _unique([n for n in have if n in dists])
    found = []
    for line in lines + [f.title.text("en")]:
        tokens = _TOKEN.findall(line)
        for a, b in zip(tokens, tokens[1:]):
            name = canonical(a)
            if name in dists and dists[name].version == b:
                found.append(name)
    return _unique(found)


def _unique(items: Sequence[str]) -> List[str]:
    out: List[str] = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


def _same_release(installed: str, documented: str) -> bool:
    """Daily and dev builds carry post/dev/local parts (3.6.0+dev2026..., 2.10.0+gitabc): the
    release numbers are what the Dockerfile pins."""
    from packaging.version import InvalidVersion, Version

    try:
        a, b = Version(installed).release, Version(documented).release
    except InvalidVersion:
        return False
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)) == b + (0,) * (n - len(b))


def _step(img: ImageFacts, layer: Optional[int]) -> str:
    if layer is None or not 1 <= layer <= len(img.layers):
        return ""
    return img.layers[layer - 1].created_by


def documented(facts: Facts, rows: Sequence[OfficialImage]) -> Tuple[Dict[str, Tuple[Deviation, OfficialImage]],
                                                                      Optional[OfficialImage], Optional[OfficialImage]]:
    """(dist name -> its documented deviation, the official row the image is named as, the
    official row its history shows it is built on)."""
    img = facts.image
    va = facts.version_of("vllm-ascend")
    if img is None or not va:
        return {}, None, None
    named = by_name(rows, img.names + [img.ref])
    candidates = for_release(rows, va)
    if named is not None and named not in candidates:
        candidates = []  # named official, but its vllm-ascend was replaced: nothing is the vendor's
    elif named is not None:
        candidates = [named] + [r for r in candidates if r is not named]
    out: Dict[str, Tuple[Deviation, OfficialImage]] = {}
    for row in candidates:
        for dev in row.deviations:
            d = facts.dist(dev.package)
            if d is None or d.name in out or not _same_release(d.version, dev.version):
                continue
            if dev.step in _step(img, img.dist_layers.get(d.name)):
                out[d.name] = (dev, row)
    built_on = None
    if named is None and out:
        built_on = next(iter(out.values()))[1]
    return out, named if named in candidates else None, built_on


def judge_image(verdict: Verdict, facts: Facts, rows: Sequence[OfficialImage]) -> Tuple[Verdict, ImageJudgement]:
    img = facts.image
    out = ImageJudgement()
    if img is None or facts.packages is None:
        return verdict, out
    dists = facts.packages.dists
    devs, out.official, out.built_on = documented(facts, rows)
    out.base, out.base_source = img.base, img.base_source
    if out.base is None and out.official is not None and out.official.base:
        out.base, out.base_source = out.official.base, "dockerfile"
    changed = False
    for f in verdict.findings:
        if f.status not in (FAIL, WARN):
            continue
        pkgs = packages_of(f, dists)
        if pkgs and all(p in devs for p in pkgs):
            for p in pkgs:
                dev, row = devs[p]
                out.excused.append(Excused(f.id, p, dists[p].version, dev, row))
            _excuse(f, [(p, dists[p].version) + devs[p] for p in pkgs])
            changed = True
            continue
        for p in pkgs:
            layer = img.dist_layers.get(p)
            out.origins.append(Origin(f.id, p, dists[p].version, layer, _step(img, layer)))
    if changed:
        verdict = _rejudge(verdict)
    return verdict, out


def _excuse(f: Finding, items: Sequence[Tuple[str, str, Deviation, OfficialImage]]) -> None:
    _, _, dev, row = items[0]
    f.evidence = [f.title.text("en")] + [f"{p} {v}: {d.summary}" for p, v, d, _ in items] + list(f.evidence)
    f.status = INFO
    f.title = T("image.deviation.title", packages=[f"{p} {v}" for p, v, _, _ in items], image=row.ref)
    f.hint = T("image.deviation.hint", dockerfile=row.dockerfile, step=dev.step)
    f.source = row.source
    f.fixable = Fixable.NONE
    f.commands = []
    f.blocked_by = None


def _rejudge(verdict: Verdict) -> Verdict:
    failing = {f.id for f in verdict.findings if f.status == FAIL}
    for f in verdict.findings:
        f.root_cause = False
        if f.blocked_by and f.blocked_by not in failing:
            f.blocked_by = None
    return judge(verdict.findings)
