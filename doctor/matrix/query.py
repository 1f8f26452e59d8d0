"""The questions the matrix answers, as pure functions over a loaded :class:`Matrix`.

- which row an installed vllm-ascend claims (tolerant of dev and local builds),
- the newest release that runs on a given CANN / driver / Python / hardware / arch / glibc,
- every pin of a release for an arch and Python,
- whether a CANN supports a driver, and the torch-npu / torch rows of a version.
"""
from __future__ import annotations

import re
from doctor.record import field, record
from typing import Dict, Iterable, List, Optional, Tuple, Union

from packaging.version import Version

from doctor.i18n import T, Text
from doctor.versions import AscendVersion, pep440, satisfies, specifier, valid_pep440
from doctor.matrix.model import CannDriver, Matrix, MooncakeKey, Release, TorchNpu, TorchRow

# CANN <-> driver statuses: documented compatible; documented incompatible (older / newer than the
# compatible lines, or neither); undocumented. "Not documented" is never "too old".
OK, TOO_OLD, TOO_NEW, UNSUPPORTED, UNKNOWN = "ok", "too_old", "too_new", "unsupported", "unknown"
INCOMPATIBLE = (TOO_OLD, TOO_NEW, UNSUPPORTED)


# ---------------------------------------------------------------------------------------------
# rows by version


def release_row(matrix: Matrix, version: str) -> Optional[Release]:
    v = pep440(version.lstrip("vV")) if version else None
    if v is None:
        return None
    for r in matrix.releases:
        if pep440(r.vllm_ascend) == v:
            return r
    return None


def release_for_installed(matrix: Matrix, version: Optional[str]) -> Tuple[Optional[Release], Optional[str]]:
    """The row an installed vllm-ascend version claims, and a note when the match is not exact.

    A local label (``0.11.0rc3+local``) maps to its public version. A dev build
    (``0.23.1.dev0+g5cb98caaa.d20260915``, ``0.10.2rc2.dev5+g88ca8a051``) maps to the newest
    row at or below it: setuptools-scm numbers a commit after tag X as the next version's .devN.
    ``0.1.dev1+g...`` is what setuptools-scm prints without any tag and maps to nothing.
    """
    if not version:
        return None, "no vllm-ascend version to look up"
    v = pep440(version)
    if v is None:
        return None, f"{version!r} is not a PEP 440 version"
    public = Version(v.public)
    exact = release_row(matrix, str(public))
    if exact is not None and public.dev is None:
        note = None if v.local is None else f"local build {version} treated as release {exact.vllm_ascend}"
        return exact, note
    if public.dev is None and v.local is None:
        newest = matrix.releases[-1].vllm_ascend if matrix.releases else None
        if newest and public > valid_pep440(newest):
            return None, (f"vllm-ascend {version} is newer than the matrix (newest row {newest}); "
                          "run `ascend-doctor matrix sync` or upgrade ascend-doctor")
        return None, f"vllm-ascend {version} is not a published release the matrix knows"
    base = None
    for r in matrix.releases:  # sorted ascending
        if valid_pep440(r.vllm_ascend) <= public:
            base = r
    if base is None:
        return None, (f"vllm-ascend {version} is a source build without a release tag "
                      "(setuptools-scm fallback version); cannot tell which release it is")
    return base, (f"vllm-ascend {version} is a development build; judged against the newest release "
                  f"at or below it, {base.vllm_ascend}")


def torch_npu_row(matrix: Matrix, version: Optional[str]) -> Optional[TorchNpu]:
    """The [[torch_npu]] row of a build: exact version first, then the same public version."""
    v = pep440(version)
    if v is None:
        return None
    for r in matrix.torch_npu:
        if pep440(r.version) == v:
            return r
    for r in matrix.torch_npu:
        rv = pep440(r.version)
        if rv is not None and rv.local is None and rv == Version(v.public):
            return r
    return None


def torch_row(matrix: Matrix, torch: Optional[str]) -> Optional[TorchRow]:
    v = pep440(torch)
    if v is None:
        return None
    for r in matrix.torch:
        if pep440(r.torch) == Version(v.public):
            return r
    return None


# ---------------------------------------------------------------------------------------------
# CANN <-> driver


def cann_row(matrix: Matrix, cann: str) -> Optional[CannDriver]:
    want = AscendVersion(cann)
    for r in matrix.cann_driver:
        if AscendVersion(r.cann) == want:
            return r
    return None


@record(frozen=True)
class Pairing:
    """A documented CANN <-> driver pairing: the line a release note names, and that note."""

    cann: str
    driver: str
    source: str


@record(frozen=True)
class DriverCompat:
    """What the documentation says about one installed CANN with one installed driver.

    ``status``: ``ok`` (a line documented compatible), ``too_old`` / ``too_new`` (documented not
    compatible, older / newer than the compatible lines; a driver older than a line documented
    not compatible, below every compatible line, is too old as well), ``unsupported`` (documented
    not compatible otherwise) or ``unknown`` (nothing documented about this driver with this CANN).
    ``line`` and ``source`` are the documented line that decided and where it is documented;
    ``nearest`` is, for ``unknown``, the documented pairing closest to what is installed.
    """

    status: str
    row: Optional[CannDriver] = None
    line: Optional[str] = None
    source: Optional[str] = None
    nearest: Optional[Pairing] = None

    @property
    def documented(self) -> Tuple[str, ...]:
        return self.row.documented if self.row else ()


def _matching(lines: Iterable[str], d: AscendVersion) -> Optional[str]:
    # the longest prefix wins: 26.0.rc1 before 26.0 when both are listed
    found = [p for p in lines if d.has_prefix(p)]
    return max(found, key=lambda p: len(AscendVersion(p).key)) if found else None


def driver_compat(matrix: Matrix, cann: str, driver: str) -> DriverCompat:
    """The documented verdict on ``cann`` with ``driver`` (see :class:`DriverCompat`)."""
    row = cann_row(matrix, cann)
    d = AscendVersion(driver)
    if row is not None:
        hit = _matching(row.documented, d)
        if hit is not None:
            return DriverCompat(OK, row, hit, row.source_of(hit))
        yes = [AscendVersion(p) for p in row.documented]
        miss = _matching(row.incompatible, d)
        if miss is not None:
            if yes and d < min(yes):
                status = TOO_OLD
            elif yes and d > max(yes):
                status = TOO_NEW
            else:
                status = UNSUPPORTED
            return DriverCompat(status, row, miss, row.source_of(miss))
        # Older than a line documented incompatible that is itself below every compatible line:
        # the notes' table starts above it (9.1.0 marks 25.0.X N, so 24.1 is below the floor).
        floor = [p for p in row.incompatible if not yes or AscendVersion(p) < min(yes)]
        below = [p for p in floor if d < AscendVersion(p)]
        if below:
            line = min(below, key=AscendVersion)
            return DriverCompat(TOO_OLD, row, line, row.source_of(line))
    return DriverCompat(UNKNOWN, row, None, row.source if row else None,
                        nearest_pairing(matrix, cann, driver))


def nearest_pairing(matrix: Matrix, cann: str, driver: str) -> Optional[Pairing]:
    """The documented pairing closest to an undocumented one: the installed CANN's own documented
    line nearest the driver; else the nearest documented CANN of the same X.Y family (one that
    documents this driver first), else the nearest documented CANN at all."""
    c, d = AscendVersion(cann), AscendVersion(driver)
    rows = sorted((r for r in matrix.cann_driver if r.documented), key=lambda r: AscendVersion(r.cann))
    if not rows:
        return None
    family = c.numbers[:2]
    place = sum(1 for r in rows if AscendVersion(r.cann) < c)

    def rank(i_row: Tuple[int, CannDriver]) -> Tuple[bool, bool, bool, int]:
        i, r = i_row
        own = AscendVersion(r.cann) == c
        distance = (place - i) if i < place else (i - place + 1)
        return (not own, AscendVersion(r.cann).numbers[:2] != family,
                _matching(r.documented, d) is None, distance)

    _, best = min(enumerate(rows), key=rank)
    line = _matching(best.documented, d) or _nearest_line(best, d)
    return Pairing(best.cann, line, best.source_of(line))


def _nearest_line(row: CannDriver, d: AscendVersion) -> str:
    """The documented line of ``row`` nearest below the driver, else its oldest documented line."""
    lines = sorted(row.documented, key=AscendVersion)
    older = [p for p in lines if AscendVersion(p) < d]
    return older[-1] if older else lines[0]


def cann_supports_driver(matrix: Matrix, cann: str, driver: str) -> Tuple[str, Optional[CannDriver]]:
    """(status, row) of :func:`driver_compat`, for callers that need only the verdict."""
    got = driver_compat(matrix, cann, driver)
    return got.status, got.row


# ---------------------------------------------------------------------------------------------
# which release runs here


def _python_ok(spec: Optional[str], python: str) -> bool:
    if not spec:
        return True
    return bool(satisfies(python, spec))


def release_misfits(
    matrix: Matrix,
    row: Release,
    *,
    cann: Optional[str] = None,
    driver: Optional[str] = None,
    python: Optional[str] = None,
    hardware: Optional[str] = None,
    arch: Optional[str] = None,
    glibc: Optional[str] = None,
) -> List[str]:
    """Why ``row`` does not run on the given stack (empty list: it does). Unknown facts never
    exclude a row; only documented incompatibilities do."""
    why: List[str] = []
    canns = row.cann_for(hardware)
    if cann is not None and not any(AscendVersion(c) == AscendVersion(cann) for c in canns):
        why.append(f"needs CANN {' or '.join(canns)}, not {cann}")
    if driver is not None:
        candidates = [cann] if cann is not None else list(canns)
        statuses = [cann_supports_driver(matrix, c, driver)[0] for c in candidates]
        if statuses and all(s in INCOMPATIBLE for s in statuses):
            why.append(f"driver {driver} is {statuses[0].replace('_', ' ')} for CANN {'/'.join(candidates)}")
    if python is not None:
        if not _python_ok(row.python, python) or not _python_ok(row.requires_python, python):
            why.append(f"supports Python {row.python}, not {python}")
    if hardware is not None and hardware not in row.hardware:
        why.append(f"runs on {', '.join(row.hardware)}, not {hardware}")
    if glibc is not None:
        need = row.glibc_for(arch)
        # torch-npu's own wheels (manylinux_2_28 from 2.7.1 on) can need more than vllm-ascend's;
        # a mirror-only build without a known floor is taken to need what the pinned build does.
        npus = [_chosen_torch_npu(matrix, row, arch, python)] + [torch_npu_row(matrix, v) for v in row.torch_npu_accepted]
        for npu in npus:
            if npu is not None and npu.glibc_min and valid_pep440(npu.glibc_min) > valid_pep440(need):
                need = npu.glibc_min
        have = pep440(glibc)
        if have is not None and have < valid_pep440(need):
            why.append(f"needs glibc >= {need}, host has {glibc}")
    return why


def newest_release(
    matrix: Matrix,
    *,
    cann: Optional[str] = None,
    driver: Optional[str] = None,
    python: Optional[str] = None,
    hardware: Optional[str] = None,
    arch: Optional[str] = None,
    glibc: Optional[str] = None,
    include_prereleases: bool = True,
    wheel_only: bool = False,
) -> Optional[Release]:
    """The newest release row that runs on the given stack (arguments left None are not checked).
    ``wheel_only`` skips releases published only as sdists (they need a source build)."""
    for row in reversed(matrix.releases):
        v = pep440(row.vllm_ascend)
        if not include_prereleases and v is not None and v.is_prerelease:
            continue
        if wheel_only and row.distribution == "sdist":
            continue
        if not release_misfits(matrix, row, cann=cann, driver=driver, python=python,
                               hardware=hardware, arch=arch, glibc=glibc):
            return row
    return None


# ---------------------------------------------------------------------------------------------
# pins


@record
class Pins:
    release: str
    packages: Dict[str, str] = field(default_factory=dict)  # distribution name -> exact version
    extra_index_urls: List[str] = field(default_factory=list)
    urls: Dict[str, str] = field(default_factory=dict)  # distribution -> direct wheel URL
    notes: List[Text] = field(default_factory=list)

    def as_dict(self, lang: str = "en") -> Dict[str, object]:
        return {"release": self.release, "packages": dict(self.packages),
                "extra_index_urls": list(self.extra_index_urls), "urls": dict(self.urls),
                "notes": [n.text(lang) for n in self.notes]}


def _py_minor(python: Optional[str]) -> Optional[str]:
    v = pep440(python)
    if v is None:
        return None
    return f"{v.release[0]}.{v.release[1] if len(v.release) > 1 else 0}"


def _chosen_torch_npu(matrix: Matrix, row: Release, arch: Optional[str],
                      python: Optional[str]) -> Optional[TorchNpu]:
    return torch_npu_row(matrix, _torch_npu_choice(matrix, row, arch, python)[0])


def _torch_npu_choice(matrix: Matrix, row: Release, arch: Optional[str],
                      python: Optional[str]) -> Tuple[str, List[Text]]:
    """The torch-npu build to install: the recommended one when the row names it. A recommended
    build with a local label (``2.9.0.post1+git4c901a4``) stands for a family of per-arch/Python
    builds; pick the one for this arch and Python, or fall back to the pinned build."""
    rec = row.torch_npu_recommended
    if not rec:
        return row.torch_npu, []
    rv = pep440(rec)
    if rv is None or rv.local is None:
        return rec, []
    family = [r for r in matrix.torch_npu
              if (v := pep440(r.version)) is not None and v.public == rv.public and r.arch]
    if not family:
        return rec, []
    if arch is None or python is None:
        label = _family_label(matrix, rec)
        return rec, [T("matrix.note.per_build", public=rv.public, rec=rec, label=label or T("matrix.note.one_of_them"))]
    minor = _py_minor(python)
    for r in family:
        if r.arch == arch and minor and satisfies(minor + ".0", r.python):
            return r.version, []
    return row.torch_npu, [T("matrix.note.no_build", public=rv.public, python=minor, arch=arch, pinned=row.torch_npu)]


def _family_label(matrix: Matrix, version: str) -> str:
    r = torch_npu_row(matrix, version)
    if r is None or not r.arch:
        return ""
    return f"{r.arch} Python {r.python}"


def pins_for(matrix: Matrix, release: Union[Release, str], *, arch: Optional[str] = None,
             python: Optional[str] = None) -> Pins:
    """Every stack package of a release at an exact version, plus the indexes and direct URLs
    needed to get them. Raises KeyError for a release the matrix does not know."""
    row = release if isinstance(release, Release) else release_row(matrix, release)
    if row is None:
        raise KeyError(f"no matrix row for vllm-ascend {release}")
    pins = Pins(release=row.vllm_ascend)
    p = pins.packages
    p["vllm-ascend"] = row.vllm_ascend
    p["vllm"] = row.vllm
    p["torch"] = row.torch
    npu, notes = _torch_npu_choice(matrix, row, arch, python)
    p["torch-npu"] = npu
    pins.notes.extend(notes)
    npu_row = torch_npu_row(matrix, npu)
    if npu_row is not None:
        if npu_row.url:
            pins.urls["torch-npu"] = npu_row.url
        elif npu_row.index == "obs":
            found = re.search(r"https?://\S+", npu_row.notes or "")
            pins.notes.append(T("matrix.note.off_index", version=npu,
                                where=found.group(0).rstrip(".,;)") if found else npu_row.source))
    trow = torch_row(matrix, row.torch)
    for name, spec, paired in (("torchvision", row.torchvision, trow.torchvision if trow else None),
                               ("torchaudio", row.torchaudio, trow.torchaudio if trow else None)):
        exact = _exact(spec)
        if exact:
            p[name] = exact
        elif paired and (not spec or satisfies(paired, spec)):
            p[name] = paired
        elif spec:
            pins.notes.append(T("matrix.note.companion_disagrees", name=name, spec=spec, torch=row.torch, paired=paired))
    if row.triton_ascend:
        p["triton-ascend"] = row.triton_ascend
    for req in row.extra_requirements:
        pinned, version = _requirement_pin(req)
        if pinned and version:
            p[pinned] = version
    pins.extra_index_urls = list(row.extra_index_urls)
    if python is not None and not _python_ok(row.python, python):
        pins.notes.append(T("matrix.note.python_outside", python=python, release=row.vllm_ascend, range=row.python))
    return pins


def _exact(spec: Optional[str]) -> Optional[str]:
    s = specifier(spec)
    if s is None:
        return None
    items = list(s)
    if len(items) == 1 and items[0].operator in ("==", "===") and "*" not in items[0].version:
        return items[0].version
    return None


def _requirement_pin(text: str) -> Tuple[Optional[str], Optional[str]]:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None, None
    return canonicalize_name(req.name), _exact(str(req.specifier))


# ---------------------------------------------------------------------------------------------
# knowledge the checks apply: key windows, thresholds, package sets

Window = Tuple[Optional[str], Optional[str]]


def key_windows(matrix: Matrix, scope: str) -> Dict[str, Window]:
    """Key -> (first vllm-ascend that reads it, first that no longer does) for one scope, in
    file order: the shape doctor.rules.mooncake_config.window_state takes."""
    return {k.key: k.window for k in matrix.mooncake_keys if k.scope == scope}


def key_row(matrix: Matrix, scope: str, key: str) -> Optional[MooncakeKey]:
    return next((k for k in matrix.mooncake_keys if k.scope == scope and k.key == key), None)


def threshold(matrix: Matrix, name: str) -> str:
    """The version a named threshold holds. A missing one is a broken installation: KeyError."""
    for t in matrix.thresholds:
        if t.name == name:
            return t.version
    raise KeyError(f"the matrix has no threshold {name!r}")


def package_set(matrix: Matrix, name: str) -> Tuple[str, ...]:
    for p in matrix.package_sets:
        if p.name == name:
            return p.packages
    raise KeyError(f"the matrix has no package set {name!r}")


# ---------------------------------------------------------------------------------------------
# tuning knowledge a release newer than the matrix was not checked against


def tuning_checked_through(matrix: Matrix) -> Optional[str]:
    """The newest vllm-ascend release whose code and docs the tuning rows were read against."""
    row = next((f for f in matrix.tuning_facts if f.id == "checked_through"), None)
    return row.value if row is not None else None


def _open_ended(spec: str) -> bool:
    """A window with no upper bound (>=X, >X, !=X or empty): it is assumed to go on."""
    parsed = specifier(spec)
    return parsed is not None and not any(s.operator in ("<", "<=", "==", "===", "~=") for s in parsed)


def unchecked_tuning(matrix: Matrix, version: str) -> List[str]:
    """Tuning rows that say something about ``version`` only because their window is open-ended,
    when ``version`` is newer than the release they were checked through: the tuning facts, the
    variables read, the advice and the quantization schemes a new release may have changed.
    Rows for every release (``>=0``) are about torch_npu, CANN or the host, not the release."""
    top, here = pep440(tuning_checked_through(matrix)), pep440(version)
    if top is None or here is None or here <= top:
        return []
    out: List[str] = []

    def check(kind: str, name: str, windows: Iterable[str]) -> None:
        windows = tuple(windows)
        if windows == (">=0",) or not windows:
            return
        if any(_open_ended(w) and satisfies(version, w) for w in windows):
            out.append(f"{kind} {name}")

    for f in matrix.tuning_facts:
        if f.id != "checked_through":
            check("tuning_fact", f.id, f.releases)
    for v in matrix.tuning_vars:
        check("tuning_var", v.name, v.read_by + v.built_by)
    for a in matrix.tuning_advice:
        check("tuning_advice", a.id, a.releases)
    for q in matrix.tuning_quant:
        check("tuning_quant", q.scheme, q.releases)
    return out
