"""Resolving a plan the way it installs. Pure: plans and reports in, requests and plans out.

The stack cannot be resolved in one go (vllm 0.11.0 requires torch==2.8.0, vllm-ascend
0.11.0rc3 torch==2.7.1), so a plan is resolved in two asks, as it installs:

1. ``exact``: every package the plan installs without dependencies (torch, torch-npu, vllm,
   vllm-ascend, triton-ascend ...), each at its pin: the resolver names the file, its hashes
   and size (``--no-deps --ignore-installed``);
2. ``deps``: what the plan installs with dependencies (numpy/transformers ranges, the row's
   extra requirements), the requirements of vllm and vllm-ascend read from the metadata the
   first report carries (less the pinned stack and vllm's CUDA side), and the unmet
   requirements of every other distribution the plan keeps (an environment installed with
   --no-deps), all under the stack's exact pins as constraints. Against the installed
   environment (what is satisfied stays), or ``--ignore-installed`` for a bundle, where nothing
   is installed yet.

:func:`apply` then turns the plan's ranges into the exact versions of the reports (``pins``
never holds a range once resolved), makes every install step an exact ``--no-deps`` install of
the resolved files, and predicts what pip check reports afterwards.
"""
from __future__ import annotations

import copy
import fnmatch
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.facts import Distribution, Facts
from doctor.findings import Finding, Verdict
from doctor.i18n import T
from doctor.parse.pipreport import Failure, Resolved
from doctor.plan.builder import Installer, Plan, Step, Why, exact_pins, unmet_requirements
from doctor.plan.closure import Pruned, is_cuda_only, prune
from doctor.plan.indexes import TORCH_CPU_INDEX, Route, remedies
from doctor.rules.pipcheck import Conflict

RESOLVED, NOT_RESOLVED, FAILED = "resolved", "not resolved", "failed"


@dataclass
class Ask:
    requirements: List[str]
    constraints: List[str] = field(default_factory=list)
    extra_index_urls: List[str] = field(default_factory=list)
    no_deps: bool = False
    ignore_installed: bool = False


def _union(groups: Iterable[Iterable[str]]) -> List[str]:
    out: List[str] = []
    for g in groups:
        for u in g:
            if u not in out:
                out.append(u)
    return out


def _installs(plan: Plan, no_deps: bool) -> List[Step]:
    return [s for s in plan.steps if s.kind == "pip" and s.action == "install" and s.no_deps == no_deps]


def exact_ask(plan: Plan) -> Optional[Ask]:
    steps = _installs(plan, True)
    reqs = [p for s in steps for p in s.packages]
    if not reqs:
        return None
    return Ask(reqs, extra_index_urls=_union(s.extra_index_urls for s in steps), no_deps=True, ignore_installed=True)


def fingerprint(plan: Plan) -> Dict:
    """What of a plan decides its resolution: the target, the pins and ranges, and what each
    step installs or removes from where. Not the printed commands: a dry run spells the stack's
    pins on them where ``--apply`` uses a constraints file, and both resolve alike."""
    return {"target": plan.target, "row": plan.row, "pins": dict(plan.pins), "ranges": dict(plan.ranges),
            "steps": [[s.kind, s.action, list(s.packages), list(s.removes), s.no_deps, list(s.extra_index_urls),
                       list(s.requirements_of)] for s in plan.steps if s.runs],
            "cuda_only": list(plan.cuda_only), "not_on_ascend": list(plan.not_on_ascend)}


def after_plan(facts: Facts, plan: Plan, installed: Sequence[Resolved]) -> Dict[str, Distribution]:
    """The distributions after the plan: what is there, less what it removes, plus what it
    installs (with the requirements the resolver read from each file)."""
    dists = dict(facts.packages.dists) if facts.packages else {}
    for s in plan.steps:
        for n in s.removes:
            dists.pop(n, None)
    for r in installed:
        dists[r.name] = Distribution(name=r.name, version=r.version, requires=list(r.requires),
                                     requires_python=r.requires_python)
    return dists


def _name(spec: str) -> Optional[str]:
    try:
        return canonicalize_name(Requirement(spec).name)
    except InvalidRequirement:
        return None


def deps_requirements(plan: Plan, facts: Facts, exact: Sequence[Resolved], markers: Dict[str, str]) -> List[str]:
    """Everything the second ask must resolve (see the module docstring)."""
    # pinned stack packages are left out of everyone's requirements (their own steps install
    # them); numpy and transformers only when the plan installs them: kept ones must still
    # satisfy what vllm and others require (transformers 4.36.2 under vllm 0.11.0)
    stack = [n for n in exact_pins({**plan.pins, **{r.name: r.version for r in exact}})
             if n not in plan.ranges or n in {r.name for r in exact}]
    post = after_plan(facts, plan, exact)
    out: List[str] = []
    for s in _installs(plan, False):
        out += [p for p in s.packages if p not in out]
    asked = {_name(p) for p in out}
    prefix = facts.python.prefix if facts.python and facts.python.prefix else None
    for name, d in sorted(post.items()):
        if name in asked:
            continue
        if prefix and d.location and not _under(d.location, prefix):
            continue  # on PYTHONPATH or the user site, not in this environment: not ours to repair
        for r in unmet_requirements(name, d.requires, stack, post, markers, plan.not_on_ascend):
            # every requirer's specifier counts, also for a name the plan asks for itself
            # (vllm-ascend's "numba" and vllm's "numba==0.61.2": the resolver intersects them)
            if r not in out:
                out.append(r)
    return out


def _under(path: str, prefix: str) -> bool:
    import os

    return (os.path.normpath(path) + os.sep).startswith(os.path.normpath(prefix) + os.sep)


def deps_ask(plan: Plan, facts: Facts, exact: Sequence[Resolved], markers: Dict[str, str], *,
             bundle: bool = False) -> Optional[Ask]:
    reqs = deps_requirements(plan, facts, exact, markers)
    if not reqs:
        return None
    pinned = {r.name: r.version for r in exact}
    for name, value in plan.pins.items():
        if name not in pinned and value[:1].isdigit():
            pinned[name] = value
    asked = {_name(r) for r in reqs}
    constraints = [f"{n}=={v}" for n, v in sorted(pinned.items()) if n not in asked and n not in plan.ranges]
    constraints += [f"{n}{spec}" for n, spec in sorted(plan.ranges.items())]
    steps = _installs(plan, False) + _installs(plan, True)
    return Ask(reqs, constraints, _union(s.extra_index_urls for s in steps), no_deps=False, ignore_installed=bundle)


# ---------------------------------------------------------------------------------------------
# the resolved plan


def needed(resolved: Sequence[Resolved], facts: Facts) -> List[Resolved]:
    """Files that change something (uv's compile lists what is already there too)."""
    dists = facts.packages.dists if facts.packages else {}
    return [r for r in resolved if r.requested or r.name not in dists or dists[r.name].version != r.version]


def expected_conflict(requirer: str, required: str, not_on_ascend: Sequence[str]) -> bool:
    """vllm asking for what the Ascend stack never installs (the matrix's "vllm_not_on_ascend")."""
    return requirer == "vllm" and any(fnmatch.fnmatch(required, p) for p in not_on_ascend)


def cuda_residual(c: Conflict, cuda_only: Sequence[str]) -> bool:
    """Anyone requiring a CUDA-only distribution that is not installed (xgrammar -> triton): the
    plan leaves it out on purpose (doctor.plan.closure)."""
    return c.installed is None and is_cuda_only(c.required, cuda_only)


def apply(plan: Plan, facts: Facts, exact: Sequence[Resolved], deps: Sequence[Resolved], installer: Installer,
          markers: Dict[str, str], installer_name: str = "pip", *, only_needed: bool = False) -> Plan:
    """The plan with exact pins, exact --no-deps install steps of the resolved files (the closure
    without what only CUDA uses; with ``only_needed``, without what is installed already), the
    total download and the pip-check residual it leaves (computed, not guessed)."""
    from doctor.rules import pipcheck

    # the graph: what the resolver chose, and what stays installed (its requirements are edges too)
    chosen = {r.name for r in deps}
    kept_nodes = [Resolved(name=d.name, version=d.version, requires=list(d.requires))
                  for d in after_plan(facts, plan, exact).values() if d.name not in chosen] if only_needed else []
    pruned = prune(deps_requirements(plan, facts, exact, markers), list(deps) + kept_nodes, plan.cuda_only, markers)
    pruned.kept = [r for r in pruned.kept if r.name in chosen]
    pruned.dropped = [r for r in pruned.dropped if r.name in chosen]
    deps = needed(pruned.kept, facts) if only_needed else pruned.kept
    out = copy.deepcopy(plan)
    by_name: Dict[str, Resolved] = {}
    for r in list(exact) + list(deps):
        by_name[r.name] = r
    deps_left = {r.name: r for r in deps}
    new_steps: List[Step] = []
    requirements_step: Optional[Step] = None
    for s in out.steps:
        if s.kind == "pip" and s.action == "install":
            names = [n for n in (_name(p) for p in s.packages) if n is not None]
            files = [by_name[n] for n in names if n in by_name]
            for n in names:
                deps_left.pop(n, None)
            if not files:
                continue  # the resolver says nothing needs installing
            s.packages = [f"{r.name}=={r.version}" for r in files]
            s.no_deps = True
            s.argv = installer.install(s.packages, no_deps=True, extra_index_urls=s.extra_index_urls)
            new_steps.append(s)
        elif s.action == "requirements":
            requirements_step = s
            new_steps.append(s)
        else:
            new_steps.append(s)
    rest = [r for r in deps if r.name in deps_left]
    if rest:
        if requirements_step is None:
            requirements_step = Step("pip", T("plan.resolved.requirements"), "requirements",
                                     finding="env.pip_check")
            at = next((i for i, s in enumerate(new_steps) if not s.runs or s.kind == "build"), len(new_steps))
            new_steps.insert(at, requirements_step)
        # the row's indexes (the Ascend mirror); the PyTorch CPU index serves only torch builds
        indexes = [u for u in _union(s.extra_index_urls for s in out.steps) if u != TORCH_CPU_INDEX]
        requirements_step.action = "install"
        requirements_step.packages = [f"{r.name}=={r.version}" for r in rest]
        requirements_step.no_deps = True
        requirements_step.requirements_of = []
        requirements_step.exclude = []
        requirements_step.extra_index_urls = indexes
        requirements_step.argv = installer.install(requirements_step.packages, no_deps=True,
                                                   extra_index_urls=requirements_step.extra_index_urls)
    elif requirements_step is not None:
        new_steps.remove(requirements_step)
    out.steps = new_steps
    # pins: exact versions only
    for name in list(out.pins):
        if name in by_name:
            out.pins[name] = by_name[name].version
        elif not out.pins[name][:1].isdigit():
            have = facts.dist(name)
            if have is not None:
                out.pins[name] = have.version
            else:
                del out.pins[name]
    # what pip check says afterwards
    post = after_plan(facts, out, list(by_name.values()))
    conflicts = pipcheck.check(post, markers)
    unexpected = [c for c in conflicts if not expected_conflict(c.requirer, c.required, plan.not_on_ascend)
                  and not cuda_residual(c, plan.cuda_only)]
    files = list(exact) + [r for r in deps]
    out.resolution = {
        "status": RESOLVED, "installer": installer_name,
        "files": [r.to_json() for r in files],
        "download_bytes": sum(r.size or 0 for r in files),
        "unknown_sizes": sum(1 for r in files if r.size is None),
        "pip_check_after": [c.describe() for c in conflicts],
        "unexpected_after": [c.describe() for c in unexpected],
        "excluded": excluded_json(pruned, plan.cuda_only),
    }
    out.resolved_files = files
    out.expected_residual = [m for m in out.expected_residual if not _is_generic_residual(m)] + [
        T("plan.resolved.residual", conflict=c.words()) for c in conflicts if expected_conflict(c.requirer, c.required, plan.not_on_ascend)] + [
        T("plan.closure.residual", conflict=c.words(), name=c.required) for c in conflicts
        if cuda_residual(c, plan.cuda_only) and not expected_conflict(c.requirer, c.required, plan.not_on_ascend)]
    out.notes.extend(closure_notes(pruned))
    for c in unexpected:
        out.notes.append(T("plan.resolved.unexpected", conflict=c.words()))
    return out


def excluded_json(pruned: Pruned, cuda_only: Sequence[str]) -> List[Dict]:
    """What the plan leaves out of the resolved closure, and why."""
    out = []
    for r in pruned.dropped:
        by = sorted({c.requirer or "the plan" for c in pruned.cuts if c.excluded == r.name})
        out.append({"name": r.name, "version": r.version,
                    "why": "cuda-only" if is_cuda_only(r.name, cuda_only) else "needed only by what is left out",
                    "required_by": by})
    return out


def closure_notes(pruned: Pruned) -> List[Why]:
    """Which requirement goes without what, and why: one note per requirer and excluded name."""
    out: List[Why] = []
    for c in pruned.cuts:
        if not c.requirer:
            continue
        if c.extra:
            out.append(T("plan.closure.extra", requirer=c.requirer, version=c.requirer_version, extra=c.extra,
                         name=c.excluded))
        else:
            out.append(T("plan.closure.plain", requirer=c.requirer, version=c.requirer_version, name=c.excluded))
    return out


def _is_generic_residual(m: Why) -> bool:
    """The matrix-only plan guesses the residual of an index vllm in words; the resolved plan
    lists pip check's own lines instead."""
    text = m.text("en") if hasattr(m, "text") else str(m)
    return "requires a newer torch" in text or " requires " in text and "(expected" in text


def failed(plan: Plan, failure: Failure, ask: Ask, pip_install: Sequence[str], installer_name: str,
           route: Optional[Route] = Route()) -> Plan:
    """The plan the resolver could not prove, with its failure and what works instead (the ask's
    own indexes in the mirror commands; ``route``: the options of the bundle way's commands)."""
    out = copy.deepcopy(plan)
    out.remedies = remedies(failure, ask.requirements, pip_install, ask.extra_index_urls, route)
    out.resolution = {"status": FAILED, "installer": installer_name, "failure": failure.to_json(),
                      "remedies": out.remedies.to_json()}
    out.resolution_failure = failure
    return out


CHECK = "check"  # a failure kind: the resolved plan is one check would fail
_LEVEL = {"warn": 1, "fail": 2}


def unexpected_after(before: Verdict, after: Verdict, repaired: Sequence[str]) -> List[Finding]:
    """What check would report after the plan that the plan does not expect: a failure of a
    finding the plan repairs (``repaired``: the ids fixers handle), or anything worse than it is
    now. Vendor and manual findings are the user's steps: they are not the plan's to judge."""
    was: Dict[str, int] = {}
    for f in before.findings:
        was[f.id] = max(was.get(f.id, 0), _LEVEL.get(f.status, 0))
    out: List[Finding] = []
    for f in after.findings:
        level = _LEVEL.get(f.status, 0)
        if not level or f.fixable in ("vendor", "manual"):
            continue
        if (f.id in repaired and level == 2) or level > was.get(f.id, 0):
            if all(g.id != f.id for g in out):
                out.append(f)
    return out


def refuted(plan: Plan, findings: Sequence[Finding], lang: str = "en") -> Plan:
    """The resolved plan would leave what check fails: it is never shown as runnable."""
    out = copy.deepcopy(plan)
    words = "; ".join(f"{f.id}: {f.title.text(lang) if hasattr(f.title, 'text') else f.title}" for f in findings)
    failure = Failure(CHECK, f"after this plan, check would still report: {words}")
    out.resolution = dict(plan.resolution or {}, status=FAILED, failure=failure.to_json(),
                          check_after=[f.id for f in findings])
    out.resolution_failure = failure
    return out


def not_resolved(plan: Plan, why: str = "offline") -> Plan:
    """The matrix-only plan; ``why``: offline | no-cann | no-interpreter | source-build."""
    out = copy.deepcopy(plan)
    out.resolution = {"status": NOT_RESOLVED, "why": why}
    return out
