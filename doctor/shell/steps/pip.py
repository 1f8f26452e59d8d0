"""pip steps: remove, install and requirements. Downloads go through the installer's
downloader with the user's pip configuration (exactly the files a resolved plan names, each
checked against its hash: pip's --require-hashes, then our own sha256); installs take the
downloaded files only (--no-index). Removals are done by the transaction itself from the
distributions' RECORD, as pip uninstall does, so they cost no pip process."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Sequence

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.plan.pins import exact_names, names
from doctor.shell.steps import Action, Fetching
from doctor.shell.transaction.files import has_record

if TYPE_CHECKING:
    from doctor.facts import Distribution
    from doctor.plan.builder import Plan, Step


def hashed_requirements(files: Sequence) -> str:
    """One ``name==version --hash=...`` line per resolved file (pip's hash-checking mode)."""
    lines = []
    for r in files:
        hashes = " ".join(f"--hash={algo}:{digest}" for algo, digest in sorted(r.hashes.items()))
        lines.append(f"{r.name}=={r.version} {hashes}".rstrip())
    return "\n".join(lines) + "\n"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify(files: Sequence, directory: Path) -> Dict[str, Path]:
    """name -> the file in ``directory`` for each resolved file, its sha256 checked."""
    out: Dict[str, Path] = {}
    for r in files:
        path = directory / r.filename
        if not path.is_file():
            raise DoctorError(T("fix.error.file_missing", filename=r.filename, directory=directory))
        want = r.hashes.get("sha256")
        if not want:
            raise DoctorError(T("fix.error.no_sha256", filename=r.filename))
        got = sha256_of(path)
        if got != want:
            raise DoctorError(T("fix.error.sha256_mismatch", filename=r.filename, got=got, want=want))
        out[r.name] = path
    return out


def download_resolved(ctx: Fetching, indexes: List[str]) -> None:
    """A plan the resolver proved: exactly its files, every one hash-checked. The doctor fetches
    them itself (in parallel, from its cache when a dry run or an earlier --apply left them
    there: doctor.shell.install.downloads), so no child process reads the index here."""
    from doctor.shell.install.downloads import fetch_resolved
    from doctor.shell.host.progress import bytes_bar
    from doctor.shell.install.downloads import read_metadata

    files = list(ctx.plan.resolved_files)
    req = ctx.exact_dir.parent / "resolved-requirements.txt"
    req.write_text(hashed_requirements(files))  # kept for the record
    cfg = ctx.choice.index
    with bytes_bar(True, "download") as bar:
        fetch_resolved(files, ctx.exact_dir, cert=cfg.cert if cfg else None, proxy=cfg.proxy if cfg else None,
                       index_urls=list(cfg.urls if cfg else ()) + list(indexes), deadline=ctx.timeout,
                       progress=(lambda d, t, name: bar(name, d, t)) if bar else None)
    ctx.txn.runner.note(f"downloaded {len(files)} files ({sum(r.size or 0 for r in files)} bytes), sha256 checked")
    paths = verify(files, ctx.exact_dir)
    for p in paths.values():
        read_metadata(p)  # every file readable before anything changes
    ctx.files.update(paths)


def download(ctx: Fetching, *, exact: bool) -> None:
    """The one download of a round of a plan that is not resolved."""
    from doctor.shell.install.downloads import match_downloads, read_metadata

    dl = ctx.choice.downloader
    if exact and ctx.exact:
        ctx.txn.fetch(dl.download(ctx.exact, str(ctx.exact_dir), no_deps=True, extra_index_urls=ctx.exact_index),
                      ctx.env, ctx.timeout)
        ctx.files.update(match_downloads(ctx.exact, ctx.exact_dir))
    elif not exact and ctx.deps:
        ctx.txn.fetch(dl.download(ctx.deps, str(ctx.deps_dir), no_deps=False, extra_index_urls=ctx.deps_index,
                                  constraint=str(ctx.constraint)), ctx.env, ctx.timeout)
        for p in sorted(ctx.deps_dir.iterdir()):
            read_metadata(p)  # every file readable before anything changes


class Remove:
    key, round = "pip.remove", "exact"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        pass

    def action(self, step: "Step", ctx: Fetching) -> Action:
        dists = [ctx.before[n] for n in step.removes if n in ctx.before]
        if all(has_record(d) for d in dists):
            return Action(removes=[d.name for d in dists])
        # a legacy install without a RECORD (setup.py develop): pip knows its .egg-link and .pth
        return Action(argv=list(step.argv or []))


class Install:
    key, round = "pip.install", "exact"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        if ctx.plan.resolved_files:
            return  # downloaded before the rounds, hash-checked
        ctx.want(list(step.packages), list(step.extra_index_urls), exact=step.no_deps)

    def action(self, step: "Step", ctx: Fetching) -> Action:
        if ctx.plan.resolved_files:
            found = names(step.packages)
            missing = [n for n in found if n not in ctx.files]
            if missing:
                raise DoctorError(T("fix.error.download_incomplete", names=", ".join(missing)))
            return Action(files=[str(ctx.files[n]) for n in found], packages=found)
        if step.no_deps:
            return Action(files=[str(ctx.files[p]) for p in step.packages], packages=names(step.packages))
        inst = ctx.choice.installer
        return Action(argv=inst.install_from_dir(step.packages, str(ctx.deps_dir), str(ctx.constraint)),
                      packages=names(step.packages))


class Requirements:
    """vllm's and vllm-ascend's requirements that --no-deps leaves out, read from the downloaded
    wheels (or a source checkout's requirements/common.txt), minus the stack and the CUDA side."""

    key, round = "pip.requirements", "deps"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        from doctor.plan.builder import unmet_requirements
        from doctor.plan.pins import Spec
        from doctor.shell.install.downloads import read_metadata
        from doctor.shell.steps.requirements import requirements_file

        post = post_plan_installed(ctx.before, ctx.plan)
        found: List[str] = []
        for owner_spec in step.requirements_of:
            owner = Spec.parse(owner_spec)
            if owner is None:
                continue
            path = ctx.files.get(owner_spec)
            if path is not None:
                requires = read_metadata(path).requires_dist
            elif owner.name in ctx.sources:
                # VLLM_TARGET_DEVICE=empty builds install requirements/common.txt
                requires = requirements_file(Path(ctx.sources[owner.name]) / "requirements" / "common.txt")
            else:
                continue
            for r in unmet_requirements(owner.name, requires, exact_names(ctx.plan.pins), post, ctx.markers,
                                        ctx.plan.not_on_ascend):
                if r not in found:
                    found.append(r)
        ctx.found[id(step)] = found
        ctx.want(found, list(step.extra_index_urls), exact=False)

    def action(self, step: "Step", ctx: Fetching) -> Action:
        found = ctx.found.pop(id(step), [])
        if not found:
            return Action(note="all requirements already satisfied")
        inst = ctx.choice.installer
        return Action(argv=inst.install_from_dir(found, str(ctx.deps_dir), str(ctx.constraint)), packages=found)


def post_plan_installed(before: Dict[str, "Distribution"], plan: "Plan") -> Dict[str, "Distribution"]:
    """The installed set once the plan's removals and exact pins are done."""
    from doctor.facts import Distribution
    from doctor.plan.pins import pins

    removed = {n for s in plan.steps for n in s.removes}
    out = {n: d for n, d in before.items() if n not in removed}
    for pin in pins(plan.pins).values():
        if pin.exact is not None:
            out[pin.name] = Distribution(name=pin.name, version=pin.exact)
    return out
