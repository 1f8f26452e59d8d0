"""The transaction: the one place that changes an environment, for pip steps and source builds
alike (Mooncake's staged install tree is placed through it).

    with Transaction.open(target, env, "fix --apply", say) as txn:   # lock; unfinished ones settled
        ...download: nothing changes...
        txn.begin(backups=..., snapshot=True)     # backups and snapshot synced, then "installing"
        txn.remove(names) / txn.run(argv, ...) / txn.place(stage)
        txn.commit(after=...)  or  txn.undo()     # undo: back to the snapshot and the backups

Everything it writes to the journal before a change is synced before the change is made, so a
doctor killed at any point leaves a journal that ``rollback`` finishes (recovery.py). Paths it
acts on are checked against the roots computed for the target (roots.py)."""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence

from doctor.i18n import T
from doctor.errors import DoctorError, UsageError
from doctor.facts import Distribution
from doctor.shell.runtime import proc
from doctor.shell.transaction import journal as J
from doctor.shell.transaction.files import (backup_files, dist_files, dist_record, remove_files, scan_dists)
from doctor.shell.transaction.lock import Lock
from doctor.shell.transaction.processes import marked, record_process
from doctor.shell.transaction.roots import Roots
from doctor.shell.transaction.runner import Runner, StepFailed
from doctor.shell.transaction.snapshot import Snapshot, undo_to_snapshot
from doctor.shell.transaction.undo import diff_dists, prune_old_backups, remove_made_dirs, undo_placed
from doctor.shell.transaction.states import RollbackKind, TxnState
from doctor.shell.transaction.statedir import MIN_FREE, append_log, free_space, state_dir
from doctor.shell.transaction.target import Target

UNOWNED = ":unowned"  # files no distribution owns that a new wheel overwrites
PLACED = ":placed"  # files a staged install tree (a source build) replaces


class Transaction:
    def __init__(self, state: Path, target: Target, journal: J.Journal, runner: Runner):
        self.state = state
        self.target = target
        self.journal = journal
        self.runner = runner
        self.roots: Roots = target.allowed()
        self.backups: Dict[str, Dict] = {}
        self.snapshot: Optional[Snapshot] = None
        self.before: Dict[str, Distribution] = {}

    # -- opening --------------------------------------------------------------------------------
    @classmethod
    @contextmanager
    def open(cls, target: Target, env: Mapping[str, str], what: str = "a transaction",
             say: Callable[[str], None] = lambda s: None, echo: Optional[Callable[[str], None]] = None) -> Iterator["Transaction"]:
        """Lock the environment, settle what earlier transactions left, and start a journal."""
        from doctor.shell.transaction.recovery import settle_unfinished

        state = state_dir(target.prefix, env)
        with Lock(state / "lock", f"{what} on {target.python}"):
            settle_unfinished(state, target, say)
            free = free_space(state)
            if free is not None and free < MIN_FREE:
                raise UsageError(T("fix.error.no_space", kb=free // 1024, state=state))
            try:
                journal = J.Journal.create(state)
            except OSError as e:
                raise DoctorError(T("fix.error.cannot_start", state=state, why=e.strerror or str(e)))
            try:
                runner = Runner(append_log(journal.dir / "pip.log"), echo=echo)
            except OSError as e:
                journal.discard()
                raise DoctorError(T("fix.error.cannot_start", state=state, why=e.strerror or str(e)))
            txn = cls(state, target, journal, runner)
            say(f"journal: {journal.path}")
            say(f"log: {journal.dir / 'pip.log'}")
            try:
                yield txn
            finally:
                runner.close()

    @property
    def log_path(self) -> Path:
        return self.journal.dir / "pip.log"

    @property
    def dir(self) -> Path:
        return self.journal.dir

    def start(self, **values) -> None:
        """The journal before anything changes: the distributions there now and what is planned."""
        self.before = scan_dists(self.target.roots)
        try:
            self.journal.update(python=self.target.python, prefix=self.target.prefix, roots=self.target.roots,
                                before=[dist_record(d) for d in self.before.values()], log=str(self.log_path),
                                marker=self.journal.id, status=TxnState.DOWNLOADING, **values)
        except OSError as e:  # a full disk at the start: nothing changed, nothing left behind
            self.journal.discard()
            raise DoctorError(T("fix.error.cannot_start", state=self.state, why=e.strerror or str(e)))

    def abort(self, reason: str) -> None:
        """Close a transaction that changed nothing; when even that cannot be written (a full
        disk) it leaves nothing behind."""
        try:
            self.journal.update(status=TxnState.ABORTED, finished=J.now(), error=reason, current=None)
        except OSError:
            self.journal.discard()

    def note(self, **values) -> None:
        """A journal update on the way back: the rollback goes on even if the disk is full."""
        try:
            self.journal.update(**values)
        except OSError:
            self.journal.data.update({k: (v.value if isinstance(v, TxnState) else v) for k, v in values.items()})

    # -- before the first change ----------------------------------------------------------------
    def begin(self, touched: Iterable[str], unowned: Sequence[str] = (), **values) -> None:
        """Back up the files of every distribution that may be removed or replaced (and files no
        distribution owns that will be overwritten), list what is on disk, sync it all, then
        mark the journal ``installing``: from here on a failure undoes."""
        root = self.journal.backup_root
        for name in sorted(set(touched)):
            d = self.before[name]
            self.backups[name] = {"version": d.version, "files": backup_files(dist_files(d, self.roots), root)}
        owned = {f for b in self.backups.values() for f in b["files"]}
        strays = [f for f in unowned if f not in owned and self.roots.inside(f)]
        if strays:
            self.backups[UNOWNED] = {"version": None, "files": backup_files(strays, root)}
        self.snapshot = Snapshot.take(self.target.tracked)
        self.snapshot.save(self.journal.dir / "snapshot.json")
        proc.raise_if_signalled()
        self.journal.update(status=TxnState.INSTALLING, backups=self.backups, backup_dir=str(root),
                            rollback_kind=RollbackKind.UNDO.value, placed=[], made_dirs=[], **values)

    # -- changes --------------------------------------------------------------------------------
    def remove(self, names: Sequence[str]) -> None:
        """Remove distributions the way pip uninstall does (the files of their RECORD, their
        metadata and bytecode), from the backed-up list: no pip process for it."""
        stuck: List[str] = []
        for name in names:
            b = self.backups.get(name)
            if b is None:
                raise StepFailed(f"{name} was not backed up: not removed")
            stuck += remove_files(b["files"], self.roots)
        if stuck:
            raise StepFailed(f"cannot delete {stuck[0]}" + (f" and {len(stuck) - 1} more" if len(stuck) > 1 else ""))

    def run(self, argv: Sequence[str], env: Mapping[str, str], timeout: float, entries: Sequence[Dict] = (),
            cwd: Optional[str] = None) -> None:
        """Run one command of the install phase: its process group and start time journalled
        as it starts, the transaction's marker in its environment."""
        def started(pid: int) -> None:
            for e in entries:
                e["pid"] = pid
            self.journal.update(current=dict(record_process(pid), **({"step": entries[0]["index"]} if entries else {})))

        self.runner.check(argv, marked(env, self.journal.id), timeout, on_start=started, cwd=cwd)
        proc.raise_if_signalled()  # a stop whose exception was lost while this step started
        self.journal.update(current=None)

    def fetch(self, argv: Sequence[str], env: Mapping[str, str], timeout: float, cwd: Optional[str] = None) -> None:
        """A command of the download phase (nothing in the environment changes): its process is
        journalled too, so a killed doctor's download ends before the next fix goes on."""
        self.runner.check(argv, marked(env, self.journal.id), timeout, cwd=cwd,
                          on_start=lambda pid: self.journal.update(current=record_process(pid)))
        self.journal.update(current=None)

    def place(self, stage: Path) -> List[str]:
        """Put a staged install tree (``make install DESTDIR=stage``) in place: every destination
        is journalled (synced) before it is written and what it replaces is backed up, so undo
        and a later rollback put the old files back byte for byte."""
        from doctor.shell.transaction.placing import existing_files, put, units

        todo = units(stage)
        if not todo:
            raise StepFailed("the build installed nothing")
        outside = [d for _, d, _ in todo if not self.roots.inside(d)]
        if outside:
            raise StepFailed(f"the build installs {outside[0]}, outside the places this environment's transaction "
                             "may change (its site-packages, its prefix, /usr/local)")
        dests = [d for _, d, _ in todo]
        made = _missing_parents(dests)
        old = existing_files(todo)
        entry = self.backups.setdefault(PLACED, {"version": None, "files": []})
        entry["files"] += backup_files([f for f in old if f not in entry["files"]], self.journal.backup_root)
        self.journal.update(backups=self.backups, placed=list(self.journal.data.get("placed", [])) + dests,
                            made_dirs=list(self.journal.data.get("made_dirs", [])) + made)
        for src, dest, whole in todo:
            put(src, dest, whole)
        return dests

    # -- the end --------------------------------------------------------------------------------
    def undo(self) -> List[str]:
        """Back to before: what was placed goes, everything added under the tracked roots goes,
        every backed-up file comes back; then the distributions are compared with the journal's."""
        assert self.snapshot is not None
        problems = undo_placed(self.journal, self.roots)
        files = [f for b in self.backups.values() for f in b["files"]]
        problems += undo_to_snapshot(self.snapshot, files, self.journal.backup_root, self.roots)
        problems += remove_made_dirs(self.journal, self.roots)
        problems += diff_dists({n: d.version for n, d in self.before.items()}, scan_dists(self.target.roots))
        return problems

    def fail(self, reason: str) -> List[str]:
        """Undo after a failure (signals wait meanwhile) and journal the outcome; returns what
        could not be put back (then the journal says rollback-failed and the backups stay)."""
        self.note(status=TxnState.ROLLING_BACK, error=reason, current=None)
        with proc.shielded():
            problems = self.undo()
        if problems:
            self.note(status=TxnState.ROLLBACK_FAILED, finished=J.now(), rollback_problems=problems)
        else:
            self.note(status=TxnState.ROLLED_BACK, finished=J.now())
            shutil.rmtree(self.journal.dir / "wheels", ignore_errors=True)
            shutil.rmtree(self.journal.dir / "stage", ignore_errors=True)
        return problems

    def commit(self, **values) -> Dict[str, Distribution]:
        after = scan_dists(self.target.roots)
        self.journal.update(status=TxnState.COMMITTED, finished=J.now(), current=None,
                            after=[dist_record(d) for d in after.values()], **values)
        J.set_last(self.state, self.journal.id)
        shutil.rmtree(self.journal.dir / "wheels", ignore_errors=True)
        shutil.rmtree(self.journal.dir / "stage", ignore_errors=True)
        prune_old_backups(self.state, keep=self.journal.id)
        return after


def _missing_parents(dests: Sequence[str]) -> List[str]:
    out: List[str] = []
    for dest in dests:
        p = os.path.dirname(dest)
        chain = []
        while p and p != "/" and not os.path.lexists(p):
            chain.append(p)
            p = os.path.dirname(p)
        for d in reversed(chain):
            if d not in out:
                out.append(d)
    return out
