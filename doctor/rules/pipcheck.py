"""``pip check`` computed from metadata, without running pip.

Requirement strings repeat a lot across an environment (``numpy``, ``extra == "dev"``), so
parsing goes through small caches; this keeps a 300-distribution check in milliseconds.
"""
from __future__ import annotations

import functools
import re
from doctor.record import record
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from doctor.facts import Distribution, canonical
from doctor.i18n import T, Text

if TYPE_CHECKING:
    from packaging.markers import Marker

_REQ = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?"
    r"\s*(?P<spec>\(?[^;@]*?\)?)?\s*(?P<url>@[^;]*)?\s*(?:;\s*(?P<marker>.*))?$"
)


@record(frozen=True)
class Conflict:
    requirer: str
    requirer_version: str
    requirement: str  # as written in the metadata
    required: str  # canonical name
    spec: str
    installed: Optional[str]  # None: not installed

    def words(self) -> Text:
        """describe() in the reader's language (titles); describe() stays pip's English (data)."""
        if self.installed is None:
            return T("env.conflict.missing", requirer=self.requirer, version=self.requirer_version,
                     requirement=f"{self.required}{self.spec}")
        return T("env.conflict.have", requirer=self.requirer, version=self.requirer_version,
                 requirement=f"{self.required}{self.spec}", name=self.required, installed=self.installed)

    def describe(self) -> str:
        if self.installed is None:
            return f"{self.requirer} {self.requirer_version} requires {self.required}{self.spec}, which is not installed"
        return (f"{self.requirer} {self.requirer_version} requires {self.required}{self.spec}, "
                f"but you have {self.required} {self.installed}")


@functools.lru_cache(maxsize=4096)
def parse(req: str) -> Optional[Tuple[str, str, Optional[str], bool]]:
    """(canonical name, specifier text, marker text, is_url) or None if unparsable."""
    m = _REQ.match(req)
    if not m:
        return None
    spec = (m.group("spec") or "").strip().strip("()").strip()
    return canonical(m.group("name")), spec, (m.group("marker") or "").strip() or None, bool(m.group("url"))


@functools.lru_cache(maxsize=2048)
def _marker(text: str) -> "Optional[Marker]":
    # Imported on first use: with the result cache warm, check never evaluates a marker, and
    # packaging.markers (its tokenizer, tags, sysconfig) costs ~20 ms to import.
    from packaging.markers import InvalidMarker, Marker

    try:
        return Marker(text)
    except InvalidMarker:
        return None


@functools.lru_cache(maxsize=4096)
def _spec(text: str) -> Optional[SpecifierSet]:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


@functools.lru_cache(maxsize=4096)
def _version(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def marker_applies(marker: Optional[str], env: Dict[str, str]) -> bool:
    if not marker:
        return True
    if "extra" in marker and re.search(r"\bextra\s*==", marker) and " or " not in marker:
        return False  # only requested extras count, and pip check requests none
    m = _marker(marker)
    if m is None:
        return False
    try:
        return m.evaluate(dict(env, extra=""))
    except Exception:  # undefined marker variables in exotic metadata
        return False


def check(dists: Dict[str, Distribution], markers: Dict[str, str]) -> List[Conflict]:
    """Unmet requirements of the installed distributions (what ``pip check`` reports). The
    result depends only on names, versions, requirements and markers (``cache_key``)."""
    if not markers:
        from packaging.markers import default_environment

        markers = {k: str(v) for k, v in default_environment().items()}  # all strings (a TypedDict)
    out: List[Conflict] = []
    for dist in dists.values():
        for req in dist.requires:
            parsed = parse(req)
            if parsed is None:
                continue
            name, spec, marker, is_url = parsed
            if not marker_applies(marker, markers):
                continue
            have = dists.get(name)
            if have is None:
                out.append(Conflict(dist.name, dist.version, req, name, spec, None))
                continue
            if is_url or not spec:
                continue
            s, v = _spec(spec), _version(have.version)
            if s is None or v is None:
                continue
            if not s.contains(v, prereleases=True):
                out.append(Conflict(dist.name, dist.version, req, name, spec, have.version))
    return out


def cache_key_parts(dists: Dict[str, Distribution], markers: Dict[str, str]) -> tuple:
    return sorted((d.name, d.version, d.requires) for d in dists.values()), markers
