"""``fix --apply``: the only place that changes an environment. One transaction per run:

1. lock the environment (a second fix or rollback refuses),
2. journal every distribution (version, location) and the plan before anything changes,
3. download every wheel (``pip download --no-deps`` with the user's pip configuration) and
   check each file, so a network failure or a bad file changes nothing,
4. back up the files of every distribution that will be removed or replaced (from its RECORD:
   a locally built ``vllm 0.11.2+empty`` cannot be downloaded again) and list what is on disk,
5. run the steps in order, installing from the downloaded files only,
6. on any failure (a step's exit code, a timeout, pip killed, Ctrl-C/SIGTERM) delete what the
   transaction added and put the backed-up files back, then verify the distributions match.

``rollback_last`` undoes the last committed transaction later from the same backups.
"""
from __future__ import annotations

import collections
import email.parser
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Deque, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from doctor.errors import DoctorError, UsageError
from doctor.facts import Distribution, Facts
from doctor.shell.installer import Choice, choose
from doctor.shell.proc import kill_group
from doctor.shell.index import IndexConfig, IndexFetchError, pip_index_config
from doctor.plan.builder import Plan, Step, constraints_text, exact_pins, unmet_requirements
from doctor.shell.txn import (
    Journal,
    Lock,
    Snapshot,
    backup_files,
    dist_files,
    dist_record,
    last_transaction,
    remove_files,
    restore_files,
    scan_dists,
    state_dir,
    undo_to_snapshot,
    unfinished,
)

STATE_MARK = "ascend-doctor"  # in every state directory path: clones there are of our own making
DOWNLOAD_TIMEOUT = 3600.0
STEP_TIMEOUT = 3600.0


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
    """Runs one command with a hard timeout; its output goes to the log (and to ``echo`` with
    -v). The child gets its own process group so a timeout or Ctrl-C kills all of it."""

    def __init__(self, log_path: Path, echo: Optional[Callable[[str], None]] = None):
        self.log_path = log_path
        self.echo = echo
        self.tail: Deque[str] = collections.deque(maxlen=40)
        self.log = open(log_path, "a", encoding="utf-8")

    def close(self) -> None:
        self.log.close()

    def note(self, text: str) -> None:
        self.log.write(text.rstrip("\n") + "\n")
        self.log.flush()

    def run(self, argv: Sequence[str], env: Mapping[str, str], timeout: float,
            on_start: Optional[Callable[[int], None]] = None) -> None:
        self.tail.clear()
        self.note(f"$ {shlex.join(argv)}")
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, env=dict(env), start_new_session=True)
        except OSError as e:
            raise StepFailed(f"cannot run {argv[0]}: {e.strerror or e}")
        if on_start:
            on_start(proc.pid)

        def pump() -> None:
            for raw in iter(proc.stdout.readline, b""):
                line = raw.decode("utf-8", "replace")
                self.log.write(line)
                self.log.flush()
                self.tail.append(line.rstrip())
                if self.echo:
                    self.echo(line.rstrip())

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            reader.join(2)
            self.note(f"# timed out after {timeout:g}s: killed")
            raise StepFailed(f"timed out after {timeout:g}s")
        except BaseException:
            _kill(proc)
            reader.join(2)
            raise
        reader.join(5)
        self.note(f"# exit {rc}")
        if rc != 0:
            reason = f"killed by signal {-rc}" if rc < 0 else f"exit code {rc}"
            raise StepFailed(f"{reason}: {self.last_error()}")

    def last_error(self) -> str:
        for line in reversed(self.tail):
            if line.startswith("ERROR:") or "Error" in line:
                return line.strip()[:300]
        return self.tail[-1].strip()[:300] if self.tail else "no output"


def _kill(proc: subprocess.Popen) -> None:
    kill_group(proc)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


class _Terminated(BaseException):
    """SIGTERM during a transaction: unwind and roll back like Ctrl-C."""


# ---------------------------------------------------------------------------------------------
# downloaded files


def _file_name_version(filename: str) -> Optional[Tuple[str, str]]:
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return (canonicalize_name(parts[0]), parts[1]) if len(parts) >= 5 else None
    for ext in (".tar.gz", ".zip"):
        if filename.endswith(ext):
            stem = filename[: -len(ext)]
            name, _, version = stem.rpartition("-")
            return (canonicalize_name(name), version) if name else None
    return None


def read_metadata(path: Path) -> Dict[str, object]:
    """Name, Version and Requires-Dist of a wheel or sdist; DoctorError when the file is damaged."""
    try:
        if path.name.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                bad = z.testzip()
                if bad is not None:
                    raise DoctorError(f"downloaded file {path.name} is corrupt ({bad} fails its CRC check)")
                names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
                if not names:
                    raise DoctorError(f"downloaded file {path.name} is not a wheel (no .dist-info/METADATA)")
                raw = z.read(names[0])
        elif path.name.endswith(".tar.gz"):
            with tarfile.open(path, "r:gz") as tar:
                member = next((m for m in tar if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")), None)
                if member is None:
                    raise DoctorError(f"downloaded file {path.name} has no PKG-INFO")
                raw = tar.extractfile(member).read()
        else:
            raise DoctorError(f"downloaded file {path.name}: unknown format")
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as e:
        raise DoctorError(f"downloaded file {path.name} is corrupt: {e}")
    msg = email.parser.HeaderParser().parsestr(raw.decode("utf-8", "replace"))
    return {"name": canonicalize_name(msg.get("Name") or ""), "version": (msg.get("Version") or "").strip(),
            "requires": [r.strip() for r in msg.get_all("Requires-Dist") or []]}


def match_downloads(specs: Sequence[str], directory: Path) -> Dict[str, Path]:
    """The downloaded file for each requirement string, checked (readable, right name/version)."""
    files = {}
    for p in sorted(directory.iterdir()):
        nv = _file_name_version(p.name)
        if nv:
            files.setdefault(nv[0], []).append((nv[1], p))
    out: Dict[str, Path] = {}
    for spec in specs:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        cands = [p for v, p in files.get(name, []) if req.url or _contains(req, v)]
        if not cands:
            raise DoctorError(f"pip download did not produce {spec}")
        meta = read_metadata(cands[0])
        if meta["name"] != name or (not req.url and not _contains(req, str(meta["version"]))):
            raise DoctorError(f"downloaded file {cands[0].name} holds {meta['name']} {meta['version']}, not {spec}")
        out[spec] = cands[0]
    return out


def _contains(req: Requirement, version: str) -> bool:
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


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


class Progress:
    """Per-step progress on stderr: rich bars on a terminal, one plain line per step in logs."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar = None
        self.tasks: Dict[int, int] = {}
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
            self.bar.__exit__(*exc)

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
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False, style="dim")
        else:
            print(line, file=sys.stderr)


def _post_plan_installed(before: Dict[str, Distribution], plan: Plan) -> Dict[str, Distribution]:
    removed = {n for s in plan.steps for n in s.removes}
    out = {n: d for n, d in before.items() if n not in removed}
    for name, value in plan.pins.items():
        if value and value[:1].isdigit():
            out[name] = Distribution(name=name, version=value)
    return out


def apply_plan(plan: Plan, target: Target, choice: Choice, env: Mapping[str, str], *, verbose: bool = False,
               show_progress: bool = True, say: Callable[[str], None] = lambda s: None,
               step_timeout: float = STEP_TIMEOUT, download_timeout: float = DOWNLOAD_TIMEOUT,
               lang: str = "en") -> ApplyResult:
    state = state_dir(target.prefix, env)
    with Lock(state / "lock", f"fix --apply on {target.python}"):
        half = unfinished(state)
        if half:
            raise UsageError(f"a previous transaction ({half[-1].name}) did not finish; run `ascend-doctor rollback` first")
        journal = Journal.create(state)
        log_path = journal.dir / "pip.log"
        say(f"journal: {journal.path}")
        say(f"log: {log_path}")
        progress = Progress(show_progress)
        runner = Runner(log_path, echo=progress.echo if verbose else None)
        old_term = _trap_sigterm()
        try:
            with progress:
                return _transaction(plan, target, choice, env, journal, runner, progress, state,
                                    step_timeout, download_timeout, lang)
        finally:
            runner.close()
            _restore_sigterm(old_term)


def _trap_sigterm():
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise _Terminated()

    return signal.signal(signal.SIGTERM, handler)


class _shielded:
    """Ctrl-C and SIGTERM wait while the rollback puts files back (a half rollback is worse)."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is threading.main_thread():
            self.old = (signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN))
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old[0])
            signal.signal(signal.SIGTERM, self.old[1])


def _restore_sigterm(old) -> None:
    if old is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, old)


def _transaction(plan: Plan, target: Target, choice: Choice, env: Mapping[str, str], journal: Journal,
                 runner: Runner, progress: Progress, state: Path, step_timeout: float, download_timeout: float,
                 lang: str) -> ApplyResult:
    before = scan_dists(target.roots)
    journal.update(python=target.python, prefix=target.prefix, roots=target.roots, installer=choice.installer.kind,
                   before=[dist_record(d) for d in before.values()], plan=plan.to_json(lang), log=str(runner.log_path),
                   notes=choice.notes, status="downloading")
    for n in choice.notes:
        runner.note(f"# {n}")
    exact_dir = journal.dir / "wheels" / "exact"
    deps_dir = journal.dir / "wheels" / "deps"
    exact_dir.mkdir(parents=True)
    deps_dir.mkdir(parents=True)
    constraint = journal.dir / "constraints.txt"
    constraint.write_text(constraints_text(plan.pins))
    steps = [s for s in plan.steps if s.runs]
    progress.add(-1, "download" if lang != "zh" else "下载")
    for i, s in enumerate(steps):
        progress.add(i, s.why.text(lang)[:70])

    # -- download phase: nothing changes in the environment -------------------------------------
    progress.start(-1)
    try:
        resolved = _download(steps, plan, target, choice, env, runner, exact_dir, deps_dir, constraint, before,
                             download_timeout)
    except (StepFailed, DoctorError) as e:
        journal.update(status="aborted", finished=_stamp(), error=str(e))
        raise DoctorError(f"download failed, nothing was changed: {e} (log: {runner.log_path})")
    except (KeyboardInterrupt, _Terminated):
        journal.update(status="aborted", finished=_stamp(), error="interrupted during download")
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
    except (OSError, zipfile.BadZipFile) as e:
        journal.update(status="aborted", finished=_stamp(), error=f"backup: {e}")
        raise DoctorError(f"cannot back up the files to be replaced ({e}); nothing was changed")
    (journal.dir / "snapshot.json").write_text(__import__("json").dumps(snapshot.to_json()))
    journal.update(status="installing", backups=backups, backup_dir=str(backup_root),
                   steps=[{"index": i, "action": s.action, "argv": r["argv"], "status": "pending"}
                          for i, (s, r) in enumerate(zip(steps, resolved))])

    # -- install phase --------------------------------------------------------------------------
    install_env = dict(env)
    install_env["PIP_FIND_LINKS"] = str(deps_dir)  # the downloaded files, not the user's links
    executed: List[Dict] = []
    current = -1
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
                journal.update(current={"step": entry["index"], "pid": pid})

            runner.run(r["argv"], run_env, step_timeout, on_start=started)
            entry.update(status="done", finished=_stamp())
            journal.save()
            executed.append({"index": i, "argv": r["argv"]})
            progress.done(i)
    except (StepFailed, KeyboardInterrupt, _Terminated, Exception) as e:
        reason = "interrupted" if isinstance(e, (KeyboardInterrupt, _Terminated)) else str(e)
        if 0 <= current < len(journal.data["steps"]):
            journal.data["steps"][current].update(status="failed", error=reason)
        journal.update(status="rolling-back", error=reason)
        with _shielded():
            problems = _undo(snapshot, backups, backup_root, target, before)
        if problems:
            journal.update(status="rollback-failed", finished=_stamp(), rollback_problems=problems)
            raise DoctorError(f"step {current + 1} failed ({reason}) and the rollback is incomplete: "
                              f"{'; '.join(problems[:3])}; backups kept in {backup_root} (log: {runner.log_path})")
        journal.update(status="rolled-back", finished=_stamp())
        shutil.rmtree(journal.dir / "wheels", ignore_errors=True)
        what = steps[current].why.en if 0 <= current < len(steps) else "a step"
        raise DoctorError(f"step {current + 1}/{len(steps)} failed ({what}: {reason}); rolled back, the environment "
                          f"is as it was (log: {runner.log_path})")

    # -- commit ---------------------------------------------------------------------------------
    after = scan_dists(target.roots)
    journal.update(status="committed", finished=_stamp(), after=[dist_record(d) for d in after.values()], current=None)
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
    return ApplyResult(journal.data["id"], journal.path, runner.log_path, state, executed, changed)


def _stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def _download(steps: List[Step], plan: Plan, target: Target, choice: Choice, env: Mapping[str, str],
              runner: Runner, exact_dir: Path, deps_dir: Path, constraint: Path,
              before: Dict[str, Distribution], timeout: float) -> List[Dict]:
    """Fetch every file the install phase needs, and turn each step into the command that
    installs from those files."""
    if plan.resolved_files:  # proven by the resolver: exactly its files, hash-checked
        from doctor.shell.steps.pip import download_resolved

        return download_resolved(steps, plan, choice, env, runner, exact_dir, timeout)
    dl = choice.downloader
    inst = choice.installer
    exact = [p for s in steps if s.action == "install" and s.no_deps for p in s.packages]
    exact_index = _union(s.extra_index_urls for s in steps if s.action == "install" and s.no_deps)
    files: Dict[str, Path] = {}
    if exact:
        runner.run(dl.download(exact, str(exact_dir), no_deps=True, extra_index_urls=exact_index), env, timeout)
        files = match_downloads(exact, exact_dir)
    sources: Dict[str, str] = {}  # "vllm" -> the clone a build step installs from
    for s in steps:
        if s.kind == "fetch":
            dest = s.argv[-1]
            if os.path.isdir(dest) and STATE_MARK in dest:
                shutil.rmtree(dest)  # our own clone from an earlier run
            runner.run(s.argv, dict(env, **s.env), timeout)
            sources["vllm"] = dest
    # requirements of vllm / vllm-ascend that --no-deps leaves out, read from the wheels
    post = _post_plan_installed(before, plan)
    reqs: List[str] = []
    for s in steps:
        for owner_spec in s.requirements_of:
            owner = canonicalize_name(Requirement(owner_spec).name)
            path = files.get(owner_spec)
            if path is not None:
                requires = read_metadata(path)["requires"]
            elif owner in sources:
                # VLLM_TARGET_DEVICE=empty builds install requirements/common.txt
                requires = requirements_file(Path(sources[owner]) / "requirements" / "common.txt")
            else:
                continue
            for r in unmet_requirements(owner, requires, exact_pins(plan.pins), post, target.markers):
                if r not in reqs:
                    reqs.append(r)
    deps = [p for s in steps if s.action == "install" and not s.no_deps for p in s.packages] + reqs
    deps_index = _union(s.extra_index_urls for s in steps if not s.no_deps)
    if deps:
        runner.run(dl.download(deps, str(deps_dir), no_deps=False, extra_index_urls=deps_index,
                               constraint=str(constraint)), env, timeout)
        for p in sorted(deps_dir.iterdir()):
            read_metadata(p)  # every file readable before anything changes
    resolved: List[Dict] = []
    for s in steps:
        if s.action == "remove":
            resolved.append({"argv": list(s.argv)})
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
            resolved.append({"argv": list(s.argv)})
    return resolved


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
                nv = _file_name_version(os.path.basename(a))
                if nv:
                    names.add(nv[0])
        if r.get("argv") and "--find-links" in r["argv"]:
            d = Path(r["argv"][r["argv"].index("--find-links") + 1])
            for p in d.iterdir():
                nv = _file_name_version(p.name)
                if nv:
                    names.add(nv[0])
    return sorted(n for n in names if n in before)


def _undo(snapshot: Snapshot, backups: Dict[str, Dict], backup_root: Path, target: Target,
          before: Dict[str, Distribution]) -> List[str]:
    files = [f for b in backups.values() for f in b["files"]]
    failed = undo_to_snapshot(snapshot, files, backup_root)
    problems = [f"cannot restore {f}" for f in failed]
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
    """Only the last committed transaction can be rolled back; older backups and downloads go."""
    base = state / "transactions"
    for d in base.iterdir():
        if d.name != keep and d.is_dir():
            for sub in ("backup", "wheels"):
                shutil.rmtree(d / sub, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# rollback later


@dataclass
class RollbackResult:
    txn_id: str
    restored: Dict[str, Tuple[Optional[str], Optional[str]]]  # name -> (now, restored)


def rollback_last(target: Target, env: Mapping[str, str], *, force: bool = False) -> RollbackResult:
    state = state_dir(target.prefix, env)
    with Lock(state / "lock", f"rollback on {target.python}"):
        half = unfinished(state)
        if half:
            return _rollback_unfinished(Journal.load(half[-1]), target)
        d = last_transaction(state)
        if d is None:
            raise UsageError(f"nothing to roll back: no committed ascend-doctor transaction in {state}")
        journal = Journal.load(d)
        if journal.data.get("status") != "committed":
            raise UsageError(f"transaction {d.name} is {journal.data.get('status')}; nothing to roll back")
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
        journal.update(status="rolling-back-later")
        # remove what the transaction installed, then put the old files back
        for name, dist in now.items():
            b = before.get(name)
            if b is None or b["version"] != dist.version or name in journal.data.get("backups", {}):
                remove_files(dist_files(dist))
        files = [f for b in journal.data.get("backups", {}).values() for f in b["files"]]
        failed = restore_files(files, backup_root)
        final = scan_dists(target.roots)
        problems = [f"cannot restore {f}" for f in failed]
        for name in sorted(set(before) | set(after)):
            want = before[name]["version"] if name in before else None
            have = final[name].version if name in final else None
            if want != have:
                problems.append(f"{name}: {have or 'missing'} instead of {want or 'absent'}")
        if problems:
            journal.update(status="rollback-failed", rollback_problems=problems)
            raise DoctorError(f"rollback of {d.name} is incomplete: {'; '.join(problems[:3])}")
        journal.update(status="rolled-back-later", rolled_back=_stamp())
        (state / "last").unlink()
        restored = {n: (now[n].version if n in now else None, final[n].version if n in final else None)
                    for n in sorted(set(now) | set(final))
                    if (now[n].version if n in now else None) != (final[n].version if n in final else None)}
        return RollbackResult(d.name, restored)


def _rollback_unfinished(journal: Journal, target: Target) -> RollbackResult:
    """A doctor killed in the middle of a transaction: finish its rollback now."""
    import json

    snap_path = journal.dir / "snapshot.json"
    now = scan_dists(target.roots)
    if journal.data.get("status") in ("started", "downloading") or not snap_path.is_file():
        journal.update(status="aborted", finished=_stamp())
        return RollbackResult(journal.data["id"], {})
    snapshot = Snapshot.from_json(json.loads(snap_path.read_text()))
    files = [f for b in journal.data.get("backups", {}).values() for f in b["files"]]
    failed = undo_to_snapshot(snapshot, files, Path(journal.data["backup_dir"]))
    before = {r["name"]: r["version"] for r in journal.data["before"]}
    final = scan_dists(target.roots)
    problems = [f"cannot restore {f}" for f in failed] + [
        f"{n}: {final[n].version if n in final else 'missing'} instead of {before.get(n) or 'absent'}"
        for n in sorted(set(before) | set(final)) if before.get(n) != (final[n].version if n in final else None)]
    if problems:
        journal.update(status="rollback-failed", rollback_problems=problems)
        raise DoctorError(f"rollback of {journal.data['id']} is incomplete: {'; '.join(problems[:3])}")
    journal.update(status="rolled-back", finished=_stamp())
    return RollbackResult(journal.data["id"], {n: (now[n].version if n in now else None, final[n].version if n in final else None)
                                               for n in sorted(set(now) | set(final))
                                               if (now[n].version if n in now else None) != (final[n].version if n in final else None)})
