"""The fix workflow shared by ``fix`` and ``rollback`` (docs/fix.md): plan -> prove with the
installer's resolver -> confirm -> apply (hash-checked, from the index or a bundle) -> re-check
-> smoke; ``fix --bundle DIR`` (a bundle for an offline node); and rollback -> re-check. The
commands in cli/fix.py only parse options, ask for the confirmation this module requests, and
hand what it returns to cli/fix_render.py."""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, ContextManager, Dict, List, Mapping, Optional, Sequence, Tuple

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.usecases.check import CheckOptions, CheckResult, gather, load_matrix_or_exit, parse_target, run_check

if TYPE_CHECKING:
    from doctor.facts import Facts
    from doctor.findings import Verdict
    from doctor.matrix import Matrix
    from doctor.plan.builder import Plan
    from doctor.plan.indexes import Route
    from doctor.shell.transaction import ApplyResult, RollbackResult, Target
    from doctor.shell.install.bundle import Bundle
    from doctor.shell.install.installer import Choice
    from doctor.shell.install.resolver import TargetPlatform

SMOKE_TIMEOUT = 900.0
DOCKERFILE_DOCTOR = "/opt/ascend-doctor/venv/bin/python"  # where the repository's Dockerfile installs the doctor
RESOLVE_TIMEOUT = 600.0  # both resolver asks together, sizes included
BUNDLE_DOWNLOAD_TIMEOUT = 3600.0
Confirm = Callable[[int, str], bool]  # (number of steps, interpreter) -> go ahead?
Resolving = Callable[[str], ContextManager]  # (installer kind) -> shown while the resolver runs


def _quiet(installer: str) -> ContextManager:
    return contextlib.nullcontext()


def _progress_of(busy: object) -> Callable[..., None]:
    """The resolving spinner's update (key, **values), or nothing (piped, --json, tests)."""
    update = getattr(busy, "update", None)
    return update if callable(update) else (lambda key, **values: None)


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
    installer: str = "auto"  # auto (uv resolves and installs where it can), pip, uv
    apply: bool = False
    requirements: Optional[str] = None  # write the pins there
    offline: bool = False  # no resolver: the matrix-only plan, marked "not resolved"
    bundle: Optional[str] = None  # --bundle DIR: write one (dry run) or install only from it (--apply)
    platform: List[str] = field(default_factory=list)  # a bundle's target wheel tags
    python_version: Optional[str] = None  # a bundle's target Python
    abi: List[str] = field(default_factory=list)
    smoke: bool = True
    step_timeout: float = 3600.0
    resolve_timeout: float = RESOLVE_TIMEOUT
    verbose: bool = False
    lang: str = "en"
    tuning_patch: Optional[str] = None  # write the launch-script changes as a unified diff there


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
    unresolvable: bool = False  # --apply refused before any change: the resolver says the plan cannot work
    exit_code: int = 0
    messages: List[str] = field(default_factory=list)  # for stderr (requirements file written...)
    facts: Optional["Facts"] = None
    image_judgement: Optional[object] = None  # rules.image's judgement, when an image was planned for
    tuning_patch: Optional[Dict] = None  # what --tuning-patch wrote (or that nothing needed changing)


@dataclass
class BundleOutcome:
    """``fix --bundle DIR`` without --apply: the proven plan and, unless the resolver failed,
    the bundle written for the node."""

    plan: "Plan"
    platform: "TargetPlatform"
    manifest: Optional[Dict] = None  # None: the resolver failed (exit 3), nothing written
    directory: str = ""

    @property
    def size(self) -> int:
        return sum(f["size"] for f in self.manifest["files"]) if self.manifest else 0

    @property
    def exit_code(self) -> int:
        return 0 if self.manifest is not None else 3


def validate(opts: FixOptions) -> None:
    if opts.installer not in ("auto", "pip", "uv"):
        raise UsageError(T("fix.error.bad_installer", value=repr(opts.installer)))
    if opts.vllm_from not in ("index", "source"):
        raise UsageError(T("fix.error.bad_vllm_from", value=repr(opts.vllm_from)))
    if opts.step_timeout <= 0:
        raise UsageError(T("option.error.must_be_positive", option="--step-timeout"))
    if opts.apply and (opts.check.snapshot or opts.check.site_packages):
        raise UsageError(T("fix.error.apply_live"))
    if (opts.platform or opts.python_version or opts.abi) and not opts.bundle:
        raise UsageError(T("fix.error.target_needs_bundle"))
    if opts.bundle and opts.offline:
        raise UsageError(T("fix.error.bundle_offline"))
    if opts.tuning_patch and not opts.check.serve_args_file:
        raise UsageError(T("fix.error.patch_needs_script"))
    if opts.apply and opts.check.image is not None and opts.check.image.wanted:
        from doctor.i18n import tr

        raise UsageError(tr("image.error.apply", opts.lang))


def run_fix(opts: FixOptions, env: Dict[str, str], confirm: Confirm, say: Callable[[str], None],
            show_plan: Callable[["Plan"], None] = lambda plan: None, resolving: Resolving = _quiet,
            probing: Callable[[], ContextManager[None]] = contextlib.nullcontext) -> FixOutcome:
    """Plan and prove the plan with the installer's resolver (unless --offline); with --apply,
    confirm, carry it out as one transaction (from the index, or from --bundle DIR only), check
    again and run the smoke test. ``show_plan`` is called before the question is asked;
    ``resolving`` wraps the resolver's run (a spinner)."""
    from doctor.plan.builder import PlanOptions, plan_for, requirements_text, vendor_only
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.transaction import planned_state_dir, state_dir  # the engine itself only with --apply
    from doctor.shell.install.installer import detect as detect_installer

    validate(opts)
    assert not (opts.bundle and not opts.apply), "fix --bundle DIR without --apply writes a bundle: make_bundle"
    mx = load_matrix_or_exit(opts.check.matrix)
    wanted = parse_target(opts.target)
    with probing():  # a line on a terminal when it lasts (npu-smi, an image, the interpreter)
        facts = gather(opts.check, env)
    live = not opts.check.site_packages and not opts.check.snapshot
    # a machine with no CANN and no --python gets the vendor layers only: no interpreter needed
    # (under --root none is run unless named)
    no_cann = not (facts.cann and facts.cann.found) and not opts.check.python and live
    if facts.python is not None and not facts.python.found and live and not no_cann:
        raise UsageError(T("fix.error.no_interpreter", error=facts.python.error or opts.check.python))
    target = None
    if opts.apply:
        from doctor.shell.transaction import refuse_if_unfinished, target_from_facts

        target = target_from_facts(facts)
        refuse_if_unfinished(target, env)  # never plan on a half-restored environment
    ctx0 = make_context(facts, mx, opts.check.stage)
    before = run_rules(ctx0)
    judgement = None
    if facts.image is not None:  # official images' documented deviations, as check reports them
        from doctor.matrix.images import official_images
        from doctor.rules.image import judge_image

        before, judgement = judge_image(before, facts, official_images(mx))
    # an image's plan runs in a Dockerfile step, where the doctor is the repository Dockerfile's venv
    doctor_python = DOCKERFILE_DOCTOR if facts.image is not None else sys.executable
    # a snapshot's directories are on the host it was taken from: nothing here owns them
    owner = None if opts.check.snapshot else owner_of_directories(facts, opts.check.root, env)
    choice = detect_installer(opts.installer, facts, env, doctor_python, owner)
    prefix = facts.python.prefix if facts.python else None
    # a dry run creates nothing; --apply uses the state directory it will really write to (and
    # only --apply writes the constraints file: printed commands carry the pins themselves)
    made_state = opts.apply and prefix is not None and not os.path.lexists(planned_state_dir(prefix))
    state = str(state_dir(prefix, env)) if opts.apply and prefix else planned_state_dir(prefix)
    popts = PlanOptions(installer=choice.shown, target=wanted, prefer=opts.prefer, with_mooncake=opts.with_mooncake,
                        vllm_from=opts.vllm_from, vllm_repo=opts.vllm_repo, doctor_python=doctor_python,
                        constraint_file=os.path.join(state, "constraints.txt") if opts.apply else None,
                        src_dir=os.path.join(state, "src"))
    plan = plan_for(facts, mx, lambda version: run_rules(make_context(facts, mx, opts.check.stage, version)),
                    ctx0.hardware, popts)
    if no_cann:  # a bare machine: the vendor layers first, no pip installs yet
        plan = vendor_only(plan)
    install_env = env  # what pip sees when it resolves and installs (a bundle: the bundle only)
    bundle_dir: Optional["Bundle"] = None
    if opts.bundle:  # --apply --bundle: resolve and install from the bundle only, every file checked
        from doctor.shell.install.bundle import open_bundle

        bundle_dir = open_bundle(opts.bundle, facts, plan)
        install_env = bundle_dir.pip_env(env)
        choice = detect_installer(opts.installer, facts, install_env, doctor_python, owner)
    image_platform = None
    if facts.image is not None:  # nothing of the image runs here: resolved for its platform (usecases/image.py)
        from doctor.usecases.image import resolution_for

        resolved_as = resolution_for(facts, choice)
        if resolved_as is None:
            live = False  # no wheel tags for its machine: shown unresolved
        else:
            choice, image_platform = resolved_as
    plan = _prove(plan, facts, choice, install_env, opts, no_cann, live, bundle_dir, resolving, image_platform,
                  judge=lambda p: check_after_plan(p, facts, mx, opts.check.stage, before, opts.lang),
                  route=bundle_route(opts, facts, mx, opts.check.stage))
    judged_dirs = _directories_judged(facts)
    if owner is None and judged_dirs:
        plan = without_commands(plan, opts.check.site_packages or judged_dirs)
    doc = plan.to_json(opts.lang)
    doc["installer_notes"] = choice.notes
    outcome = FixOutcome(plan=plan, doc=doc, before=before, choice=choice, exit_code=before.exit_code(),
                         facts=facts, image_judgement=judgement)
    if opts.requirements:
        _write_requirements(opts.requirements, plan, requirements_text, mx)
        outcome.messages.append(opts.requirements)
    if opts.tuning_patch:
        outcome.tuning_patch = doc["tuning_patch"] = write_tuning_patch(before, str(opts.check.serve_args_file),
                                                                        opts.tuning_patch)
    if not opts.apply:
        return outcome

    assert target is not None
    outcome.target_python = target.python
    if plan.resolution and plan.resolution.get("status") == "failed":
        # nothing was changed: the resolver already says it cannot work. The plan is shown for a
        # person, as a dry run spells it (the pins on the command line): the constraints file the
        # apply would have written does not exist
        plan = for_a_person(plan, plan_for(facts, mx, lambda v: run_rules(make_context(facts, mx, opts.check.stage, v)),
                                           ctx0.hardware, replace(popts, constraint_file=None)),
                            str(popts.constraint_file))
        outcome.plan, outcome.doc = plan, dict(plan.to_json(opts.lang), installer_notes=choice.notes)
        show_plan(plan)
        if made_state:  # refused before any change: the state directory made for it goes again (if still empty)
            with contextlib.suppress(OSError):
                os.rmdir(state)
        outcome.unresolvable = True
        outcome.exit_code = 3
        return outcome
    show_plan(plan)
    if plan.runnable:
        if not confirm(len(plan.runnable), target.python):
            raise Declined()
        from doctor.shell.transaction import apply_plan

        outcome.result = apply_plan(plan, target, choice, install_env, verbose=opts.verbose, show_progress=True,
                                    say=say, step_timeout=opts.step_timeout, lang=opts.lang,
                                    npu=ctx0.stage == "runtime")
    outcome.final = run_check(opts.check, env)
    code = outcome.final.verdict.exit_code()
    if opts.smoke:
        outcome.smoke = run_smoke(outcome.final.ctx.stage, target.python, env, opts.lang)
        outcome.smoke_skipped = outcome.final.ctx.stage == "build"
    if outcome.smoke is not None and outcome.smoke.get("exit_code") != 0 and code in (0, 4):
        code = 3
    outcome.exit_code = code
    return outcome


def for_a_person(plan: "Plan", spelled: "Plan", constraint_file: str) -> "Plan":
    """``plan`` with each step that names the apply's constraints file (written only by the
    apply) as ``spelled`` (the same plan built without it) spells that step."""
    import copy

    out = copy.deepcopy(plan)
    by_packages = {(s.kind, s.action, tuple(s.packages)): s for s in spelled.steps}
    for s in out.steps:
        if s.argv and constraint_file in s.argv:
            twin = by_packages.get((s.kind, s.action, tuple(s.packages)))
            assert twin is not None and twin.argv is not None, f"no spelling without the constraints file: {s.argv}"
            s.argv = list(twin.argv)
    return out


def owner_of_directories(facts, root: str, env: Mapping[str, str]) -> Optional[str]:
    """The interpreter that owns the site-packages directories judged without one (--site-packages,
    --root without --python), for the plan's commands to name: pip run by another interpreter
    (``python3`` on PATH) would install into another environment. None when none is found."""
    py = facts.python
    if py is None or py.executable or py.source != "site-packages" or facts.image is not None:
        return None
    from doctor.probes.python_env import owning_interpreter
    from doctor.shell.host.root import Host

    host = Host(root=root, env=dict(env))

    def runs(path: str) -> bool:
        real = str(host.path(path))
        return os.path.isfile(real) and os.access(real, os.X_OK)

    return owning_interpreter(py.sys_path, runs)


def _directories_judged(facts) -> Sequence[str]:
    """The site-packages directories judged without an interpreter (--site-packages, or a snapshot
    taken that way); empty for an interpreter or an image."""
    py = facts.python
    if facts.image is None and py is not None and py.source == "site-packages" and not py.executable:
        return py.sys_path
    return ()


def without_commands(plan: "Plan", dirs: Sequence[str]) -> "Plan":
    """The plan for site-packages directories no interpreter was found to own: its steps say what
    changes, with no command. pip run by any interpreter the doctor could name (``python3`` on
    PATH) would change another environment, so the user has to name the owner with --python."""
    from doctor.i18n import join

    for step in plan.steps:
        if step.runs:
            step.argv = None
    plan.notes.append(T("plan.note.no_owner", dirs=join(list(dirs))))
    return plan


# the options of `snapshot` that read the same target as this fix (its own option set: no --stage, --target, --matrix)
SNAPSHOT_READS = ("--root", "--python", "--site-packages", "--npu-smi", "--npu-smi-timeout", "--serve-args",
                  "--serve-args-file", "--model")


def bundle_route(opts: FixOptions, facts: "Facts", mx: "Matrix", stage: str) -> Optional["Route"]:
    """The options the bundle way's commands carry when the resolver cannot reach an index
    (doctor.plan.indexes.remedies): the snapshot reads the same target, the bundle is planned the
    same way, the --apply repairs the same target: the root and the interpreter judged and every
    other option that shaped the verdict (doctor.rules.commands.target_args, as check's printed
    commands carry them) and the plan (--target, --prefer, --with-mooncake, a bundle's platform).
    None for an image (repaired by a Dockerfile built on it, never by a bundle applied in place)."""
    from doctor.plan.indexes import Route
    from doctor.rules.commands import target_args
    from doctor.rules.engine import make_context
    from doctor.usecases.check import follow_up_args

    if facts.image is not None:
        return None
    ctx = make_context(facts, mx, stage)
    version = parse_target(opts.target)
    ctx.follow_up = follow_up_args(opts.check, version)
    args = target_args(ctx)
    pairs = list(zip(args[::2], args[1::2]))
    target = ("--target", f"vllm-ascend=={version}") if version else ()
    plan: Tuple[str, ...] = (("--prefer", opts.prefer) if opts.prefer else ()) + (
        ("--with-mooncake",) if opts.with_mooncake else ())
    make: Tuple[str, ...] = (("--stage", opts.check.stage) if opts.check.stage != "auto" else ()) + target + tuple(
        a for m in opts.check.matrix for a in ("--matrix", os.path.abspath(m))) + plan
    for tag in opts.platform:
        make += ("--bundle-platform", tag)
    if opts.python_version:
        make += ("--python-version", opts.python_version)
    for abi in opts.abi:
        make += ("--abi", abi)
    snapshot = tuple(a for o, v in pairs if o in SNAPSHOT_READS for a in (o, v))
    apply: Optional[Tuple[str, ...]] = None
    if any(o == "--python" for o, _ in pairs):  # --apply needs the live interpreter, never --site-packages
        apply = tuple(a for o, v in pairs if o != "--site-packages" for a in (o, v))
        apply += target if "--target" not in apply else ()
        apply += plan
    return Route(snapshot=snapshot, make=make, apply=apply)


def _prove(plan: "Plan", facts: "Facts", choice: "Choice", env: Dict[str, str], opts: FixOptions, no_cann: bool,
           live: bool, bundle_dir: Optional["Bundle"], resolving: Resolving,
           platform: Optional["TargetPlatform"] = None,
           judge: Optional[Callable[["Plan"], "Plan"]] = None, route: Optional["Route"] = None) -> "Plan":
    """The plan as the resolver proves it (exact pins, the files and their hashes), or marked
    "not resolved" and why: --offline, a bare machine (vendor steps only), no interpreter to
    resolve for (--from, --site-packages)."""
    from doctor.plan.resolve import not_resolved

    if opts.offline or no_cann or not (facts.python and facts.python.found and live):
        return not_resolved(plan, "offline" if opts.offline else "no-cann" if no_cann else "no-interpreter")
    from doctor.usecases.prove import prove

    with resolving(choice.resolver.kind) as busy:
        plan = prove(plan, facts, choice, env, platform=platform,
                     find_links=[str(bundle_dir.wheels)] if bundle_dir else [],
                     no_index=bundle_dir is not None, timeout=opts.resolve_timeout, progress=_progress_of(busy),
                     route=route)
    if judge is not None and (plan.resolution or {}).get("status") == "resolved":
        plan = judge(plan)
    if bundle_dir is not None:
        if plan.resolution:
            plan.resolution["source"] = "bundle"
        bundle_dir.check_plan(plan)
    return plan


def check_after_plan(plan: "Plan", facts: "Facts", mx: "Matrix", stage: str, before: "Verdict", lang: str) -> "Plan":
    """A plan is never one our own check would fail: check's rules run over the package set the
    resolved plan leaves (installed, less what it removes, plus every file it installs, with the
    requirements read from them); a failure of what the plan repairs, or anything worse than now,
    refutes the plan (it is shown with why, and --apply refuses it)."""
    from doctor.plan.builder import fixed_by_plan
    from doctor.plan.resolve import refuted, unexpected_after
    from doctor.rules.engine import make_context, run_rules
    from doctor.usecases.guard import would_be

    removes = [n for s in plan.steps for n in s.removes]
    after = would_be(facts, plan.resolved_files, removes)
    verdict = run_rules(make_context(after, mx, stage, plan.target))
    bad = unexpected_after(before, verdict, list(fixed_by_plan()))
    if plan.resolution is not None:
        plan.resolution["check_after"] = {"exit_code": verdict.exit_code(), "unexpected": [f.id for f in bad]}
    return refuted(plan, bad, lang) if bad else plan


def _write_requirements(path: str, plan: "Plan", render: Callable, mx: "Matrix") -> None:
    """The pins as a requirements file with the index options it needs: ``pip install
    --no-deps -r FILE`` must find every pin (the row's mirrors, the CPU torch index)."""
    from doctor.matrix.query import release_row
    from doctor.plan.indexes import TORCH_CPU_INDEX

    row = release_row(mx, plan.target) if plan.target else None
    wanted = [u for s in plan.steps for u in s.extra_index_urls] + (list(row.extra_index_urls) if row else [])
    if any("+cpu" in v for v in plan.pins.values()):
        wanted.append(TORCH_CPU_INDEX)
    indexes: List[str] = []
    for u in wanted:
        if u not in indexes:
            indexes.append(u)
    from doctor.shell.host.files import write_atomic

    try:
        write_atomic(path, render(plan, indexes))
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--requirements", value=path, error=e.strerror or str(e)))


def make_bundle(opts: FixOptions, env: Dict[str, str], resolving: Resolving = _quiet) -> BundleOutcome:
    """``fix --bundle DIR`` (dry run): plan for the node (its snapshot with --from, or this host
    retargeted with --bundle-platform/--python-version/--abi), prove the plan with pip resolving for
    the node's platform, and download exactly the resolved files, hash-checked, into DIR."""
    from doctor.plan.builder import PlanOptions, plan_for
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.install.bundle import platform_for, retarget_facts, write_bundle
    from doctor.shell.install.installer import Choice, Downloader, Installer
    from doctor.usecases.prove import prove

    validate(opts)
    assert opts.bundle and not opts.apply
    if opts.installer == "uv":
        raise UsageError(T("fix.error.bundle_uv"))
    mx = load_matrix_or_exit(opts.check.matrix)
    facts = gather(opts.check, env)
    tp = platform_for(facts, opts.platform, opts.python_version, opts.abi)
    facts = retarget_facts(facts, tp)
    node_python = (facts.python.executable if facts.python and facts.python.executable else None) or "python3"
    pip = (sys.executable, "-m", "pip")  # resolves and downloads for the node with --platform/--python-version
    choice = Choice(Installer("pip", node_python, (node_python, "-m", "pip")), Downloader(pip))
    ctx0 = make_context(facts, mx, opts.check.stage)
    popts = PlanOptions(installer=choice.installer, target=parse_target(opts.target), prefer=opts.prefer,
                        doctor_python="ascend-doctor")
    plan = plan_for(facts, mx, lambda version: run_rules(make_context(facts, mx, opts.check.stage, version)),
                    ctx0.hardware, popts)
    with resolving(choice.installer.kind) as busy:
        plan = prove(plan, facts, choice, env, platform=tp, bundle=True, timeout=opts.resolve_timeout,
                     progress=_progress_of(busy), route=bundle_route(opts, facts, mx, opts.check.stage))
    outcome = BundleOutcome(plan=plan, platform=tp, directory=opts.bundle)
    if (plan.resolution or {}).get("status") == "failed":
        return outcome
    if not plan.resolved_files:
        from doctor.i18n import tr

        raise UsageError(tr("bundle.nothing", opts.lang))
    from doctor.textsafe import dumps

    # plan.json is created with the other files (O_EXCL|O_NOFOLLOW in the new or empty DIR)
    outcome.manifest = write_bundle(opts.bundle, plan, tp, choice, env, BUNDLE_DOWNLOAD_TIMEOUT,
                                    plan_json=dumps(plan.to_json("en"), indent=2))
    return outcome


def run_smoke(stage: str, python: str, env: Dict[str, str], lang: str = "en") -> Optional[Dict]:
    """The smoke stages configured in the smoke configuration file (docs/smoke.md) on the fixed
    environment; each stage runs the target interpreter as a child of its own (shell.runtime.proc: it
    dies with the doctor). Not at the build stage: there is no NPU to run on."""
    from doctor.usecases.smoke import run_configured_stages

    if stage == "build":
        return None
    try:
        report = run_configured_stages(python, env=env)
    except UsageError as e:  # a broken configuration file: the smoke test could not be run
        return {"exit_code": 2, "why": str(e)}
    return {"exit_code": report.exit_code(), "why": report.verdict.root_cause,
            "stages": [s.to_json(lang) for s in report.stages]}


def write_tuning_patch(verdict: "Verdict", script: str, out: str) -> Dict:
    """The tuning findings' edits as a unified diff of the launch script (nothing else is
    touched); the result says where it went and the command that applies it."""
    import shlex

    from doctor.plan.tuning_patch import PatchError, apply_edits, edits_of, unified_diff
    from doctor.shell.host.files import open_regular, write_atomic

    edits = edits_of(verdict.findings)
    try:
        old = open_regular(script).decode("utf-8")
        new = apply_edits(old, [e for e, _ in edits])
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(T("option.error.detail", option="--serve-args-file", value=script,
                           error=getattr(e, "strerror", None) or str(e)))
    except PatchError as e:
        raise UsageError(T("fix.error.patch_failed", script=script, error=str(e)))
    result: Dict = {"path": None, "script": script, "edits": [dict(e.to_json(), finding=fid) for e, fid in edits]}
    if new == old:
        return result
    try:
        write_atomic(out, unified_diff(old, new, os.path.basename(script)))
    except OSError as e:
        raise UsageError(T("option.error.detail", option="--tuning-patch", value=out, error=e.strerror or str(e)))
    result["path"] = out
    result["apply"] = shlex.join(["patch", "-p1", "-d", os.path.dirname(os.path.abspath(script)), "-i",
                                  os.path.abspath(out)])
    return result


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
    from doctor.shell.transaction import check_something_to_roll_back, rollback_last, target_from_facts

    facts = gather(check, env)
    target: "Target" = target_from_facts(facts)
    check_something_to_roll_back(target, env)  # before --yes is asked for: nothing to confirm
    if not confirm(target.python):
        raise Declined()
    result = rollback_last(target, env, force=force, say=say)
    return RollbackOutcome(result=result, final=run_check(check, env), target_python=target.python)
