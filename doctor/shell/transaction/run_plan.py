"""``fix --apply``: a plan carried out as one transaction (docs/fix.md, "--apply: one transaction").

1. lock the environment; settle what earlier transactions left (engine.Transaction.open),
2. journal every distribution and the plan before anything changes,
3. download phase: each step kind fetches what it needs (doctor/shell/steps: one download of
   the pinned files, clones, a staged Mooncake build, the requirements under the pins); a
   failure here changed nothing,
4. back up what may be removed or replaced and list what is on disk, all synced,
5. install phase: removals by the transaction itself, every wheel of consecutive steps in one
   installer run from the downloaded files only, source builds, staged trees put in place,
6. verify before committing (RECORD files, imports in the target interpreter: shell/transaction/verify.py),
7. on any failure (a step, a timeout, a killed pip, a failed import, Ctrl-C, SIGTERM, SIGHUP)
   undo: back to the snapshot and the backups, then compare the distributions.
"""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.errors import DoctorError
from doctor.facts import Distribution
from doctor.i18n import T, tr
from doctor.parse import redact
from doctor.plan.builder import Plan, Step, constraints_text
from doctor.plan.pins import names
from doctor.shell.runtime import proc
from doctor.shell.transaction import verify
from doctor.shell.install.downloads import file_name_version
from doctor.shell.install.installer import Choice
from doctor.shell.host.progress import StepProgress
from doctor.shell.steps import ROUNDS, Action, Fetching, applier_of
from doctor.shell.transaction import journal as J
from doctor.shell.transaction.engine import Transaction
from doctor.shell.transaction.runner import StepFailed
from doctor.shell.transaction.states import StepStatus
from doctor.shell.transaction.statedir import replace_file, write_new
from doctor.shell.transaction.target import Target

DOWNLOAD_TIMEOUT = 3600.0
STEP_TIMEOUT = 3600.0
INTERRUPTS = (KeyboardInterrupt, proc.Terminated)


@dataclass
class ApplyResult:
    txn_id: str
    journal: Path
    log: Path
    state: Path
    executed: List[Dict]
    changed: Dict[str, Tuple[Optional[str], Optional[str]]]  # name -> (before, after)
    verification: verify.Verification = field(default_factory=verify.Verification)


def apply_plan(plan: Plan, target: Target, choice: Choice, env: Mapping[str, str], *, verbose: bool = False,
               show_progress: bool = True, say: Callable[[str], None] = lambda s: None,
               step_timeout: float = STEP_TIMEOUT, download_timeout: float = DOWNLOAD_TIMEOUT,
               lang: str = "en", npu: bool = True, import_timeout: float = verify.IMPORT_TIMEOUT) -> ApplyResult:
    """Carry the plan out as one transaction. ``npu``: the stage has an NPU and its driver (the
    import check then imports torch_npu; without, it is only located)."""
    proc.install_signal_handlers()  # SIGTERM and SIGHUP roll back like Ctrl-C
    progress = StepProgress(show_progress)
    with Transaction.open(target, env, "fix --apply", say, echo=progress.echo if verbose else None) as txn:
        with progress:
            return _carry_out(plan, txn, choice, env, progress, step_timeout, download_timeout, lang, npu,
                              import_timeout)


@dataclass
class Group:
    """Steps carried out together: one installer run for the wheels of consecutive steps."""

    first: int
    steps: List[int]
    action: Action


def _groups(actions: Sequence[Action]) -> List[Group]:
    out: List[Group] = []
    for i, a in enumerate(actions):
        if a.shared and out and out[-1].action.shared:
            last = out[-1]
            last.steps.append(i)
            last.action.files += a.files
            last.action.packages += a.packages
            continue
        out.append(Group(i, [i], Action(**{**a.__dict__, "files": list(a.files), "packages": list(a.packages)})))
    return out


def _carry_out(plan: Plan, txn: Transaction, choice: Choice, env: Mapping[str, str], progress: StepProgress,
               step_timeout: float, download_timeout: float, lang: str, npu: bool,
               import_timeout: float) -> ApplyResult:
    target, journal, runner = txn.target, txn.journal, txn.runner
    txn.start(installer=choice.installer.kind, plan=redact.deep(plan.to_json(lang)), notes=choice.notes)
    wheels = journal.dir / "wheels"
    ctx = Fetching(plan=plan, choice=choice, env=env, txn=txn, timeout=download_timeout, markers=dict(target.markers),
                   before=txn.before, exact_dir=wheels / "exact", deps_dir=wheels / "deps",
                   constraint=journal.dir / "constraints.txt", stage_dir=journal.dir / "stage")
    try:
        for d in (wheels, ctx.exact_dir, ctx.deps_dir, ctx.stage_dir):
            os.mkdir(d, 0o700)
        write_new(ctx.constraint, constraints_text(plan.pins).encode())
    except OSError as e:  # a full disk at the start: nothing changed, nothing left behind
        journal.discard()
        raise DoctorError(T("fix.error.cannot_start", state=txn.state, why=e.strerror or str(e)))
    for n in choice.notes:
        runner.note(f"# {n}")
    steps = [s for s in plan.steps if s.runs]
    progress.add(-1, tr("shell.apply.download", lang))
    for i, s in enumerate(steps):
        progress.add(i, s.why.text(lang)[:70])

    # -- download phase: nothing changes in the environment -------------------------------------
    progress.start(-1)
    try:
        actions = _fetch(steps, ctx)
        proc.raise_if_signalled()
    except (StepFailed, DoctorError, OSError) as e:
        if proc.signalled():  # the download the signal handler killed
            txn.abort("interrupted during download")
            raise DoctorError(T("fix.error.interrupted_download"))
        txn.abort(str(e))
        raise DoctorError(T("fix.error.download_failed", why=str(e), log=txn.log_path))
    except INTERRUPTS:
        txn.abort("interrupted during download")
        raise DoctorError(T("fix.error.interrupted_download"))
    progress.done(-1)

    # -- backups and the list of what is on disk ------------------------------------------------
    groups = _groups(actions)
    pip_env = _install_env(env, ctx.deps_dir)
    entries: List[Dict] = [{} for _ in steps]
    for g in groups:
        argv = _argv_of(g.action, choice)
        for i in g.steps:
            entries[i] = {"index": i, "action": steps[i].action, "argv": redact.deep(argv) if argv else None,
                          "status": StepStatus.PENDING.value}
            if g.action.removes:
                entries[i]["note"] = "removed by the doctor from the distributions' RECORD"
    try:
        touched = _touched(steps, actions, txn.before, ctx)
        txn.begin(touched, _overwritten(ctx.exact_dir, ctx.deps_dir, target.roots), steps=entries)
    except (OSError, zipfile.BadZipFile) as e:
        txn.abort(f"backup: {e}")
        raise DoctorError(T("fix.error.backup_failed", why=str(e)))
    except INTERRUPTS:
        txn.abort("interrupted while backing up")
        raise DoctorError(T("fix.error.interrupted_backup"))

    # -- install phase --------------------------------------------------------------------------
    executed: List[Dict] = []
    current = -1
    verification = verify.Verification()
    try:
        for g in groups:
            current = g.first
            mine = [journal.data["steps"][i] for i in g.steps]
            argv = _argv_of(g.action, choice)
            if argv is None and not g.action.removes and g.action.stage is None:
                for entry in mine:
                    entry.update(status=StepStatus.SKIPPED.value, note=g.action.note)
                journal.save()
                for i in g.steps:
                    progress.skip(i, g.action.note or "")
                continue
            for i, entry in zip(g.steps, mine):
                progress.start(i)
                entry.update(status=StepStatus.RUNNING.value, started=J.now())
            journal.save()
            if g.action.removes:
                txn.remove(g.action.removes)
            elif g.action.stage is not None:
                placed = txn.place(g.action.stage)
                _check_placed(g.action, placed, target, env, txn)
            elif argv is not None:
                run_env = _no_distro_probe(pip_env, choice, g.action) if g.action.shared else dict(pip_env, **g.action.env)
                txn.run(argv, run_env, step_timeout, mine)
            proc.raise_if_signalled()
            for entry in mine:
                entry.update(status=StepStatus.DONE.value, finished=J.now())
            journal.save()
            executed.append({"index": g.first, "steps": list(g.steps), "argv": argv})
            for i in g.steps:
                progress.done(i)
        current = len(steps)
        # -- verify before committing: RECORD files and imports in the target interpreter -------
        after = _scan(target)
        installed = [after[n] for n in sorted(after)
                     if n not in txn.before or txn.before[n].version != after[n].version or n in touched]
        stage = "runtime" if npu else "build stage: what needs the NPU driver is only located"
        runner.note(f"# import check ({stage})")
        verification = verify.verify(target.python, installed, env, npu, import_timeout)
        for c in verification.checks:
            runner.note(f"#   {c.how} {c.module}: {'ok' if c.ok else c.detail}")
        if verification.failed:
            raise StepFailed(f"the installed packages do not work: {'; '.join(verification.failed[:3])}")
        proc.raise_if_signalled()  # never commit after a stop
    except (StepFailed, KeyboardInterrupt, proc.Terminated, Exception) as e:
        # a step killed by the signal handler fails as a step; the stop is the reason
        reason = "interrupted" if isinstance(e, INTERRUPTS) or proc.signalled() else str(e) or type(e).__name__
        group = next((g for g in groups if g.first == current), None)
        for i in (group.steps if group else []):
            journal.data["steps"][i].update(status=StepStatus.FAILED.value, error=reason)
        problems = txn.fail(reason)
        what = _failed_what(current, steps, group)
        if problems:
            raise DoctorError(T("fix.error.failed_rollback_incomplete", what=what, reason=reason,
                                problems="; ".join(problems[:3]), backups=journal.backup_root, log=txn.log_path,
                                command=target.rollback_command()))
        raise DoctorError(T("fix.error.failed_rolled_back", what=what, reason=reason, log=txn.log_path))

    # -- commit ---------------------------------------------------------------------------------
    after = txn.commit(verification=verification.to_json())
    replace_file(txn.state / "constraints.txt", constraints_text(plan.pins).encode())
    changed = {}
    before = txn.before
    for name in sorted(set(before) | set(after)):
        a = before[name].version if name in before else None
        b = after[name].version if name in after else None
        if a != b or (name in touched and name in after and before[name].location != after[name].location):
            changed[name] = (a, b)
    return ApplyResult(journal.id, journal.path, txn.log_path, txn.state, executed, changed, verification)


def _scan(target: Target) -> Dict[str, Distribution]:
    from doctor.shell.transaction.files import scan_dists

    return scan_dists(target.roots)


def _fetch(steps: List[Step], ctx: Fetching) -> List[Action]:
    from doctor.shell.steps.pip import download, download_resolved

    if ctx.plan.resolved_files:
        download_resolved(ctx, _union(s.extra_index_urls for s in steps))
    for rnd in ROUNDS:
        for s in steps:
            applier = applier_of(s)
            if applier.round == rnd:
                applier.fetch(s, ctx)
        if rnd == "exact" and not ctx.plan.resolved_files:
            download(ctx, exact=True)
        if rnd == "deps" and not ctx.plan.resolved_files:
            download(ctx, exact=False)
    return [applier_of(s).action(s, ctx) for s in steps]


def _argv_of(action: Action, choice: Choice) -> Optional[List[str]]:
    if action.shared:
        return choice.installer.install_files(action.files)
    return list(action.argv) if action.argv else None


def _install_env(env: Mapping[str, str], deps_dir: Path) -> Dict[str, str]:
    out = dict(env)
    out["PIP_FIND_LINKS"] = str(deps_dir)  # the downloaded files, not the user's links
    return out


def _no_distro_probe(env: Dict[str, str], choice: Choice, action: Action) -> Dict[str, str]:
    """pip builds its user agent for every run, and on Linux that runs ``lsb_release -a`` (and
    ``rustc --version``) for a string sent only to an index. Installing wheel files with
    --no-index sends nothing anywhere and runs no other program, so that run gets a PATH without
    the directories that hold them: the same install, two fewer processes."""
    if choice.installer.is_uv or not all(f.endswith(".whl") for f in action.files):
        return env
    path = [d for d in env.get("PATH", "").split(os.pathsep)
            if d and not any(os.access(os.path.join(d, p), os.X_OK) for p in ("lsb_release", "rustc"))]
    return dict(env, PATH=os.pathsep.join(path))


def _check_placed(action: Action, placed: List[str], target: Target, env: Mapping[str, str], txn: Transaction) -> None:
    if action.verify == "mooncake":
        from doctor.shell.mooncake.build import check_placed

        problem = check_placed(target.python, placed, dict(env), txn.runner)
        if problem:
            raise StepFailed(f"the new Mooncake does not work: {problem}")


def _union(groups) -> List[str]:
    out: List[str] = []
    for g in groups:
        for u in g:
            if u not in out:
                out.append(u)
    return out


def _touched(steps: List[Step], actions: List[Action], before: Dict[str, Distribution], ctx: Fetching) -> List[str]:
    """Installed distributions the install phase may remove or replace: what each kind says it
    touches, what each action installs, and every name among the downloaded files."""
    from doctor.plan.steps import kind_of

    found = set()
    for s, a in zip(steps, actions):
        found.update(kind_of(s).touches(s, before))
        found.update(a.removes)
        found.update(names(a.packages))
        found.update(n for n in a.packages if n in before)
        for f in a.files:
            nv = file_name_version(os.path.basename(f))
            if nv:
                found.add(nv[0])
    for d in (ctx.exact_dir, ctx.deps_dir):
        for p in d.iterdir():
            nv = file_name_version(p.name)
            if nv:
                found.add(nv[0])
    return sorted(n for n in found if n in before)


def _overwritten(exact_dir: Path, deps_dir: Path, roots: Sequence[str]) -> List[str]:
    """Existing files under the site directories that the downloaded wheels would write."""
    out = []
    for d in (exact_dir, deps_dir):
        for w in sorted(d.glob("*.whl")):
            with zipfile.ZipFile(w) as z:
                members = [m for m in z.namelist() if not m.endswith("/") and ".data/" not in m]
            for root in roots:
                for m in members:
                    p = os.path.normpath(os.path.join(root, m))
                    if p.startswith(root.rstrip("/") + "/") and os.path.isfile(p):
                        out.append(p)
    return sorted(set(out))


def _failed_what(current: int, steps: List[Step], group: Optional[Group] = None) -> str:
    if current >= len(steps):
        return "the import check"
    if group is not None and len(group.steps) > 1:
        shown = ", ".join(group.action.packages[:4]) + (", ..." if len(group.action.packages) > 4 else "")
        return f"steps {group.steps[0] + 1}-{group.steps[-1] + 1}/{len(steps)} (one installer run: {shown})"
    if 0 <= current < len(steps):
        return f"step {current + 1}/{len(steps)} ({steps[current].why.text('en')})"
    return "a step"
