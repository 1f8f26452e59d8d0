"""``ascend-doctor guard -- pip install ...``: judge an install before it happens.

1. pip resolves the command in report mode against the current environment (pip itself reads
   the command's requirement and constraint files, markers, index options and hashes),
2. the environment that would result is built as Facts (what pip would install replaces what
   is there; ``pip uninstall`` removes),
3. check's rules judge it, and what would get worse is named: packages replaced, pins of other
   packages violated, findings that would fail,
4. a command to run instead is proposed (the stack packages at the versions the installed
   release needs, without dependencies) and proven by the same judgement before it is shown.

The pure parts (reading the command, building the would-be facts, comparing verdicts, the
command to propose) take plain data; ``guard()`` does the I/O.
"""
from __future__ import annotations

import copy
import os
import shlex
import stat
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from doctor.errors import UsageError
from doctor.facts import Distribution, Facts
from doctor.findings import FAIL, WARN, Command, Finding, Verdict
from doctor.i18n import T, Text
from doctor.parse import pipargs
from doctor.parse.pipreport import Failure, Resolved

REFUSED_OPTIONS = ("--target", "--root", "--prefix", "--user", "--report", "--dry-run", "--python")
# what names a requirement to install (pip: "You must give at least one requirement to install")
SOURCES = {"install": ("--requirement", "--editable", "--group", "--requirements-from-script"),
           "uninstall": ("--requirement",)}
# options of the command the resolution leaves out: the resolver sets its own output and log
NOT_RESOLVED = ("--verbose", "--quiet", "--log", "--progress-bar")
# pip install options that ``uv pip install`` takes with the same meaning (guard resolves with uv
# then); any other option leaves the resolution to pip
UV_INDEX = ("--index-url", "--extra-index-url", "--no-index", "--find-links", "--pre", "--only-binary", "--no-binary")
UV_SAME = UV_INDEX + ("--requirement", "--constraint", "--no-deps", "--upgrade", "--disable-pip-version-check",
                      "--no-cache-dir")
STACK = ("torch", "torch-npu", "torchvision", "torchaudio", "vllm", "vllm-ascend", "triton-ascend", "triton",
         "numpy", "transformers")
WORSE = {"ok": 0, "skip": 0, "info": 0, WARN: 1, FAIL: 2}
EXIT_SAFE, EXIT_BREAKS, EXIT_WARNS = 0, 3, 4


def _table(sub: str) -> Dict[str, bool]:
    return {**pipargs.GENERAL, **(pipargs.UNINSTALL if sub == "uninstall" else pipargs.INSTALL)}


@dataclass
class PipCommand:
    tool: str  # pip | uv
    sub: str  # install | uninstall | other
    args: List[str]  # after the subcommand
    argv: List[str]  # as the user wrote it
    general: List[str] = field(default_factory=list)  # pip's general options before the subcommand

    @property
    def tokens(self) -> List[pipargs.Token]:
        # uv's parser (clap) takes no abbreviations; pip's (optparse) takes unambiguous prefixes
        return pipargs.tokens(self.args, _table(self.sub), prefixes=self.tool == "pip")[0]

    @property
    def requirements(self) -> List[str]:
        """The requirement arguments (not options, not their values)."""
        if self.sub == "other":
            return []
        return [t.words[0] for t in self.tokens if t.positional]

    def options(self) -> List[str]:
        """The arguments that are not requirements (index options, -r/-c files ...)."""
        return [w for t in self.tokens if not t.positional for w in t.words]

    def values(self, *names: str) -> List[str]:
        """The values given to the options ``names`` (canonical), in the general options too."""
        general = pipargs.tokens(self.general, pipargs.GENERAL, prefixes=self.tool == "pip")[0]
        return [t.value for t in general + self.tokens if t.value is not None and t.names[-1] in names]

    def uv_args(self) -> Optional[Tuple[List[str], List[str]]]:
        """(all arguments, index arguments) for uv's resolver when every option of the command
        means the same to ``uv pip install`` (None: leave it to pip)."""
        general = pipargs.tokens(self.general, pipargs.GENERAL, prefixes=self.tool == "pip")[0]
        every: List[str] = []
        index: List[str] = []
        for t in general + self.tokens:
            if t.positional:
                every += t.words
                continue
            if any(n in NOT_RESOLVED for n in t.names) and len(t.names) == 1:
                continue
            if not all(n in UV_SAME or n in NOT_RESOLVED for n in t.names):
                return None
            words = [f"--{n.lstrip('-')}" for n in t.names if n not in NOT_RESOLVED]
            if t.value is not None:
                words[-1] += "=" + t.value
            every += words
            if any(n in UV_INDEX for n in t.names):
                index += words
        return every, index

    def resolve_args(self) -> List[str]:
        """The command's options and requirements for the resolver: the general options too (an
        index proxy, a certificate), not the ones that change pip's output or log."""
        general = pipargs.tokens(self.general, pipargs.GENERAL, prefixes=self.tool == "pip")[0]
        out: List[str] = []
        for t in general + self.tokens:
            if t.positional or not any(n in NOT_RESOLVED for n in t.names):
                out += t.words
            else:  # a cluster (-qU, -qr FILE): keep its other options, spelled out
                keep = [n for n in t.names if n not in NOT_RESOLVED]
                if keep and t.value is not None and t.names[-1] not in NOT_RESOLVED:
                    keep[-1] += "=" + t.value
                out += keep
        return out


def parse_command(argv: Sequence[str]) -> PipCommand:
    """``pip install ...``, ``pip3 ...``, ``python -m pip ...`` or ``uv pip ...``, read as pip
    reads it (doctor.parse.pipargs)."""
    words = list(argv)
    if not words:
        from doctor.program import DOCTOR, spelled_text

        raise UsageError(T("guard.error.no_command", doctor=spelled_text(DOCTOR)))
    head = os.path.basename(words[0])
    tool = "pip"
    if head in ("pip", "pip3") or head.startswith("pip3."):
        rest = words[1:]
    elif head.startswith("python") and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    elif head == "uv" and words[1:2] == ["pip"]:
        tool, rest = "uv", words[2:]
    else:
        raise UsageError(T("guard.error.not_pip", command=shlex.join(words[:3])))
    try:
        # pip's general options before the subcommand, with their values (--cache-dir DIR ...)
        general, rest = pipargs.tokens(rest, pipargs.GENERAL, interspersed=False, prefixes=tool == "pip")
        gwords = [w for t in general for w in t.words]
        if not rest or rest[0] not in ("install", "uninstall"):
            return PipCommand(tool, "other", rest[1:], words, gwords)
        cmd_ = PipCommand(tool, rest[0], rest[1:], words, gwords)
        toks = general + cmd_.tokens
    except pipargs.PipArgsError as e:
        raise UsageError(f"guard: {e}") from None
    names = {n for t in toks for n in t.names}
    if "--help" in names or "--version" in names:
        return PipCommand(tool, "other", cmd_.args, words, gwords)
    bad = [t for t in toks if any(n in REFUSED_OPTIONS for n in t.names)]
    if bad and (cmd_.sub == "install" or "--python" in names):
        if any(n in ("--report", "--dry-run") for n in bad[0].names):
            raise UsageError(T("guard.error.installs_nothing", command=shlex.join(bad[0].words)))
        raise UsageError(T("guard.error.elsewhere", command=shlex.join(bad[0].words)))
    if not cmd_.requirements and not names & set(SOURCES[cmd_.sub]):
        raise UsageError(T("guard.error.names_nothing", command=shlex.join(words), sub=cmd_.sub))
    return cmd_


def file_problem(path: str) -> Optional[str]:
    """Why ``path`` cannot be read as a requirement file, or None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such file"
    except OSError as e:
        return e.strerror or str(e)
    if stat.S_ISREG(st.st_mode):
        return None
    kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
        "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a socket"
    return f"not a regular file ({kind})"


def check_files(cmd_: PipCommand) -> None:
    """The command's requirement and constraint files exist and are regular files (pip would
    read a FIFO or /dev/zero forever, and says only "no such file" of a directory)."""
    for opt, name in (("-r", "--requirement"), ("-c", "--constraint")):
        for f in cmd_.values(name):
            if "://" in f:  # pip fetches a URL itself
                continue
            why = file_problem(f)
            if why:
                raise UsageError(T("option.error.detail", option=opt, value=f, error=why))


# ---------------------------------------------------------------------------------------------
# the environment that would result


def dist_from(r: Resolved) -> Distribution:
    details: Dict[str, str] = {}
    if r.name == "torch" and any(q.startswith("nvidia-") for q in r.requires):
        details["cuda"] = "from PyPI (requires nvidia-*)"  # PyPI's x86_64 torch is a CUDA build
    return Distribution(name=r.name, version=r.version, display_name=r.name, requires=list(r.requires),
                        requires_python=r.requires_python, installer="pip", details=details)


def would_be(facts: Facts, installs: Sequence[Resolved] = (), removes: Sequence[str] = ()) -> Facts:
    """The facts after pip installs ``installs`` (replacing what has the same name) and removes
    ``removes``; every other fact (host, CANN, devices) stays as observed."""
    out = copy.deepcopy(facts)
    if out.packages is None:
        return out
    dists = out.packages.dists
    for name in removes:
        dists.pop(canonicalize_name(name), None)
    for r in installs:
        old = dists.get(r.name)
        new = dist_from(r)
        if old is not None:
            new.location, new.entry_points = old.location, dict(old.entry_points)
        elif out.packages.paths:
            new.location = out.packages.paths[0]
        if r.name == "vllm-ascend" and not new.entry_points:
            # the wheel registers the platform plugin (its entry_points.txt is not in the report)
            new.entry_points = {"vllm.platform_plugins": {"ascend": "vllm_ascend:register"}}
        dists[r.name] = new
    out.packages.shadowed = [d for d in out.packages.shadowed if d.name not in {r.name for r in installs}]
    return out


@dataclass
class Change:
    name: str
    before: Optional[str]
    after: Optional[str]


def changes(facts: Facts, after: Facts) -> List[Change]:
    a = facts.packages.dists if facts.packages else {}
    b = after.packages.dists if after.packages else {}
    out = []
    for name in sorted(set(a) | set(b)):
        va = a[name].version if name in a else None
        vb = b[name].version if name in b else None
        if va != vb:
            out.append(Change(name, va, vb))
    return out


def worse(before: Verdict, after: Verdict) -> List[Finding]:
    """Findings of ``after`` that are worse than the same id in ``before`` (or new problems)."""
    was: Dict[str, int] = {}
    for f in before.findings:
        was[f.id] = max(was.get(f.id, 0), WORSE.get(f.status, 0))
    out, seen = [], set()
    for f in after.findings:
        level = WORSE.get(f.status, 0)
        if level > was.get(f.id, 0) and (f.id, f.status) not in seen:
            seen.add((f.id, f.status))
            out.append(f)
    return out


# ---------------------------------------------------------------------------------------------
# what to run instead


def instead_requirements(cmd_: PipCommand, pins: Mapping[str, str]) -> Tuple[List[str], List[Text]]:
    """The command's requirements with every stack package at the installed release's pin
    (a requested version the release cannot use is dropped, with why)."""
    keep: List[str] = []
    why: List[Text] = []
    for text in cmd_.requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            keep.append(text)
            continue
        name = canonicalize_name(req.name)
        pin = pins.get(name)
        if pin is None:
            keep.append(text)
            continue
        if not req.specifier or req.specifier.contains(pin, prereleases=True):
            keep.append(f"{req.name}=={pin}")
        else:
            why.append(T("guard.dropped", requirement=text, pin=pin, name=name))
    return keep, why


def instead_argv(cmd_: PipCommand, requirements: Sequence[str], no_deps: bool) -> List[str]:
    head = cmd_.argv[: len(cmd_.argv) - len(cmd_.args)]
    opts = [a for a in cmd_.options() if a != "--no-deps"]
    return head + (["--no-deps"] if no_deps else []) + opts + list(requirements)


# ---------------------------------------------------------------------------------------------
# the judgement


@dataclass
class Judgement:
    command: PipCommand
    resolved: List[Resolved] = field(default_factory=list)
    failure: Optional[Failure] = None
    changes: List[Change] = field(default_factory=list)
    broken: List[Finding] = field(default_factory=list)  # worse than before
    violated: List[str] = field(default_factory=list)  # new pip-check conflicts
    instead: Optional[Command] = None
    instead_why: List[Text] = field(default_factory=list)
    after: Optional[Verdict] = None
    note: Optional[Text] = None

    @property
    def exit_code(self) -> int:
        if self.failure is not None:
            return EXIT_BREAKS
        if any(f.status == FAIL for f in self.broken) or self.violated:
            return EXIT_BREAKS
        if self.broken:
            return EXIT_WARNS
        return EXIT_SAFE

    def to_json(self, lang: str = "en") -> Dict:
        out: Dict = {"command": self.command.argv, "safe": self.exit_code == EXIT_SAFE, "exit_code": self.exit_code,
                     "would_install": [{"name": r.name, "version": r.version} for r in self.resolved],
                     "changes": [{"name": c.name, "before": c.before, "after": c.after} for c in self.changes],
                     "violated": list(self.violated),
                     "findings": [f.to_json(lang) for f in self.broken]}
        if self.failure is not None:
            out["failure"] = self.failure.to_json()
        if self.instead is not None:
            out["instead"] = self.instead.to_json(lang)
            out["instead_why"] = [t.text(lang) for t in self.instead_why]
        if self.note is not None:
            out["note"] = self.note.text(lang)
        return out


def new_conflicts(before_facts: Facts, after_facts: Facts) -> List[str]:
    """pip-check conflicts the install would add, less vllm's CUDA side (the documented residual
    of every correct Ascend install, vllm-ascend #5710)."""
    import fnmatch

    from doctor.rules import pipcheck
    from doctor.rules.env import VLLM_RESIDUAL

    markers = after_facts.python.markers if after_facts.python else {}
    old = {c.describe() for c in pipcheck.check(before_facts.packages.dists, markers)} if before_facts.packages else set()
    new = pipcheck.check(after_facts.packages.dists, markers) if after_facts.packages else []
    return [c.describe() for c in new if c.describe() not in old
            and not (c.requirer == "vllm" and any(fnmatch.fnmatch(c.required, p) for p in VLLM_RESIDUAL))]


def judge(cmd_: PipCommand, facts: Facts, resolved: Sequence[Resolved], removes: Sequence[str],
          verdict_of: Callable[[Facts], Verdict], before: Verdict) -> Judgement:
    after_facts = would_be(facts, resolved, removes)
    after = verdict_of(after_facts)
    j = Judgement(cmd_, list(resolved), changes=changes(facts, after_facts), after=after)
    j.broken = worse(before, after)
    j.violated = new_conflicts(facts, after_facts)
    return j


def guard(cmd_: PipCommand, facts: Facts, before: Verdict, verdict_of: Callable[[Facts], Verdict],
          resolve: Callable[[List[str]], Tuple[List[Resolved], Optional[Failure]]],
          pins: Mapping[str, str]) -> Judgement:
    """Judge the command; ``resolve(pip install args) -> (installs, failure)`` runs pip."""
    if cmd_.sub == "uninstall":
        names = [a for a in cmd_.requirements]
        return judge(cmd_, facts, [], names, verdict_of, before)
    if cmd_.sub != "install":
        return Judgement(cmd_, note=T("guard.nothing_to_judge", command=shlex.join(cmd_.argv)))
    installs, failure = resolve(cmd_.resolve_args())
    if failure is not None:
        return Judgement(cmd_, failure=failure)
    j = judge(cmd_, facts, installs, [], verdict_of, before)
    if j.exit_code == EXIT_SAFE or not pins:
        return j
    reqs, why = instead_requirements(cmd_, pins)
    if not reqs:
        j.instead_why = why
        return j
    argv = instead_argv(cmd_, reqs, no_deps=True)
    py, pk = facts.python, facts.packages
    if py is not None and py.externally_managed and "--break-system-packages" not in argv:
        from doctor.shell.install.installer import break_system, own_pip_version

        # PEP 668: the judged interpreter is the system's; pip's documented override
        own = pk is not None and "pip" in pk.dists and "--python" not in argv
        flag = break_system(True, pk.dists["pip"].version if own and pk is not None else own_pip_version())
        at = argv.index("install") + 1 if "install" in argv else len(argv)
        argv = argv[:at] + flag + argv[at:]
    alt = parse_command(argv)
    got, fail = resolve(alt.resolve_args())
    if fail is None:
        proof = judge(alt, facts, got, [], verdict_of, before)
        if proof.exit_code == EXIT_SAFE:
            j.instead = Command(tuple(argv), T("guard.instead_label"))
            j.instead_why = why
    return j


# ---------------------------------------------------------------------------------------------
# I/O: facts, pip, the matrix


@dataclass
class GuardRun:
    judgement: Judgement
    facts: Facts
    before: Verdict
    pip_prefix: List[str]


def run_guard(argv: Sequence[str], opts, env: Mapping[str, str], *, requirement_files: Sequence[str] = (),
              timeout: float = 600.0, progress: Callable[..., None] = lambda key, **values: None,
              requirement_option: str = "-r") -> GuardRun:
    """Gather the facts of the target environment (``opts``: CheckOptions), resolve the command
    with its pip in report mode and judge the result. ``requirement_option``: the option that gave
    ``requirement_files``, as an unreadable one is named (guard's -r, check's --requirements)."""
    from doctor.matrix.query import pins_for
    from doctor.rules.engine import make_context, run_rules
    from doctor.shell.install.installer import detect as detect_installer
    from doctor.shell.install.resolver import Request, resolve_pip, resolve_uv
    from doctor.usecases.prove import where
    from doctor.usecases.check import cached_pip_conflicts, gather, load_matrix_or_exit

    words = list(argv)
    for f in requirement_files:  # said of the option the user typed (check's is --requirements)
        why = None if "://" in f else file_problem(f)
        if why:
            raise UsageError(T("option.error.detail", option=requirement_option, value=f, error=why))
    if requirement_files:
        words = (words or ["pip", "install"]) + [x for f in requirement_files for x in ("-r", f)]
    cmd_ = parse_command(words)
    check_files(cmd_)
    mx = load_matrix_or_exit(list(opts.matrix))
    facts = gather(opts, dict(env))
    if facts.python is None or not facts.python.found or not facts.python.executable:
        raise UsageError(T("guard.error.no_interpreter", error=facts.python.error) if facts.python
                         else T("guard.error.no_interpreter_found"))
    python_exe = facts.python.executable
    ctx = make_context(facts, mx, opts.stage)
    ctx.pip_conflicts = cached_pip_conflicts(facts)
    before = run_rules(ctx)
    choice = detect_installer("auto" if cmd_.tool == "pip" else "pip", facts, env)
    prefix = list(choice.downloader.prefix)

    def verdict_of(after: Facts) -> Verdict:
        return run_rules(make_context(after, mx, opts.stage, ctx.release.vllm_ascend if ctx.release else None))

    end = time.monotonic() + timeout  # one total deadline: the command and the one proposed instead

    def resolve(args: List[str]):
        left = max(0.0, end - time.monotonic())
        # the alternative the guard proposes is a pip command of the doctor's own making: pip
        uv_args = cmd_.uv_args() if args == cmd_.resolve_args() else None
        if cmd_.tool == "uv":
            import shutil

            uv = shutil.which("uv", path=env.get("PATH"))
            if uv is None:
                raise UsageError(T("guard.error.no_uv"))
            r = resolve_uv(uv, python_exe, Request(args=args), env, sizes=False, timeout=left)
        elif choice.resolver.is_uv and uv_args is not None:
            every, index = uv_args
            cfg = choice.index
            progress("guard.progress", installer="uv", index=where(choice), n=len(cmd_.requirements))
            r = resolve_uv(choice.resolver.prefix[0], python_exe, Request(args=every, index_args=index),
                           choice.resolver.environ(env), choice.resolver.uv_index_args, sizes=False, timeout=left,
                           cert=cfg.cert if cfg else None, proxy=cfg.proxy if cfg else None)
        else:
            progress("guard.progress", installer="pip", index=where(choice), n=len(cmd_.requirements))
            r = resolve_pip(prefix, Request(args=args), env, sizes=False, timeout=left)
        return r.packages, r.failure

    pins: Dict[str, str] = {}
    if ctx.release is not None:
        arch = facts.python.machine or facts.host.machine
        try:
            pins = dict(pins_for(mx, ctx.release, arch=arch, python=facts.python.version).packages)
        except KeyError:
            pins = {}
        from doctor.versions import same_release

        accepted = {"torch-npu": ctx.release.torch_npu_accepted, "vllm": ctx.release.vllm_accepted}
        for name in list(pins):
            have = facts.dist(name)
            # keep what is there when the release accepts it (torch 2.7.1+cpu, torch-npu 2.7.1)
            if have is not None and any(same_release(have.version, v) for v in accepted.get(name, [pins[name]])):
                pins[name] = have.version
    j = guard(cmd_, facts, before, verdict_of, resolve, pins)
    if j.instead is not None:
        uv = "--python" not in cmd_.args and cmd_.tool == "uv"
        j.instead = replace(j.instead, argv=tuple(on_the_target(cmd_, list(j.instead.argv), prefix, python_exe if uv else None)))
    return GuardRun(j, facts, before, prefix)


def on_the_target(cmd_: PipCommand, argv: List[str], pip_prefix: Sequence[str], uv_python: Optional[str]) -> List[str]:
    """The command proposed instead, as it runs in the judged environment whatever the user's
    shell has first on PATH: the pip that judged it (the target's, or the doctor's with
    --python), as check's hints name it; ``uv pip`` gets the judged ``--python``."""
    tail = argv[len(cmd_.argv) - len(cmd_.args):]
    if cmd_.tool == "uv":
        head = cmd_.argv[: len(cmd_.argv) - len(cmd_.args)]
        return head + (["--python", uv_python] if uv_python else []) + tail
    return list(pip_prefix) + cmd_.general + [cmd_.sub] + tail


def run_command(run: GuardRun, env: Mapping[str, str], timeout: float, echo: Callable[[str], None]) -> int:
    """Carry out the guarded command with the pip that judged it (or uv for ``uv pip``)."""
    from doctor.shell.runtime import proc

    cmd_ = run.judgement.command
    if cmd_.tool == "uv":
        argv = cmd_.argv
        python_exe = run.facts.python.executable if run.facts.python else None
        if python_exe and "--python" not in cmd_.args:
            argv = argv[: len(argv) - len(cmd_.args)] + ["--python", python_exe] + cmd_.args
    else:
        argv = run.pip_prefix + cmd_.general + [cmd_.sub] + cmd_.args
        if cmd_.sub == "other":
            argv = run.pip_prefix + cmd_.argv[1:] if os.path.basename(cmd_.argv[0]).startswith("pip") \
                else run.pip_prefix + cmd_.argv[3:]
    done = proc.stream(argv, timeout, env=env, on_line=echo)
    if done.timed_out:
        echo(f"timed out after {timeout:g} s")
        return 1
    if done.error or not done.found:
        raise UsageError(T("guard.error.cannot_run", command=argv[0], error=done.error) if done.error
                         else T("guard.error.cannot_run_not_found", command=argv[0]))
    return done.returncode or 0
