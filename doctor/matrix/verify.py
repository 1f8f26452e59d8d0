"""Check the curated matrix against package-index metadata of vllm-ascend.

For every release with metadata, the row must agree with the wheel's Requires-Dist and
Requires-Python: the row's torch / torch_npu / triton_ascend satisfy the wheel's specifiers,
its transformers / numpy / torchvision / torchaudio specifiers equal the wheel's, its
requires_python equals the wheel's, and its glibc / distribution match the file the metadata came
from. A disagreement is *explained* when the row's ``deviations`` table names the field.
Releases on the index without a row are disagreements too.

Metadata input has the shape of tests/data/index-metadata.json:
``{"packages": [{"name", "version", "requires_python", "requires_dist", "file"}, ...]}``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Protocol, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.versions import pep440, satisfies, valid_pep440
from doctor.parse.indexfiles import glibc_of, pick_file
from doctor.matrix.model import Matrix, Release
from doctor.matrix.query import release_row

PROJECT = "vllm-ascend"
# Linux environments a wheel's markers are evaluated in (a requirement counts if any applies).
_ENVS = [
    {"extra": "", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
     "platform_machine": arch, "implementation_name": "cpython",
     "platform_python_implementation": "CPython", "python_version": "3.11",
     "python_full_version": "3.11.0"}
    for arch in ("x86_64", "aarch64")
]


@dataclass(frozen=True)
class Disagreement:
    release: str
    field: str  # a release field name, or "row" for a release without a row
    matrix: Optional[str]
    metadata: Optional[str]
    message: str
    explained: Optional[str] = None  # the row's deviations text when documented
    origin: str = ""  # where the row was loaded from (file:line)

    def line(self) -> str:
        text = f"{self.release}: {self.field}: {self.message}"
        if self.explained:
            text += f" [documented: {self.explained}]"
        return text

    def as_dict(self) -> Dict[str, Optional[str]]:
        return {"release": self.release, "field": self.field, "matrix": self.matrix,
                "metadata": self.metadata, "message": self.message, "explained": self.explained,
                "origin": self.origin}


def load_metadata_file(path: Path) -> List[dict]:
    """Packages of a metadata file. Raises UsageError with a one-line message when unreadable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(T("matrix.error.metadata_unreadable", path=path, why=e.strerror or str(e)))
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise UsageError(T("matrix.error.metadata_not_json", path=path, why=str(e).splitlines()[0]))
    packages = data.get("packages") if isinstance(data, dict) else None
    if not isinstance(packages, list):
        raise UsageError(T("matrix.error.metadata_no_packages", path=path))
    for i, p in enumerate(packages):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            raise UsageError(T("matrix.error.metadata_no_name", path=path, i=i))
        if not isinstance(p.get("requires_dist") or [], list):
            raise UsageError(T("matrix.error.metadata_requires", path=path, i=i))
    return packages


def _applies(req: Requirement) -> bool:
    if req.marker is None:
        return True
    return any(req.marker.evaluate(env) for env in _ENVS)


def requirement_specs(requires_dist: Iterable[str]) -> Dict[str, SpecifierSet]:
    """Canonical name -> combined specifier of the requirements that apply on Linux (extras skipped)."""
    out: Dict[str, SpecifierSet] = {}
    for text in requires_dist or []:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if not _applies(req):
            continue
        name = canonicalize_name(req.name)
        out[name] = out[name] & req.specifier if name in out else SpecifierSet(str(req.specifier))
    return out


def _spec(text: Optional[str]) -> SpecifierSet:
    try:
        return SpecifierSet(text or "")
    except InvalidSpecifier:
        return SpecifierSet("")


def _show(spec: Optional[SpecifierSet]) -> str:
    if spec is None:
        return "(not required)"
    return str(spec) or "(any version)"


def compare_release(row: Release, meta: dict) -> List[Disagreement]:
    """Every way ``row`` disagrees with one package's metadata (explained or not)."""
    specs = requirement_specs(meta.get("requires_dist") or [])
    out: List[Disagreement] = []

    def add(fld: str, matrix_value: object, meta_value: object, message: str) -> None:
        out.append(Disagreement(row.vllm_ascend, fld, None if matrix_value is None else str(matrix_value),
                                None if meta_value is None else str(meta_value), message,
                                row.deviations.get(fld), row.origin))

    # pins: the row's version must satisfy the wheel's specifier
    for fld, dist in (("torch", "torch"), ("torch_npu", "torch-npu")):
        spec = specs.get(dist)
        value = getattr(row, fld)
        if spec is not None and not satisfies(value, str(spec)):
            add(fld, value, spec, f"matrix {value} does not satisfy the wheel's {dist}{_show(spec)}")
    spec = specs.get("triton-ascend")
    if spec is not None and row.triton_ascend is None:
        add("triton_ascend", None, spec, f"the wheel requires triton-ascend{_show(spec)}; the row has none")
    elif spec is not None and not satisfies(row.triton_ascend, str(spec)):
        add("triton_ascend", row.triton_ascend, spec,
            f"matrix {row.triton_ascend} does not satisfy the wheel's triton-ascend{_show(spec)}")
    elif spec is None and row.triton_ascend is not None:
        add("triton_ascend", row.triton_ascend, None,
            f"the row pins triton-ascend {row.triton_ascend} but the wheel does not require it")

    # constraints: the row's specifier must equal the wheel's (None: unconstrained)
    for fld, dist in (("transformers", "transformers"), ("numpy", "numpy"),
                      ("torchvision", "torchvision"), ("torchaudio", "torchaudio")):
        wheel = specs.get(dist)
        value = getattr(row, fld)
        if _spec(value) != (wheel or SpecifierSet("")):
            add(fld, value, wheel, f"matrix {value or '(unconstrained)'} != wheel {_show(wheel)}")

    rp_meta = meta.get("requires_python")
    if _spec(row.requires_python) != _spec(rp_meta):
        add("requires_python", row.requires_python, rp_meta,
            f"matrix {row.requires_python or '(none)'} != wheel Requires-Python {rp_meta or '(none)'}")

    filename = meta.get("file") or ""
    if filename.endswith(".whl"):
        if row.distribution == "sdist":
            add("distribution", row.distribution, "wheel", f"the row says sdist but {filename} is a wheel")
        for arch, glibc in glibc_of(filename).items():
            have = row.glibc_for(arch)
            if pep440(have) != pep440(glibc):
                fld = "glibc_by_arch" if arch in row.glibc_by_arch else "glibc_min"
                add(fld, have, glibc, f"matrix glibc {have} for {arch} != {glibc} from {filename}")
    return out


def _by_version(packages: Iterable[dict]) -> Dict[str, dict]:
    out: Dict[str, dict] = {}
    for p in packages:
        if canonicalize_name(p.get("name", "")) == PROJECT:
            v = pep440(p.get("version"))
            if v is not None:
                out.setdefault(str(v), p)
    return out


def verify(
    matrix: Matrix,
    metadata_packages: Sequence[dict],
    *,
    index_versions: Optional[Iterable[str]] = None,
    include_explained: bool = False,
) -> List[Disagreement]:
    """Disagreements between the matrix and the metadata; explained ones only on request.

    ``index_versions`` (the versions an index lists) adds a "row" disagreement for each release
    without a row even when no metadata was read for it.
    """
    metas = _by_version(metadata_packages)
    versions = set(metas)
    for v in index_versions or ():
        pv = pep440(v)
        if pv is not None:
            versions.add(str(pv))
    out: List[Disagreement] = []
    for v in sorted(versions, key=valid_pep440):  # both sources hold parsed versions only
        row = release_row(matrix, v)
        if row is None:
            out.append(Disagreement(v, "row", None, v, "on the package index but the matrix has no row"))
            continue
        if v in metas:
            out.extend(d for d in compare_release(row, metas[v]) if include_explained or not d.explained)
    return out


class PackageIndex(Protocol):
    """What ``matrix verify`` and ``matrix sync`` read from a package index; the shell implements
    it (``doctor.shell.install.index.IndexClient``), the matrix never imports the shell."""

    urls: List[str]

    def project_files(self, project: str) -> List[Any]:
        """Every file of ``project`` (``doctor.parse.indexfiles`` reads them); a LookupError when
        no configured index has the project."""
        ...

    def metadata(self, f: Any) -> Dict[str, object]:
        """One file's core metadata, in the index-metadata.json shape."""
        ...


def fetch_index_metadata(client: PackageIndex, project: str = PROJECT,
                         progress: Optional[Callable[[int, int, str], None]] = None,
                         ) -> Tuple[List[Dict[str, object]], List[str]]:
    """(metadata packages, listed versions) of every release of ``project`` on the index:
    the input ``verify`` needs, read online (one wheel or sdist per version). ``progress`` is
    called with (done, total, version) after each one."""
    files = client.project_files(project)
    versions = sorted({f.version for f in files if f.version and pep440(f.version) and not f.is_yanked},
                      key=valid_pep440)
    packages: List[Dict[str, object]] = []
    for i, v in enumerate(versions, 1):
        f = pick_file(files, v)
        if f is not None:
            packages.append(client.metadata(f))
        if progress is not None:
            progress(i, len(versions), v)
    return packages, versions


# ---------------------------------------------------------------------------------------------
# the torch-npu table against the index's file list: every build, for every Python it covers

TORCH_NPU = "torch-npu"


def wheel_pythons(filenames: Iterable[str], project: str = TORCH_NPU) -> Dict[str, set]:
    """Version -> the CPython minor versions ("3.10") its wheels are built for, from the file
    names of an index listing (a listing from one Python shows only the builds for that Python;
    the file names show them all)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    out: Dict[str, set] = {}
    for name in filenames:
        if not name.endswith(".whl"):
            continue
        try:
            dist, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if canonicalize_name(dist) != project:
            continue
        for t in tags:
            if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit() and len(t.interpreter) > 3:
                out.setdefault(str(version), set()).add(f"{t.interpreter[2]}.{t.interpreter[3:]}")
    return out


def _covered_pythons(matrix: Matrix) -> List[str]:
    """Every CPython minor version some [[torch_npu]] row supports."""
    minors = [f"3.{n}" for n in range(6, 20)]
    return [p for p in minors if any(satisfies(p + ".0", r.python) for r in matrix.torch_npu)]


def verify_torch_npu(matrix: Matrix, filenames: Iterable[str]) -> List[Disagreement]:
    """Disagreements between the [[torch_npu]] rows and the wheels an index lists: a build with a
    wheel for a Python the table covers but no row, and a row of a build on that index whose
    Python range is not the one of its wheels (within the Pythons the table covers)."""
    from doctor.matrix.query import torch_npu_row

    built = wheel_pythons(filenames)
    covered = _covered_pythons(matrix)
    out: List[Disagreement] = []
    for version in sorted(built, key=valid_pep440):
        pythons = sorted(built[version] & set(covered), key=lambda p: int(p.split(".")[1]))
        if not pythons:
            continue
        row = torch_npu_row(matrix, version)
        if row is None or row.version != version:
            out.append(Disagreement(version, "torch_npu", None, ", ".join(pythons),
                                    f"torch-npu {version} is on the index (wheels for Python {', '.join(pythons)}) "
                                    "but the torch-npu table has no row"))
            continue
        says = [p for p in covered if satisfies(p + ".0", row.python)]
        if says != pythons:
            out.append(Disagreement(version, "torch_npu.python", row.python, ", ".join(pythons),
                                    f"torch-npu {version}: the row says Python {row.python}, its wheels are for "
                                    f"{', '.join(pythons)}"))
    return out


def torch_npu_files(client: PackageIndex) -> Optional[List[str]]:
    """File names of torch-npu on the index, yanked ones left out; None when the index does not
    have the project (a private index of vllm-ascend only: nothing to compare)."""
    try:
        files = client.project_files(TORCH_NPU)
    except LookupError:
        return None
    return [f.filename for f in files if not f.is_yanked]
