"""Run the rules over the facts: choose the stage and the release row, then judge."""
from __future__ import annotations

from typing import List, Optional, Tuple

from doctor.facts import Facts
from doctor.findings import WARN, Finding, Verdict, judge
from doctor.i18n import T
from doctor.matrix.model import Matrix
from doctor.parse.npusmi import hardware_class
from doctor.rules.base import STAGE_BUILD_AUTO, STAGE_FORCED, STAGE_RUNTIME_AUTO, Context, Rules

# The layer a crashed probe leaves unchecked.
PROBE_LAYER = {"driver": "driver", "firmware": "firmware", "cann": "cann", "devices": "devices",
               "python": "python", "packages": "python", "workdir": "env", "imports": "env", "mooncake": "mooncake",
               "hccn": "hccn", "tuning": "tuning", "model": "tuning"}


def decide_stage(facts: Facts, requested: str) -> Tuple[str, str]:
    if requested in ("build", "runtime"):
        return requested, STAGE_FORCED
    has_devices = bool(facts.devices and any(n.exists for n in facts.devices.davinci))
    has_driver = bool(facts.driver and facts.driver.found)
    if not has_devices and not has_driver:
        return "build", STAGE_BUILD_AUTO
    return "runtime", STAGE_RUNTIME_AUTO


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


def all_rules() -> Rules:
    """Every rule (the catalogue, the plan's fixers, explain): every rule module imported."""
    from doctor.rules.all_rules import RULES

    return RULES


def rules_for(ctx: Context) -> Rules:
    """The rules a check of ``ctx`` runs: those of every layer that has input (the others would
    say nothing, and their modules stay unimported: doctor/rules/gates.py)."""
    from doctor.rules import all_rules as every

    return every.rules_for(ctx)


def run_rules(ctx: Context, rules: Optional[Rules] = None) -> Verdict:
    findings: List[Finding] = []
    for err in ctx.facts.probe_errors:
        layer = PROBE_LAYER.get(err.probe, "env")
        findings.append(Finding(f"{layer}.probe_error", WARN, T("rules.probe_error", probe=err.probe),
                                observed=err.error))
    for rule in rules if rules is not None else rules_for(ctx):
        try:
            findings.extend(rule.check(ctx))
        except Exception as e:  # a bug in one rule must not hide the other findings
            findings.append(Finding(f"{rule.layer}.rule_error", WARN,
                                    T("rules.rule_error", layer=rule.layer, error=f"{type(e).__name__}: {e}")))
    return judge(findings)
