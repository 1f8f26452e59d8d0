"""``fix --apply``: the only place that changes an environment. One transaction per run:

1. lock the environment (a second fix or rollback refuses); refuse while an earlier transaction
   is unfinished (its doctor was killed, or its rollback failed: ``rollback`` finishes it),
2. journal every distribution (version, location) and the plan before anything changes,
3. download every wheel (``pip download --no-deps`` with the user's pip configuration) and
   check each file, so a network failure or a bad file changes nothing,
4. back up the files of every distribution that will be removed or replaced (from its RECORD:
   a locally built ``vllm 0.11.2+empty`` cannot be downloaded again) and list what is on disk,
5. run the steps in order, installing from the downloaded files only; each step's process
   group and start time are journalled, so that after a killed doctor nothing touches the files
   while its pip still runs (shell/txn.py ``wait_for_leftovers``),
6. verify before committing: the installed files against their RECORD, and an import of what
   was installed in the target interpreter (shell/verify.py: at the build stage what needs the
   NPU driver is only located),
7. on any failure (a step's exit code, a timeout, pip killed, a failed import, Ctrl-C, SIGTERM,
   SIGHUP) delete what the transaction added and put the backed-up files back, then verify the
   distributions match.

``rollback_last`` undoes the last committed transaction later from the same backups, and
finishes an unfinished one (including a rollback that failed, once its cause is fixed).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
import zipfile
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from doctor.errors import DoctorError, UsageError
from doctor.facts import Distribution, Facts
from doctor.i18n import tr
from doctor.parse import redact
from doctor.plan.builder import Plan, Step, constraints_text, exact_pins, unmet_requirements
from doctor.shell import proc, verify
from doctor.shell.downloads import file_name_version, match_downloads, read_metadata
from doctor.shell.index import IndexConfig, IndexFetchError, pip_index_config
from doctor.shell.installer import Choice, choose
from doctor.shell.txn import (
    BEFORE_CHANGES,
    MIN_FREE,
    Journal,
    Lock,
    Snapshot,
    backup_files,
    dist_files,
    dist_record,
    free_space,
    last_transaction,
    record_process,
    remove_files,
    restore_files,
    scan_dists,
    state_dir,
    undo_to_snapshot,
    unfinished,
    wait_for_leftovers,
)

if TYPE_CHECKING:  # rich is imported when a bar is shown
    from rich.progress import Progress as RichProgress, TaskID

STATE_MARK = "ascend-doctor"  # in every state directory path: clones there are of our own making
DOWNLOAD_TIMEOUT = 3600.0
STEP_TIMEOUT = 3600.0
FINAL_PRUNABLE = ("committed", "rolled-back", "rolled-back-later", "aborted")


class StepFailed(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# the target environment


@dataclass
class Target:
    python: str
    prefix: str
    base_prefix: str
    roots: List[str]  # site directories whose distributions the transaction tracks
    markers: Dict[str, str] = field(default_factory=dict)

    @property
    def is_venv(self) -> bool:
        return os.path.realpath(self.prefix) != os.path.realpath(self.base_prefix)

    @property
    def scripts_dir(self) -> Optional[str]:
        # A venv's bin/ holds only its own files: track it fully. A system prefix's bin/ (/usr/bin)
        # is left to the RECORD-based backups.
        d = os.path.join(self.prefix, "bin")
        return d if self.is_venv and os.path.isdir(d) else None


def target_from_facts(facts: Facts) -> Target:
    py = facts.python
    if py is None or not py.found or not py.executable or not py.prefix:
        raise UsageError("fix --apply needs a target interpreter (--python); --site-packages and --from only plan")
    prefix = os.path.normpath(py.prefix)
    paths = facts.packages.paths if facts.packages else []
    roots = [p for p in paths if (p + os.sep).startswith(prefix + os.sep) and ("-packages" in p)]
    if not roots:
        raise UsageError(f"no site-packages directory of {py.executable} found under {prefix}")
    return Target(python=py.executable, prefix=prefix, base_prefix=py.base_prefix or prefix, roots=roots,
                  markers=dict(py.markers))


def detect_installer(kind: str, facts: Facts, env: Mapping[str, str], doctor_python: str = sys.executable) -> Choice:
    """Which pip/uv to run (I/O at the edge: PATH lookup and the user's pip configuration)."""
    python = (facts.python.executable if facts.python and facts.python.executable else None) or "python3"
    has_pip = bool(facts.packages and "pip" in facts.packages.dists)
    if not has_pip:
        _doctor_pip_can_target(python)
    uv = shutil.which("uv", path=env.get("PATH")) if kind == "uv" else None
    cfg: Optional[IndexConfig] = None
    if kind == "uv":
        try:
            cfg = pip_index_config(env, prefix=facts.python.prefix if facts.python else None)
        except IndexFetchError as e:
            raise UsageError(str(e))
    try:
        return choose(kind, python, doctor_python, has_pip, uv, cfg)
    except LookupError as e:
        raise UsageError(str(e))


def _doctor_pip_can_target(python: str) -> None:
    """pip's --python option (run pip for another interpreter) exists from pip 22.3 on."""
    from importlib import metadata

    try:
        version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        raise UsageError(f"{python} has no pip and neither has the doctor's interpreter; "
                         f"add one: {python} -m ensurepip")
    if Version(version) < Version("22.3"):
        raise UsageError(f"{python} has no pip and the doctor's pip {version} is older than 22.3 (no --python); "
                         f"add one: {python} -m ensurepip")


# ---------------------------------------------------------------------------------------------
# running commands


class Runner:
    """Runs one command through shell.proc (own process group, PDEATHSIG, the guard: it dies
    with the doctor) with a hard timeout; its output goes to the log (and to ``echo`` with -v)."""

    def __init__(self, log_path: Path, echo: Optional[Callable[[str], None]] = None):
        self.log_path = log_path
        self.echo = echo
        self.tail: Deque[str] = deque(maxlen=40)
        self.log = open(log_path, "a", encoding="utf-8")

    def close(self) -> None:
        self.log.close()

    def note(self, text: str) -> None:
        try:
            self.log.write(text.rstrip("\n") + "\n")
            self.log.flush()
        except OSError:  # a full disk must not stop a rollback
            pass

    def _line(self, line: str) -> None:
        self.note(line)
        self.tail.append(line.rstrip())
        if self.echo:
            self.echo(line.rstrip())

    def run(self, argv: Sequence[str], env: Mapping[str, str], timeout: float,
            on_start: Optional[Callable[[int], None]] = None) -> None:
        self.tail.clear()
        self.note(f"$ {shlex.join(argv)}")
        done = proc.stream(list(argv), timeout, env=env, on_line=self._line,
                           on_start=(lambda p: on_start(p.pid)) if on_start else None)
        if done.error is not None:
            raise StepFailed(f"cannot run {argv[0]}: {done.error}")
        if done.timed_out:
            self.note(f"# timed out after {timeout:g}s: killed")
            raise StepFailed(f"timed out after {timeout:g}s")
        rc = done.returncode
        self.note(f"# exit {rc}")
        if rc != 0:
            reason = f"killed by signal {-rc}" if rc is not None and rc < 0 else f"exit code {rc}"
            raise StepFailed(f"{reason}: {self.last_error()}")

    def last_error(self) -> str:
        for line in reversed(self.tail):
            if line.startswith("ERROR:") or "Error" in line:
                return line.strip()[:300]
        return self.tail[-1].strip()[:300] if self.tail else "no output"


_shielded = proc.shielded


INTERRUPTS = (KeyboardInterrupt, proc.Terminated)


# ---------------------------------------------------------------------------------------------
# the transaction


@dataclass
class ApplyResult:
    txn_id: str
    journal: Path
    log: Path
    state: Path
    executed: List[Dict]
    changed: Dict[str, Tuple[Optional[str], Optional[str]]]  # name -> (before, after)
    verification: verify.Verification = field(default_factory=verify.Verification)


class Progress:
    """Per-step progress on stderr: rich bars on a terminal, one plain line per step in logs."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar: Optional[RichProgress] = None
        self.tasks: Dict[int, TaskID] = {}
        self.texts: Dict[int, str] = {}
        self.plain = enabled and not sys.stderr.isatty()

    def __enter__(self) -> "Progress":
        if self.enabled and not self.plain:
            from rich.console import Console
            from rich.progress import BarColumn, Progress as RichProgress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self.bar = RichProgress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                                    TimeElapsedColumn(), console=Console(stderr=True, highlight=False),
                                    transient=False)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            try:
                self.bar.__exit__(*exc)
            except OSError:  # the terminal is gone (SIGHUP): the outcome matters, not the bar
                pass

    def add(self, key: int, text: str) -> None:
        self.texts[key] = text
        if self.bar is not None:
            self.tasks[key] = self.bar.add_task(text, total=1, start=False)

    def start(self, key: int) -> None:
        if self.plain:
            n = len([k for k in self.texts if k >= 0])
            print(f"[{'download' if key < 0 else f'{key + 1}/{n}'}] {self.texts.get(key, '')}", file=sys.stderr, flush=True)
        if self.bar is not None and key in self.tasks:
            self.bar.start_task(self.tasks[key])

    def skip(self, key: int, note: str) -> None:
        if self.plain:
            n = len([k for k in self.texts if k >= 0])
            print(f"[{key + 1}/{n}] {self.texts.get(key, '')}: skipped ({note})", file=sys.stderr, flush=True)
        self.done(key)

    def done(self, key: int, text: Optional[str] = None) -> None:
        if self.bar is not None and key in self.tasks:
            self.bar.update(self.tasks[key], completed=1, description=text) if text else \
                self.bar.update(self.tasks[key], completed=1)

    def echo(self, line: str) -> None:
        try:
            if self.bar is not None:
                self.bar.console.print(line, markup=False, highlight=False, style="dim")
            else:
                print(line, file=sys.stderr)
        except OSError:
            pass


def _post_plan_installed(before: Dict[str, Distribution], plan: Plan) -> Dict[str, Distribution]:
    removed = {n for s in plan.steps for n in s.removes}
    out = {n: d for n, d in before.items() if n not in removed}
    for name, value in plan.pins.items():
        if value and value[:1].isdigit():
            out[name] = Distribution(name=name, version=value)
    return out


def rollback_argv(python: str) -> List[str]:
    return ["ascend-doctor", "rollback", "--python", python]


def rollback_command(target: Target) -> str:
    from doctor.program import spelled

    return shlex.join(spelled(rollback_argv(target.python)))


def apply_plan(plan: Plan, target: Target, choice: Choice, env: Mapping[str, str], *, verbose: bool = False,
               show_progress: bool = True, say: Callable[[str], None] = lambda s: None,
               step_timeout: float = STEP_TIMEOUT, download_timeout: float = DOWNLOAD_TIMEOUT,
               lang: str = "en", npu: bool = True, import_timeout: float = verify.IMPORT_TIMEOUT) -> ApplyResult:
    """Carry the plan out as one transaction. ``npu``: the stage has an NPU and its driver (the
    import check then imports torch_npu; without, it is only located)."""
    proc.install_signal_handlers()  # SIGTERM and SIGHUP roll back like Ctrl-C
    state = state_dir(target.prefix, env)
    with Lock(state / "lock", f"fix --apply on {target.python}"):
        _settle_unfinished(state, target, say)
        free = free_space(state)
        if free is not None and free < MIN_FREE:
            raise UsageError(f"only {free // 1024} KB free on the file system of {state}: a transaction needs room for "
                             f"its journal, downloads and backups; free some space (nothing was changed)")
        try:
            journal = Journal.create(state)
        except OSError as e:
            raise DoctorError(f"cannot start a transaction in {state}: {e.strerror or e}; nothing was changed")
        log_path = journal.dir / "pip.log"
        progress = Progress(show_progress)
        try:
            runner = Runner(log_path, echo=progress.echo if verbose else None)
        except OSError as e:
            journal.discard()
            raise DoctorError(f"cannot start a transaction in {state}: {e.strerror or e}; nothing was changed")
        say(f"journal: {journal.path}")
        say(f"log: {log_path}")
        try:
            with progress:
                return _transaction(plan, target, choice, env, journal, runner, progress, state,
                                    step_timeout, download_timeout, lang, npu, import_timeout)
        finally:
            runner.close()


def _settle_unfinished(state: Path, target: Target, say: Callable[[str], None]) -> None:
    """Transactions that died before they changed anything are closed (once their downloads
    have stopped); any other unfinished transaction blocks a new one until `rollback` ends it."""
    for d in unfinished(state):
        journal = Journal.load(d)
        if journal.status in BEFORE_CHANGES:
            wait_for_leftovers(journal, say=say)
            _abort(journal, "the doctor stopped before changing anything")
            continue
        raise UsageError(_blocked(journal, target))


def refuse_if_unfinished(target: Target, env: Mapping[str, str]) -> None:
    """Before planning a fix: an environment an unfinished transaction left half-changed (or
    whose rollback failed) is not planned on; `rollback` must finish it first. Changes nothing."""
    from doctor.shell.txn import STATE_NAME

    for state in (Path(target.prefix) / STATE_NAME, state_dir(target.prefix, env)):
        Lock(state / "lock", "").refuse_if_held()  # a fix or rollback running now: its refusal, not "roll it back"
        for d in unfinished(state) if state.is_dir() else []:
            journal = Journal.load(d)
            if journal.status not in BEFORE_CHANGES:
                raise UsageError(_blocked(journal, target))


def _blocked(journal: Journal, target: Target) -> str:
    if journal.status == "rollback-failed":
        problems = "; ".join((journal.data.get("rollback_problems") or [])[:2]) or "see its journal"
        return (f"transaction {journal.dir.name} could not be rolled back ({problems}); its backups are kept in "
                f"{journal.data.get('backup_dir')}. Fix the cause, then finish it with:\n{rollback_command(target)}")
    return (f"transaction {journal.dir.name} did not finish ({journal.status}); roll it back first:\n"
            f"{rollback_command(target)}")


def _abort(journal: Journal, reason: str) -> None:
    """Close a transaction that changed nothing; when even that cannot be written (a full disk)
    it leaves nothing behind."""
    try:
        journal.update(status="aborted", finished=_stamp(), error=reason, current=None)
    except OSError:
        journal.discard()


def _best_effort(journal: Journal, **values) -> None:
    """Journal updates on the way back: the rollback goes on even if the disk is full."""
    try:
        journal.update(**values)
    except OSError:
        journal.data.update(values)


def _transaction(plan: Plan, target: Target, choice: Choice, env: Mapping[str, str], journal: Journal,
                 runner: Runner, progress: Progress, state: Path, step_timeout: float, download_timeout: float,
                 lang: str, npu: bool, import_timeout: float) -> ApplyResult:
    before = scan_dists(target.roots)
    exact_dir = journal.dir / "wheels" / "exact"
    deps_dir = journal.dir / "wheels" / "deps"
    constraint = journal.dir / "constraints.txt"
    try:
        journal.update(python=target.python, prefix=target.prefix, roots=target.roots, installer=choice.installer.kind,
                       before=[dist_record(d) for d in before.values()], plan=redact.deep(plan.to_json(lang)),
                       log=str(runner.log_path), notes=choice.notes, status="downloading")
        exact_dir.mkdir(parents=True)
        deps_dir.mkdir(parents=True)
        constraint.write_text(constraints_text(plan.pins))
    except OSError as e:  # a full disk at the start: nothing changed, nothing left behind
        journal.discard()
        raise DoctorError(f"cannot start a transaction in {state}: {e.strerror or e}; nothing was changed")
    for n in choice.notes:
        runner.note(f"# {n}")
    steps = [s for s in plan.steps if s.runs]
    progress.add(-1, tr("shell.apply.download", lang))
    for i, s in enumerate(steps):
        progress.add(i, s.why.text(lang)[:70])

    # -- download phase: nothing changes in the environment -------------------------------------
    progress.start(-1)
    try:
        resolved = _download(steps, plan, target, choice, env, runner, exact_dir, deps_dir, constraint, before,
                             download_timeout, journal)
        proc.raise_if_signalled()
    except (StepFailed, DoctorError, OSError) as e:
        if proc.signalled():  # the download the signal handler killed
            _abort(journal, "interrupted during download")
            raise DoctorError("interrupted during the download phase; nothing was changed")
        _abort(journal, str(e))
        raise DoctorError(f"download failed, nothing was changed: {e} (log: {runner.log_path})")
    except INTERRUPTS:
        _abort(journal, "interrupted during download")
        raise DoctorError("interrupted during the download phase; nothing was changed")
    progress.done(-1)

    # -- backups and the list of what is on disk ------------------------------------------------
    backup_root = journal.dir / "backup"
    backups: Dict[str, Dict] = {}
    try:
        touched = _touched(steps, resolved, before)
        for name in sorted(touched):
            d = before[name]
            files = backup_files(dist_files(d), backup_root)
            backups[name] = {"version": d.version, "files": files}
        # files no distribution owns (left over by an earlier install) that a new wheel overwrites
        owned = {f for b in backups.values() for f in b["files"]}
        strays = [f for f in _overwritten(exact_dir, deps_dir, target.roots) if f not in owned]
        if strays:
            backups[":unowned"] = {"version": None, "files": backup_files(strays, backup_root)}
        roots = list(target.roots) + ([target.scripts_dir] if target.scripts_dir else [])
        snapshot = Snapshot.take(roots)
        (journal.dir / "snapshot.json").write_text(json.dumps(snapshot.to_json()))
        proc.raise_if_signalled()
        journal.update(status="installing", backups=backups, backup_dir=str(backup_root), rollback_kind="undo",
                       steps=[{"index": i, "action": s.action, "argv": redact.deep(r["argv"]), "status": "pending"}
                              for i, (s, r) in enumerate(zip(steps, resolved))])
    except (OSError, zipfile.BadZipFile) as e:
        _abort(journal, f"backup: {e}")
        raise DoctorError(f"cannot back up the files to be replaced ({e}); nothing was changed")
    except INTERRUPTS:
        _abort(journal, "interrupted while backing up")
        raise DoctorError("interrupted while backing up; nothing was changed")

    # -- install phase --------------------------------------------------------------------------
    install_env = dict(env)
    install_env["PIP_FIND_LINKS"] = str(deps_dir)  # the downloaded files, not the user's links
    executed: List[Dict] = []
    current = -1
    verification = verify.Verification()
    try:
        for i, (s, r) in enumerate(zip(steps, resolved)):
            current = i
            entry = journal.data["steps"][i]
            if r["argv"] is None:
                entry.update(status="skipped", note=r.get("note"))
                journal.save()
                progress.skip(i, r.get("note") or "")
                continue
            progress.start(i)
            entry.update(status="running", started=_stamp())
            journal.save()
            run_env = dict(install_env, **s.env)

            def started(pid: int, entry=entry) -> None:
                entry["pid"] = pid
                journal.update(current=dict(record_process(pid), step=entry["index"]))

            runner.run(r["argv"], run_env, step_timeout, on_start=started)
            proc.raise_if_signalled()  # a stop whose exception was lost while this step started
            entry.update(status="done", finished=_stamp())
            journal.update(current=None)
            executed.append({"index": i, "argv": r["argv"]})
            progress.done(i)
        current = len(steps)
        # -- verify before committing: RECORD files and imports in the target interpreter -------
        after = scan_dists(target.roots)
        installed = [after[n] for n in sorted(after)
                     if n not in before or before[n].version != after[n].version or n in touched]
        stage = "runtime" if npu else "build stage: what needs the NPU driver is only located"
        runner.note(f"# import check ({stage})")
        verification = verify.verify(target.python, installed, env, npu, import_timeout)
        for c in verification.checks:
            runner.note(f"#   {c.how} {c.module}: {'ok' if c.ok else c.detail}")
        if verification.failed:
            raise StepFailed(f"the installed packages do not work: {'; '.join(verification.failed[:3])}")
        proc.raise_if_signalled()  # never commit after a stop
    except (StepFailed, KeyboardInterrupt, proc.Terminated, Exception) as e:
        # a step killed by the signal handler fails as a step; the stop is the reason
        reason = "interrupted" if isinstance(e, INTERRUPTS) or proc.signalled() else str(e) or type(e).__name__
        if 0 <= current < len(journal.data["steps"]):
            journal.data["steps"][current].update(status="failed", error=reason)
        _best_effort(journal, status="rolling-back", error=reason, current=None)
        with _shielded():
            problems = _undo(snapshot, backups, backup_root, target, before)
        if problems:
            _best_effort(journal, status="rollback-failed", finished=_stamp(), rollback_problems=problems)
            raise DoctorError(f"{_failed_what(current, steps)} failed ({reason}) and the rollback is incomplete: "
                              f"{'; '.join(problems[:3])}; backups kept in {backup_root} "
                              f"(log: {runner.log_path}). Fix the cause, then finish the rollback with:\n"
                              f"{rollback_command(target)}")
        _best_effort(journal, status="rolled-back", finished=_stamp())
        shutil.rmtree(journal.dir / "wheels", ignore_errors=True)
        raise DoctorError(f"{_failed_what(current, steps)} failed ({reason}); rolled back, the environment "
                          f"is as it was (log: {runner.log_path})")

    # -- commit ---------------------------------------------------------------------------------
    journal.update(status="committed", finished=_stamp(), after=[dist_record(d) for d in after.values()], current=None,
                   verification=verification.to_json())
    (state / "last").write_text(journal.data["id"] + "\n")
    shutil.copyfile(constraint, state / "constraints.txt")
    shutil.rmtree(journal.dir / "wheels", ignore_errors=True)
    _prune_old_backups(state, keep=journal.dir.name)
    changed = {}
    for name in sorted(set(before) | set(after)):
        a = before[name].version if name in before else None
        b = after[name].version if name in after else None
        if a != b or (name in touched and name in after and before[name].location != after[name].location):
            changed[name] = (a, b)
    return ApplyResult(journal.data["id"], journal.path, runner.log_path, state, executed, changed, verification)


def _failed_what(current: int, steps: List[Step]) -> str:
    if current >= len(steps):
        return "the import check"
    if 0 <= current < len(steps):
        return f"step {current + 1}/{len(steps)} ({steps[current].why.text('en')})"
    return "a step"


def _stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _download(steps: List[Step], plan: Plan, target: Target, choice: Choice, env: Mapping[str, str],
              runner: Runner, exact_dir: Path, deps_dir: Path, constraint: Path,
              before: Dict[str, Distribution], timeout: float, journal: Journal) -> List[Dict]:
    """Fetch every file the install phase needs, and turn each step into the command that
    installs from those files."""
    def started(pid: int) -> None:  # a killed doctor's download must end before the next fix
        journal.update(current=record_process(pid))

    if plan.resolved_files:  # proven by the resolver: exactly its files, hash-checked
        from doctor.shell.steps.pip import download_resolved

        return download_resolved(steps, plan, choice, env, runner, exact_dir, timeout, on_start=started)
    dl = choice.downloader

    inst = choice.installer
    exact = [p for s in steps if s.action == "install" and s.no_deps for p in s.packages]
    exact_index = _union(s.extra_index_urls for s in steps if s.action == "install" and s.no_deps)
    files: Dict[str, Path] = {}
    if exact:
        runner.run(dl.download(exact, str(exact_dir), no_deps=True, extra_index_urls=exact_index), env, timeout,
                   on_start=started)
        files = match_downloads(exact, exact_dir)
    sources: Dict[str, str] = {}  # "vllm" -> the clone a build step installs from
    for s in steps:
        if s.kind == "fetch":
            dest = _argv(s)[-1]
            if os.path.isdir(dest) and STATE_MARK in dest:
                shutil.rmtree(dest)  # our own clone from an earlier run
            runner.run(_argv(s), dict(env, **s.env), timeout, on_start=started)
            sources["vllm"] = dest
    # requirements of vllm / vllm-ascend that --no-deps leaves out, read from the wheels
    post = _post_plan_installed(before, plan)
    reqs: List[str] = []
    for s in steps:
        for owner_spec in s.requirements_of:
            owner = canonicalize_name(Requirement(owner_spec).name)
            path = files.get(owner_spec)
            if path is not None:
                requires = read_metadata(path).requires_dist
            elif owner in sources:
                # VLLM_TARGET_DEVICE=empty builds install requirements/common.txt
                requires = requirements_file(Path(sources[owner]) / "requirements" / "common.txt")
            else:
                continue
            for r in unmet_requirements(owner, requires, exact_pins(plan.pins), post, target.markers,
                                        plan.not_on_ascend):
                if r not in reqs:
                    reqs.append(r)
    deps = [p for s in steps if s.action == "install" and not s.no_deps for p in s.packages] + reqs
    deps_index = _union(s.extra_index_urls for s in steps if not s.no_deps)
    if deps:
        runner.run(dl.download(deps, str(deps_dir), no_deps=False, extra_index_urls=deps_index,
                               constraint=str(constraint)), env, timeout, on_start=started)
        for p in sorted(deps_dir.iterdir()):
            read_metadata(p)  # every file readable before anything changes
    resolved: List[Dict] = []
    for s in steps:
        if s.action == "remove":
            resolved.append({"argv": list(_argv(s))})
        elif s.action == "install" and s.no_deps:
            resolved.append({"argv": inst.install_files([str(files[p]) for p in s.packages])})
        elif s.action == "install":
            resolved.append({"argv": inst.install_from_dir(s.packages, str(deps_dir), str(constraint))})
        elif s.action == "requirements":
            if reqs:
                resolved.append({"argv": inst.install_from_dir(reqs, str(deps_dir), str(constraint)), "packages": reqs})
            else:
                resolved.append({"argv": None, "note": "all requirements already satisfied"})
        elif s.kind == "fetch":
            resolved.append({"argv": None, "note": "done in the download phase"})
        else:
            resolved.append({"argv": list(_argv(s))})
    return resolved


def _argv(step: Step) -> List[str]:
    """The command of a step the doctor runs (manual and vendor steps have none: never run here)."""
    if step.argv is None:
        raise DoctorError(f"the plan's {step.action} step has no command")
    return step.argv


def _overwritten(exact_dir: Path, deps_dir: Path, roots: Sequence[str]) -> List[str]:
    """Existing files under the site directories that the downloaded wheels would write."""
    out = []
    for d in (exact_dir, deps_dir):
        for w in sorted(d.glob("*.whl")):
            with zipfile.ZipFile(w) as z:
                members = [m for m in z.namelist() if not m.endswith("/") and ".data/" not in m]
            for root in roots:
                for m in members:
                    p = os.path.join(root, m)
                    if os.path.isfile(p):
                        out.append(os.path.normpath(p))
    return sorted(set(out))


def requirements_file(path: Path, depth: int = 0) -> List[str]:
    """Requirement lines of a requirements file (comments, options and URLs left out; -r followed)."""
    out: List[str] = []
    if not path.is_file() or depth > 5:
        return out
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            out += requirements_file(path.parent / line.split(None, 1)[1], depth + 1)
            continue
        if line.startswith("-"):
            continue
        try:
            Requirement(line)
        except InvalidRequirement:
            continue
        out.append(line)
    return out


def _union(groups) -> List[str]:
    out: List[str] = []
    for g in groups:
        for u in g:
            if u not in out:
                out.append(u)
    return out


def _touched(steps: List[Step], resolved: List[Dict], before: Dict[str, Distribution]) -> List[str]:
    """Installed distributions the install phase may remove or replace: the removals and every
    name among the downloaded files (pip installs nothing else), plus what a build replaces."""
    from doctor.plan.steps import kind_of

    names = set()
    for s, r in zip(steps, resolved):
        names.update(kind_of(s).touches(s, before))
        for spec in list(r.get("packages") or []):
            try:
                names.add(canonicalize_name(Requirement(spec).name))
            except InvalidRequirement:
                pass
        for a in r.get("argv") or []:
            if a.endswith((".whl", ".tar.gz")):
                nv = file_name_version(os.path.basename(a))
                if nv:
                    names.add(nv[0])
        if r.get("argv") and "--find-links" in r["argv"]:
            d = Path(r["argv"][r["argv"].index("--find-links") + 1])
            for p in d.iterdir():
                nv = file_name_version(p.name)
                if nv:
                    names.add(nv[0])
    return sorted(n for n in names if n in before)


def _undo(snapshot: Snapshot, backups: Dict[str, Dict], backup_root: Path, target: Target,
          before: Dict[str, Distribution]) -> List[str]:
    files = [f for b in backups.values() for f in b["files"]]
    problems = undo_to_snapshot(snapshot, files, backup_root)
    problems += _diff(before, scan_dists(target.roots))
    return problems


def _diff(want: Dict[str, Distribution], have: Dict[str, Distribution]) -> List[str]:
    out = []
    for name in sorted(set(want) | set(have)):
        a = f"{want[name].version}" if name in want else None
        b = f"{have[name].version}" if name in have else None
        if a != b:
            out.append(f"{name}: {b or 'missing'} instead of {a or 'absent'}")
    return out


def _prune_old_backups(state: Path, keep: str) -> None:
    """Only the last committed transaction can be rolled back; the backups and downloads of
    older transactions that are over go. Never those of a transaction that is unfinished or
    whose rollback failed: they are what `rollback` restores from."""
    base = state / "transactions"
    for d in base.iterdir():
        if d.name == keep or not d.is_dir():
            continue
        try:
            status = Journal.load(d).status
        except UsageError:
            continue  # unreadable journal: keep everything, a person should look
        if status in FINAL_PRUNABLE:
            for sub in ("backup", "wheels"):
                shutil.rmtree(d / sub, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# rollback later


@dataclass
class RollbackResult:
    txn_id: str
    restored: Dict[str, Tuple[Optional[str], Optional[str]]]  # name -> (now, restored)
    note: Optional[str] = None  # "nothing had changed" for a transaction stopped before installing


def rollback_last(target: Target, env: Mapping[str, str], *, force: bool = False,
                  say: Callable[[str], None] = lambda s: None) -> RollbackResult:
    """Finish an unfinished transaction (a killed doctor, a failed rollback), else undo the last
    committed one."""
    proc.install_signal_handlers()
    state = state_dir(target.prefix, env)
    with Lock(state / "lock", f"rollback on {target.python}"):
        result: Optional[RollbackResult] = None
        for d in unfinished(state):
            result = _finish(Journal.load(d), target, state, say)
            if result.note is None:
                return result  # one that changed the environment: the user sees it, then runs again
        if result is not None:
            return result
        last = last_transaction(state)
        if last is None:
            raise UsageError(f"nothing to roll back: no committed ascend-doctor transaction in {state}")
        journal = Journal.load(last)
        if journal.status != "committed":
            raise UsageError(f"transaction {last.name} is {journal.status}; nothing to roll back")
        return _rollback_committed(journal, target, state, force)


def _finish(journal: Journal, target: Target, state: Path, say: Callable[[str], None]) -> RollbackResult:
    wait_for_leftovers(journal, say=say)  # a killed doctor's pip must be gone first
    status, kind = journal.status, journal.data.get("rollback_kind")
    if status in BEFORE_CHANGES:
        _abort(journal, "the doctor stopped before changing anything")
        return RollbackResult(journal.data["id"], {}, note="nothing had changed")
    if status in ("rolling-back-later",) or (status == "rollback-failed" and kind == "later"):
        return _rollback_committed(journal, target, state, force=True)
    return _undo_unfinished(journal, target)


def _undo_unfinished(journal: Journal, target: Target) -> RollbackResult:
    """A doctor killed in the middle of a transaction, or a rollback that failed: put the
    environment back as the journal's snapshot and backups say it was."""
    snap_path = journal.dir / "snapshot.json"
    now = scan_dists(target.roots)
    backup_root = Path(journal.data.get("backup_dir") or journal.dir / "backup")
    if not snap_path.is_file():
        raise DoctorError(f"transaction {journal.data['id']} has no list of what was on disk ({snap_path}); "
                          "it cannot be rolled back")
    if journal.data.get("backups") and not backup_root.is_dir():
        raise DoctorError(f"the backups of transaction {journal.data['id']} are gone ({backup_root})")
    snapshot = Snapshot.from_json(json.loads(snap_path.read_text()))
    _best_effort(journal, status="rolling-back", rollback_kind="undo")
    files = [f for b in journal.data.get("backups", {}).values() for f in b["files"]]
    with _shielded():
        failed = undo_to_snapshot(snapshot, files, backup_root)
    before = {r["name"]: r["version"] for r in journal.data["before"]}
    final = scan_dists(target.roots)
    problems = list(failed) + [
        f"{n}: {final[n].version if n in final else 'missing'} instead of {before.get(n) or 'absent'}"
        for n in sorted(set(before) | set(final)) if before.get(n) != (final[n].version if n in final else None)]
    if problems:
        _best_effort(journal, status="rollback-failed", rollback_problems=problems)
        raise DoctorError(f"rollback of {journal.data['id']} is incomplete: {'; '.join(problems[:3])}; backups kept in "
                          f"{backup_root}. Fix the cause, then run again:\n{rollback_command(target)}")
    _best_effort(journal, status="rolled-back", finished=_stamp(), rollback_problems=[])
    return RollbackResult(journal.data["id"], _changes(now, final))


def _rollback_committed(journal: Journal, target: Target, state: Path, force: bool) -> RollbackResult:
    """Undo a committed transaction: remove what it installed, put the old files back."""
    d = journal.dir
    backup_root = Path(journal.data["backup_dir"])
    if not backup_root.is_dir() and journal.data.get("backups"):
        raise DoctorError(f"the backups of transaction {d.name} are gone ({backup_root})")
    now = scan_dists(target.roots)
    after = {r["name"]: r for r in journal.data["after"]}
    before = {r["name"]: r for r in journal.data["before"]}
    drift = [n for n in sorted(set(now) | set(after))
             if (now[n].version if n in now else None) != (after[n]["version"] if n in after else None)]
    if drift and not force:
        raise UsageError(f"the environment changed after transaction {d.name} ({', '.join(drift[:5])}); "
                         "rollback --force restores the old distributions anyway")
    journal.update(status="rolling-back-later", rollback_kind="later")
    with _shielded():
        # remove what the transaction installed, then put the old files back
        stuck: List[str] = []
        for name, dist in now.items():
            b = before.get(name)
            if b is None or b["version"] != dist.version or name in journal.data.get("backups", {}):
                stuck += remove_files(dist_files(dist))
        files = [f for b in journal.data.get("backups", {}).values() for f in b["files"]]
        failed = restore_files(files, backup_root)
    final = scan_dists(target.roots)
    restored = set(files)
    problems = [f"cannot delete {f}" for f in stuck if f not in restored][:20] + [f"cannot restore {f}" for f in failed]
    for name in sorted(set(before) | set(after)):
        want = before[name]["version"] if name in before else None
        have = final[name].version if name in final else None
        if want != have:
            problems.append(f"{name}: {have or 'missing'} instead of {want or 'absent'}")
    if problems:
        _best_effort(journal, status="rollback-failed", rollback_problems=problems)
        raise DoctorError(f"rollback of {d.name} is incomplete: {'; '.join(problems[:3])}; backups kept in "
                          f"{backup_root}. Fix the cause, then run again:\n{rollback_command(target)}")
    journal.update(status="rolled-back-later", rolled_back=_stamp(), rollback_problems=[])
    if last_transaction(state) == d:
        (state / "last").unlink()
    return RollbackResult(d.name, _changes(now, final))


def _changes(now: Dict[str, Distribution],
             final: Dict[str, Distribution]) -> Dict[str, Tuple[Optional[str], Optional[str]]]:
    return {n: (now[n].version if n in now else None, final[n].version if n in final else None)
            for n in sorted(set(now) | set(final))
            if (now[n].version if n in now else None) != (final[n].version if n in final else None)}
