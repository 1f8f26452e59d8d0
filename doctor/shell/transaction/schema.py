"""The shape of a journal (journal.json), checked before anything in it is believed. A journal
that does not fit is damaged (truncated, or crafted): it is reported with what to do by hand,
never acted on."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from doctor.shell.transaction.states import RollbackKind, StepStatus, TxnState

Check = Callable[[Any], bool]


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def _record(fields: Dict[str, Check], required: tuple = ()) -> Check:
    def check(v: Any) -> bool:
        return isinstance(v, dict) and all(k in v for k in required) and \
            all(c(v[k]) for k, c in fields.items() if k in v)
    return check


def _enum(kind) -> Check:
    values = {m.value for m in kind}
    return lambda v: isinstance(v, str) and v in values


DIST = _record({"name": _str, "version": _str, "location": _opt_str, "metadata_path": _opt_str,
                "editable": lambda v: isinstance(v, bool), "direct_url": _opt_str, "installer": _opt_str},
               required=("name", "version"))
BACKUP = _record({"version": _opt_str, "files": _list_of(_str)}, required=("files",))
STEP = _record({"index": _int, "action": _str, "argv": lambda v: v is None or _list_of(_str)(v),
                "status": _enum(StepStatus), "pid": _int, "error": _opt_str, "note": _opt_str},
               required=("index", "status"))
CURRENT = _record({"pid": _int, "pgid": _int, "start": _opt_str, "step": _int}, required=("pid", "pgid"))

FIELDS: Dict[str, Check] = {
    "started": _str, "pid": _int, "pid_start": _opt_str, "python": _str, "prefix": _str,
    "roots": _list_of(_str), "installer": _str, "before": _list_of(DIST), "after": _list_of(DIST),
    "plan": lambda v: isinstance(v, dict), "log": _str, "notes": _list_of(_str),
    "backups": lambda v: isinstance(v, dict) and all(_str(k) and BACKUP(b) for k, b in v.items()),
    "backup_dir": _str, "rollback_kind": _enum(RollbackKind), "steps": _list_of(STEP),
    "current": lambda v: v is None or CURRENT(v), "error": _opt_str, "finished": _str,
    "verification": lambda v: isinstance(v, dict), "rollback_problems": _list_of(_str),
    "placed": _list_of(_str), "made_dirs": _list_of(_str), "marker": _str,
}
# What a journal must hold once its transaction has reached a state (what undoing it reads).
CHANGED = {TxnState.INSTALLING, TxnState.ROLLING_BACK, TxnState.ROLLBACK_FAILED, TxnState.COMMITTED,
           TxnState.ROLLING_BACK_LATER, TxnState.ROLLED_BACK_LATER}
NEEDS_AFTER = {TxnState.COMMITTED, TxnState.ROLLING_BACK_LATER}


def problem(data: Any, name: str) -> Optional[str]:
    """Why this journal cannot be trusted, or None."""
    if not isinstance(data, dict):
        return "it is not a JSON object"
    if data.get("id") != name:
        return "its id is not the name of its directory"
    if not _enum(TxnState)(data.get("status")):
        return f"its status {str(data.get('status'))[:40]!r} is not a transaction state"
    for key, check in FIELDS.items():
        if key in data and not check(data[key]):
            return f"its {key!r} is not what the doctor writes there"
    status = TxnState(data["status"])
    if status in CHANGED:
        missing = [k for k in ("before", "backups", "roots", "prefix") if k not in data]
        if status in NEEDS_AFTER and "after" not in data:
            missing.append("after")
        if missing:
            return f"it is {status.value} but has no {', '.join(missing)}"
    return None
