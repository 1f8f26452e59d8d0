"""Prove a fix plan with the installer's own resolver before it is shown (doctor.plan.resolve
says how; this module runs it): uv (``uv pip install --dry-run`` against the target, then the
files with ``uv pip compile``) with the user's pip configuration carried over, or pip in report
mode (``--installer pip``, or where uv cannot be used).

Resolve once: a resolution is kept for an hour in the doctor's cache, keyed by the target
environment (its interpreter, markers and every distribution with its version and
requirements), the index configuration (the pip settings that decide a resolution, constraint
files' contents included), the plan and the resolver; the ``fix --apply`` that follows a dry run
takes it from there and spends no time resolving. Any change resolves again."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.facts import Facts
from doctor.parse.pipreport import Failure, Resolved
from doctor.plan import resolve as R
from doctor.plan.builder import Plan
from doctor.plan.indexes import Route
from doctor.shell.install.resolver import RESOLVE_TIMEOUT, Request, TargetPlatform, resolve_pip, resolve_uv


def _run(ask: R.Ask, choice, env: Mapping[str, str], python: str, platform: Optional[TargetPlatform],
         find_links: List[str], no_index: bool, timeout: float,
         preferences: Sequence[Tuple[str, str]] = ()) -> Tuple[List[Resolved], Optional[Failure], float]:
    req = Request(requirements=list(ask.requirements), constraints=list(ask.constraints),
                  no_deps=ask.no_deps, ignore_installed=ask.ignore_installed,
                  extra_index_urls=list(ask.extra_index_urls), find_links=list(find_links), no_index=no_index,
                  platform=platform)
    inst = choice.resolver
    if inst.is_uv:
        cfg = choice.index
        r = resolve_uv(inst.prefix[0], python, req, inst.environ(env), inst.uv_index_args, timeout=timeout,
                       preferences=preferences, cert=cfg.cert if cfg else None, proxy=cfg.proxy if cfg else None)
    else:
        r = resolve_pip(choice.downloader.prefix, req, env, timeout=timeout)
    return r.packages, r.failure, r.seconds


CACHE_KIND = "resolutions"
CACHE_MAX_AGE = 3600.0  # seconds a resolution is reused (the index may publish newer files later)


def _dump(rs: Sequence[Resolved]) -> List[Dict[str, Any]]:
    return [dict(r.to_json(), requires=list(r.requires), requires_python=r.requires_python, requested=r.requested,
                 size=r.size) for r in rs]


def _load(items: Any) -> List[Resolved]:
    out = []
    for x in items:
        out.append(Resolved(name=str(x["name"]), version=str(x["version"]), url=str(x.get("url") or ""),
                            filename=str(x.get("filename") or ""), hashes={str(k): str(v) for k, v in x["hashes"].items()},
                            size=x.get("size"), requested=bool(x.get("requested")),
                            requires=[str(q) for q in x.get("requires") or []], requires_python=x.get("requires_python")))
    return out


def cache_key(plan: Plan, facts: Facts, choice, env: Mapping[str, str], platform: Optional[TargetPlatform], bundle: bool,
              find_links: Sequence[str], no_index: bool) -> str:
    """What decides a resolution: the target, the index configuration (and what its local folders
    hold), the plan, the resolver."""
    from doctor.shell.host import cache
    from doctor.shell.install.index import local_folders_state

    py = facts.python
    dists = sorted((d.name, d.version, d.location, d.editable, list(d.requires))
                   for d in (facts.packages.dists.values() if facts.packages else []))
    target = [py.executable if py else None, py.prefix if py else None, dict(py.markers) if py else {}, dists]
    cfg = choice.index.fingerprint() if choice.index is not None else None
    pip_env = sorted((k, v) for k, v in env.items() if k.startswith("PIP_"))
    doc = R.fingerprint(plan)
    resolver = [choice.resolver.kind, list(choice.resolver.prefix), list(choice.resolver.uv_index_args),
                list(choice.resolver.uv_env), list(choice.downloader.prefix)]
    links = list(find_links) + ([*choice.index.find_links, *choice.index.urls] if choice.index is not None else [])
    # pip's own variables too: a bundle for another machine resolves with no index configuration read
    links += [u for k in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL") for u in env.get(k, "").split()]
    return cache.key(CACHE_KIND, target, cfg, pip_env, doc, resolver, platform.to_json() if platform else None, bundle,
                     list(find_links), no_index, local_folders_state(list(dict.fromkeys(links))))  # each folder once


def where(choice, find_links: Sequence[str] = (), no_index: bool = False) -> str:
    """Which index a resolution asks, for the progress line: the first host, and how many more."""
    from urllib.parse import urlparse

    cfg = choice.index
    urls = [] if no_index or cfg is None or cfg.no_index else list(cfg.urls)
    links = list(find_links) + (list(cfg.find_links) if cfg is not None else [])
    if not urls:
        return f"{len(links)} local folder(s)" if links else "no index"
    first = urlparse(urls[0])
    name = (first.hostname or first.path) + (first.path if first.hostname and first.path not in ("", "/") else "")
    more = len(urls) - 1 + len(links)
    return name + (f" (+{more} more)" if more else "")


def prove(plan: Plan, facts: Facts, choice, env: Mapping[str, str], *, platform: Optional[TargetPlatform] = None,
          bundle: bool = False, find_links: Sequence[str] = (), no_index: bool = False,
          timeout: float = RESOLVE_TIMEOUT, reuse: bool = True,
          progress: Callable[..., None] = lambda key, **values: None, route: Optional[Route] = Route()) -> Plan:
    """The plan with exact pins and the files to install, or with the resolver's failure and
    what works instead (``route``: the options of its bundle way's commands). An empty plan is returned as it is. ``timeout`` is the TOTAL deadline
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

    from doctor.shell.host import cache

    key = cache_key(plan, facts, choice, env, platform, bundle, find_links, no_index) if reuse else ""
    hit = cache.read(CACHE_KIND, key) if key else None
    if isinstance(hit, dict) and 0 <= time.time() - float(hit.get("at", 0)) < CACHE_MAX_AGE:
        try:
            was_exact, was_deps = _load(hit["exact"]), _load(hit["deps"])
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
        else:
            out = R.apply(plan, facts, was_exact, was_deps, choice.shown, markers, choice.resolver.kind, only_needed=not bundle)
            assert out.resolution is not None
            progress("plan.progress.reused", age=round(time.time() - float(hit["at"])))
            out.resolution.update(seconds=round(time.monotonic() - began, 2), reused=True,
                                  resolved_seconds=hit.get("seconds"), age_seconds=round(time.time() - float(hit["at"])))
            return out
    exact: List[Resolved] = []
    ask = R.exact_ask(plan)
    index = where(choice, find_links, no_index)
    if ask is not None:
        progress("plan.progress.exact", installer=choice.resolver.kind, index=index, n=len(ask.requirements))
        exact, failure, _ = _run(ask, choice, env, python, platform, list(find_links), no_index, left())
        if failure is not None:
            return R.failed(plan, failure, ask, choice.shown.install([]), choice.resolver.kind, route)
    deps: List[Resolved] = []
    ask2 = R.deps_ask(plan, facts, exact, markers, bundle=bundle)
    # uv keeps what is installed when it satisfies the request, as pip does (its preferences)
    installed = [] if bundle or not facts.packages else [(d.name, d.version) for d in facts.packages.dists.values()]
    if ask2 is not None:
        progress("plan.progress.deps", installer=choice.resolver.kind, index=index, n=len(ask2.requirements))
        deps, failure, _ = _run(ask2, choice, env, python, platform, list(find_links), no_index, left(), installed)
        if failure is not None:
            return R.failed(plan, failure, ask2, choice.shown.install([]), choice.resolver.kind, route)
    out = R.apply(plan, facts, exact, deps, choice.shown, markers, choice.resolver.kind, only_needed=not bundle)
    assert out.resolution is not None  # apply() always records the resolution
    out.resolution["seconds"] = round(time.monotonic() - began, 2)
    progress("plan.progress.done", n=len(out.resolved_files), seconds=out.resolution["seconds"])
    if key:
        cache.write(CACHE_KIND, key, {"at": time.time(), "seconds": out.resolution["seconds"], "exact": _dump(exact),
                                      "deps": _dump(deps)})
    return out
