"""From check's facts and findings to a pinned, ordered fix plan. Pure: no I/O.

The plan reconciles the Python stack to one release row of the matrix:

1. choose the target (the installed vllm-ascend; ``--target``; the newest release that runs
   here when none is installed; an older release when CANN/driver are too old, ``--prefer``),
2. compute what every stack package must be after the plan (``pins``), keeping whatever is
   already right,
3. emit steps in a safe order: remove what must go, torch (CPU build), torch-npu, vllm without
   its dependencies, vllm-ascend, triton-ascend, the rest of the row, the non-CUDA requirements
   of vllm/vllm-ascend, Mooncake; then the manual and vendor steps nobody can run for the user.

A healthy environment gives an empty plan.
"""
from __future__ import annotations

import copy
import fnmatch
import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Protocol, Sequence, Set, Tuple, Union

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.errors import UsageError

if TYPE_CHECKING:  # the resolver's answer, made by doctor.plan.resolve (which imports this module)
    from doctor.parse.pipreport import Failure, Resolved
    from doctor.plan.indexes import Remedies
from doctor.facts import Distribution, Facts
from doctor.findings import FAIL, WARN, Fixable, Msg, Verdict, first_group
from doctor.i18n import Join, T, Text, join
from doctor.matrix.model import Matrix, Release
from doctor.matrix.query import (
    TOO_OLD,
    UNSUPPORTED,
    cann_supports_driver,
    newest_release,
    package_set,
    pins_for,
    release_for_installed,
    release_row,
    torch_npu_row,
    torch_row,
)
from doctor.rules.pipcheck import marker_applies
from doctor.versions import AscendVersion, local_label, pep440, public, same_release, satisfies

PLAN_SCHEMA_VERSION = 1
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
VLLM_REPO = "https://github.com/vllm-project/vllm"
MOONCAKE_NPU = "mooncake-transfer-engine-npu"
# What vllm from the index asks for that an Ascend host must not get (CUDA builds, its newer
# torch) is the matrix's package set "vllm_not_on_ascend", which check also treats as the expected
# pip-check residual: it travels on the _Builder and the Plan.
Why = Union[Text, Join]  # what a step or a note says, in the catalogue's words
StepWhy = Union[Why, Msg]  # a manual step says what its finding says (a title may still be inline Msg words)
Note = Union[Why, str]  # the matrix's own notes are English data

KEEP_CANN, KEEP_RELEASE = "keep-cann", "keep-release"


class Installer(Protocol):
    """How the plan spells installer commands (``doctor.shell.install.installer.Installer`` is the one the
    fix command passes: pip or uv for the target interpreter)."""

    # read-only properties: the fix command's Installer is a frozen dataclass
    @property
    def kind(self) -> str:
        """pip or uv."""

    @property
    def python(self) -> str:
        """The target interpreter."""

    def install(self, specs: Sequence[str], *, no_deps: bool = True, extra_index_urls: Sequence[str] = (),
                constraint: Optional[str] = None) -> List[str]: ...

    def uninstall(self, names: Sequence[str]) -> List[str]: ...

    def _cmd(self, sub: str) -> List[str]: ...


def _rendered(v: object, lang: str) -> object:
    """A JSON value with its Texts (also inside lists) rendered in ``lang``."""
    if isinstance(v, list):
        return [_rendered(x, lang) for x in v]
    return v.text(lang) if hasattr(v, "text") else v


def note_text(m: Note, lang: str) -> str:
    return m if isinstance(m, str) else m.text(lang)


@dataclass
class PlanOptions:
    installer: Installer
    target: Optional[str] = None  # vllm-ascend version from --target
    prefer: Optional[str] = None  # keep-cann | keep-release; None: no vendor install when possible
    with_mooncake: bool = False
    vllm_from: str = "index"  # index | source
    doctor_python: str = "python3"  # runs our own `mooncake build`
    constraint_file: Optional[str] = None  # where apply writes the pins as a constraints file
    src_dir: Optional[str] = None  # where a vLLM source build clones to
    vllm_repo: str = VLLM_REPO  # a mirror (gitee ...) works as well


@dataclass
class Step:
    kind: str  # pip | build | manual | vendor
    why: StepWhy
    action: str = ""  # remove | install | requirements | build | fetch (manual/vendor: "")
    argv: Optional[List[str]] = None
    command: Optional[str] = None  # manual/vendor: the exact command, never run
    hint: Optional[StepWhy] = None  # manual/vendor: what to do, in words (no command to print)
    packages: List[str] = field(default_factory=list)  # requirement strings installed by the step
    removes: List[str] = field(default_factory=list)
    no_deps: bool = True
    extra_index_urls: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    finding: Optional[str] = None
    requirements_of: List[str] = field(default_factory=list)  # "vllm==0.11.0": resolved after download
    exclude: List[str] = field(default_factory=list)  # requirement names the requirements step leaves out
    touches_family: str = ""  # build: installed distributions it replaces by name prefix ("mooncake")

    @property
    def runs(self) -> bool:
        from doctor.plan.steps import kind_of

        return kind_of(self).runs

    def to_json(self, lang: str = "en") -> Dict:
        out: Dict = {"kind": self.kind, "why": self.why.text(lang)}
        if not self.runs:
            out["command"] = self.command
            if self.hint is not None:
                out["hint"] = self.hint.text(lang)
        else:
            out["argv"] = self.argv
            out["action"] = self.action
        if self.packages:
            out["packages"] = list(self.packages)
        if self.removes:
            out["removes"] = list(self.removes)
        if self.extra_index_urls:
            out["extra_index_urls"] = list(self.extra_index_urls)
        if self.env:
            out["env"] = dict(self.env)
        if self.requirements_of:
            out["requirements_of"] = list(self.requirements_of)
            out["exclude"] = list(self.exclude)
        if self.finding:
            out["finding"] = self.finding
        return out


@dataclass
class Plan:
    target: Optional[str]
    row: Optional[str]
    choice: str  # installed | target | fresh | keep-cann | keep-release
    choice_why: Why
    pins: Dict[str, str]
    steps: List[Step]
    expected_residual: List[Why] = field(default_factory=list)
    alternatives: List[Dict] = field(default_factory=list)
    notes: List[Note] = field(default_factory=list)
    installer: str = "pip"
    not_on_ascend: Tuple[str, ...] = ()  # vllm requirements the Ascend stack never installs
    cuda_only: Tuple[str, ...] = ()  # distributions left out of the whole resolved closure
    # what the resolver said (doctor.plan.resolve): status, files with hashes and sizes, failure
    resolution: Optional[Dict] = None
    resolved_files: List["Resolved"] = field(default_factory=list)  # the files --apply downloads
    resolution_failure: Optional["Failure"] = None
    remedies: Optional["Remedies"] = None  # what works instead, when the resolver failed
    ranges: Dict[str, str] = field(default_factory=dict)  # the row's numpy/transformers ranges

    @property
    def runnable(self) -> List[Step]:
        return [s for s in self.steps if s.runs]

    @property
    def empty(self) -> bool:
        return not self.steps

    def to_json(self, lang: str = "en") -> Dict:
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "target": {"vllm-ascend": self.target},
            "matrix_row": self.row,
            "choice": self.choice,
            "choice_why": self.choice_why.text(lang),
            "installer": self.installer,
            "pins": dict(self.pins),
            "steps": [s.to_json(lang) for s in self.steps],
            "expected_residual": [m.text(lang) for m in self.expected_residual],
            "alternatives": [{k: _rendered(v, lang) for k, v in a.items()} for a in self.alternatives],
            "notes": [note_text(m, lang) for m in self.notes],
            "resolution": self.resolution,
        }


# ---------------------------------------------------------------------------------------------
# small facts helpers


def arch_of(facts: Facts) -> Optional[str]:
    if facts.python and facts.python.machine:
        return facts.python.machine
    return facts.host.machine or None


def python_of(facts: Facts) -> Optional[str]:
    return facts.python.version if facts.python and facts.python.version else None


def cann_of(facts: Facts) -> Optional[str]:
    return facts.cann.version if facts.cann and facts.cann.found and facts.cann.version else None


def driver_of(facts: Facts) -> Optional[str]:
    return facts.driver.version if facts.driver and facts.driver.found and facts.driver.version else None


def accelerator_build(d: Distribution) -> bool:
    """A CUDA/ROCm build of torch (or a +cuXXX companion): torch_npu needs the CPU build."""
    label = local_label(d.version) or ""
    return bool(d.details.get("cuda") or d.details.get("hip") or label.startswith(("cu", "rocm")))


def cpu_spec(version: str, arch: Optional[str]) -> str:
    """torch and its companions come as ``X+cpu`` from the PyTorch CPU index on x86_64 (PyPI's
    x86_64 wheels are CUDA builds); on aarch64 PyPI's own wheels are the CPU build."""
    if arch == "x86_64" and not local_label(version):
        return f"{version}+cpu"
    return version


def _eq(a: Optional[str], b: Optional[str]) -> bool:
    va, vb = pep440(a), pep440(b)
    return va is not None and vb is not None and va == vb


# ---------------------------------------------------------------------------------------------
# target


@dataclass
class TargetChoice:
    release: Release
    choice: str
    why: Why
    alternatives: List[Dict] = field(default_factory=list)


def vendor_misfits(matrix: Matrix, row: Release, facts: Facts, hardware: Optional[str]) -> List[Text]:
    """Why the CANN or driver here is too old for ``row`` (a newer CANN is only untested)."""
    cann, driver = cann_of(facts), driver_of(facts)
    wanted = row.cann_for(hardware)
    why: List[Text] = []
    if cann and AscendVersion(cann) < min(AscendVersion(w) for w in wanted):
        why.append(T("plan.misfit.cann_older", cann=cann, wanted=wanted[0]))
    if driver:
        use = cann if cann and not why else wanted[0]
        status, _ = cann_supports_driver(matrix, use, driver)
        if status in (TOO_OLD, UNSUPPORTED):
            why.append(T(f"plan.misfit.driver_{status}", driver=driver, cann=use))
    return why


def _fits_here(matrix: Matrix, facts: Facts, hardware: Optional[str]) -> Optional[Release]:
    glibc = facts.python.glibc if facts.python and facts.python.glibc else None
    return newest_release(matrix, cann=cann_of(facts), driver=driver_of(facts), python=python_of(facts),
                          hardware=hardware if hardware in ("A2", "A3", "310P", "A5") else None,
                          arch=arch_of(facts), glibc=glibc, wheel_only=True)


def choose_target(matrix: Matrix, facts: Facts, hardware: Optional[str], target: Optional[str],
                  prefer: Optional[str]) -> TargetChoice:
    if prefer not in (None, KEEP_CANN, KEEP_RELEASE):
        raise UsageError(T("plan.error.prefer", prefer=repr(prefer)))
    if target:
        row = release_row(matrix, target)
        if row is None:
            from doctor.program import DOCTOR, spelled_text

            raise UsageError(T("plan.error.target_unknown", target=target, doctor=spelled_text(DOCTOR)))
        base = TargetChoice(row, "target", T("plan.target.given", release=row.vllm_ascend))
    else:
        installed = facts.version_of("vllm-ascend")
        if installed:
            row, note = release_for_installed(matrix, installed)
            if row is None:
                raise UsageError(T("plan.error.installed_unknown", note=note))
            base = TargetChoice(row, "installed", T("plan.target.installed", version=installed))
        else:
            row = _fits_here(matrix, facts, hardware)
            if row is None:
                # too old for every release: the path that changes the fewest vendor layers
                from doctor.plan.vendor import cheapest

                best, others = cheapest(matrix, facts, hardware)
                if best is None:
                    raise UsageError(T("plan.error.nothing_fits"))
                return TargetChoice(best.release, "vendor-upgrade", T("plan.vendor.choice", cost=best.describe()),
                                    [{"prefer": "target", "target": o.release.vllm_ascend, "cost": o.to_json(),
                                      "how": o.describe()} for o in others])
            here = ", ".join(x for x in (f"CANN {cann_of(facts)}" if cann_of(facts) else "",
                                         f"Python {python_of(facts)}" if python_of(facts) else "",
                                         arch_of(facts) or "") if x)
            return TargetChoice(row, "fresh", T("plan.target.fresh", here=here))
    misfits = vendor_misfits(matrix, base.release, facts, hardware)
    if not misfits:
        return base
    other = _fits_here(matrix, facts, hardware)
    keep_release = {"prefer": KEEP_RELEASE, "target": base.release.vllm_ascend,
                    "needs": list(misfits)}
    if other is None or other.vllm_ascend == base.release.vllm_ascend:
        return TargetChoice(base.release, KEEP_RELEASE,
                            T("plan.target.vendor_upgrade_needed", base=base.why, misfits=join(misfits, "sep.semi")))
    keep_cann = {"prefer": KEEP_CANN, "target": other.vllm_ascend, "needs": []}
    if prefer == KEEP_RELEASE or (prefer is None and base.choice == "target"):
        return TargetChoice(base.release, KEEP_RELEASE,
                            T("plan.target.with_vendor_upgrade", base=base.why, misfits=join(misfits, "sep.semi")),
                            [keep_cann])
    return TargetChoice(other, KEEP_CANN, T("plan.target.keep_cann", misfits=join(misfits, "sep.semi"),
                                            release=base.release.vllm_ascend, other=other.vllm_ascend), [keep_release])


# ---------------------------------------------------------------------------------------------
# requirements of vllm / vllm-ascend without the CUDA side


def exact_pins(pins: Dict[str, str]) -> List[str]:
    """Names pinned to one version: their own step installs them, so requirement steps leave
    them out. Range pins (``transformers>=4.57.3``) stay in, so pip intersects the ranges."""
    from doctor.plan.pins import exact_names

    return exact_names(pins)


def excluded(owner: str, name: str, stack: Sequence[str], not_on_ascend: Sequence[str] = ()) -> bool:
    name = canonicalize_name(name)
    if name in stack:
        return True  # pinned: its own step installs it
    if owner == "vllm":
        return any(fnmatch.fnmatch(name, p) for p in not_on_ascend)
    return False


def unmet_requirements(owner: str, requires: Sequence[str], stack: Sequence[str],
                       installed: Dict[str, Distribution], markers: Dict[str, str],
                       not_on_ascend: Sequence[str] = ()) -> List[str]:
    """The requirements of ``owner`` that are neither pinned stack packages, nor CUDA-only (for
    vllm), nor already satisfied by what is installed: what a --no-deps install leaves missing."""
    out: List[str] = []
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is not None and not marker_applies(str(req.marker), markers):
            continue
        if excluded(owner, req.name, stack, not_on_ascend):
            continue
        have = installed.get(canonicalize_name(req.name))
        if have is not None and (not req.specifier or satisfies(have.version, str(req.specifier)) is not False):
            continue
        spec = f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"
        if spec not in out:
            out.append(spec)
    return out


# ---------------------------------------------------------------------------------------------
# the plan


@dataclass
class _Builder:
    """What the fixers read (the facts, the row, the check's verdict) and what they build."""

    ctx_facts: Facts
    row: Release
    opts: PlanOptions
    arch: Optional[str]
    matrix: Matrix
    verdict: Verdict
    hardware: Optional[str]
    torch_npu: str  # the torch-npu version the matrix pins for this arch/Python
    retarget: bool  # moving to another release than the installed one
    pins: Dict[str, str] = field(default_factory=dict)
    removes: List[Tuple[str, Why]] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    notes: List[Note] = field(default_factory=list)
    residual: List[Why] = field(default_factory=list)
    installs: Dict[str, str] = field(default_factory=dict)  # name -> spec the plan installs
    not_on_ascend: Tuple[str, ...] = ()  # the matrix's "vllm_not_on_ascend" patterns
    ranges: Dict[str, str] = field(default_factory=dict)  # name -> the row's range (numpy, transformers)

    def dist(self, name: str) -> Optional[Distribution]:
        return self.ctx_facts.dist(name)

    def asked(self, fixer: str) -> bool:
        """The check asks ``fixer`` to act although the versions are the plan's: a failing,
        auto-fixable finding of a rule that names it with ``reinstall=True`` (doctor.rules.base)."""
        ids = _rules_naming(True).get(fixer, frozenset())
        return any(f.id in ids and f.status == FAIL and f.fixable == Fixable.AUTO for f in self.verdict.findings)

    def failing(self, fixer: str) -> bool:
        """A rule that names ``fixer`` fails, whatever its fixability."""
        ids = _rules_naming(False).get(fixer, frozenset())
        return any(f.id in ids and f.status == FAIL for f in self.verdict.findings)

    def remove(self, name: str, why: Why) -> None:
        if self.dist(name) is not None and all(n != name for n, _ in self.removes):
            self.removes.append((name, why))

    def install_step(self, specs: List[Tuple[str, str]], why: Why, *, no_deps: bool = True,
                     index: Sequence[str] = (), finding: Optional[str] = None) -> None:
        reqs = [f"{n}{s}" for n, s in specs]
        for n, s in specs:
            self.installs[n] = s
        inst = self.opts.installer
        shown, shown_index = list(reqs), list(index)
        if not no_deps and not self.opts.constraint_file:
            # printed for a person (no constraints file exists yet): the stack's exact pins go on
            # the command line, so pip keeps them while it resolves (vllm, whose own torch pin
            # would conflict, is left out)
            held = [f"{n}=={v}" for n, v in sorted(self.pins.items())
                    if v[:1].isdigit() and n != "vllm" and n not in dict(specs)]
            shown += held
            for u in [x for st in self.steps for x in st.extra_index_urls] + list(self.row.extra_index_urls):
                if u not in shown_index:
                    shown_index.append(u)  # where the held pins come from (the Ascend mirror ...)
            if any("+cpu" in h for h in held) and TORCH_CPU_INDEX not in shown_index:
                shown_index.append(TORCH_CPU_INDEX)
        argv = inst.install(shown, no_deps=no_deps, extra_index_urls=shown_index,
                            constraint=None if no_deps else self.opts.constraint_file)
        self.steps.append(Step("pip", why, "install", argv=argv, packages=reqs, no_deps=no_deps,
                               extra_index_urls=list(index), finding=finding))


def build_plan(facts: Facts, verdict: Verdict, matrix: Matrix, row: Release, hardware: Optional[str],
               opts: PlanOptions, choice: TargetChoice) -> Plan:
    arch = arch_of(facts)
    matrix_pins = pins_for(matrix, row, arch=arch, python=python_of(facts))
    b = _Builder(facts, row, opts, arch, matrix, verdict, hardware,
                 torch_npu=matrix_pins.packages.get("torch-npu", row.torch_npu), retarget=choice.choice != "installed",
                 not_on_ascend=package_set(matrix, "vllm_not_on_ascend"))
    b.notes.extend(matrix_pins.notes)
    for fixer in FIXERS.values():
        fixer(b)

    steps: List[Step] = []
    from doctor.plan.vendor import path_to, vendor_steps

    vpath = path_to(matrix, facts, row, hardware)
    for layer, why in vendor_steps(vpath, facts):
        steps.append(Step("vendor", why, command=None, finding=f"{'driver' if layer in ('driver', 'firmware') else 'cann'}.{layer}"))
    if b.removes:
        names = [n for n, _ in b.removes]
        removal = join((w for _, w in b.removes), "sep.semi")
        steps.append(Step("pip", removal, "remove", argv=opts.installer.uninstall(names), removes=names))
    steps.extend(b.steps)
    # a finding about a package the plan replaces (torch-npu built for another CANN) is moot
    moot = {fid for fid, pkg in (("torch_npu.cann", "torch-npu"),) if pkg in b.installs}
    covered = ("driver.", "firmware.", "cann.") if vpath.layers else ()
    hand = [s for s in _manual_steps(verdict) if s.finding not in moot]
    for s in hand:  # a check finding's vendor command goes with the vendor step of its layer
        if s.kind == "vendor" and s.finding and s.finding.startswith(covered) and (s.command or s.hint):
            layer = "cann.toolkit" if s.finding.startswith("cann.") else "driver.driver"
            mine = next((v for v in steps if v.kind == "vendor" and v.finding == layer and not v.command and not v.hint),
                        None)
            if mine is not None:
                mine.command, mine.hint = s.command, s.hint
    steps.extend(s for s in hand if not (s.kind == "vendor" and s.finding and s.finding.startswith(covered)))
    handled = fixed_by_plan()
    for f in verdict.findings:
        if f.fixable == "auto" and f.status in (FAIL, WARN) and f.id not in handled:
            b.notes.append(T("plan.not_handled", id=f.id, title=f.title))
    _residual(b)
    alternatives = list(choice.alternatives)
    if "vllm" in b.installs and opts.vllm_from == "index":
        alternatives.append({"vllm_from": "source", "how": T("plan.alt.vllm_source", version=row.vllm)})
    if vpath.layers:
        b.notes.append(T("plan.vendor.first", n=len(vpath.layers)))
    return Plan(target=row.vllm_ascend, row=row.key, choice=choice.choice, choice_why=choice.why, pins=b.pins,
                steps=steps, expected_residual=b.residual, alternatives=alternatives, notes=b.notes,
                installer=opts.installer.kind, not_on_ascend=b.not_on_ascend, ranges=dict(b.ranges),
                cuda_only=package_set(matrix, "cuda_only"))


def _torch(b: _Builder) -> None:
    row, arch = b.row, b.arch
    torch = b.dist("torch")
    nvidia = sorted(n for n in (b.ctx_facts.packages.dists if b.ctx_facts.packages else {}) if n.startswith("nvidia-"))
    if torch is not None and accelerator_build(torch):
        b.remove("torch", T("plan.torch.accelerator_build", version=torch.version))
    for n in nvidia:
        b.remove(n, T("plan.torch.cuda_runtime", name=n))
    specs: List[Tuple[str, str]] = []
    why: List[Text] = []
    npu_wants = _npu_wants_torch(b)  # torch-npu's x86_64 wheels require torch==X+cpu exactly
    torch_ok = torch is not None and same_release(torch.version, row.torch) and not accelerator_build(torch) and \
        (npu_wants is None or local_label(torch.version) == local_label(npu_wants))
    if torch is not None and torch_ok:
        b.pins["torch"] = torch.version
    else:
        want = npu_wants if npu_wants and same_release(npu_wants, row.torch) else cpu_spec(row.torch, arch)
        specs.append(("torch", f"=={want}"))
        b.pins["torch"] = want
        why.append(T("plan.torch.needed", have=_have("torch", torch), release=row.vllm_ascend, torch=row.torch))
    trow = torch_row(b.matrix, row.torch)
    for name, spec, paired in (("torchvision", row.torchvision, trow.torchvision if trow else None),
                               ("torchaudio", row.torchaudio, trow.torchaudio if trow else None)):
        d = b.dist(name)
        needed = d is not None or spec is not None or name == "torchvision"  # vllm-ascend requires torchvision
        if not needed:
            continue
        ok = (d is not None and not accelerator_build(d) and (paired is None or same_release(d.version, paired))
              and satisfies(d.version, spec) is not False)
        if d is not None and ok:
            b.pins[name] = d.version
            continue
        version = paired or (spec.lstrip("=") if spec and spec.startswith("==") else None)
        if version is None:
            b.notes.append(T("plan.torch.no_companion", name=name, torch=row.torch))
            continue
        want = cpu_spec(version, arch)
        specs.append((name, f"=={want}"))
        b.pins[name] = want
        why.append(T("plan.torch.companion", name=name, have=_version_or_missing(d), version=version, torch=row.torch))
    if specs:
        index = [TORCH_CPU_INDEX] if arch == "x86_64" else []
        b.install_step(specs, join(why, "sep.semi"), index=index, finding="torch.version")


def _npu_wants_torch(b: _Builder) -> Optional[str]:
    """The torch the plan's torch-npu requires on this architecture when it is not plain torch
    (its x86_64 wheels up to 2.11.0.post3: torch==X+cpu; matrices/torch-npu.toml torch_x86_64)."""
    if b.arch != "x86_64":
        return None
    npu = b.dist("torch-npu")
    keep = npu is not None and any(same_release(npu.version, v) for v in b.row.torch_npu_accepted)
    r = torch_npu_row(b.matrix, npu.version if keep and npu is not None else b.torch_npu)
    return r.torch_x86_64 if r is not None else None


def _torch_npu(b: _Builder) -> None:
    row, choice = b.row, b.torch_npu
    npu = b.dist("torch-npu")
    if npu is not None and any(same_release(npu.version, v) for v in row.torch_npu_accepted):
        b.pins["torch-npu"] = npu.version
        return
    npu_row = torch_npu_row(b.matrix, choice)
    index: List[str] = []
    spec = f"=={choice}"
    if npu_row is not None and npu_row.url:
        spec = f" @ {npu_row.url}"
    elif npu_row is not None and npu_row.index == "ascend-mirror":
        index = list(row.extra_index_urls)
        if not index:
            b.notes.append(T("plan.torch_npu.mirror_unnamed", version=choice))
    b.pins["torch-npu"] = choice
    b.install_step([("torch-npu", spec)],
                   T("plan.needs", have=_have("torch-npu", npu), release=row.vllm_ascend, wants=f"torch-npu {choice}"),
                   index=index, finding="torch_npu.version")


def _vllm(b: _Builder) -> None:
    row = b.row
    v = b.dist("vllm")
    if v is not None and any(same_release(v.version, a) for a in row.vllm_accepted):
        b.pins["vllm"] = v.version
        return
    if v is not None:
        where = T("plan.vllm.editable_at", path=v.direct_url[len('file://'):]) if v.editable and v.direct_url else ""
        b.remove("vllm", T("plan.vllm.mismatch", version=v.version, where=where, release=row.vllm_ascend))
    if b.opts.vllm_from == "source":
        src = f"{b.opts.src_dir or '/tmp'}/vllm-{row.vllm}"
        b.steps.append(Step("fetch", T("plan.vllm.fetch", version=row.vllm),
                            "fetch", argv=["git", "clone", "--depth", "1", "--branch", f"v{row.vllm}", b.opts.vllm_repo, src],
                            finding="vllm.version"))
        inst = b.opts.installer
        argv = inst._cmd("install") + ["--no-deps", "--no-build-isolation", src]
        b.steps.append(Step("build", T("plan.vllm.build", version=row.vllm), "build", argv=argv, packages=[f"vllm=={row.vllm}+empty"], env={"VLLM_TARGET_DEVICE": "empty"},
            finding="vllm.version"))
        b.installs["vllm"] = f"=={row.vllm}+empty"
        b.pins["vllm"] = f"{row.vllm}+empty"
        return
    b.pins["vllm"] = row.vllm
    b.install_step([("vllm", f"=={row.vllm}")],
                   T("plan.vllm.install", have=_have("vllm", v), release=row.vllm_ascend, version=row.vllm, torch=row.torch),
                   finding="vllm.version")


def _vllm_ascend(b: _Builder) -> None:
    row, retarget = b.row, b.retarget
    va = b.dist("vllm-ascend")
    plugin_broken = b.asked("vllm_ascend")
    ok = va is not None and (not retarget or _eq(public(va.version), row.vllm_ascend)) and not plugin_broken
    if va is not None and ok:
        b.pins["vllm-ascend"] = va.version
        return
    b.pins["vllm-ascend"] = row.vllm_ascend
    if va is None:
        why = T("plan.vllm_ascend.install", release=row.vllm_ascend)
    elif plugin_broken and not retarget:
        why = T("plan.vllm_ascend.plugin", version=va.version)
    else:
        why = T("plan.vllm_ascend.move", version=va.version, release=row.vllm_ascend)
    b.install_step([("vllm-ascend", f"=={row.vllm_ascend}")], why, finding="vllm_ascend.installed")


def _triton(b: _Builder) -> None:
    row, hardware = b.row, b.hardware
    mainline, ta = b.dist("triton"), b.dist("triton-ascend")
    want = row.triton_ascend if row.triton_ascend and hardware != "310P" else None
    if mainline is not None:
        b.remove("triton", T("plan.triton.shared" if want or ta else "plan.triton.unused", version=mainline.version))
    if want is None:
        if ta is not None:
            reason = T("plan.triton_ascend.on_310p") if hardware == "310P" else \
                T("plan.triton_ascend.unused", release=row.vllm_ascend)
            b.remove("triton-ascend", T("plan.triton_ascend.remove", version=ta.version, reason=reason))
        return
    accepted = ta is not None and any(same_release(ta.version, a) for a in row.triton_ascend_accepted)
    if ta is not None and accepted and mainline is None:
        b.pins["triton-ascend"] = ta.version
        return
    version = ta.version if ta is not None and accepted else want
    b.pins["triton-ascend"] = version
    if accepted:
        why = T("plan.triton_ascend.reinstall", version=version)
    else:
        why = T("plan.needs", have=_have("triton-ascend", ta), release=row.vllm_ascend, wants=want)
    b.install_step([("triton-ascend", f"=={version}")], why, index=row.extra_index_urls, finding="vllm_ascend.triton")


def _rest(b: _Builder) -> None:
    """numpy/transformers ranges and the row's extra requirements, installed with their own
    dependencies under the pins (a constraints file), so nothing can move the stack."""
    row = b.row
    specs: List[Tuple[str, str]] = []
    why: List[Text] = []
    for name, spec in (("numpy", row.numpy), ("transformers", row.transformers)):
        d = b.dist(name)
        if spec is not None:
            b.ranges[name] = spec
        if spec is None:
            if d is not None:
                b.pins[name] = d.version
            continue
        if d is not None and satisfies(d.version, spec) is not False:
            b.pins[name] = d.version
            continue
        specs.append((name, spec))
        b.pins[name] = spec
        why.append(T("plan.rest.move", name=name, have=_version_or_missing(d), spec=spec))
    for text in row.extra_requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        d = b.dist(name)
        spec = str(req.specifier)
        if d is not None and (not spec or satisfies(d.version, spec) is not False):
            b.pins[name] = d.version
            continue
        specs.append((name, spec))
        b.pins[name] = spec or "any"
        why.append(T("plan.rest.extra", requirement=f"{name}{spec}", release=row.vllm_ascend))
    if specs:
        b.install_step(specs, join(why, "sep.semi"), no_deps=False, finding="vllm_ascend.numpy"
                       if any(n == "numpy" for n, _ in specs) else "vllm_ascend.transformers")


def _requirements(b: _Builder) -> None:
    """vllm and vllm-ascend go in with --no-deps; their other requirements (minus torch and the
    CUDA side) come next. For a version being installed they are read from the downloaded wheel;
    for an installed one from its metadata."""
    stack = exact_pins(b.pins)
    markers = b.ctx_facts.python.markers if b.ctx_facts.python else {}
    installed = b.ctx_facts.packages.dists if b.ctx_facts.packages else {}
    deferred: List[str] = []
    known: List[str] = []
    # an installed one whose requirements are broken, as the rules that name this fixer say:
    # vllm-ascend's own finding, or pip check's (e.g. vllm put in by hand with --no-deps: its
    # fastapi, openai ... are missing); what is missing is read from each one's metadata
    broken = ({"vllm-ascend"} if b.asked("requirements") else set()) | ({"vllm"} if b.failing("requirements") else set())
    owners: List[str] = []
    for name in ("vllm", "vllm-ascend"):
        if name in b.installs:
            deferred.append(f"{name}{b.installs[name]}")
        elif name in broken and (d := b.dist(name)) is not None:
            for r in unmet_requirements(name, d.requires, stack, installed, markers, b.not_on_ascend):
                if r not in known:
                    known.append(r)
                    if name not in owners:
                        owners.append(name)
    excl = sorted(set(stack) | set(b.not_on_ascend))
    inst = b.opts.installer
    if known:
        b.steps.append(Step("pip", T("plan.requirements.installed", owners=" ".join(owners)), "install",
                            argv=inst.install(known, no_deps=False, constraint=b.opts.constraint_file),
                            packages=known, no_deps=False,
                            finding="vllm_ascend.requirements" if "vllm-ascend" in owners else "env.pip_check"))
    if deferred:
        b.steps.append(Step("pip", T("plan.requirements.downloaded", owners=", ".join(deferred)), "requirements",
            argv=None, no_deps=False, requirements_of=deferred, exclude=excl, finding="vllm_ascend.requirements"))


def _mooncake(b: _Builder) -> None:
    row = b.row
    dists = b.ctx_facts.packages.dists if b.ctx_facts.packages else {}
    builds = sorted(n for n in dists if n.startswith("mooncake-transfer-engine"))
    wrong = [n for n in builds if n != MOONCAKE_NPU]
    npu = dists.get(MOONCAKE_NPU)
    for n in wrong:
        b.remove(n, T("plan.mooncake.no_transport", name=n))
    if npu is not None:
        b.pins[MOONCAKE_NPU] = npu.version
    # A source build without ascend_transport.so (built without -DUSE_ASCEND_DIRECT=ON) has no
    # wheel name to go by: the check's transport finding says it must be replaced.
    no_transport = b.asked("mooncake")
    wanted = b.opts.with_mooncake or (wrong and npu is None) or no_transport
    if not wanted:
        return
    if not row.mooncake:
        b.notes.append(T("plan.mooncake.none_in_row", release=row.vllm_ascend))
        return
    if npu is not None and same_release(npu.version, row.mooncake) and not no_transport:
        return
    if row.mooncake_install == "pip":
        b.pins[MOONCAKE_NPU] = row.mooncake
        b.install_step([(MOONCAKE_NPU, f"=={row.mooncake}")],
                       T("plan.mooncake.pip", version=row.mooncake, release=row.vllm_ascend),
                       no_deps=False, finding="mooncake.installed")
        return
    argv = [b.opts.doctor_python, "-m", "doctor", "mooncake", "build", "--tag", f"v{row.mooncake}",
            "--python", b.opts.installer.python]
    b.steps.append(Step("build", T("plan.mooncake.build", version=row.mooncake), "build", argv=argv,
                        finding="mooncake.installed", touches_family="mooncake"))


# The fixers, in the order their steps run. A rule names the fixer that repairs its finding
# (``Rule.fixer``); findings whose rule names none are reported, not changed.
FIXERS: Dict[str, Callable[[_Builder], None]] = {
    "torch": _torch,
    "torch_npu": _torch_npu,
    "vllm": _vllm,
    "vllm_ascend": _vllm_ascend,
    "triton": _triton,
    "row_packages": _rest,
    "requirements": _requirements,
    "mooncake": _mooncake,
}


@functools.lru_cache(maxsize=2)
def _rules_naming(reinstall: bool) -> Dict[str, FrozenSet[str]]:
    """fixer -> the finding ids of the rules that name it (with ``reinstall``: only those whose
    failure makes it act on an install of the right version)."""
    from doctor.rules.engine import all_rules

    out: Dict[str, Set[str]] = {}
    for r in all_rules():
        if r.fixer and (r.reinstall or not reinstall):
            out.setdefault(r.fixer, set()).add(r.id)
    return {k: frozenset(v) for k, v in out.items()}


def fixed_by_plan() -> Dict[str, str]:
    """finding id -> the fixer that repairs it, as the rules declare."""
    from doctor.rules.engine import all_rules

    return {r.id: r.fixer for r in all_rules() if r.fixer}


def _have(name: str, d: Optional[Distribution]) -> Text:
    """'torch 2.8.0' / 'torch is not installed'."""
    return T("plan.have", name=name, version=d.version) if d is not None else T("plan.not_installed", name=name)


def _version_or_missing(d: Optional[Distribution]) -> Union[str, Text]:
    return d.version if d is not None else T("plan.missing")


def _manual_steps(verdict: Verdict) -> List[Step]:
    out: List[Step] = []
    seen = set()
    for f in verdict.findings:
        if f.status not in (FAIL, WARN) or f.fixable not in ("manual", "vendor"):
            continue
        # the finding's first group of commands, one step each, printed as is (the groups after
        # it are alternatives; the doctor's own commands are this plan)
        group = [c for c in first_group(f.commands) if c.argv[:1] != ("ascend-doctor",)]
        if group:
            for i, c in enumerate(group):
                if c.shell() not in seen:
                    seen.add(c.shell())
                    out.append(Step(f.fixable, f.title, command=c.shell(), finding=f.id,
                                    hint=f.hint if i == 0 else None))
            continue
        if f.hint is None or f"hint:{f.id}" in seen:
            continue
        seen.add(f"hint:{f.id}")
        out.append(Step(f.fixable, f.title, hint=f.hint, finding=f.id))  # words only: nothing to run as printed
    return out


def _residual(b: _Builder) -> None:
    row = b.row
    vllm_pin = b.pins.get("vllm", "")
    if vllm_pin and not local_label(vllm_pin):
        kept = b.dist("vllm") if "vllm" not in b.installs else None
        conflicts = []
        if kept is not None:
            markers = b.ctx_facts.python.markers if b.ctx_facts.python else {}
            for text in kept.requires:
                try:
                    req = Requirement(text)
                except InvalidRequirement:
                    continue
                name = canonicalize_name(req.name)
                if req.marker is not None and not marker_applies(str(req.marker), markers):
                    continue
                if not any(fnmatch.fnmatch(name, p) for p in b.not_on_ascend):
                    continue
                d = b.dist(name)
                have = b.pins.get(name) or (d.version if d else None)
                if have is None or satisfies(have, str(req.specifier)) is False:
                    conflicts.append(T("env.conflict.requires", requirer="vllm", version=kept.version,
                                       requirement=f"{name}{req.specifier}"))
        if conflicts:
            for c in conflicts:
                b.residual.append(T("plan.residual.vllm_pin", conflict=c, release=row.vllm_ascend, torch=row.torch))
        elif kept is None:
            b.residual.append(T("plan.residual.index_vllm", version=vllm_pin, release=row.vllm_ascend, torch=row.torch))
    elif local_label(vllm_pin):
        b.residual.append(T("plan.residual.local_version", version=vllm_pin, public=public(vllm_pin)))
    npu = b.pins.get("torch-npu")
    if npu and row.torch_npu_recommended and not same_release(npu, row.torch_npu_recommended):
        b.residual.append(T("plan.residual.torch_npu", version=npu, recommended=row.torch_npu_recommended))


def plan_for(facts: Facts, matrix: Matrix, verdict_for: Callable[[str], Verdict], hardware: Optional[str],
             opts: PlanOptions) -> Plan:
    """Choose the target, judge the facts against it (``verdict_for(version) -> Verdict``, the
    check's rules) and build the plan."""
    choice = choose_target(matrix, facts, hardware, opts.target, opts.prefer)
    verdict = verdict_for(choice.release.vllm_ascend)
    return build_plan(facts, verdict, matrix, choice.release, hardware, opts, choice)


def requirements_text(plan: Plan, extra_index_urls: Sequence[str]) -> str:
    """The pins as a requirements/constraints file (for Dockerfiles): one ``name==version`` (or
    ``name<spec``) line per stack package; extra index lines first."""
    lines = [f"# ascend-doctor fix: pins for vllm-ascend {plan.target} (matrix row {plan.row})",
             "# pip install --no-deps -r THIS_FILE installs the stack; pip install -c THIS_FILE keeps it"]
    for u in extra_index_urls:
        lines.append(f"--extra-index-url {u}")
    from doctor.plan.pins import Pin

    lines += [Pin(name, plan.pins[name]).requirement() for name in sorted(plan.pins)]
    return "\n".join(lines) + "\n"


def constraints_text(pins: Dict[str, str]) -> str:
    """The pins as a pip constraints file: exact pins and ranges, no options."""
    from doctor.plan.pins import constraint_lines

    return "\n".join(constraint_lines(pins)) + "\n"


def vendor_only(plan: Plan) -> Plan:
    """No CANN on this machine and no environment named (--python): the vendor layers come
    first, and nothing is installed into whatever interpreter happens to be first on PATH."""
    out = copy.deepcopy(plan)
    out.steps = [s for s in out.steps if s.kind == "vendor"]
    out.pins = {}
    out.expected_residual = []
    out.alternatives = [{"again": True}]  # the same command once the vendor layers are in
    out.notes = [T("plan.no_cann", target=plan.target)]
    return out
