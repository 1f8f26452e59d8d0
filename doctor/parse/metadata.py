"""The one reader of Python distribution metadata: installed ``.dist-info``/``.egg-info``
directories (check's package scan, the fix transaction), and the METADATA / PKG-INFO of
downloaded wheels and sdists and of index files (``parse_core_metadata``).

Nothing is imported: only the header of METADATA / PKG-INFO is read (name, version,
Requires-Dist, Requires-Python), plus direct_url.json, INSTALLER and entry_points.txt. The first
copy of a name on sys.path wins, as with importlib.metadata; later copies are kept as
"shadowed" because a stale second install is a classic source of confusion.

Pure: files are read through a ``Reader`` (``doctor.shell.host.root.Host`` in the doctor: regular
files only, capped, inside ``--root``). Damaged metadata (a 5,000-digit version, a
``direct_url.json`` nested 100,000 deep) is reported in ``PackagesFacts.malformed``, never raised.
"""
from __future__ import annotations

import json
import posixpath
import re
from doctor.record import field, record
from typing import Dict, Iterable, List, Optional, Protocol, Tuple

from doctor.facts import Distribution, PackagesFacts, canonical

META_SUFFIXES = (".dist-info", ".egg-info")
INTERESTING_GROUPS = ("vllm.",)
HEAD_READ = 16 * 1024  # the header block of nearly every METADATA fits in the first read
MAX_METADATA = 1024 * 1024
MAX_SIDE_FILE = 256 * 1024  # direct_url.json, INSTALLER, entry_points.txt, requires.txt
MAX_VERSION_LEN = 128  # the longest real version strings are ~40 characters
MAX_DIGIT_RUN = 40  # Python refuses int() of more than 4,300 digits; no release number has 40

_HEADER = re.compile(r"^(Name|Version|Requires-Python|Requires-Dist|Provides-Extra):[ \t]*([^\r\n]*)", re.M)


class Reader(Protocol):
    def listdir(self, p: str) -> List[str]: ...

    def is_dir(self, p: str) -> bool: ...

    def read_bytes(self, p: str, limit: int = ...) -> Optional[bytes]: ...


@record
class CoreMetadata:
    """The fields of a METADATA / PKG-INFO header the doctor uses."""

    name: str = ""  # as written
    version: str = ""
    requires_python: Optional[str] = None
    requires_dist: List[str] = field(default_factory=list)
    provides_extra: List[str] = field(default_factory=list)
    problem: Optional[str] = None  # why the version cannot be used, when it cannot

    @property
    def canonical_name(self) -> str:
        return canonical(self.name)


def header_block(data: bytes) -> bytes:
    """The RFC 822 header: everything before the first blank line (the long description)."""
    end = data.find(b"\n\n")
    # a CRLF blank line counts only before the first LF one (not searched for past it: METADATA
    # files are LF, and the rest of a 16 KB head would be read for nothing on every check)
    crlf = data.find(b"\n\r\n", 0, end + 2 if end >= 0 else len(data))
    if crlf >= 0:
        return data[:crlf]
    return data[:end] if end >= 0 else data


def has_blank_line(data: bytes) -> bool:
    return b"\n\n" in data or b"\n\r\n" in data


def parse_core_metadata(data: bytes) -> CoreMetadata:
    """Name, Version, Requires-Python, Requires-Dist and Provides-Extra of a METADATA / PKG-INFO
    (only the header block is scanned, with one regex: this runs for every distribution on
    every check)."""
    head = header_block(data)
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = head.decode("latin-1")  # what old tools wrote; every byte decodes
    meta = CoreMetadata()
    single: Dict[str, str] = {}
    for key, value in _HEADER.findall(text):
        value = value.rstrip()
        if key == "Requires-Dist":
            meta.requires_dist.append(value)
        elif key == "Provides-Extra":
            meta.provides_extra.append(value)
        else:
            single.setdefault(key, value)
    meta.name = single.get("Name", "")
    meta.version, meta.problem = checked_version(single.get("Version", ""))
    meta.requires_python = single.get("Requires-Python")
    return meta


def checked_version(raw: str) -> Tuple[str, Optional[str]]:
    """A version string safe to hand to ``packaging`` (which raises ValueError, not
    InvalidVersion, past Python's 4,300-digit int limit), and the problem when it was not."""
    value = raw.strip()
    longest = max((len(m) for m in re.findall(r"\d+", value)), default=0)
    if len(value) > MAX_VERSION_LEN or longest > MAX_DIGIT_RUN:
        shown = value[:24] + "..."  # "..." keeps it an invalid version for every later parse
        return shown, f"Version is {len(value)} characters long (a run of {longest} digits): not a version"
    return value, None


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
            extra, _, cond = (x.strip() for x in m.group(1).partition(":"))
            # importlib.metadata's own spelling: the marker first, parenthesised only beside an extra
            parts = [f"({cond})" if extra and cond else cond, f'extra == "{extra}"' if extra else ""]
            marker = " and ".join(p for p in parts if p) or None
            continue
        out.append(f"{line}; {marker}" if marker else line)
    return out


def parse_entry_points(text: str, groups: Tuple[str, ...] = INTERESTING_GROUPS) -> Dict[str, Dict[str, str]]:
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
        if group and "=" in line and group.startswith(groups):
            name, _, value = line.partition("=")
            out.setdefault(group, {})[name.strip()] = value.strip()
    return out


def parse_direct_url(text: str) -> Tuple[Optional[str], bool, Optional[str]]:
    """(url, editable, problem) of a PEP 610 direct_url.json."""
    try:
        data = json.loads(text)
    except RecursionError:
        return None, False, "direct_url.json is nested too deeply to be read"
    except ValueError as e:
        return None, False, f"direct_url.json is not JSON ({e})"
    if not isinstance(data, dict):
        return None, False, "direct_url.json is not a JSON object"
    url = data.get("url")
    info = data.get("dir_info")
    editable = isinstance(info, dict) and info.get("editable") is True
    if url is not None and not isinstance(url, str):
        return None, editable, "direct_url.json: url is not a string"
    return url, editable, None


def torch_build(text: str) -> Dict[str, str]:
    """torch/version.py says which accelerator the build is for (cuda = '12.8' / None)."""
    out = {}
    for key in ("cuda", "hip", "git_version", "debug"):
        m = re.search(r"^" + key + r"\s*(?::[^=]*)?=\s*(.+)$", text, re.MULTILINE)
        if m:
            value = m.group(1).strip().strip("'\"")
            out[key] = "" if value == "None" else value
    return out


def _text(reader: Reader, path: str, limit: int = MAX_SIDE_FILE) -> Optional[str]:
    data = reader.read_bytes(path, limit)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_head(reader: Reader, path: str) -> Optional[bytes]:
    """The start of a METADATA file, enough for its header block (one read for nearly all)."""
    data = reader.read_bytes(path, HEAD_READ)
    if data is not None and len(data) == HEAD_READ and not has_blank_line(data):
        data = reader.read_bytes(path, MAX_METADATA)
    return data


def read_distribution(reader: Reader, location: str, entry: str,
                      problems: Optional[List[str]] = None) -> Optional[Distribution]:
    """One installed distribution from its metadata directory (or lone .egg-info file)."""
    problems = problems if problems is not None else []
    meta_dir = posixpath.join(location, entry)
    present = reader.listdir(meta_dir)  # one listing instead of failed opens
    is_dir = bool(present) or reader.is_dir(meta_dir)
    if entry.endswith(".dist-info"):
        meta_file = posixpath.join(meta_dir, "METADATA")
    elif is_dir:
        meta_file = posixpath.join(meta_dir, "PKG-INFO")
    else:
        meta_file = meta_dir  # a lone .egg-info file
    head = read_head(reader, meta_file)
    meta = parse_core_metadata(head or b"")
    name, version = meta.name, meta.version
    if meta.problem:
        problems.append(f"{meta_file}: {meta.problem}")
    if not name or not version:
        stem = entry.rsplit(".", 1)[0]
        bits = stem.split("-")
        if len(bits) < 2:
            return None
        name = name or bits[0]
        if not version:
            version, problem = checked_version(bits[1])
            if problem:
                problems.append(f"{meta_dir}: {problem}")
    dist = Distribution(
        name=canonical(name), version=version, display_name=name, location=location,
        metadata_path=meta_dir, requires=meta.requires_dist, requires_python=meta.requires_python,
    )
    if is_dir:
        if entry.endswith(".egg-info"):
            # as importlib.metadata: PKG-INFO's Requires-Dist when it has any, else requires.txt
            if not meta.requires_dist and "requires.txt" in present:
                text = _text(reader, posixpath.join(meta_dir, "requires.txt"))
                if text:
                    dist.requires = egg_requires(text)
            # An .egg-info directory outside site-packages is a `setup.py develop` checkout.
            dist.editable = "-packages" not in posixpath.basename(location)
        else:
            url = _text(reader, posixpath.join(meta_dir, "direct_url.json")) if "direct_url.json" in present else None
            if url:
                dist.direct_url, dist.editable, problem = parse_direct_url(url)
                if problem:
                    problems.append(f"{posixpath.join(meta_dir, 'direct_url.json')}: {problem}")
            installer = _text(reader, posixpath.join(meta_dir, "INSTALLER")) if "INSTALLER" in present else None
            dist.installer = installer.strip()[:100] if installer else None
        eps = _text(reader, posixpath.join(meta_dir, "entry_points.txt")) if "entry_points.txt" in present else None
        if eps:
            dist.entry_points = parse_entry_points(eps)
    if dist.name == "torch":
        dist.details = torch_build(_text(reader, posixpath.join(location, "torch", "version.py")) or "")
    return dist


def scan(paths: Iterable[str], reader: Reader) -> PackagesFacts:
    """Every distribution in these directories, first copy of a name winning."""
    facts = PackagesFacts()
    for location in paths:
        if not location or not reader.is_dir(location):
            continue
        facts.paths.append(location)
        for entry in reader.listdir(location):
            if not entry.endswith(META_SUFFIXES):
                continue
            dist = read_distribution(reader, location, entry, facts.malformed)
            if dist is None:
                continue
            if dist.name in facts.dists:
                if facts.dists[dist.name].location != location:
                    facts.shadowed.append(dist)
                continue
            facts.dists[dist.name] = dist
    return facts


def record_paths(text: str) -> List[str]:
    """The file paths listed in a RECORD (CSV: path,hash,size), relative to the site directory."""
    import csv
    import io

    out = []
    for row in csv.reader(io.StringIO(text)):
        if row and row[0]:
            out.append(row[0])
    return out


def top_level_names(record: Iterable[str]) -> List[str]:
    """Importable top-level names a distribution installs, from its RECORD paths."""
    out: List[str] = []
    for p in record:
        first = p.split("/", 1)[0]
        if first.endswith((".dist-info", ".egg-info", ".data")) or first in ("..", "__pycache__", ""):
            continue
        if "/" in p:
            name = first
        elif p.endswith(".py"):
            name = p[:-3]
        elif p.endswith(".so") or ".cpython-" in p or p.endswith(".pyd"):
            name = p.split(".", 1)[0]
        else:
            continue
        if name.isidentifier() and name not in out:
            out.append(name)
    return out
