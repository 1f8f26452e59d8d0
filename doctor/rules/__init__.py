"""Rules: pure functions from facts + matrix to findings, registered per layer.

A rule is a plain function ``(ctx) -> iterable of Finding`` registered with ``@rule(layer)``
(the way conda registers its health checks). Rules never touch the host; a rule that raises
becomes a warning finding and the others still run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, List, Optional, Tuple

from doctor.facts import Facts
from doctor.findings import SKIP, WARN, Finding, Verdict, judge, msg
from doctor.matrix.model import Matrix, Release
from doctor.parse.npusmi import hardware_class

RuleFn = Callable[["Context"], Iterable[Finding]]
RULES: List[Tuple[str, RuleFn]] = []


def rule(layer: str) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        RULES.append((layer, fn))
        return fn

    return register


@dataclass
class Context:
    facts: Facts
    matrix: Matrix
    stage: str  # "build" or "runtime"
    stage_reason: str
    release: Optional[Release] = None
    release_note: Optional[str] = None  # how the row was chosen, when not exact
    hardware: Optional[str] = None  # A2 / A3 / 310P / A5 / "910" from npu-smi

    @property
    def build(self) -> bool:
        return self.stage == "build"

    def version(self, name: str) -> Optional[str]:
        return self.facts.version_of(name)

    def skip_build(self, fid: str) -> Finding:
        return Finding(fid, SKIP, msg("skipped in the build stage: " + self.stage_reason,
                                      "构建阶段跳过：" + self.stage_reason_zh))

    @property
    def stage_reason_zh(self) -> str:
        return STAGE_REASON_ZH.get(self.stage_reason, self.stage_reason)


STAGE_BUILD_AUTO = "no /dev/davinci* and no NPU driver here (a docker build, or not an Ascend machine); use --stage runtime to judge them"
STAGE_REASON_ZH = {
    STAGE_BUILD_AUTO: "这里没有 /dev/davinci* 也没有 NPU 驱动（docker build 阶段，或不是昇腾机器）；用 --stage runtime 强制检查",
    "--stage build": "--stage build",
}


def decide_stage(facts: Facts, requested: str) -> Tuple[str, str]:
    if requested in ("build", "runtime"):
        return requested, f"--stage {requested}"
    has_devices = bool(facts.devices and any(n.exists for n in facts.devices.davinci))
    has_driver = bool(facts.driver and facts.driver.found)
    if not has_devices and not has_driver:
        return "build", STAGE_BUILD_AUTO
    return "runtime", "NPU devices or driver present"


def make_context(facts: Facts, matrix: Matrix, requested_stage: str = "auto",
                 target: Optional[str] = None) -> Context:
    from doctor.matrix.query import release_for_installed

    stage, reason = decide_stage(facts, requested_stage)
    ctx = Context(facts=facts, matrix=matrix, stage=stage, stage_reason=reason)
    ctx.hardware = hardware_class(facts.devices.npu_smi_info if facts.devices else None)
    wanted = target or facts.version_of("vllm-ascend")
    if wanted:
        ctx.release, ctx.release_note = release_for_installed(matrix, wanted)
    return ctx


PROBE_LAYER = {"driver": "driver", "firmware": "firmware", "cann": "cann", "devices": "devices",
               "python": "python", "packages": "python", "workdir": "env", "mooncake": "mooncake"}


def load_rules() -> None:
    """Import the rule modules for their registrations (~40 ms: the check does it while the
    interpreter probe runs)."""
    from doctor.rules import cann, env, hardware, mooncake, python, stack  # noqa: F401


def run_rules(ctx: Context) -> Verdict:
    load_rules()

    findings: List[Finding] = []
    for err in ctx.facts.probe_errors:
        layer = PROBE_LAYER.get(err.probe, "env")
        findings.append(Finding(
            f"{layer}.probe_error", WARN,
            msg(f"the {err.probe} probe crashed; this layer was not fully checked",
                f"{err.probe} 探测出错，该层未完整检查"),
            observed=err.error,
        ))
    for layer, fn in RULES:
        try:
            findings.extend(fn(ctx))
        except Exception as e:  # a bug in one rule must not hide the other findings
            findings.append(Finding(
                f"{layer}.rule_error", WARN,
                msg(f"internal error while judging the {layer} layer: {type(e).__name__}: {e}",
                    f"检查 {layer} 层时内部出错：{type(e).__name__}: {e}"),
            ))
    return judge(findings)
