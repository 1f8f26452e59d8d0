"""The states a transaction and its steps go through, as the journal spells them (docs/fix.md).

A transaction in one of UNFINISHED was left by a doctor that died, or whose rollback failed:
nothing else may change the environment until ``rollback`` has finished it. One in
BEFORE_CHANGES changed nothing yet (it died downloading) and is simply closed.
"""
from __future__ import annotations

from enum import Enum


class TxnState(str, Enum):
    STARTED = "started"
    DOWNLOADING = "downloading"
    INSTALLING = "installing"
    ROLLING_BACK = "rolling-back"
    ROLLING_BACK_LATER = "rolling-back-later"
    ROLLBACK_FAILED = "rollback-failed"
    COMMITTED = "committed"
    ROLLED_BACK = "rolled-back"
    ROLLED_BACK_LATER = "rolled-back-later"
    ABORTED = "aborted"

    def __str__(self) -> str:
        return self.value

    @property
    def before_changes(self) -> bool:
        return self in BEFORE_CHANGES

    @property
    def unfinished(self) -> bool:
        return self in UNFINISHED

    @property
    def final(self) -> bool:
        return self in FINAL


BEFORE_CHANGES = frozenset({TxnState.STARTED, TxnState.DOWNLOADING})
UNFINISHED = BEFORE_CHANGES | {TxnState.INSTALLING, TxnState.ROLLING_BACK, TxnState.ROLLING_BACK_LATER,
                               TxnState.ROLLBACK_FAILED}
FINAL = frozenset({TxnState.COMMITTED, TxnState.ROLLED_BACK, TxnState.ROLLED_BACK_LATER, TxnState.ABORTED})


class StepStatus(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


class RollbackKind(str, Enum):
    """How a transaction is undone: ``undo`` (during fix --apply, or after a killed doctor: back
    to the snapshot) or ``later`` (a committed transaction rolled back by ``rollback``)."""

    UNDO = "undo"
    LATER = "later"

    def __str__(self) -> str:
        return self.value
