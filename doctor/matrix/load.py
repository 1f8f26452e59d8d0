"""Load and validate matrices/*.toml (shipped in the wheel) plus user overlays."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

from packaging.version import Version

from doctor.matrix.model import (
    CANN_DRIVER_SCHEMA,
    CodeClass,
    CodeForm,
    Description,
    check_description_row,
    Component,
    Library,
    MooncakeKey,
    VendorCode,
    check_signature_row,
    PackageSet,
    Threshold,
    TuningAdvice,
    TuningFact,
    TuningQuant,
    TuningVar,
    row_from,
    schema_of,
    RELEASE_SCHEMA,
    SIGNATURE_SCHEMA,
    TORCH_NPU_SCHEMA,
    TORCH_SCHEMA,
    Matrix,
    Release,
    cann_driver_from,
    release_from,
    signature_from,
    torch_from,
    torch_npu_from,
)
from doctor.matrix.images import OfficialImage
from doctor.matrix.schema import MatrixError, locate, validate_rows
from doctor.versions import valid_pep440

# array name -> (schema, constructor, unique key: one field, or several joined with "/")
ARRAYS: Dict[str, Tuple[dict, Callable, str]] = {
    "release": (RELEASE_SCHEMA, release_from, "vllm_ascend"),
    "cann": (CANN_DRIVER_SCHEMA, cann_driver_from, "cann"),
    "torch_npu": (TORCH_NPU_SCHEMA, torch_npu_from, "version"),
    "torch": (TORCH_SCHEMA, torch_from, "torch"),
    "signature": (SIGNATURE_SCHEMA, signature_from, "id"),
    "tuning_var": (schema_of(TuningVar), lambda d: row_from(TuningVar, d), "name"),
    "tuning_advice": (schema_of(TuningAdvice), lambda d: row_from(TuningAdvice, d), "id"),
    "tuning_fact": (schema_of(TuningFact), lambda d: row_from(TuningFact, d), "id"),
    "tuning_quant": (schema_of(TuningQuant), lambda d: row_from(TuningQuant, d), "scheme"),
    "image": (schema_of(OfficialImage), lambda d: row_from(OfficialImage, d), "tag"),
    "mooncake_key": (schema_of(MooncakeKey), lambda d: row_from(MooncakeKey, d), "scope/key"),
    "threshold": (schema_of(Threshold), lambda d: row_from(Threshold, d), "name"),
    "package_set": (schema_of(PackageSet), lambda d: row_from(PackageSet, d), "name"),
    # vendor code tables for `explain` (matrices/error-codes.toml)
    "code_form": (schema_of(CodeForm), lambda d: row_from(CodeForm, d), "id"),
    "code": (schema_of(VendorCode), lambda d: row_from(VendorCode, d), "family/code"),
    "code_class": (schema_of(CodeClass), lambda d: row_from(CodeClass, d), "family/prefix"),
    "component": (schema_of(Component), lambda d: row_from(Component, d), "id"),
    "library": (schema_of(Library), lambda d: row_from(Library, d), "name"),
    # what users write instead of a log (matrices/descriptions.toml), read on short inputs only
    "prose": (schema_of(Description), lambda d: row_from(Description, d), "id"),
}

# checks across the keys of one row, where the schema checks each key alone
ROW_CHECKS: Dict[str, Callable] = {"signature": check_signature_row, "prose": check_description_row}


def _unique(row: Any, fields: str) -> str:
    """The unique key of a row (a validated dict or a row object) for ``fields``."""
    get = row.get if isinstance(row, dict) else lambda f: getattr(row, f)
    return "/".join(str(get(f)) for f in fields.split("/")).lower()
TOP_LEVEL = {"schema_version", "description", "generated"} | set(ARRAYS)
SCHEMA_VERSION = 1


def shipped_dir() -> Path:
    """The matrices/ directory: inside the installed package, or the source tree's top level."""
    try:
        # the package's own directory, as importlib.resources.files() gives it for a package on
        # disk (importlib.resources itself pulls in tempfile, zipfile and random: ~5 ms of check)
        import doctor.matrices as shipped  # type: ignore[import-not-found]  # the installed wheel maps matrices/ there

        for location in getattr(shipped, "__path__", []):
            path = Path(location)
            if path.is_dir() and any(path.glob("*.toml")):
                return path
    except ImportError:
        pass
    return Path(__file__).resolve().parents[2] / "matrices"


def user_overlay_dir(env: Optional[Mapping[str, str]] = None) -> Path:
    from doctor import xdg

    return xdg.config_dir(env)


class RowCache(Protocol):
    """Where validated rows are kept between runs (``doctor.shell.host.cache`` is one: the package's
    ``load_matrix`` passes it); the loader itself never decides where files go."""

    def key(self, *parts: Any) -> str: ...

    def read(self, kind: str, k: str) -> Optional[Any]: ...

    def write(self, kind: str, k: str, data: Any) -> None: ...


def parse_file(path: Path, cache: Optional[RowCache] = None,
               clock: Optional[Callable[[], int]] = None) -> Dict[str, list]:
    """Read one matrix file; return validated rows per array. Raises MatrixError.

    With a ``cache``, validated rows are kept by the file's identity (device, inode, size,
    modification and change times): parsing and validating the full matrix costs ~150 ms, a
    cache hit a few ms without reading the file, and check runs on every build. An entry that
    does not make rows (corrupt, planted, written by another doctor) is a miss. Rows are kept
    only for a file whose identity has settled (:func:`settled`, by ``clock``, nanoseconds,
    ``time.time_ns`` when None): an identity taken in the tick the file was written in would
    also be the identity of a same-size edit made in that tick, whose rows would never be read.
    """
    label = str(path)
    before = _identity(path) if cache else None
    k = cache.key("rows by identity", label, before) if cache and before else ""
    if cache and k:
        built = _build_cached(cache.read("matrix", k))
        if built is not None:
            return built
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise MatrixError(label, None, f"cannot read: {e.strerror or e}")
    rows = _validate_file(label, raw)
    if cache and k and before and _identity(path) == before:  # not changed while it was read
        import time

        if settled(before, (clock or time.time_ns)()):
            cache.write("matrix", k, rows)
    return _build(rows)


# Rows already built in this process, by file identity: a process that loads the matrix again
# (fleet's nodes, guard's steps, a test session's thousands of runs) builds each file's rows once.
# Rows are frozen records; each caller gets its own lists. Kept only for a settled identity (see
# parse_file) of a file that did not change while it was parsed.
_MEMO: Dict[Tuple[str, Tuple[int, ...]], Dict[str, list]] = {}
_MEMO_MAX = 64


def _parse_remembered(path: Path, cache: Optional[RowCache]) -> Dict[str, list]:
    """parse_file, through this process's memo when there is a cache (a caller without one asks
    for the file to be read)."""
    import time

    before = _identity(path) if cache else None
    key = (str(path), tuple(before)) if before else None
    if key is not None and key in _MEMO:
        return {a: list(rows) for a, rows in _MEMO[key].items()}
    built = parse_file(path, cache)
    if key is not None and _identity(path) == before and settled(key[1], time.time_ns()):
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = {a: list(rows) for a, rows in built.items()}
    return built


def _identity(path: Path) -> Optional[List[int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


# a file's times move in ticks: the kernel's coarse clock (1-10 ms, HZ 1000 to 100), whole seconds
# on some file systems (ext3's small inodes, FAT: 2 s, some network and FUSE mounts)
TICK_NS = 10_000_000
COARSE_NS = 2_000_000_000


def settled(identity: Sequence[int], now_ns: int) -> bool:
    """Whether a file with this identity (``_identity``) can no longer be edited into another
    content with the same identity: its change and modification times are at least two ticks of
    its file system's clock before ``now_ns`` (every later write stamps a later tick)."""
    mtime, ctime = identity[3], identity[4]
    coarse = mtime % 1_000_000_000 == 0 and ctime % 1_000_000_000 == 0
    return now_ns - max(mtime, ctime) >= 2 * (COARSE_NS if coarse else TICK_NS)


def _build_cached(rows: Any) -> Optional[Dict[str, list]]:
    """Rows from the cache, or None when the entry is not what ``_validate_file`` writes."""
    if not isinstance(rows, dict) or not all(a in ARRAYS and isinstance(v, list) for a, v in rows.items()):
        return None
    try:
        return _build({a: [(row, origin) for row, origin in items] for a, items in rows.items()})
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, RecursionError):
        return None


def _validate_file(label: str, raw: bytes) -> Dict[str, List[Tuple[dict, str]]]:
    import datetime  # here too: with the cache warm, check never needs it
    # Imported here: with the cache warm, check never parses TOML (saves ~30 ms per run).
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10
        import tomli as tomllib
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MatrixError(label, None, "not UTF-8 text")
    try:
        data = tomllib.loads(text)
    except RecursionError:  # '[' * 100000: tomllib recurses once per level
        raise MatrixError(label, None, "invalid TOML: nested too deeply") from None
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None)
        msg = str(e).split(" (at line")[0]
        if line is None:
            m = re.search(r"line (\d+)", str(e))
            line = int(m.group(1)) if m else None
        raise MatrixError(label, line, f"invalid TOML: {msg}")
    unknown = sorted(set(data) - TOP_LEVEL)
    if unknown:
        raise MatrixError(label, _top_line(text, unknown[0]),
                          f"unknown top-level key {unknown[0]!r} (allowed: {', '.join(sorted(TOP_LEVEL))})")
    version = data.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise MatrixError(label, _top_line(text, "schema_version"),
                          f"schema_version {version!r} is not supported (this doctor reads {SCHEMA_VERSION})")
    out: Dict[str, List[Tuple[dict, str]]] = {}
    for array, (schema, _, unique) in ARRAYS.items():
        if array not in data:
            continue
        rows = validate_rows(data[array], schema, path=label, text=text, array=array)
        for i, row in enumerate(rows):
            problem = ROW_CHECKS[array](row) if array in ROW_CHECKS else None
            if problem:
                raise MatrixError(label, locate(text, array, i, None), f"[[{array}]] #{i + 1}: {problem[0]}: {problem[1]}")
        headers = _header_lines(text, array)
        seen: Dict[str, int] = {}
        out[array] = []
        for i, row in enumerate(rows):
            key = _unique(row, unique)
            if key in seen:
                raise MatrixError(label, locate(text, array, i, unique.split("/")[-1]),
                                  f"[[{array}]] #{i + 1}: duplicate {unique} {key!r} (first at #{seen[key] + 1})")
            seen[key] = i
            clean = {k: (v.isoformat() if isinstance(v, (datetime.date, datetime.datetime)) else v)  # (TOML dates)
                     for k, v in row.items()}
            out[array].append((clean, f"{label}:{headers[i] if i < len(headers) else '?'}"))
    return out


def _header_lines(text: str, array: str) -> List[int]:
    header = re.compile(r"^\s*\[\[\s*" + re.escape(array) + r"\s*\]\]")
    return [n for n, line in enumerate(text.splitlines(), 1) if header.match(line)]


def _build(rows: Dict[str, List[Tuple[dict, str]]]) -> Dict[str, list]:
    out: Dict[str, list] = {}
    for array, items in rows.items():
        make = ARRAYS[array][1]
        out[array] = [make(row, origin) if array == "release" else make(row) for row, origin in items]
    return out


def _top_line(text: str, key: str) -> Optional[int]:
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(key):
            return n
    return None


def _release_sort_key(r: Release) -> Version:
    return valid_pep440(r.vllm_ascend)


def merge(base: Dict[str, list], overlay: Dict[str, list]) -> Dict[str, list]:
    """Overlay rows replace base rows with the same key, except that a row generated from
    index metadata (curated = false) never replaces a curated one."""
    out = {k: list(v) for k, v in base.items()}
    for array, rows in overlay.items():
        _, _, unique = ARRAYS[array]
        current = out.setdefault(array, [])
        index = {_unique(r, unique): i for i, r in enumerate(current)}
        for row in rows:
            key = _unique(row, unique)
            if key in index:
                old = current[index[key]]
                if getattr(old, "curated", True) and not getattr(row, "curated", True):
                    continue
                current[index[key]] = row
            else:
                index[key] = len(current)
                current.append(row)
    return out


# Shipped files whose rows only explain (and the smoke's log reading) use.
ERROR_KNOWLEDGE = ("descriptions.toml", "error-codes.toml", "signatures.toml")


def _check_descriptions(data: Dict[str, list], files: Sequence[str], cache: Optional[RowCache]) -> None:
    """Every [[prose]] that names a `signature` names one the matrix has (across files:
    a description in one file may stand for a signature of another)."""
    known = {s.id for s in data.get("signature", [])}
    for d in data.get("prose", []):
        if d.signature and d.signature not in known:
            where = next((f for f in files if any(r.id == d.id for r in _parse_remembered(Path(f), cache).get("prose", []))),
                         files[-1] if files else "?")
            raise MatrixError(where, None, f"[[prose]] {d.id}: signature {d.signature!r} is not a [[signature]] of the matrix")


def load_matrix(
    extra: Sequence[Path] = (),
    *,
    user_overlays: bool = True,
    env: Optional[Dict[str, str]] = None,
    warn: Optional[Callable[[str], None]] = None,
    cache: Optional[RowCache] = None,
    error_knowledge: bool = True,
) -> Matrix:
    """The shipped matrix, then the user's overlay directory, then ``extra`` (``--matrix``).

    A broken shipped file or ``--matrix`` file raises MatrixError. A broken file in the user's
    overlay directory is reported through ``warn`` and skipped, so a bad ``matrix sync`` result
    never takes the shipped knowledge down with it.

    ``error_knowledge=False`` leaves out the shipped files only explain reads (log signatures,
    vendor error codes: two thirds of the matrix), which check does not need.
    """
    files: List[str] = []
    shipped = sorted(p for p in shipped_dir().glob("*.toml") if error_knowledge or p.name not in ERROR_KNOWLEDGE)
    if not shipped:
        raise MatrixError(str(shipped_dir()), None, "no matrix files found (broken installation)")
    data: Dict[str, list] = {}
    for path in shipped:
        data = merge(data, _parse_remembered(path, cache))
        files.append(str(path))
    if user_overlays:
        odir = user_overlay_dir(env)
        for path in sorted(odir.glob("*.toml")) if odir.is_dir() else []:
            try:
                parsed = _parse_remembered(path, cache)
            except MatrixError as e:
                if warn:
                    warn(f"ignoring matrix overlay: {e}")
                continue
            data = merge(data, parsed)
            files.append(str(path))
    for path in extra:
        data = merge(data, _parse_remembered(Path(path), cache))
        files.append(str(path))
    _check_descriptions(data, files, cache)
    releases = sorted(data.get("release", []), key=_release_sort_key)
    return Matrix(
        releases=releases,
        cann_driver=list(data.get("cann", [])),
        torch_npu=list(data.get("torch_npu", [])),
        torch=list(data.get("torch", [])),
        signatures=list(data.get("signature", [])),
        files=files,
        tuning_vars=list(data.get("tuning_var", [])),
        tuning_advice=list(data.get("tuning_advice", [])),
        tuning_facts=list(data.get("tuning_fact", [])),
        tuning_quant=list(data.get("tuning_quant", [])),
        images=list(data.get("image", [])),
        mooncake_keys=list(data.get("mooncake_key", [])),
        thresholds=list(data.get("threshold", [])),
        package_sets=list(data.get("package_set", [])),
        code_forms=list(data.get("code_form", [])),
        codes=list(data.get("code", [])),
        code_classes=list(data.get("code_class", [])),
        components=list(data.get("component", [])),
        libraries=list(data.get("library", [])),
        descriptions=list(data.get("prose", [])),
    )

