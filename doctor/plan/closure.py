"""The resolved closure without what only CUDA uses. Pure: resolver results in, a pruned set out.

A resolver asked for vllm's requirements returns everything they pull in, CUDA-only wheels
included: vllm 0.11.0 requires ``ray[cgraph]``, whose extra is ``cupy-cuda12x``; xgrammar requires
``triton`` on x86_64. None of these works on an Ascend host (cupy cannot even be imported without
CUDA, and mainline triton collides with triton-ascend), and the plan installs every file with
``--no-deps``, so it can simply leave them out. :func:`prune` walks the requirement graph from the
plan's own requests over the resolved files (markers and requested extras evaluated as pip
does) and never enters a CUDA-only distribution; whatever is not reached is left out too (cupy's
own requirement fastrlock). Each cut edge is kept, so the plan can say which requirement goes
without what, and why:

- through an extra (``ray[cgraph]`` -> cupy-cuda12x): the extra is dropped; pip check does not
  check extras, so nothing is reported afterwards;
- a plain requirement (xgrammar -> triton): the requirer is installed without it (``--no-deps``,
  its other requirements are in the plan); pip check reports it, and check calls it expected.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.parse.pipreport import Resolved


@dataclass(frozen=True)
class Cut:
    """A requirement satisfied without the CUDA-only distribution it names."""

    requirer: str  # canonical name, or "" for the plan's own request
    requirer_version: str
    requirement: str  # as written in the metadata
    excluded: str  # canonical name of the CUDA-only distribution
    extra: Optional[str] = None  # the requirer's extra that brought it in (ray[cgraph])

    def describe(self) -> str:
        who = f"{self.requirer} {self.requirer_version}" if self.requirer else "the plan"
        via = f" (its extra [{self.extra}])" if self.extra else ""
        return f"{who} requires {self.requirement.split(';')[0].strip()}{via}"


@dataclass
class Pruned:
    kept: List[Resolved]
    dropped: List[Resolved]  # CUDA-only, or only needed by one
    cuts: List[Cut] = field(default_factory=list)

    @property
    def dropped_names(self) -> List[str]:
        return [r.name for r in self.dropped]


def is_cuda_only(name: str, patterns: Sequence[str]) -> bool:
    name = canonicalize_name(name)
    return any(fnmatch.fnmatch(name, p) for p in patterns)


def _evaluates(marker: Optional[Marker], markers: Dict[str, str], extra: str) -> bool:
    if marker is None:
        return True
    try:
        return bool(marker.evaluate(dict(markers, extra=extra)))
    except Exception:  # undefined marker variables in exotic metadata: pip skips them too
        return False


def prune(roots: Sequence[str], resolved: Sequence[Resolved], patterns: Sequence[str], markers: Dict[str, str],
          keep: Iterable[str] = ()) -> Pruned:
    """The resolved distributions reachable from ``roots`` (requirement strings) without
    entering one that matches ``patterns``. ``keep``: names kept whatever the walk says (the
    packages the plan installs in their own steps)."""
    by_name = {r.name: r for r in resolved}
    walked: Dict[str, Set[str]] = {}  # name -> "" (its plain requirements) and the extras walked
    cuts: List[Cut] = []
    queue: List[Tuple[str, Set[str]]] = []

    def reach(owner: str, owner_version: str, text: str, req: Requirement, via: Optional[str]) -> None:
        name = canonicalize_name(req.name)
        if is_cuda_only(name, patterns):
            cut = Cut(owner, owner_version, text, name, via)
            if cut not in cuts:
                cuts.append(cut)
            return
        if name not in by_name:
            return  # installed already, or a pinned stack package: not this walk's business
        want = {""} | {canonicalize_name(e) for e in req.extras}
        new = want - walked.get(name, set())
        if new:
            walked[name] = walked.get(name, set()) | new
            queue.append((name, new))

    for text in roots:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if _evaluates(req.marker, markers, ""):
            reach("", "", text, req, None)
    for name in keep:
        name = canonicalize_name(name)
        if name in by_name and "" not in walked.get(name, set()):
            walked[name] = walked.get(name, set()) | {""}
            queue.append((name, {""}))
    while queue:
        name, extras = queue.pop()
        dist = by_name[name]
        for text in dist.requires:
            try:
                req = Requirement(text)
            except InvalidRequirement:
                continue
            plain = _evaluates(req.marker, markers, "")
            if "" in extras and plain:
                reach(name, dist.version, text, req, None)
                continue
            if plain:
                continue  # walked with the plain requirements already
            via = next((e for e in sorted(extras) if e and _evaluates(req.marker, markers, e)), None)
            if via is not None:
                reach(name, dist.version, text, req, via)
    kept = [r for r in resolved if r.name in walked]
    dropped = [r for r in resolved if r.name not in walked]
    return Pruned(kept, dropped, cuts)


def residual_cuts(p: Pruned) -> List[Cut]:
    """The cuts pip check reports afterwards: plain requirements (not extras) of a distribution
    the plan installs."""
    return [c for c in p.cuts if c.extra is None and c.requirer]
