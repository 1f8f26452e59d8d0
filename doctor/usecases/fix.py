"""The fix workflow shared by ``fix`` and ``rollback`` (docs/fix.md): plan -> confirm -> apply ->
re-check -> smoke, and rollback -> re-check. The commands in cli/fix.py only parse options,
ask for the confirmation this module requests, and render what it returns."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from doctor.errors import UsageError
from doctor.usecases.check import CheckOptions, CheckResult, gather, load_matrix_or_exit, parse_target, run_check

if TYPE_CHECKING:
    from doctor.findings import Verdict
    from doctor.plan.builder import Plan
    from doctor.shell.apply import ApplyResult, RollbackResult, Target
    from doctor.shell.installer import Choice

SMOKE_TIMEOUT = 900.0
Confirm = Callable[[int, str], bool]  # (number of steps, interpreter) -> go ahead?


class Declined(Exception):
    """The user answered no: nothing was changed."""


@dataclass
class FixOptions:
    check: CheckOptions
    target: Optional[str] = None  # --target vllm-ascend==X
    prefer: Optional[str] = None
    with_mooncake: bool = False
    vllm_from: str = "index"
    vllm_repo: str = "https://github.com/vllm-project/vllm"
    installer: str = "pip"
    apply: bool = False
    requirements: Optional[str] = None  # write the pins there
    smoke: bool = True
    step_timeout: float = 3600.0
    verbose: bool = False
    lang: str = "en"


@dataclass
class FixOutcome:
    plan: "Plan"
    doc: Dict  # the plan as JSON (and the result, for --json)
    before: "Verdict"
    choice: "Choice"
    target_python: Optional[str] = None
    result: Optional["ApplyResult"] = None  # None: dry run, or nothing to run
    final: Optional[CheckResult] = None  # the re-check after --apply
    smoke: Optional[Dict] = None
    smoke_skipped: bool = False  # the build stage: no NPU to run on
    exit_code: int = 0
    messages: List[str] = field(default_factory=list)  # for stderr (requirements file written...)


def validate(opts: FixOptions) -> None:
    if opts.installer not in ("pip", "uv"):
        raise UsageError(f"--installer {opts.installer!r}: use pip or uv")
    if opts.vllm_from not in ("index", "source"):
        raise UsageError(f"--vllm-from {opts.vllm_from!r}: use index or source")
    if opts.step_timeout <= 0:
        raise UsageError("--step-timeout must be positive")
    if opts.apply and (opts.check.snapshot or opts.check.site_packages):
        raise UsageError("--apply changes a live environment: use --python, not --from or --site-packages")


def run_fix(opts: FixOptions, env: Dict[str, str], confirm: Confirm, say: Callable[[str], None],
            show_plan: Callable[["Plan"], None] = lambda plan: None) -> FixOutcome:
    """Plan; with --apply, confirm, carry the plan out as one transaction, check again and run
    the smoke test. ``show_plan`` is called before the question is asked."""
    from doctor.plan.builder import PlanOptions, plan_for, requirements_text
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.apply import apply_plan, detect_installer, refuse_if_unfinished, target_from_facts
    from doctor.shell.txn import planned_state_dir, state_dir

    validate(opts)
    mx = load_matrix_or_exit(opts.check.matrix)
    wanted = parse_target(opts.target)
    facts = gather(opts.check, env)
    if facts.python is not None and not facts.python.found and not opts.check.site_packages and not opts.check.snapshot:
        raise UsageError(f"cannot run the target interpreter: {facts.python.error or opts.check.python}")
    target = target_from_facts(facts) if opts.apply else None
    if target is not None:
        refuse_if_unfinished(target, env)  # never plan on a half-restored environment
    ctx0 = make_context(facts, mx, opts.check.stage)
    before = run_rules(ctx0)
    choice = detect_installer(opts.installer, facts, env)
    prefix = facts.python.prefix if facts.python else None
    # a dry run creates nothing; --apply uses the state directory it will really write to
    state = str(state_dir(prefix, env)) if opts.apply and prefix else planned_state_dir(prefix)
    popts = PlanOptions(installer=choice.installer, target=wanted, prefer=opts.prefer, with_mooncake=opts.with_mooncake,
                        vllm_from=opts.vllm_from, vllm_repo=opts.vllm_repo, doctor_python=sys.executable,
                        constraint_file=os.path.join(state, "constraints.txt"), src_dir=os.path.join(state, "src"))
    plan = plan_for(facts, mx, lambda version: run_rules(make_context(facts, mx, opts.check.stage, version)),
                    ctx0.hardware, popts)
    doc = plan.to_json(opts.lang)
    doc["installer_notes"] = choice.notes
    outcome = FixOutcome(plan=plan, doc=doc, before=before, choice=choice, exit_code=before.exit_code())
    if opts.requirements:
        _write_requirements(opts.requirements, plan, requirements_text)
        outcome.messages.append(opts.requirements)
    if not opts.apply:
        return outcome

    assert target is not None
    outcome.target_python = target.python
    show_plan(plan)
    if plan.runnable:
        if not confirm(len(plan.runnable), target.python):
            raise Declined()
        outcome.result = apply_plan(plan, target, choice, env, verbose=opts.verbose, show_progress=True, say=say,
                                    step_timeout=opts.step_timeout, lang=opts.lang, npu=ctx0.stage == "runtime")
    outcome.final = run_check(opts.check, env)
    code = outcome.final.verdict.exit_code()
    if opts.smoke:
        outcome.smoke = run_smoke(outcome.final.ctx.stage, target.python, env)
        outcome.smoke_skipped = outcome.final.ctx.stage == "build"
    if outcome.smoke is not None and outcome.smoke.get("exit_code") != 0 and code in (0, 4):
        code = 3
    outcome.exit_code = code
    return outcome


def _write_requirements(path: str, plan: "Plan", render: Callable) -> None:
    indexes: List[str] = []
    for s in plan.steps:
        for u in s.extra_index_urls:
            if u not in indexes:
                indexes.append(u)
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(render(plan, indexes))
    except OSError as e:
        raise UsageError(f"--requirements {path}: {e.strerror or e}")


def run_smoke(stage: str, python: str, env: Dict[str, str], timeout: float = SMOKE_TIMEOUT) -> Optional[Dict]:
    """`ascend-doctor smoke` on the fixed environment, in a child of its own (shell.proc: it
    dies with the doctor). Not at the build stage: there is no NPU to run on."""
    from doctor.shell import proc

    if stage == "build":
        return None
    argv = [sys.executable, "-m", "doctor", "smoke", "--python", python, "--json"]
    done = proc.run(argv, timeout, env=env, max_output=4 * 1024 * 1024)
    if done.timed_out:
        return {"exit_code": 3, "why": f"smoke timed out after {timeout:g} s"}
    if done.error:
        return {"exit_code": 1, "why": f"cannot run the smoke test: {done.error}"}
    try:
        why = json.loads(done.stdout).get("summary", {}).get("root_cause")
    except (ValueError, AttributeError):
        why = (done.stderr.strip().splitlines() or [""])[-1][:200] or None
    return {"exit_code": done.returncode, "why": why}


@dataclass
class RollbackOutcome:
    result: "RollbackResult"
    final: CheckResult
    target_python: str

    @property
    def exit_code(self) -> int:
        return self.final.verdict.exit_code()


def run_rollback(check: CheckOptions, env: Dict[str, str], force: bool, confirm: Callable[[str], bool],
                 say: Callable[[str], None] = lambda s: None) -> RollbackOutcome:
    from doctor.shell.apply import rollback_last, target_from_facts

    facts = gather(check, env)
    target: "Target" = target_from_facts(facts)
    if not confirm(target.python):
        raise Declined()
    result = rollback_last(target, env, force=force, say=say)
    return RollbackOutcome(result=result, final=run_check(check, env), target_python=target.python)
