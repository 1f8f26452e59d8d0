"""``fetch`` steps: a source tree (``git clone`` of vLLM) got in the download phase, before
anything changes; the build step after it installs from the clone."""
from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.shell.steps import Action, Fetching
from doctor.shell.transaction.statedir import STATE_NAME

if TYPE_CHECKING:
    from doctor.plan.builder import Step


class Clone:
    key, round = "fetch", "source"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        if not step.argv:
            raise DoctorError(T("fix.error.step_no_command", kind="fetch"))
        dest = step.argv[-1]
        if os.path.isdir(dest) and STATE_NAME in dest and not os.path.islink(dest):
            shutil.rmtree(dest)  # our own clone from an earlier run
        ctx.txn.fetch(step.argv, dict(ctx.env, **step.env), ctx.timeout)
        ctx.sources["vllm"] = dest

    def action(self, step: "Step", ctx: Fetching) -> Action:
        return Action(note="done in the download phase")
