"""``fix --apply`` and ``rollback``: the entry points the use cases call. The transaction engine
is the package doctor/shell/transaction/ (one module per job: state directory, lock, journal and
its schema, roots, files, snapshot, processes, runner, engine, recovery, rollback); the step
kinds' fetching and applying is doctor/shell/steps/."""
from __future__ import annotations

from doctor.shell.installer import detect as detect_installer
from doctor.shell.transaction.recovery import RollbackResult, refuse_if_unfinished
from doctor.shell.transaction.rollback import rollback_last
from doctor.shell.transaction.run_plan import ApplyResult, apply_plan
from doctor.shell.transaction.statedir import planned_state_dir, state_dir
from doctor.shell.transaction.target import Target, rollback_argv, target_from_facts

__all__ = ["ApplyResult", "RollbackResult", "Target", "apply_plan", "detect_installer", "planned_state_dir",
           "refuse_if_unfinished", "rollback_argv", "rollback_last", "state_dir", "target_from_facts"]
