"""``build`` steps. A source build installed by the installer (vLLM with
VLLM_TARGET_DEVICE=empty) runs in the install phase. A Mooncake build runs in the download
phase instead, into a staging tree inside the transaction (``mooncake build --stage-into DIR``:
nothing in the environment changes while it compiles); the install phase then puts the tree in
place through the transaction, journalled and backed up like a pip step, and proves it imports
with the Ascend transport before anything is committed."""
from __future__ import annotations

from typing import TYPE_CHECKING

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.plan.pins import names
from doctor.shell.steps import Action, Fetching

if TYPE_CHECKING:
    from doctor.plan.builder import Step

BUILD_TIMEOUT = 6 * 3600.0  # the build's own steps have their timeouts; this bounds the whole


class SourceBuild:
    key, round = "build.source", "source"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        pass

    def action(self, step: "Step", ctx: Fetching) -> Action:
        if not step.argv:
            raise DoctorError(T("fix.error.step_no_command", kind="build"))
        return Action(argv=list(step.argv), env=dict(step.env), packages=names(step.packages))


class MooncakeBuild:
    key, round = "build.mooncake", "source"

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        if not step.argv:
            raise DoctorError(T("fix.error.step_no_command", kind="build"))
        stage = ctx.stage_dir / "mooncake"
        argv = list(step.argv) + ["--stage-into", str(stage), "--log", str(ctx.txn.dir / "mooncake-build.log")]
        ctx.txn.fetch(argv, dict(ctx.env, **step.env),
                      max(ctx.timeout, BUILD_TIMEOUT))
        ctx.files[f"stage:{id(step)}"] = stage

    def action(self, step: "Step", ctx: Fetching) -> Action:
        return Action(stage=ctx.files[f"stage:{id(step)}"], verify="mooncake")
