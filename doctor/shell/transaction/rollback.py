"""``ascend-doctor rollback``: finish what is unfinished (oldest first), else undo the last
committed transaction from its backups: pip's distributions and a source build's placed files
alike. Only paths inside the roots the doctor computes for the environment are touched."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Mapping, Optional

from doctor.i18n import T
from doctor.errors import DoctorError, UsageError
from doctor.shell.runtime import proc
from doctor.shell.transaction import journal as J
from doctor.shell.transaction.snapshot import Snapshot, undo_to_snapshot
from doctor.shell.transaction.undo import changes, remove_made_dirs, undo_placed
from doctor.shell.transaction.files import dist_files, remove_files, restore_files, scan_dists
from doctor.shell.transaction.lock import Lock
from doctor.shell.transaction.processes import wait_for_leftovers
from doctor.shell.transaction.recovery import RollbackResult, abort, best_effort, blocked, foreign
from doctor.shell.transaction.states import RollbackKind, TxnState
from doctor.shell.transaction.statedir import STATE_NAME, existing_state_dirs, state_dir
from doctor.shell.transaction.target import Target


def check_something_to_roll_back(target: Target, env: Mapping[str, str]) -> None:
    """UsageError "nothing to roll back" when no state directory of the environment holds a
    transaction to undo or finish; reads only (no state directory, no lock made). The command asks
    this before it asks for confirmation: there is nothing to confirm."""
    present = existing_state_dirs(target.prefix, env)
    if not any(J.unfinished(d) or J.last_transaction(d) is not None for d in present):
        raise UsageError(T("fix.error.nothing_to_roll_back",
                           state=present[0] if present else Path(target.prefix) / STATE_NAME))


def rollback_last(target: Target, env: Mapping[str, str], *, force: bool = False,
                  say: Callable[[str], None] = lambda s: None) -> RollbackResult:
    proc.install_signal_handlers()
    # nothing to roll back leaves the environment as it was: no state directory, no lock made
    check_something_to_roll_back(target, env)
    state = state_dir(target.prefix, env)
    with Lock(state / "lock", f"rollback on {target.python}"):
        result: Optional[RollbackResult] = None
        for item in J.unfinished(state):
            if isinstance(item, J.Damaged):
                raise UsageError(blocked(item, target))
            result = finish(item, target, state, say)
            if result.note is None:
                return result  # one that changed the environment: the user sees it, then runs again
        if result is not None:
            return result
        last = J.last_transaction(state)
        if last is None:
            raise UsageError(T("fix.error.nothing_to_roll_back", state=state))
        journal = J.Journal.load(last)
        if journal.status != TxnState.COMMITTED:
            raise UsageError(T("fix.error.not_committed", id=last.name, status=journal.status.value))
        return rollback_committed(journal, target, state, force)


def rollback_committed(journal: J.Journal, target: Target, state: Path, force: bool) -> RollbackResult:
    """Undo a committed transaction: remove what it installed, put the old files back."""
    why = foreign(journal, target)
    if why:
        raise UsageError(J.Damaged(journal.dir, why).message())
    roots = target.allowed()
    backups = journal.data.get("backups") or {}
    files = [f for b in backups.values() for f in b["files"]]
    outside = [f for f in files + list(journal.data.get("placed") or []) if not roots.inside(f)]
    if outside:
        raise UsageError(J.Damaged(journal.dir, f"it names {outside[0][:200]}, outside this environment").message())
    if files and not journal.backup_root.is_dir():
        raise DoctorError(T("fix.error.backups_gone", id=journal.id, backups=journal.backup_root))
    now = scan_dists(target.roots)
    after = {r["name"]: r for r in journal.data["after"]}
    before = {r["name"]: r for r in journal.data["before"]}
    drift = [n for n in sorted(set(now) | set(after))
             if (now[n].version if n in now else None) != (after[n]["version"] if n in after else None)]
    if drift and not force:
        raise UsageError(T("fix.error.drift", id=journal.id, changes=", ".join(drift[:5])))
    journal.update(status=TxnState.ROLLING_BACK_LATER, rollback_kind=RollbackKind.LATER.value)
    with proc.shielded():
        # remove what the transaction installed (distributions, placed files), then put the old files back
        stuck: List[str] = []
        for name, dist in now.items():
            b = before.get(name)
            if b is None or b["version"] != dist.version or name in backups:
                stuck += remove_files(dist_files(dist, roots), roots)
        unplaced = undo_placed(journal, roots)
        failed = restore_files(files, journal.backup_root, roots)
        remove_made_dirs(journal, roots)
    final = scan_dists(target.roots)
    restored = set(files)
    problems = [f"cannot delete {f}" for f in stuck if f not in restored][:20] + unplaced + \
        [f"cannot restore {f}" for f in failed]
    for name in sorted(set(before) | set(after)):
        want = before[name]["version"] if name in before else None
        have = final[name].version if name in final else None
        if want != have:
            problems.append(f"{name}: {have or 'missing'} instead of {want or 'absent'}")
    if problems:
        best_effort(journal, status=TxnState.ROLLBACK_FAILED, rollback_problems=problems)
        raise DoctorError(T("fix.error.rollback_incomplete", id=journal.id, problems="; ".join(problems[:3]),
                            backups=journal.backup_root, command=target.rollback_command()))
    journal.update(status=TxnState.ROLLED_BACK_LATER, rolled_back=J.now(), rollback_problems=[])
    if J.last_transaction(state) == journal.dir:
        J.clear_last(state)
    return RollbackResult(journal.id, changes(now, final))


def finish(journal: J.Journal, target: Target, state: Path, say: Callable[[str], None]) -> RollbackResult:
    """Finish one unfinished transaction."""
    why = foreign(journal, target)
    if why:
        raise UsageError(J.Damaged(journal.dir, why).message())
    wait_for_leftovers(journal, say=say)  # a killed doctor's pip must be gone first
    status, kind = journal.status, journal.data.get("rollback_kind")
    if status.before_changes:
        abort(journal, "the doctor stopped before changing anything")
        return RollbackResult(journal.id, {}, note="nothing had changed")
    if status == TxnState.ROLLING_BACK_LATER or (status == TxnState.ROLLBACK_FAILED and kind == RollbackKind.LATER.value):
        return rollback_committed(journal, target, state, force=True)
    return undo_unfinished(journal, target)


def undo_unfinished(journal: J.Journal, target: Target) -> RollbackResult:
    """A doctor killed in the middle of a transaction, or a rollback that failed: put the
    environment back as the transaction's snapshot and backups say it was."""
    roots = target.allowed()
    now = scan_dists(target.roots)
    snapshot, why = Snapshot.load(journal.dir / "snapshot.json", roots)
    if snapshot is None:
        raise UsageError(J.Damaged(journal.dir, why or "no snapshot").message())
    files = [f for b in (journal.data.get("backups") or {}).values() for f in b["files"]]
    outside = [f for f in files + list(journal.data.get("placed") or []) if not roots.inside(f)]
    if outside:
        raise UsageError(J.Damaged(journal.dir, f"it names {outside[0][:200]}, outside this environment").message())
    if files and not journal.backup_root.is_dir():
        raise DoctorError(T("fix.error.backups_gone", id=journal.id, backups=journal.backup_root))
    best_effort(journal, status=TxnState.ROLLING_BACK, rollback_kind=RollbackKind.UNDO.value)
    with proc.shielded():
        failed = undo_placed(journal, roots)
        failed += undo_to_snapshot(snapshot, files, journal.backup_root, roots)
        failed += remove_made_dirs(journal, roots)
    before = {r["name"]: r["version"] for r in journal.data["before"]}
    final = scan_dists(target.roots)
    problems = list(failed) + [
        f"{n}: {final[n].version if n in final else 'missing'} instead of {before.get(n) or 'absent'}"
        for n in sorted(set(before) | set(final)) if before.get(n) != (final[n].version if n in final else None)]
    if problems:
        best_effort(journal, status=TxnState.ROLLBACK_FAILED, rollback_problems=problems)
        raise DoctorError(T("fix.error.rollback_incomplete", id=journal.id, problems="; ".join(problems[:3]),
                            backups=journal.backup_root, command=target.rollback_command()))
    best_effort(journal, status=TxnState.ROLLED_BACK, finished=J.now(), rollback_problems=[])
    return RollbackResult(journal.id, changes(now, final))
