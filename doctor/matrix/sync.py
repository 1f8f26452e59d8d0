"""``matrix sync``: rows for vllm-ascend releases newer than the curated matrix, from index metadata.

The rows go to a user-level overlay (``~/.config/ascend-doctor/matrix-overlay.toml``, honouring
XDG_CONFIG_HOME) marked ``curated = false`` and ``official_row = false``. They carry what the
metadata gives (torch, torch-npu, triton-ascend, transformers, numpy, torchvision, torchaudio,
Requires-Python, glibc from the wheel tags); what it cannot give (CANN, hardware, Python range,
extra indexes) is inferred from the newest curated row, and vLLM from the version number, and the
row's sources say so. The file is validated with the loader before it replaces the old overlay,
and the loader never lets such a row replace a curated one.
"""
from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.versions import pep440, satisfies, valid_pep440
from doctor.parse.indexfiles import pick_file, release_glibc, upload_date
from doctor.matrix.load import user_overlay_dir
from doctor.matrix.model import Matrix, Release
from doctor.matrix.query import tuning_checked_through, unchecked_tuning
from doctor.matrix.verify import PROJECT, PackageIndex, requirement_specs

# writes the overlay text to the path, validated, or leaves the old file (doctor.shell.host.matrix_overlay.write_validated)
Writer = Callable[[Path, str], None]

OVERLAY_NAME = "matrix-overlay.toml"
NOT_CURATED = "from index metadata, not curated"


@dataclass
class SyncResult:
    path: Path
    added: List[str] = field(default_factory=list)  # versions that got a row
    text: str = ""
    written: bool = False
    newest_curated: Optional[str] = None
    # version -> tuning rows it was not checked against (open-ended windows, query.unchecked_tuning)
    unchecked: Dict[str, List[str]] = field(default_factory=dict)
    tuning_checked_through: Optional[str] = None


def overlay_path(env: Optional[Mapping[str, str]] = None) -> Path:
    return user_overlay_dir(dict(env) if env is not None else None) / OVERLAY_NAME


def newest_curated(matrix: Matrix) -> Optional[Release]:
    rows = [r for r in matrix.releases if r.curated]
    return max(rows, key=lambda r: valid_pep440(r.vllm_ascend)) if rows else None


def _exact(spec: Optional[SpecifierSet]) -> Optional[str]:
    items = list(spec) if spec is not None else []
    if len(items) == 1 and items[0].operator == "==" and "*" not in items[0].version:
        return items[0].version
    return None


def _newest_torch(matrix: Matrix, spec: SpecifierSet) -> Optional[str]:
    best: Optional[str] = None
    for t in matrix.torch:
        if satisfies(t.torch, str(spec)) and (best is None or valid_pep440(t.torch) > valid_pep440(best)):
            best = t.torch
    return best


def row_from_metadata(matrix: Matrix, base: Release, meta: dict, glibc: Dict[str, str],
                      index_url: str, today: str, upload_time: Optional[str] = None) -> dict:
    """A release table (plain dict, schema field names) for one uncurated release."""
    version = meta["version"]
    specs = requirement_specs(meta.get("requires_dist") or [])
    origin = f"index metadata of {index_url} (ascend-doctor matrix sync, {today})"
    inferred = f"inferred from the newest curated row {base.vllm_ascend}, not from metadata"
    row: dict = {"vllm_ascend": version}
    release = Version(version).release
    row["vllm"] = ".".join(str(n) for n in release)
    row["python"] = base.python
    if meta.get("requires_python"):
        row["requires_python"] = meta["requires_python"]
    row["cann"] = list(base.cann)
    sources = {"vllm": "inferred from the version number (vllm-ascend X.Y.Z tracks vLLM X.Y.Z), not from metadata",
               "python": inferred, "cann": inferred, "hardware": inferred}

    torch_spec = specs.get("torch")
    torch = _exact(torch_spec) if torch_spec is not None else None
    if torch is None and torch_spec is not None:
        torch = _newest_torch(matrix, torch_spec)
    if torch is None:
        torch = base.torch
        sources["torch"] = inferred
    row["torch"] = torch
    npu = _exact(specs.get("torch-npu"))
    if npu is None:
        npu = base.torch_npu
        sources["torch_npu"] = inferred
    row["torch_npu"] = npu
    for fld, dist in (("torchvision", "torchvision"), ("torchaudio", "torchaudio")):
        if specs.get(dist) is not None and str(specs[dist]):
            row[fld] = str(specs[dist])
    triton = _exact(specs.get("triton-ascend"))
    if triton:
        row["triton_ascend"] = triton
    for fld in ("transformers", "numpy"):
        if specs.get(fld) is not None and str(specs[fld]):
            row[fld] = str(specs[fld])
    if glibc:
        row["glibc_min"] = max(glibc.values(), key=valid_pep440)  # from wheel tags: manylinux_2_28 is 2.28
        if len(set(glibc.values())) > 1:
            row["glibc_by_arch"] = dict(sorted(glibc.items(), reverse=True))
    else:
        row["glibc_min"] = base.glibc_min
        row["distribution"] = "sdist"
        sources["glibc_min"] = f"no wheel on the index; {inferred}"
    row["hardware"] = list(base.hardware)
    if base.extra_index_urls:
        row["extra_index_urls"] = list(base.extra_index_urls)
        sources["extra_index_urls"] = inferred
    row["official_row"] = False
    row["curated"] = False
    if upload_time and len(upload_time) >= 10:
        row["released"] = upload_time[:10]
    row["notes"] = (f"{NOT_CURATED}: written by `ascend-doctor matrix sync` on {today}. CANN, hardware, "
                    f"Python range and extra indexes are inferred from {base.vllm_ascend}; vLLM from the "
                    "version number. Verify before relying on it.")
    row["source"] = origin
    row["sources"] = sources
    return row


# ---------------------------------------------------------------------------------------------
# TOML output (the rows hold only strings, booleans, lists of strings and string tables)


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def render_overlay(rows: List[dict], today: str, index_urls: List[str],
                   unchecked: Optional[Dict[str, List[str]]] = None, checked_through: Optional[str] = None) -> str:
    lines = [
        f"# Written by `ascend-doctor matrix sync` on {today} from {', '.join(index_urls)}.",
        f"# Rows {NOT_CURATED}; they never replace a curated row. Delete this file to drop them.",
    ]
    for version, items in (unchecked or {}).items():
        if items:
            lines.append(f"# {version}: tuning rows checked through {checked_through} only, assumed to hold "
                         f"(not checked against {version}): {', '.join(items)}")
    lines += [
        "schema_version = 1",
        f"description = {_toml_value('vllm-ascend releases newer than the curated matrix, ' + NOT_CURATED)}",
    ]
    for row in rows:
        lines += ["", "[[release]]"]
        tables = {}
        for key, value in row.items():
            if key == "released":
                lines.append(f"released = {value}")  # a TOML date
            elif isinstance(value, dict) and key in ("sources", "deviations"):
                tables[key] = value
            else:
                lines.append(f"{key} = {_toml_value(value)}")
        for key, table in tables.items():
            lines += ["", f"[release.{key}]"] + [f"{k} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def sync(matrix: Matrix, client: PackageIndex, *, path: Optional[Path] = None, dry_run: bool = False,
         today: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
         write: Optional[Writer] = None) -> SyncResult:
    """Fetch metadata of releases newer than the newest curated row and write the overlay
    (with ``write``, which the shell gives: the matrix touches no files)."""
    today = today or datetime.date.today().isoformat()
    path = path or overlay_path(env)
    base = newest_curated(matrix)
    if base is None:
        raise DoctorError(T("matrix.error.no_curated_row"))
    result = SyncResult(path=path, newest_curated=base.vllm_ascend)
    files = client.project_files(PROJECT)
    floor = valid_pep440(base.vllm_ascend)
    newer = sorted({f.version for f in files
                    if f.version and not f.is_yanked and (v := pep440(f.version)) is not None and v > floor},
                   key=valid_pep440)
    rows = []
    for version in newer:
        f = pick_file(files, version)
        if f is None:
            continue
        meta = client.metadata(f)
        glibc = release_glibc(files, version)
        rows.append(row_from_metadata(matrix, base, meta, glibc, f.url, today, upload_date(f)))
        result.added.append(version)
        result.unchecked[version] = unchecked_tuning(matrix, version)
    result.tuning_checked_through = tuning_checked_through(matrix)
    result.text = render_overlay(rows, today, client.urls, result.unchecked, result.tuning_checked_through)
    if not dry_run:
        if write is None:
            raise ValueError("sync: a writer is needed unless dry_run")
        write(path, result.text)
        result.written = True
    return result
