"""What earlier transactions left behind: one whose doctor was killed, one whose rollback
failed, one whose journal cannot be trusted. Before a new transaction (``settle_unfinished``)
and before a fix is even planned (``refuse_if_unfinished``) they block; ``rollback`` finishes
them (rollback.py) from the transaction's own snapshot and backups, acting only inside the roots
the doctor computes for the environment."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Mapping, Optional, Tuple, Union

from doctor.errors import UsageError
from doctor.shell.transaction import journal as J
from doctor.shell.transaction.lock import Lock
from doctor.shell.transaction.processes import wait_for_leftovers
from doctor.shell.transaction.states import TxnState
from doctor.shell.transaction.statedir import existing_state_dirs
from doctor.shell.transaction.target import Target


@dataclass
class RollbackResult:
    txn_id: str
    restored: Dict[str, Tuple[Optional[str], Optional[str]]]  # name -> (now, restored)
    note: Optional[str] = None  # "nothing had changed" for a transaction stopped before installing


def abort(journal: J.Journal, reason: str) -> None:
    try:
        journal.update(status=TxnState.ABORTED, finished=J.now(), error=reason, current=None)
    except OSError:
        journal.discard()


def best_effort(journal: J.Journal, **values) -> None:
    try:
        journal.update(**values)
    except OSError:
        journal.data.update({k: (v.value if isinstance(v, TxnState) else v) for k, v in values.items()})


def foreign(journal: J.Journal, target: Target) -> Optional[str]:
    """Why a well-formed journal is still not this environment's (a copied venv, a planted
    file), or None."""
    if journal.data.get("prefix") not in (None, target.prefix):
        return f"it was made for {str(journal.data.get('prefix'))[:200]}, not {target.prefix}"
    roots = journal.data.get("roots")
    if roots is not None and sorted(roots) != sorted(target.roots):
        return f"it tracks other site directories ({', '.join(str(r)[:100] for r in roots[:3])}) than this environment's"
    return None


def blocked(item: Union[J.Journal, J.Damaged], target: Target) -> str:
    if isinstance(item, J.Damaged):
        return item.message()
    why = foreign(item, target)
    if why:
        return J.Damaged(item.dir, why).message()
    if item.status == TxnState.ROLLBACK_FAILED:
        problems = "; ".join((item.data.get("rollback_problems") or [])[:2]) or "see its journal"
        return (f"transaction {item.id} could not be rolled back ({problems}); its backups are kept in "
                f"{item.backup_root}. Fix the cause, then finish it with:\n{target.rollback_command()}")
    return (f"transaction {item.id} did not finish ({item.status.value}); roll it back first:\n"
            f"{target.rollback_command()}")


def settle_unfinished(state: Path, target: Target, say: Callable[[str], None]) -> None:
    """Transactions that died before they changed anything are closed (once their downloads
    have stopped); any other unfinished transaction, or one that cannot be trusted, blocks a new
    one until `rollback` ends it (or a person has looked)."""
    for item in J.unfinished(state):
        if isinstance(item, J.Journal) and item.status.before_changes and foreign(item, target) is None:
            wait_for_leftovers(item, say=say)
            abort(item, "the doctor stopped before changing anything")
            continue
        raise UsageError(blocked(item, target))


def refuse_if_unfinished(target: Target, env: Mapping[str, str]) -> None:
    """Before planning a fix: an environment an unfinished transaction left half-changed (or
    whose rollback failed, or whose journal cannot be trusted) is not planned on. Changes nothing."""
    for state in existing_state_dirs(target.prefix, env):
        Lock(state / "lock", "").refuse_if_held()  # a fix or rollback running now: its refusal, not "roll it back"
        for item in J.unfinished(state):
            if isinstance(item, J.Damaged) or not item.status.before_changes:
                raise UsageError(blocked(item, target))
