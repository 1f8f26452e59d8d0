"""Installed distributions, read from metadata files on the target's sys.path.

Nothing is imported: only the header of METADATA / PKG-INFO is read (name, version,
Requires-Dist, Requires-Python), plus direct_url.json, INSTALLER and entry_points.txt.
The first copy of a name on sys.path wins, as with importlib.metadata; later copies are kept
as "shadowed" because a stale second install is a classic source of confusion.
"""
from __future__ import annotations

import json
import os
import re
from typing import Dict, Iterable, List, Optional, Tuple

from doctor.facts import Distribution, PackagesFacts, canonical

_META_SUFFIXES = (".dist-info", ".egg-info")
_INTERESTING_GROUPS = ("vllm.",)


_HEADER = re.compile(r"^(Name|Version|Requires-Python|Requires-Dist|Provides-Extra):[ \t]*([^\r\n]*)", re.M)


def read_headers(path: str) -> Tuple[Dict[str, str], List[str], List[str]]:
    """Name/Version/Requires-Python, Requires-Dist and Provides-Extra from an RFC 822 header.

    Only the header block is read (up to the first blank line, where the long description
    starts) and scanned with one regex: this runs for every distribution on every check.
    """
    single: Dict[str, str] = {}
    requires: List[str] = []
    extras: List[str] = []
    data = b""
    try:
        with open(path, "rb") as fh:
            while len(data) < (1 << 20):
                chunk = fh.read(16384)
                data += chunk
                if not chunk or b"\n\n" in data or b"\n\r\n" in data:
                    break
    except OSError:
        return single, requires, extras
    ends = [i for i in (data.find(b"\n\n"), data.find(b"\n\r\n")) if i >= 0]
    text = (data[: min(ends)] if ends else data).decode("utf-8", errors="replace")
    for key, value in _HEADER.findall(text):
        value = value.rstrip()
        if key == "Requires-Dist":
            requires.append(value)
        elif key == "Provides-Extra":
            extras.append(value)
        else:
            single.setdefault(key, value)
    return single, requires, extras


def egg_requires(text: str) -> List[str]:
    """requires.txt sections (``[extra]``, ``[:marker]``, ``[extra:marker]``) -> PEP 508 strings."""
    out = []
    marker = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^\[(.*)\]$", line)
        if m:
            extra, _, cond = m.group(1).partition(":")
            parts = []
            if extra.strip():
                parts.append(f'extra == "{extra.strip()}"')
            if cond.strip():
                parts.append(f"({cond.strip()})")
            marker = " and ".join(parts) or None
            continue
        out.append(f"{line}; {marker}" if marker else line)
    return out


def parse_entry_points(text: str) -> Dict[str, Dict[str, str]]:
    out: Dict[str, Dict[str, str]] = {}
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            group = m.group(1).strip()
            continue
        if group and "=" in line and group.startswith(_INTERESTING_GROUPS):
            name, _, value = line.partition("=")
            out.setdefault(group, {})[name.strip()] = value.strip()
    return out


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 20)
    except OSError:
        return None


def read_distribution(location: str, entry: str) -> Optional[Distribution]:
    meta_dir = os.path.join(location, entry)
    is_dir = os.path.isdir(meta_dir)
    if entry.endswith(".dist-info"):
        meta_file = os.path.join(meta_dir, "METADATA")
    elif is_dir:
        meta_file = os.path.join(meta_dir, "PKG-INFO")
    else:
        meta_file = meta_dir  # a lone .egg-info file
    single, requires, _ = read_headers(meta_file)
    name, version = single.get("Name"), single.get("Version")
    if not name or not version:
        stem = entry.rsplit(".", 1)[0]
        bits = stem.split("-")
        if len(bits) < 2:
            return None
        name, version = name or bits[0], version or bits[1]
    dist = Distribution(
        name=canonical(name), version=version, display_name=name, location=location,
        metadata_path=meta_dir, requires=requires, requires_python=single.get("Requires-Python"),
    )
    if is_dir:
        try:
            present = set(os.listdir(meta_dir))  # one listing instead of failed opens
        except OSError:
            present = set()
        if entry.endswith(".egg-info"):
            text = _read(os.path.join(meta_dir, "requires.txt")) if "requires.txt" in present else None
            if text:
                dist.requires = egg_requires(text)
            # An .egg-info directory outside site-packages is a `setup.py develop` checkout.
            dist.editable = "-packages" not in os.path.basename(location)
        else:
            url = _read(os.path.join(meta_dir, "direct_url.json")) if "direct_url.json" in present else None
            if url:
                try:
                    data = json.loads(url)
                    dist.direct_url = data.get("url")
                    dist.editable = bool((data.get("dir_info") or {}).get("editable"))
                except (ValueError, AttributeError):
                    pass
            installer = _read(os.path.join(meta_dir, "INSTALLER")) if "INSTALLER" in present else None
            dist.installer = installer.strip() if installer else None
        eps = _read(os.path.join(meta_dir, "entry_points.txt")) if "entry_points.txt" in present else None
        if eps:
            dist.entry_points = parse_entry_points(eps)
    if dist.name == "torch":
        dist.details = torch_build(location)
    return dist


def torch_build(location: str) -> Dict[str, str]:
    """torch/version.py says which accelerator the build is for (cuda = '12.8' / None)."""
    text = _read(os.path.join(location, "torch", "version.py")) or ""
    out = {}
    for key in ("cuda", "hip", "git_version", "debug"):
        m = re.search(r"^" + key + r"\s*(?::[^=]*)?=\s*(.+)$", text, re.MULTILINE)
        if m:
            value = m.group(1).strip().strip("'\"")
            out[key] = "" if value == "None" else value
    return out


def scan(paths: Iterable[str]) -> PackagesFacts:
    facts = PackagesFacts()
    for location in paths:
        if not location or not os.path.isdir(location):
            continue
        facts.paths.append(location)
        try:
            entries = sorted(os.listdir(location))
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(_META_SUFFIXES):
                continue
            dist = read_distribution(location, entry)
            if dist is None:
                continue
            if dist.name in facts.dists:
                if facts.dists[dist.name].location != location:
                    facts.shadowed.append(dist)
                continue
            facts.dists[dist.name] = dist
    return facts
