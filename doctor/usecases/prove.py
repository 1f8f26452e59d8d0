"""Prove a fix plan with the installer's own resolver before it is shown (doctor.plan.resolve
says how; this module runs it): pip in report mode against the user's pip configuration, or
``uv pip compile`` for ``--installer uv``."""
from __future__ import annotations

import sys
import time
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.facts import Facts
from doctor.parse.pipreport import Failure, Resolved
from doctor.plan import resolve as R
from doctor.plan.builder import Plan
from doctor.shell.resolver import RESOLVE_TIMEOUT, Request, TargetPlatform, resolve_pip, resolve_uv


def _run(ask: R.Ask, choice, env: Mapping[str, str], python: str, platform: Optional[TargetPlatform],
         find_links: List[str], no_index: bool, timeout: float) -> Tuple[List[Resolved], Optional[Failure], float]:
    req = Request(requirements=list(ask.requirements), constraints=list(ask.constraints),
                  no_deps=ask.no_deps, ignore_installed=ask.ignore_installed,
                  extra_index_urls=list(ask.extra_index_urls), find_links=list(find_links), no_index=no_index,
                  platform=platform)
    inst = choice.installer
    if inst.is_uv:
        r = resolve_uv(inst.prefix[0], python, req, env, inst.uv_index_args, timeout=timeout)
    else:
        r = resolve_pip(choice.downloader.prefix, req, env, timeout=timeout)
    return r.packages, r.failure, r.seconds


def prove(plan: Plan, facts: Facts, choice, env: Mapping[str, str], *, platform: Optional[TargetPlatform] = None,
          bundle: bool = False, find_links: Sequence[str] = (), no_index: bool = False,
          timeout: float = RESOLVE_TIMEOUT) -> Plan:
    """The plan with exact pins and the files to install, or with the resolver's failure and
    what works instead. An empty plan is returned as it is. ``timeout`` is the TOTAL deadline
    of both asks (and the file sizes they look up), not one per ask."""
    if not plan.runnable:
        return plan
    if any(s.kind == "build" and s.packages for s in plan.steps):
        # a source build's requirements are known only once it is cloned (--vllm-from source)
        return R.not_resolved(plan, "source-build")
    python = facts.python.executable if facts.python and facts.python.executable else "python3"
    if platform is not None:  # another machine's interpreter (a node, an image): never run here
        python = sys.executable
    markers: Dict[str, str] = dict(facts.python.markers) if facts.python else {}
    began = time.monotonic()

    def left() -> float:  # what is left of the total deadline for the next ask
        return max(0.0, timeout - (time.monotonic() - began))

    exact: List[Resolved] = []
    ask = R.exact_ask(plan)
    if ask is not None:
        exact, failure, _ = _run(ask, choice, env, python, platform, list(find_links), no_index, left())
        if failure is not None:
            return R.failed(plan, failure, ask, choice.installer.install([]), choice.installer.kind)
    deps: List[Resolved] = []
    ask2 = R.deps_ask(plan, facts, exact, markers, bundle=bundle)
    if ask2 is not None:
        deps, failure, _ = _run(ask2, choice, env, python, platform, list(find_links), no_index, left())
        if failure is not None:
            return R.failed(plan, failure, ask2, choice.installer.install([]), choice.installer.kind)
        if not bundle:
            deps = R.needed(deps, facts)
    out = R.apply(plan, facts, exact, deps, choice.installer, markers, choice.installer.kind)
    assert out.resolution is not None  # apply() always records the resolution
    out.resolution["seconds"] = round(time.monotonic() - began, 2)
    return out
