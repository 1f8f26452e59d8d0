"""The transaction engine of ``fix --apply`` and ``rollback`` (docs/fix.md): the one place that
changes an environment, one module per job (state directory, lock, journal and its schema, roots,
files, snapshot, processes, runner, engine, verify, recovery, rollback); the step kinds' fetching
and applying is doctor/shell/steps/. Everything it reads back from its state directory is
untrusted input (statedir.py, schema.py, roots.py).

The entry points the use cases call are the names below: ``apply_plan`` carries a plan out,
``rollback_last`` undoes the last transaction, ``refuse_if_unfinished`` stops at an interrupted
one, ``target_from_facts`` names the environment they change."""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    from doctor.shell.transaction.recovery import RollbackResult, refuse_if_unfinished
    from doctor.shell.transaction.rollback import check_something_to_roll_back, rollback_last
    from doctor.shell.transaction.run_plan import ApplyResult, apply_plan
    from doctor.shell.transaction.statedir import planned_state_dir, state_dir
    from doctor.shell.transaction.target import Target, rollback_argv, target_from_facts

# name -> the module that has it, imported on first use: a dry run (`fix` without --apply) needs
# only the state directory's name, and importing the whole engine cost it ~40 ms
_WHERE = {"RollbackResult": "recovery", "refuse_if_unfinished": "recovery", "rollback_last": "rollback",
          "check_something_to_roll_back": "rollback",
          "ApplyResult": "run_plan", "apply_plan": "run_plan", "planned_state_dir": "statedir", "state_dir": "statedir",
          "Target": "target", "rollback_argv": "target", "target_from_facts": "target"}

__all__ = ["ApplyResult", "RollbackResult", "Target", "apply_plan", "check_something_to_roll_back", "planned_state_dir", "refuse_if_unfinished",
           "rollback_argv", "rollback_last", "state_dir", "target_from_facts"]
assert sorted(__all__) == sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_WHERE))
