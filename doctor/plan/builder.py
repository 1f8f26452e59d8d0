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

import fnmatch
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.errors import UsageError
from doctor.facts import Distribution, Facts
from doctor.findings import FAIL, WARN, Msg, Verdict, msg
from doctor.i18n import T
from doctor.shell.installer import Installer
from doctor.matrix.model import Matrix, Release
from doctor.matrix.query import (
    TOO_OLD,
    UNSUPPORTED,
    cann_supports_driver,
    newest_release,
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
# torch): the same list check treats as the expected pip-check residual.
VLLM_NOT_ON_ASCEND = ("torch", "torchvision", "torchaudio", "xformers", "flashinfer-*", "nvidia-*", "triton",
                      "cupy-*", "tilelang", "apache-tvm-ffi", "quack-kernels", "tokenspeed-mla", "humming-kernels",
                      "fastsafetensors", "intel-extension-for-pytorch")
# Findings whose fix is a step of the plan (the rest of the auto-fixable ones are reported).
HANDLED = {"torch.version", "torch.build", "torch.companions", "torch_npu.version", "vllm.version",
           "vllm_ascend.installed", "vllm_ascend.plugin", "vllm_ascend.triton", "vllm_ascend.numpy",
           "vllm_ascend.transformers", "vllm_ascend.requirements", "mooncake.installed", "mooncake.transport",
           "env.pip_check"}

KEEP_CANN, KEEP_RELEASE = "keep-cann", "keep-release"


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
    why: Msg
    action: str = ""  # remove | install | requirements | build | fetch (manual/vendor: "")
    argv: Optional[List[str]] = None
    command: Optional[str] = None  # manual/vendor: the exact command, never run
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
    choice_why: Msg
    pins: Dict[str, str]
    steps: List[Step]
    expected_residual: List[Msg] = field(default_factory=list)
    alternatives: List[Dict] = field(default_factory=list)
    notes: List[Msg] = field(default_factory=list)
    installer: str = "pip"
    # what the resolver said (doctor.plan.resolve): status, files with hashes and sizes, failure
    resolution: Optional[Dict] = None
    resolved_files: List = field(default_factory=list)  # parse.pipreport.Resolved, for --apply
    resolution_failure: Optional[object] = None  # parse.pipreport.Failure
    remedies: Optional[object] = None  # plan.indexes.Remedies
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
            "alternatives": [{k: (v.text(lang) if hasattr(v, "text") else v) for k, v in a.items()}
                             for a in self.alternatives],
            "notes": [m.text(lang) for m in self.notes],
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
    why: Msg
    alternatives: List[Dict] = field(default_factory=list)


def vendor_misfits(matrix: Matrix, row: Release, facts: Facts, hardware: Optional[str]) -> List[str]:
    """Why the CANN or driver here is too old for ``row`` (a newer CANN is only untested)."""
    cann, driver = cann_of(facts), driver_of(facts)
    wanted = row.cann_for(hardware)
    why: List[str] = []
    if cann and AscendVersion(cann) < min(AscendVersion(w) for w in wanted):
        why.append(f"CANN {cann} is older than {wanted[0]}")
    if driver:
        use = cann if cann and not why else wanted[0]
        status, _ = cann_supports_driver(matrix, use, driver)
        if status in (TOO_OLD, UNSUPPORTED):
            why.append(f"driver {driver} is {status.replace('_', ' ')} for CANN {use}")
    return why


def _fits_here(matrix: Matrix, facts: Facts, hardware: Optional[str]) -> Optional[Release]:
    glibc = facts.python.glibc if facts.python and facts.python.glibc else None
    return newest_release(matrix, cann=cann_of(facts), driver=driver_of(facts), python=python_of(facts),
                          hardware=hardware if hardware in ("A2", "A3", "310P", "A5") else None,
                          arch=arch_of(facts), glibc=glibc, wheel_only=True)


def choose_target(matrix: Matrix, facts: Facts, hardware: Optional[str], target: Optional[str],
                  prefer: Optional[str]) -> TargetChoice:
    if prefer not in (None, KEEP_CANN, KEEP_RELEASE):
        raise UsageError(f"--prefer {prefer!r}: use keep-cann or keep-release")
    if target:
        row = release_row(matrix, target)
        if row is None:
            raise UsageError(f"--target vllm-ascend=={target}: not in the matrix (see ascend-doctor matrix show)")
        base = TargetChoice(row, "target", msg(f"--target vllm-ascend=={row.vllm_ascend}",
                                                 f"--target vllm-ascend=={row.vllm_ascend}"))
    else:
        installed = facts.version_of("vllm-ascend")
        if installed:
            row, note = release_for_installed(matrix, installed)
            if row is None:
                raise UsageError(f"cannot plan: {note}; pass --target vllm-ascend==<version>")
            base = TargetChoice(row, "installed", msg(f"the installed vllm-ascend {installed}",
                                                       f"已安装的 vllm-ascend {installed}"))
        else:
            row = _fits_here(matrix, facts, hardware)
            if row is None:
                # too old for every release: the path that changes the fewest vendor layers
                from doctor.plan.vendor import cheapest

                best, others = cheapest(matrix, facts, hardware)
                if best is None:
                    raise UsageError("cannot plan: no vllm-ascend release in the matrix runs on this Python/arch; "
                                     "pass --target vllm-ascend==<version>")
                return TargetChoice(best.release, "vendor-upgrade", T("plan.vendor.choice", cost=best.describe()),
                                    [{"prefer": "target", "target": o.release.vllm_ascend, "cost": o.to_json(),
                                      "how": o.describe()} for o in others])
            here = ", ".join(x for x in (f"CANN {cann_of(facts)}" if cann_of(facts) else "",
                                         f"Python {python_of(facts)}" if python_of(facts) else "",
                                         arch_of(facts) or "") if x)
            return TargetChoice(row, "fresh",
                                msg(f"no vllm-ascend installed: the newest release that runs here ({here})",
                                    f"未安装 vllm-ascend：能在此运行的最新版本（{here}）"))
    misfits = vendor_misfits(matrix, base.release, facts, hardware)
    if not misfits:
        return base
    other = _fits_here(matrix, facts, hardware)
    keep_release = {"prefer": KEEP_RELEASE, "target": base.release.vllm_ascend,
                    "needs": [f"vendor install: {m}" for m in misfits]}
    if other is None or other.vllm_ascend == base.release.vllm_ascend:
        return TargetChoice(base.release, KEEP_RELEASE, msg(
            f"{base.why.en}; {'; '.join(misfits)}: no release fits the installed CANN/driver, so they must be upgraded",
            f"{base.why.zh}；{'；'.join(misfits)}：没有适配当前 CANN/驱动的版本，需要升级"))
    keep_cann = {"prefer": KEEP_CANN, "target": other.vllm_ascend, "needs": []}
    if prefer == KEEP_RELEASE or (prefer is None and base.choice == "target"):
        return TargetChoice(base.release, KEEP_RELEASE, msg(
            f"{base.why.en}, with a vendor upgrade ({'; '.join(misfits)})",
            f"{base.why.zh}，需要升级厂商组件（{'；'.join(misfits)}）"), [keep_cann])
    return TargetChoice(other, KEEP_CANN, msg(
        f"{'; '.join(misfits)} for vllm-ascend {base.release.vllm_ascend}: keeping CANN/driver and moving to "
        f"vllm-ascend {other.vllm_ascend}, the newest release that runs on them (--prefer keep-release to upgrade CANN instead)",
        f"{'；'.join(misfits)}（vllm-ascend {base.release.vllm_ascend} 所需）：保留 CANN/驱动，改用能在其上运行的最新版本 "
        f"vllm-ascend {other.vllm_ascend}（如需升级 CANN，用 --prefer keep-release）"), [keep_release])


# ---------------------------------------------------------------------------------------------
# requirements of vllm / vllm-ascend without the CUDA side


def exact_pins(pins: Dict[str, str]) -> List[str]:
    """Names pinned to one version: their own step installs them, so requirement steps leave
    them out. Range pins (``transformers>=4.57.3``) stay in, so pip intersects the ranges."""
    return sorted(n for n, v in pins.items() if v[:1].isdigit())


def excluded(owner: str, name: str, stack: Sequence[str]) -> bool:
    name = canonicalize_name(name)
    if name in stack:
        return True  # pinned: its own step installs it
    if owner == "vllm":
        return any(fnmatch.fnmatch(name, p) for p in VLLM_NOT_ON_ASCEND)
    return False


def unmet_requirements(owner: str, requires: Sequence[str], stack: Sequence[str],
                       installed: Dict[str, Distribution], markers: Dict[str, str]) -> List[str]:
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
        if excluded(owner, req.name, stack):
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
    ctx_facts: Facts
    row: Release
    opts: PlanOptions
    arch: Optional[str]
    pins: Dict[str, str] = field(default_factory=dict)
    removes: List[Tuple[str, Msg]] = field(default_factory=list)
    steps: List[Step] = field(default_factory=list)
    notes: List[Msg] = field(default_factory=list)
    residual: List[Msg] = field(default_factory=list)
    installs: Dict[str, str] = field(default_factory=dict)  # name -> spec the plan installs
    ranges: Dict[str, str] = field(default_factory=dict)  # name -> the row's range (numpy, transformers)

    def dist(self, name: str) -> Optional[Distribution]:
        return self.ctx_facts.dist(name)

    def remove(self, name: str, why: Msg) -> None:
        if self.dist(name) is not None and all(n != name for n, _ in self.removes):
            self.removes.append((name, why))

    def install_step(self, specs: List[Tuple[str, str]], why: Msg, *, no_deps: bool = True,
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
    b = _Builder(facts, row, opts, arch)
    py = python_of(facts)
    matrix_pins = pins_for(matrix, row, arch=arch, python=py)
    b.notes.extend(msg(n, n) for n in matrix_pins.notes)
    retarget = choice.choice != "installed"

    _torch(b, matrix)
    _torch_npu(b, matrix, matrix_pins.packages.get("torch-npu", row.torch_npu))
    _vllm(b)
    _vllm_ascend(b, verdict, retarget)
    _triton(b, hardware)
    _rest(b)
    _requirements(b, verdict)
    _mooncake(b, verdict)

    steps: List[Step] = []
    from doctor.plan.vendor import path_to, vendor_steps

    vpath = path_to(matrix, facts, row, hardware)
    for layer, why in vendor_steps(vpath, facts):
        steps.append(Step("vendor", why, command=None, finding=f"{'driver' if layer in ('driver', 'firmware') else 'cann'}.{layer}"))
    if b.removes:
        names = [n for n, _ in b.removes]
        why = Msg("; ".join(w.en for _, w in b.removes), "；".join(w.zh for _, w in b.removes))
        steps.append(Step("pip", why, "remove", argv=opts.installer.uninstall(names), removes=names))
    steps.extend(b.steps)
    # a finding about a package the plan replaces (torch-npu built for another CANN) is moot
    moot = {fid for fid, pkg in (("torch_npu.cann", "torch-npu"),) if pkg in b.installs}
    covered = ("driver.", "firmware.", "cann.") if vpath.layers else ()
    hand = [s for s in _manual_steps(verdict) if s.finding not in moot]
    for s in hand:  # a check finding's vendor command goes with the vendor step of its layer
        if s.kind == "vendor" and s.finding and s.finding.startswith(covered) and s.command:
            layer = "cann.toolkit" if s.finding.startswith("cann.") else "driver.driver"
            mine = next((v for v in steps if v.kind == "vendor" and v.finding == layer and not v.command), None)
            if mine is not None:
                mine.command = s.command
    steps.extend(s for s in hand if not (s.kind == "vendor" and s.finding and s.finding.startswith(covered)))
    for f in verdict.findings:
        if f.fixable == "auto" and f.status in (FAIL, WARN) and f.id not in HANDLED:
            b.notes.append(msg(f"not changed by the plan: {f.id} ({f.title.en})",
                               f"计划不处理：{f.id}（{f.title.zh}）"))
    _residual(b)
    alternatives = list(choice.alternatives)
    if "vllm" in b.installs and opts.vllm_from == "index":
        alternatives.append({"vllm_from": "source", "how": (
            f"ascend-doctor fix --vllm-from source: git clone --depth 1 --branch v{row.vllm} {VLLM_REPO} "
            f"and VLLM_TARGET_DEVICE=empty pip install --no-deps --no-build-isolation <clone> (vllm {row.vllm}+empty, "
            "the way the official images build it; needs a compiler toolchain and network access to GitHub)")})
    if vpath.layers:
        b.notes.append(T("plan.vendor.first", n=len(vpath.layers)))
    return Plan(target=row.vllm_ascend, row=row.key, choice=choice.choice, choice_why=choice.why, pins=b.pins,
                steps=steps, expected_residual=b.residual, alternatives=alternatives, notes=b.notes,
                installer=opts.installer.kind, ranges=dict(b.ranges))


def _torch(b: _Builder, matrix: Matrix) -> None:
    row, arch = b.row, b.arch
    torch = b.dist("torch")
    nvidia = sorted(n for n in (b.ctx_facts.packages.dists if b.ctx_facts.packages else {}) if n.startswith("nvidia-"))
    if torch is not None and accelerator_build(torch):
        b.remove("torch", msg(f"torch {torch.version} is a CUDA/ROCm build (torch-npu needs the CPU build)",
                              f"torch {torch.version} 是 CUDA/ROCm 版本（torch-npu 需要 CPU 版本）"))
    for n in nvidia:
        b.remove(n, msg(f"{n} is a CUDA runtime package (nothing on an Ascend host uses it)",
                        f"{n} 是 CUDA 运行时包（昇腾机器上不需要）"))
    specs: List[Tuple[str, str]] = []
    why_en, why_zh = [], []
    torch_ok = torch is not None and same_release(torch.version, row.torch) and not accelerator_build(torch)
    if torch_ok:
        b.pins["torch"] = torch.version
    else:
        want = cpu_spec(row.torch, arch)
        specs.append(("torch", f"=={want}"))
        b.pins["torch"] = want
        have = f"torch {torch.version}" if torch else "torch is not installed"
        why_en.append(f"{have}; vllm-ascend {row.vllm_ascend} needs torch {row.torch} (CPU build)")
        why_zh.append(f"{'当前 torch ' + torch.version if torch else '未安装 torch'}；vllm-ascend {row.vllm_ascend} 需要 torch {row.torch}（CPU 版本）")
    trow = torch_row(matrix, row.torch)
    for name, spec, paired in (("torchvision", row.torchvision, trow.torchvision if trow else None),
                               ("torchaudio", row.torchaudio, trow.torchaudio if trow else None)):
        d = b.dist(name)
        needed = d is not None or spec is not None or name == "torchvision"  # vllm-ascend requires torchvision
        if not needed:
            continue
        ok = (d is not None and not accelerator_build(d) and (paired is None or same_release(d.version, paired))
              and satisfies(d.version, spec) is not False)
        if ok:
            b.pins[name] = d.version
            continue
        version = paired or (spec.lstrip("=") if spec and spec.startswith("==") else None)
        if version is None:
            b.notes.append(msg(f"{name}: no version pairs with torch {row.torch} in the matrix; left as is",
                               f"{name}：矩阵中没有与 torch {row.torch} 配套的版本；保持不变"))
            continue
        want = cpu_spec(version, arch)
        specs.append((name, f"=={want}"))
        b.pins[name] = want
        why_en.append(f"{name} {d.version if d else '(missing)'} -> {version} (pairs with torch {row.torch})")
        why_zh.append(f"{name} {d.version if d else '（未安装）'} -> {version}（与 torch {row.torch} 配套）")
    if specs:
        index = [TORCH_CPU_INDEX] if arch == "x86_64" else []
        b.install_step(specs, Msg("; ".join(why_en), "；".join(why_zh)), index=index, finding="torch.version")


def _torch_npu(b: _Builder, matrix: Matrix, choice: str) -> None:
    row = b.row
    npu = b.dist("torch-npu")
    if npu is not None and any(same_release(npu.version, v) for v in row.torch_npu_accepted):
        b.pins["torch-npu"] = npu.version
        return
    npu_row = torch_npu_row(matrix, choice)
    index: List[str] = []
    spec = f"=={choice}"
    if npu_row is not None and npu_row.url:
        spec = f" @ {npu_row.url}"
    elif npu_row is not None and npu_row.index == "ascend-mirror":
        index = list(row.extra_index_urls)
        if not index:
            b.notes.append(msg(f"torch-npu {choice} is on the Ascend pip mirror, which the matrix row does not name",
                               f"torch-npu {choice} 位于昇腾 pip 镜像，但矩阵中该版本未给出镜像地址"))
    b.pins["torch-npu"] = choice
    have = f"torch-npu {npu.version}" if npu else "torch-npu is not installed"
    b.install_step([("torch-npu", spec)], msg(
        f"{have}; vllm-ascend {row.vllm_ascend} needs torch-npu {choice}",
        f"{'当前 torch-npu ' + npu.version if npu else '未安装 torch-npu'}；vllm-ascend {row.vllm_ascend} 需要 torch-npu {choice}"),
        index=index, finding="torch_npu.version")


def _vllm(b: _Builder) -> None:
    row = b.row
    v = b.dist("vllm")
    if v is not None and any(same_release(v.version, a) for a in row.vllm_accepted):
        b.pins["vllm"] = v.version
        return
    if v is not None:
        where = f", editable at {v.direct_url[len('file://'):]}" if v.editable and v.direct_url else ""
        b.remove("vllm", msg(
            f"vllm {v.version}{where} does not match vllm-ascend {row.vllm_ascend} (its files are kept in the "
            f"transaction's backup: a local build cannot be downloaded again)",
            f"vllm {v.version}{where} 与 vllm-ascend {row.vllm_ascend} 不配套（其文件保存在事务备份中："
            f"本地构建的版本无法重新下载）"))
    if b.opts.vllm_from == "source":
        src = f"{b.opts.src_dir or '/tmp'}/vllm-{row.vllm}"
        b.steps.append(Step("fetch", msg(f"fetch vLLM v{row.vllm} source (download phase)", f"获取 vLLM v{row.vllm} 源码（下载阶段）"),
                            "fetch", argv=["git", "clone", "--depth", "1", "--branch", f"v{row.vllm}", b.opts.vllm_repo, src],
                            finding="vllm.version"))
        inst = b.opts.installer
        argv = inst._cmd("install") + ["--no-deps", "--no-build-isolation", src]
        b.steps.append(Step("build", msg(
            f"build vllm {row.vllm} with VLLM_TARGET_DEVICE=empty (no CUDA kernels, no torch pin) and install it without dependencies",
            f"以 VLLM_TARGET_DEVICE=empty 构建 vllm {row.vllm}（不含 CUDA 内核、不固定 torch），不带依赖安装"),
            "build", argv=argv, packages=[f"vllm=={row.vllm}+empty"], env={"VLLM_TARGET_DEVICE": "empty"},
            finding="vllm.version"))
        b.installs["vllm"] = f"=={row.vllm}+empty"
        b.pins["vllm"] = f"{row.vllm}+empty"
        return
    b.pins["vllm"] = row.vllm
    b.install_step([("vllm", f"=={row.vllm}")], msg(
        f"{'vllm ' + v.version if v else 'vllm is not installed'}; vllm-ascend {row.vllm_ascend} needs vllm {row.vllm}: "
        f"installed without dependencies so it cannot replace torch ({row.torch}) with its own pin",
        f"{'当前 vllm ' + v.version if v else '未安装 vllm'}；vllm-ascend {row.vllm_ascend} 需要 vllm {row.vllm}："
        f"不带依赖安装，避免它用自己固定的版本替换 torch（{row.torch}）"), finding="vllm.version")


def _vllm_ascend(b: _Builder, verdict: Verdict, retarget: bool) -> None:
    row = b.row
    va = b.dist("vllm-ascend")
    plugin_broken = any(f.id == "vllm_ascend.plugin" and f.status == FAIL and f.fixable == "auto" for f in verdict.findings)
    ok = va is not None and (not retarget or _eq(public(va.version), row.vllm_ascend)) and not plugin_broken
    if ok:
        b.pins["vllm-ascend"] = va.version
        return
    b.pins["vllm-ascend"] = row.vllm_ascend
    if va is None:
        why = msg(f"install vllm-ascend {row.vllm_ascend}", f"安装 vllm-ascend {row.vllm_ascend}")
    elif plugin_broken and not retarget:
        why = msg(f"vllm-ascend {va.version} does not register the 'ascend' platform plugin: reinstall it",
                  f"vllm-ascend {va.version} 未注册 'ascend' 平台插件：重新安装")
    else:
        why = msg(f"vllm-ascend {va.version} -> {row.vllm_ascend}", f"vllm-ascend {va.version} -> {row.vllm_ascend}")
    b.install_step([("vllm-ascend", f"=={row.vllm_ascend}")], why, finding="vllm_ascend.installed")


def _triton(b: _Builder, hardware: Optional[str]) -> None:
    row = b.row
    mainline, ta = b.dist("triton"), b.dist("triton-ascend")
    want = row.triton_ascend if row.triton_ascend and hardware != "310P" else None
    if mainline is not None:
        why = (f"mainline triton {mainline.version} shares the 'triton' package with triton-ascend"
               if want or ta else f"mainline (CUDA) triton {mainline.version} is unused on Ascend (the official images remove it)")
        why_zh = (f"主线 triton {mainline.version} 与 triton-ascend 共用 'triton' 包名"
                  if want or ta else f"主线（CUDA）triton {mainline.version} 在昇腾上无用（官方镜像会卸载它）")
        b.remove("triton", msg(why, why_zh))
    if want is None:
        if ta is not None:
            reason = "not supported on 300I Duo (310P)" if hardware == "310P" else f"vllm-ascend {row.vllm_ascend} does not use it"
            reason_zh = "300I Duo（310P）不支持" if hardware == "310P" else f"vllm-ascend {row.vllm_ascend} 不使用它"
            b.remove("triton-ascend", msg(f"triton-ascend {ta.version}: {reason}", f"triton-ascend {ta.version}：{reason_zh}"))
        return
    accepted = ta is not None and any(same_release(ta.version, a) for a in row.triton_ascend_accepted)
    if accepted and mainline is None:
        b.pins["triton-ascend"] = ta.version
        return
    version = ta.version if accepted else want
    b.pins["triton-ascend"] = version
    if accepted:
        why = msg(f"reinstall triton-ascend {version}: removing mainline triton deletes the files they share",
                  f"重装 triton-ascend {version}：卸载主线 triton 会删除二者共用的文件")
    else:
        why = msg(f"{'triton-ascend ' + ta.version if ta else 'triton-ascend is not installed'}; vllm-ascend {row.vllm_ascend} needs {want}",
                  f"{'当前 triton-ascend ' + ta.version if ta else '未安装 triton-ascend'}；vllm-ascend {row.vllm_ascend} 需要 {want}")
    b.install_step([("triton-ascend", f"=={version}")], why, index=row.extra_index_urls, finding="vllm_ascend.triton")


def _rest(b: _Builder) -> None:
    """numpy/transformers ranges and the row's extra requirements, installed with their own
    dependencies under the pins (a constraints file), so nothing can move the stack."""
    row = b.row
    specs: List[Tuple[str, str]] = []
    why_en, why_zh = [], []
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
        why_en.append(f"{name} {d.version if d else '(missing)'} -> {spec}")
        why_zh.append(f"{name} {d.version if d else '（未安装）'} -> {spec}")
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
        why_en.append(f"{name}{spec} is part of the vllm-ascend {row.vllm_ascend} row")
        why_zh.append(f"{name}{spec} 属于 vllm-ascend {row.vllm_ascend} 的配套")
    if specs:
        b.install_step(specs, Msg("; ".join(why_en), "；".join(why_zh)), no_deps=False, finding="vllm_ascend.numpy"
                       if any(n == "numpy" for n, _ in specs) else "vllm_ascend.transformers")


def _requirements(b: _Builder, verdict: Verdict) -> None:
    """vllm and vllm-ascend go in with --no-deps; their other requirements (minus torch and the
    CUDA side) come next. For a version being installed they are read from the downloaded wheel;
    for an installed one from its metadata."""
    stack = exact_pins(b.pins)
    markers = b.ctx_facts.python.markers if b.ctx_facts.python else {}
    installed = b.ctx_facts.packages.dists if b.ctx_facts.packages else {}
    deferred: List[str] = []
    known: List[str] = []
    va_failing = any(f.id == "vllm_ascend.requirements" and f.status == FAIL for f in verdict.findings)
    for name in ("vllm", "vllm-ascend"):
        if name in b.installs:
            deferred.append(f"{name}{b.installs[name]}")
        elif name == "vllm-ascend" and va_failing and b.dist(name) is not None:
            for r in unmet_requirements(name, b.dist(name).requires, stack, installed, markers):
                if r not in known:
                    known.append(r)
    excl = sorted(set(stack) | set(VLLM_NOT_ON_ASCEND))
    inst = b.opts.installer
    if known:
        b.steps.append(Step("pip", msg("requirements of the installed vllm-ascend that are missing",
                                       "已安装的 vllm-ascend 缺少的依赖"), "install",
                            argv=inst.install(known, no_deps=False, constraint=b.opts.constraint_file),
                            packages=known, no_deps=False, finding="vllm_ascend.requirements"))
    if deferred:
        b.steps.append(Step("pip", msg(
            f"the other requirements of {', '.join(deferred)}, read from the downloaded wheels: everything except "
            f"the pinned stack and vllm's CUDA side (torch, xformers, nvidia-*, triton ...), installed under the pins",
            f"{', '.join(deferred)} 的其余依赖（从下载的 wheel 中读取）：除已固定的推理栈和 vllm 的 CUDA 部分"
            f"（torch、xformers、nvidia-*、triton 等）外，在固定版本约束下安装"), "requirements",
            argv=None, no_deps=False, requirements_of=deferred, exclude=excl, finding="vllm_ascend.requirements"))


def _mooncake(b: _Builder, verdict: Verdict) -> None:
    row = b.row
    dists = b.ctx_facts.packages.dists if b.ctx_facts.packages else {}
    builds = sorted(n for n in dists if n.startswith("mooncake-transfer-engine"))
    wrong = [n for n in builds if n != MOONCAKE_NPU]
    npu = dists.get(MOONCAKE_NPU)
    for n in wrong:
        b.remove(n, msg(f"{n} has no Ascend transport", f"{n} 不含昇腾传输层"))
    if npu is not None:
        b.pins[MOONCAKE_NPU] = npu.version
    # A source build without ascend_transport.so (built without -DUSE_ASCEND_DIRECT=ON) has no
    # wheel name to go by: the check's transport finding says it must be replaced.
    no_transport = any(f.id == "mooncake.transport" and f.status == FAIL and f.fixable == "auto"
                       for f in verdict.findings)
    wanted = b.opts.with_mooncake or (wrong and npu is None) or no_transport
    if not wanted:
        return
    if not row.mooncake:
        b.notes.append(msg(f"vllm-ascend {row.vllm_ascend} ships no Mooncake; --with-mooncake ignored",
                           f"vllm-ascend {row.vllm_ascend} 不含 Mooncake；忽略 --with-mooncake"))
        return
    if npu is not None and same_release(npu.version, row.mooncake) and not no_transport:
        return
    if row.mooncake_install == "pip":
        b.pins[MOONCAKE_NPU] = row.mooncake
        b.install_step([(MOONCAKE_NPU, f"=={row.mooncake}")], msg(
            f"Mooncake {row.mooncake} for vllm-ascend {row.vllm_ascend} (the NPU build from the package index)",
            f"vllm-ascend {row.vllm_ascend} 配套的 Mooncake {row.mooncake}（包索引上的 NPU 版本）"),
            no_deps=False, finding="mooncake.installed")
        return
    argv = [b.opts.doctor_python, "-m", "doctor", "mooncake", "build", "--tag", f"v{row.mooncake}",
            "--python", b.opts.installer.python]
    b.steps.append(Step("build", msg(
        f"Mooncake {row.mooncake} has no NPU wheel: build it from source with -DUSE_ASCEND_DIRECT=ON",
        f"Mooncake {row.mooncake} 没有 NPU wheel：用 -DUSE_ASCEND_DIRECT=ON 从源码构建"),
        "build", argv=argv, finding="mooncake.installed", touches_family="mooncake"))


def _manual_steps(verdict: Verdict) -> List[Step]:
    out: List[Step] = []
    seen = set()
    for f in verdict.findings:
        if f.status not in (FAIL, WARN) or f.fixable not in ("manual", "vendor") or f.hint is None:
            continue
        command = f.hint.en.split("   (")[0].strip()
        if command in seen or command.startswith("ascend-doctor fix"):
            continue
        seen.add(command)
        out.append(Step(f.fixable, Msg(f.title.en, f.title.zh), command=command, finding=f.id))
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
                if not any(fnmatch.fnmatch(name, p) for p in VLLM_NOT_ON_ASCEND):
                    continue
                have = b.pins.get(name) or (b.dist(name).version if b.dist(name) else None)
                if have is None or satisfies(have, str(req.specifier)) is False:
                    conflicts.append(f"vllm {kept.version} requires {name}{req.specifier}")
        if conflicts:
            for c in conflicts:
                b.residual.append(msg(f"{c} (expected: vllm-ascend {row.vllm_ascend} pins torch {row.torch})",
                                      f"{c}（预期内：vllm-ascend {row.vllm_ascend} 固定 torch {row.torch}）"))
        elif kept is None:
            b.residual.append(msg(
                f"vllm {vllm_pin} from the package index requires a newer torch (and CUDA-only packages) than "
                f"vllm-ascend {row.vllm_ascend}'s torch {row.torch}: pip check reports it (expected, vllm-ascend #5710)",
                f"来自包索引的 vllm {vllm_pin} 要求比 vllm-ascend {row.vllm_ascend} 的 torch {row.torch} 更新的 torch"
                f"（及仅 CUDA 的包）：pip check 会报告（预期内，见 vllm-ascend #5710）"))
    elif local_label(vllm_pin):
        b.residual.append(msg(
            f"vllm reports {vllm_pin}: vllm-ascend compares versions strictly; export VLLM_VERSION={public(vllm_pin)} (info)",
            f"vllm 版本为 {vllm_pin}：vllm-ascend 严格比较版本；可 export VLLM_VERSION={public(vllm_pin)}（提示）"))
    npu = b.pins.get("torch-npu")
    if npu and row.torch_npu_recommended and not same_release(npu, row.torch_npu_recommended):
        b.residual.append(msg(
            f"torch-npu {npu} is what the vllm-ascend wheel pins; the docs recommend {row.torch_npu_recommended} (info)",
            f"torch-npu {npu} 是 vllm-ascend wheel 固定的版本；文档推荐 {row.torch_npu_recommended}（提示）"))


def plan_for(facts: Facts, matrix: Matrix, verdict_for, hardware: Optional[str], opts: PlanOptions) -> Plan:
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
    for name in sorted(plan.pins):
        value = plan.pins[name]
        if value == "any":
            lines.append(name)
        elif value[:1] in "<>=!~":
            lines.append(f"{name}{value}")
        else:
            lines.append(f"{name}=={value}")
    return "\n".join(lines) + "\n"


def constraints_text(pins: Dict[str, str]) -> str:
    """The pins as a pip constraints file: exact pins and ranges, no options."""
    out = []
    for name in sorted(pins):
        value = pins[name]
        if value == "any":
            continue
        out.append(f"{name}{value}" if value[:1] in "<>=!~" else f"{name}=={value}")
    return "\n".join(out) + "\n"
