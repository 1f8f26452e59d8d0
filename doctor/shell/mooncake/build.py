"""``ascend-doctor mooncake build``: Mooncake from source with -DUSE_ASCEND_DIRECT=ON.

The steps are what vllm-ascend's Dockerfiles and Mooncake's own Ascend CI do (facts/mooncake.md
§1.1): clone the tag, submodules, ``dependencies.sh -y`` (only with --with-system-deps: it
apt-installs and needs root), ``cmake -DUSE_ASCEND_DIRECT=ON`` with the CI's options that skip
examples/tests/benchmarks and with CANN's environment, ``make -j``, install, verify. Every
command is an argv list with a timeout; output goes to a log file.

Everything happens in a temporary directory and ``make install`` goes to a staging tree
(DESTDIR). The staged tree is then put in place through the same journaled transaction as pip
steps (doctor/shell/transaction: lock, backups synced before anything is replaced, a journal
that a later ``rollback`` finishes after a kill, and undoes once committed); if the new package
does not import in the target interpreter, or has no Ascend transport, the old files are put
back. ``fix --apply`` runs only the build (``stage_into``): its own transaction places the tree.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from doctor.i18n import T, Text
from doctor.parse import elf
from doctor.shell.host import files as host_files
from doctor.shell.transaction.placing import units
from doctor.shell.transaction.runner import Runner
from doctor.parse.libnames import ASCEND_DEPS, lib_base

DEFAULT_URL = "https://github.com/kvcache-ai/Mooncake.git"
DEFAULT_PREFIX = "/usr/local"
# What Mooncake's Ascend CI passes to skip what a runtime install does not need.
CI_OPTIONS = ("-DBUILD_EXAMPLES=OFF", "-DBUILD_UNIT_TESTS=OFF", "-DBUILD_BENCHMARK=OFF", "-DENABLE_DEBUG_SYMBOLS=OFF")
ASCEND_BASE = "/usr/local/Ascend"

# Runs in the target interpreter: what Mooncake's CMake will pick as the install directory
# (mooncake-integration/CMakeLists.txt), and facts about the interpreter.
PREFLIGHT = r"""
import json, sys, sysconfig
paths = [s for s in sys.path if 'packages' in s]
print(json.dumps({"site": paths[0] if paths else "", "version": sys.version.split()[0],
                  "executable": sys.executable, "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX") or "",
                  "prefix": sys.prefix, "base_prefix": sys.base_prefix, "paths": paths}))
"""
# Runs in the target interpreter after the install: the import vllm-ascend does.
VERIFY = r"""
import json, os, sys
out = {"python": sys.executable}
try:
    import mooncake
    out["package"] = os.path.dirname(os.path.abspath(mooncake.__file__))
    out["files"] = sorted(os.listdir(out["package"]))
except Exception as e:
    out["error"] = "import mooncake: %s: %s" % (type(e).__name__, e)
    print(json.dumps(out)); sys.exit(0)
try:
    from mooncake.engine import TransferEngine
    out["engine"] = getattr(sys.modules.get("mooncake.engine"), "__file__", "")
except Exception as e:
    out["error"] = "from mooncake.engine import TransferEngine: %s: %s" % (type(e).__name__, e)
print(json.dumps(out))
"""


@dataclass
class Timeouts:
    clone: float = 1800
    submodules: float = 1800
    dependencies: float = 3600
    configure: float = 900
    build: float = 7200
    install: float = 900
    verify: float = 120
    preflight: float = 60


@dataclass
class BuildOptions:
    tag: Optional[str] = None
    source: Optional[str] = None
    python: str = "python3"
    with_system_deps: bool = False
    jobs: int = 0  # 0: all cores
    prefix: str = DEFAULT_PREFIX
    cmake_args: List[str] = field(default_factory=list)
    log: Optional[str] = None
    keep_build: bool = False
    url: str = DEFAULT_URL
    env: Optional[Dict[str, str]] = None  # default: os.environ
    timeouts: Timeouts = field(default_factory=Timeouts)
    stage_into: Optional[str] = None  # only build and stage there (fix --apply places the tree itself)


@dataclass
class StepResult:
    name: str
    argv: List[str]
    cwd: str = ""
    returncode: Optional[int] = None
    duration_s: float = 0.0
    timed_out: bool = False
    skipped: Optional[str] = None  # why it did not run
    error: Optional[str] = None  # could not start
    output: List[str] = field(default_factory=list)  # its last lines (not in --json)

    @property
    def ok(self) -> bool:
        return self.skipped is not None or (self.returncode == 0 and not self.timed_out and self.error is None)

    def to_json(self) -> Dict:
        return {"name": self.name, "argv": self.argv, "cwd": self.cwd, "returncode": self.returncode,
                "duration_s": round(self.duration_s, 2), "timed_out": self.timed_out, "skipped": self.skipped,
                "error": self.error}


@dataclass
class BuildNote:
    """A note after the build: words from the catalogue, and the one command it asks for (printed
    on a line of its own, never inside the words)."""

    text: Text
    command: Optional[str] = None

    def __str__(self) -> str:
        return self.text.text("en") + (f" {self.command}" if self.command else "")


@dataclass
class KnownError:
    id: str
    cause: str
    fix: str
    line: int
    text: str
    cause_zh: str = ""
    fix_zh: str = ""


@dataclass
class BuildResult:
    ok: bool = False
    stage: str = "preflight"  # the step that failed, or "done"
    error: Optional[str] = None  # English, for --json
    message: Optional[Text] = None  # the same, from the catalogue (mooncake_build.error.*)
    steps: List[StepResult] = field(default_factory=list)
    log: str = ""
    tag: Optional[str] = None
    source: str = ""
    python: str = ""
    site_packages: str = ""
    prefix: str = ""
    cann_home: Optional[str] = None
    manual: List[BuildNote] = field(default_factory=list)
    notes: List[BuildNote] = field(default_factory=list)
    installed: List[str] = field(default_factory=list)
    replaced: List[str] = field(default_factory=list)
    restored: bool = False
    verify: Dict = field(default_factory=dict)
    transport: Optional[str] = None
    known: List[KnownError] = field(default_factory=list)
    tail: List[str] = field(default_factory=list)
    workdir: Optional[str] = None

    def to_json(self) -> Dict:
        return {
            "schema_version": 1, "ok": self.ok, "stage": self.stage, "error": self.error, "tag": self.tag,
            "source": self.source, "python": self.python, "site_packages": self.site_packages, "prefix": self.prefix,
            "cann_home": self.cann_home, "log": self.log, "steps": [s.to_json() for s in self.steps],
            "manual_steps": [str(m) for m in self.manual], "notes": [str(n) for n in self.notes], "installed": self.installed, "replaced": self.replaced,
            "restored": self.restored, "verify": self.verify, "transport": self.transport,
            "known_errors": [k.__dict__ for k in self.known], "log_tail": self.tail, "workdir": self.workdir,
        }


class Reporter:
    """Progress callbacks; the CLI draws them with rich, --json passes a silent one."""

    def start(self, name: str, argv: Sequence[str]) -> None:
        pass

    def tick(self, name: str, last_line: str) -> None:
        pass

    def finish(self, name: str, result: StepResult) -> None:
        pass


class BuildFailed(Exception):
    def __init__(self, stage: str, message: Text):
        super().__init__(message.text("en"))
        self.stage, self.message = stage, message


# -- pure helpers -------------------------------------------------------------------------------


def strip_ascend(value: str, bases: Sequence[str] = (ASCEND_BASE,)) -> str:
    """CPLUS_INCLUDE_PATH without CANN's include directories: they leak into the yalantinglibs
    and Mooncake builds (scripts/ascend/dependencies_ascend_installation.sh removes them too)."""
    keep = [p for p in value.split(":") if p and not any(p == b or p.startswith(b.rstrip("/") + "/") for b in bases)]
    return ":".join(keep)


def system_packages(script: str) -> Dict[str, List[str]]:
    """SYSTEM_PACKAGES of a dependencies.sh, by package manager (apt / yum)."""
    out: Dict[str, List[str]] = {}
    for m in re.finditer(r'SYSTEM_PACKAGES="((?:[^"\\]|\\.)*)"', script, re.DOTALL):
        pkgs = m.group(1).replace("\\\n", " ").split()
        after = script[m.end():m.end() + 2000]
        use = re.search(r"^(.*?)\binstall\b[^\n]*\$\{?SYSTEM_PACKAGES", after, re.MULTILINE)
        tool = use.group(1).lower() if use else ""
        kind = "apt" if "apt" in tool else ("yum" if ("yum" in tool or "dnf" in tool) else "other")
        out.setdefault(kind, pkgs)
    return out


from doctor.parse.os_release import os_family  # noqa: E402,F401  (one reading of /etc/os-release for the doctor)


def cmake_argv(src: str, build: str, python: str, prefix: str, extra: Sequence[str]) -> List[str]:
    return (["cmake", "-S", src, "-B", build, "-DUSE_ASCEND_DIRECT=ON"] + list(CI_OPTIONS)
            + [f"-DCMAKE_INSTALL_PREFIX={prefix}", f"-DPYTHON_EXECUTABLE={python}", f"-DPython3_EXECUTABLE={python}"]
            + list(extra))


def tail(text: str, n: int = 40) -> List[str]:
    return [line.rstrip() for line in text.splitlines()[-n:]]


# Build errors that matrices/signatures.toml does not cover (it holds runtime signatures; the
# mooncake.transport_mem_header and env.mooncake_cann_headers ones apply here as well).
BUILD_SIGNATURES = (  # (id, pattern); cause and fix: mooncake_build.sig.<name>.cause/.fix in doctor/i18n
    ("build.python_path_empty", r"Python path is empty! Please check the python env"),
    ("build.yalantinglibs_missing", r"(?i)(could not find a package configuration file provided by \"?yalantinglibs|yalantinglibs.*not found)"),
    ("build.zstd_missing", r"zstd library not found"),
    ("build.mpi_missing", r"MPI::MPI"),
    ("build.acl_header_missing", r"acl/acl\w*\.h: No such file or directory"),
    ("build.tag_not_found", r"Remote branch \S+ not found|did not match any file\(s\) known to git|couldn't find remote ref"),
    ("build.network", r"Could not resolve host|Failed to connect to github.com|unable to access 'https://"),
    ("build.not_root", r"Require root permission"),
)


def match_known(text: str, extra_signatures: Sequence = ()) -> List[KnownError]:
    from doctor.usecases.explain import match_log
    from doctor.matrix.model import Signature

    from doctor.i18n import tr

    def words(i: str, part: str, lang: str) -> str:
        return tr(f"mooncake_build.sig.{i.split('.', 1)[1]}.{part}", lang)

    local = [Signature(id=i, pattern=p, layer="mooncake", cause_en=words(i, "cause", "en"), cause_zh=words(i, "cause", "zh"),
                       fix_en=words(i, "fix", "en"), fix_zh=words(i, "fix", "zh"), source="doctor/mooncake/build.py")
             for i, p in BUILD_SIGNATURES]
    sigs = [s for s in extra_signatures if s.layer in ("mooncake", "env", "cann")] + local
    zh = {m.id: m for m in match_log(text, sigs, "zh")}
    return [KnownError(id=m.id, cause=m.cause, fix=m.fix, line=m.line, text=m.text,
                       cause_zh=zh[m.id].cause if m.id in zh else m.cause, fix_zh=zh[m.id].fix if m.id in zh else m.fix)
            for m in match_log(text, sigs) if not m.benign]


# -- running ---------------------------------------------------------------------------------------


def run_step(runner: Runner, reporter: Reporter, name: str, argv: List[str], cwd: str, timeout: float,
             env: Dict[str, str]) -> StepResult:
    """One build step through the shared runner: its output to the log, the last line to the
    progress display."""
    res = StepResult(name=name, argv=list(argv), cwd=cwd)
    runner.note(f"\n===== {name}: {shlex.join(argv)}\n===== cwd {cwd}, timeout {timeout:g}s")
    reporter.start(name, argv)
    done = runner.run(argv, env, timeout, cwd=cwd, tick=lambda: reporter.tick(name, runner.last))
    res.output = list(done.tail)
    if done.error is not None:
        res.error = f"cannot run {argv[0]}: {done.error}"
        runner.note(res.error)
        reporter.finish(name, res)
        return res
    res.returncode, res.timed_out, res.duration_s = done.returncode, done.timed_out, done.duration_s
    runner.note(f"===== {name}: " + ("timed out" if res.timed_out else f"exit {res.returncode}") + f" after {res.duration_s:.1f}s")
    reporter.finish(name, res)
    return res


def default_log() -> str:
    from doctor import xdg

    d = str(xdg.cache_dir())
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, time.strftime("mooncake-build-%Y%m%d-%H%M%S.log"))


def cann_env(env: Dict[str, str], machine: str) -> Tuple[Dict[str, str], Optional[str]]:
    """The build environment with CANN's variables (what set_env.sh exports that the build
    needs), from ASCEND_HOME_PATH when it points at a toolkit, else the detected one."""
    from doctor.shell.host.root import Host
    from doctor.probes.cann import probe_cann

    out = dict(env)
    home = out.get("ASCEND_HOME_PATH")
    if not (home and os.path.isdir(home)):
        facts = probe_cann(Host("/", env=out), machine)
        home = facts.home if facts.found else None
    if home:
        home = home.rstrip("/")
        out["ASCEND_HOME_PATH"] = home
        out.setdefault("ASCEND_TOOLKIT_HOME", home)
        out.setdefault("ASCEND_OPP_PATH", os.path.join(home, "opp"))
        out.setdefault("ASCEND_AICPU_PATH", home)
        libs = [os.path.join(home, "lib64"), os.path.join(home, f"{machine}-linux", "lib64")]
        ld = [p for p in out.get("LD_LIBRARY_PATH", "").split(":") if p]
        out["LD_LIBRARY_PATH"] = ":".join([p for p in libs if p not in ld and os.path.isdir(p)] + ld)
    bases = [ASCEND_BASE]
    if home:
        parts = home.split("/")
        # The install's own Ascend directory (/opt/Ascend, ~/Ascend ...), or the toolkit's parent.
        bases.append("/".join(parts[:parts.index("Ascend") + 1]) if "Ascend" in parts else os.path.dirname(home))
    for var in ("CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        if var in out:
            out[var] = strip_ascend(out[var], bases)
            if not out[var]:
                del out[var]
    return out, home


def _writable(path: str) -> bool:
    p = path
    while p and not os.path.exists(p):
        p = os.path.dirname(p)
    return bool(p) and os.access(p, os.W_OK)


def owning_dist(site: str) -> Optional[str]:
    """A pip distribution whose RECORD lists mooncake/ files in this site-packages."""
    try:
        entries = os.listdir(site)
    except OSError:
        return None
    for e in entries:
        if e.endswith(".dist-info") and e.lower().startswith("mooncake"):
            try:
                with open(os.path.join(site, e, "RECORD"), encoding="utf-8", errors="replace") as fh:
                    if any(line.startswith("mooncake/") for line in fh):
                        return e.rsplit("-", 1)[0].replace("_", "-")
            except OSError:
                continue
    return None


def run_build(opts: BuildOptions, reporter: Optional[Reporter] = None,
              signatures: Sequence = ()) -> BuildResult:
    reporter = reporter or Reporter()
    env = dict(os.environ if opts.env is None else opts.env)
    res = BuildResult(tag=opts.tag, source=opts.source or opts.url, python=opts.python, prefix=opts.prefix)
    res.log = os.path.abspath(opts.log) if opts.log else default_log()
    os.makedirs(os.path.dirname(res.log), exist_ok=True)
    work = tempfile.mkdtemp(prefix="ascend-doctor-mooncake-")
    res.workdir = work
    runner = Runner(Path(res.log))
    placed = False
    try:
        runner.note(f"ascend-doctor mooncake build: tag={opts.tag} source={res.source} python={opts.python} "
                    f"prefix={opts.prefix} workdir={work}")
        build_env, pre = _preflight(opts, env, work, runner, reporter, res)
        if not opts.stage_into:  # an hour of compiling is not started for a swap that would be refused
            from doctor.errors import UsageError
            from doctor.shell.transaction.recovery import refuse_if_unfinished

            try:
                refuse_if_unfinished(_target(opts, pre), env)
            except UsageError as e:
                raise BuildFailed("preflight", T("mooncake_build.error.blocked", error=e))
        src = os.path.join(work, "src")
        _fetch(opts, src, build_env, runner, reporter, res)
        _dependencies(opts, src, build_env, runner, reporter, res)
        build_dir = os.path.join(src, "build")
        stage = opts.stage_into or os.path.join(work, "stage")
        _step(res, run_step(runner, reporter, "configure",
                            cmake_argv(src, build_dir, opts.python, opts.prefix, opts.cmake_args), src,
                            opts.timeouts.configure, build_env), "configure")
        jobs = opts.jobs or os.cpu_count() or 1
        _step(res, run_step(runner, reporter, "build", ["make", f"-j{jobs}"], build_dir, opts.timeouts.build,
                            build_env), "build")
        _step(res, run_step(runner, reporter, "install", ["make", "install", f"DESTDIR={stage}"], build_dir,
                            opts.timeouts.install, build_env), "install")
        if not units(Path(stage)):
            raise BuildFailed("install", T("mooncake_build.error.nothing_installed"))
        if opts.stage_into:  # fix --apply: its transaction places the tree and verifies it
            res.ok, res.stage = True, "staged"
            return res
        placed = True
        _place(opts, pre, Path(stage), build_env, runner, reporter, res)
        res.ok, res.stage = True, "done"
        _post_notes(opts, res)
    except BuildFailed as e:
        res.stage, res.error, res.message = e.stage, e.message.text("en"), e.message
    finally:
        runner.close()
        if not res.ok:
            try:
                with open(res.log, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                text = ""
            res.tail = tail(text)
            res.known = match_known(text, signatures)
            res.restored = placed and res.restored
        if opts.keep_build:
            res.notes.append(BuildNote(T("mooncake_build.note.kept", dir=work)))
        else:
            shutil.rmtree(work, ignore_errors=True)
            res.workdir = None
    return res


def _place(opts: BuildOptions, pre: Dict, stage: Path, env: Dict[str, str], runner: Runner, reporter: Reporter,
           res: BuildResult) -> None:
    """Put the staged tree in place through the environment's transaction (lock, journal,
    synced backups): ``rollback`` undoes it later, and finishes it after a kill."""
    from doctor.errors import DoctorError
    from doctor.shell.transaction.engine import Transaction
    from doctor.shell.transaction.runner import StepFailed
    target = _target(opts, pre)
    runner.note("===== replacing the installed Mooncake")
    try:
        with Transaction.open(target, env, "mooncake build", runner.note) as txn:
            txn.start(plan={"steps": [{"kind": "build", "action": "build", "argv": ["mooncake", "build", str(opts.tag)]}]})
            txn.begin([], steps=[{"index": 0, "action": "build", "argv": None, "status": "running"}])
            try:
                try:
                    placed = txn.place(stage)
                except (OSError, StepFailed) as e:
                    raise BuildFailed("install", T("mooncake_build.error.swap", error=e))
                res.installed = list(placed)
                res.replaced = sorted({d for d in placed if _replaced(d, txn)})
                runner.note("\n".join("placed: " + p for p in placed))
                ok, detail = _verify(opts, env, placed, runner, reporter, res)
                if not ok:
                    raise BuildFailed("verify", T("mooncake_build.error.verify", detail=detail))
            except BaseException as e:
                problems = txn.fail(str(e) or type(e).__name__)
                res.restored = not problems
                runner.note("===== the previous install was put back" if not problems else
                            "===== the previous install could not be put back: " + "; ".join(problems[:3]))
                raise
            txn.journal.data["steps"][0]["status"] = "done"
            txn.commit()
    except DoctorError as e:  # the lock is held, an unfinished transaction, state not to be trusted
        raise BuildFailed("install", T("mooncake_build.error.swap", error=e))


def _target(opts: BuildOptions, pre: Dict):
    """The environment of the target interpreter, as fix --apply sees it (its prefix and site
    directories), with this build's --prefix allowed for this run."""
    from doctor.shell.transaction.target import Target, site_roots

    prefix = os.path.normpath(pre.get("prefix") or os.path.dirname(os.path.dirname(opts.python)))
    roots = site_roots(prefix, [p for p in pre.get("paths", []) if os.path.isdir(p)]) or [pre["site"]]
    return Target(python=opts.python, prefix=prefix, base_prefix=pre.get("base_prefix") or prefix, roots=roots,
                  install_prefixes=[opts.prefix])


def _replaced(dest: str, txn) -> bool:
    files = (txn.backups.get(":placed") or {}).get("files", [])
    return any(f == dest or f.startswith(dest.rstrip("/") + "/") for f in files)


def _step(res: BuildResult, step: StepResult, stage: str) -> StepResult:
    res.steps.append(step)
    if not step.ok:
        why = step.error or ("timed out" if step.timed_out else f"exit {step.returncode}")
        raise BuildFailed(stage, T("mooncake_build.error.step", name=step.name, why=why, argv=shlex.join(step.argv)))
    return step


def _preflight(opts: BuildOptions, env: Dict[str, str], work: str, runner: Runner, reporter: Reporter,
               res: BuildResult):
    tools = ["cmake", "make"] + (["git"] if (opts.tag or not opts.source) else [])
    missing = [t for t in tools if shutil.which(t, path=env.get("PATH")) is None]
    if not any(shutil.which(c, path=env.get("PATH")) for c in ("c++", "g++", "clang++")):
        missing.append("a C++ compiler (g++)")
    if missing:
        raise BuildFailed("preflight", T("mooncake_build.error.tools", missing=", ".join(missing)))
    if not opts.tag and not opts.source:
        raise BuildFailed("preflight", T("mooncake_build.error.no_source"))
    if opts.with_system_deps and os.geteuid() != 0:
        raise BuildFailed("preflight", T("mooncake_build.error.system_deps_root"))
    machine = platform.machine()
    build_env, home = cann_env(env, machine)
    res.cann_home = home
    if not home:
        res.manual.append(BuildNote(T("mooncake_build.manual.source_cann"), "source /usr/local/Ascend/ascend-toolkit/set_env.sh"))
        res.manual.append(BuildNote(T("mooncake_build.manual.source_cann9"), "source /usr/local/Ascend/cann/set_env.sh"))
        raise BuildFailed("preflight", T("mooncake_build.error.no_cann"))
    if any(re.match(r"-DUSE_ASCEND(:BOOL)?=(ON|1|TRUE)$", a, re.IGNORECASE) for a in opts.cmake_args):
        res.notes.append(BuildNote(T("mooncake_build.note.use_ascend")))
    # Mooncake <= v0.3.9 runs a bare `python3` to find the install directory: make it the target.
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir)
    shim = os.path.join(bin_dir, "python3")
    with open(shim, "w") as fh:
        fh.write(f"#!/bin/sh\nexec {shlex.quote(opts.python)} \"$@\"\n")
    os.chmod(shim, 0o755)
    build_env["PATH"] = bin_dir + os.pathsep + build_env.get("PATH", "")
    step = run_step(runner, reporter, "python", [opts.python, "-c", PREFLIGHT], work, opts.timeouts.preflight,
                    build_env)
    res.steps.append(step)
    info: Dict = {}
    if step.ok:
        lines = [line for line in step.output if line.startswith("{\"site\"")]
        try:
            info = json.loads(lines[-1]) if lines else {}
        except (ValueError, RecursionError):
            info = {}
    if not info:
        raise BuildFailed("preflight", T("mooncake_build.error.python", python=opts.python))
    if not info.get("site"):
        raise BuildFailed("preflight", T("mooncake_build.error.no_site", python=opts.python))
    res.site_packages = info["site"]
    owner = owning_dist(info["site"])
    if owner and not opts.stage_into:  # fix --apply removes a wrong wheel itself before it places the tree
        raise BuildFailed("preflight", T("mooncake_build.error.pip_owned", site=info["site"], owner=owner, python=opts.python))
    for target in (info["site"], opts.prefix):
        if not _writable(target):
            raise BuildFailed("preflight", T("mooncake_build.error.not_writable", target=target))
    return build_env, info


def _fetch(opts: BuildOptions, src: str, env: Dict[str, str], runner: Runner, reporter: Reporter,
           res: BuildResult) -> None:
    t = opts.timeouts
    if opts.source and not os.path.isdir(opts.source):
        raise BuildFailed("clone", T("mooncake_build.error.source_not_dir", source=opts.source))
    if opts.source and opts.tag:
        argv = ["git", "clone", "--branch", opts.tag, opts.source, src]
    elif opts.source:
        # The checkout as it is, uncommitted changes included; its old build/ is left out below.
        argv = ["cp", "-a", os.path.join(opts.source, "."), src]
        os.makedirs(src)
    elif opts.tag:
        argv = ["git", "clone", "--depth", "1", "--branch", opts.tag, opts.url, src]
    else:  # preflight refused this already
        raise BuildFailed("preflight", T("mooncake_build.error.no_source"))
    _step(res, run_step(runner, reporter, "clone" if argv[0] == "git" else "copy", argv, os.path.dirname(src),
                        t.clone, env), "clone")
    shutil.rmtree(os.path.join(src, "build"), ignore_errors=True)
    if os.path.isfile(os.path.join(src, ".gitmodules")):
        # A local mirror's submodules are local paths, which git refuses by default (CVE-2022-39253).
        local = ["-c", "protocol.file.allow=always"] if opts.source else []
        _step(res, run_step(runner, reporter, "submodules",
                            ["git"] + local + ["submodule", "update", "--init", "--recursive"], src, t.submodules, env),
              "submodules")
    else:
        res.steps.append(StepResult(name="submodules", argv=[], skipped="no .gitmodules"))


def _dependencies(opts: BuildOptions, src: str, env: Dict[str, str], runner: Runner, reporter: Reporter,
                  res: BuildResult) -> None:
    script = os.path.join(src, "dependencies.sh")
    if not os.path.isfile(script):
        res.steps.append(StepResult(name="dependencies", argv=[], skipped="no dependencies.sh"))
        return
    with open(script, encoding="utf-8", errors="replace") as fh:
        packages = system_packages(fh.read())
    try:
        with open("/etc/os-release", encoding="utf-8") as fh:
            family = os_family(fh.read())
    except OSError:
        family = ""
    if opts.with_system_deps:
        _step(res, run_step(runner, reporter, "dependencies", ["bash", "dependencies.sh", "-y"], src,
                            opts.timeouts.dependencies, env), "dependencies")
        return
    res.steps.append(StepResult(name="dependencies", argv=["bash", "dependencies.sh", "-y"],
                                skipped="system packages are a manual step (use --with-system-deps to run it)"))
    pkgs = packages.get(family) or packages.get("apt") or []
    if pkgs:
        tool = "yum install -y" if family == "yum" else "apt-get install -y"
        res.manual.append(BuildNote(T("mooncake_build.manual.packages"), f"{tool} {' '.join(pkgs)}"))
    res.manual.append(BuildNote(T("mooncake_build.manual.dependencies", tag=opts.tag or "main"), "bash dependencies.sh -y"))


def _verify(opts: BuildOptions, env: Dict[str, str], placed: List[str], runner: Runner, reporter: Reporter,
            res: BuildResult) -> Tuple[bool, str]:
    lib = os.path.join(opts.prefix, "lib")
    step, info, problem = verify_placed(opts.python, placed, env, runner, reporter, [lib], opts.timeouts.verify)
    res.steps.append(step)
    res.transport = info.pop("transport", None) if problem is None else None
    res.verify = info
    return problem is None, problem or ""


def verify_placed(python: str, placed: Sequence[str], env: Dict[str, str], runner: Runner,
                  reporter: Optional[Reporter] = None, libs: Sequence[str] = (),
                  timeout: float = 120) -> Tuple[StepResult, Dict, Optional[str]]:
    """The import vllm-ascend does, in the target interpreter, with the placed libraries on the
    loader path; then the Ascend transport must be among what was placed, linked against CANN.
    Returns (the step, what the import said, the problem or None)."""
    lib_dirs = list(libs) or sorted({os.path.dirname(p) for p in placed if p.endswith(".so") and "/lib" in p
                                     and "-packages" not in p})
    venv = dict(env)
    ld = [p for p in venv.get("LD_LIBRARY_PATH", "").split(":") if p]
    venv["LD_LIBRARY_PATH"] = ":".join(list(lib_dirs) + [p for p in ld if p not in lib_dirs])
    step = run_step(runner, reporter or Reporter(), "verify", [python, "-c", VERIFY], "/", timeout, venv)
    if not step.ok:
        return step, {}, step.error or ("timed out" if step.timed_out else f"the import check exited {step.returncode}")
    lines = [line for line in step.output if line.startswith("{\"python\"")]
    try:
        info = json.loads(lines[-1])
    except (ValueError, IndexError, RecursionError):
        return step, {}, "the import check printed nothing readable"
    if info.get("error"):
        return step, info, info["error"]
    package = info.get("package", "")
    if not any(package == p for p in placed):
        return step, info, f"`import mooncake` found {package}, not the new install (another copy comes first on sys.path)"
    candidates = [p for p in placed if os.path.basename(p).startswith("ascend_transport")]
    candidates += [os.path.join(package, f) for f in info.get("files", []) if f.startswith("ascend_transport")]
    for path in candidates:
        try:
            found = host_files.read_elf(path)
        except elf.ElfError:
            continue
        deps = [n for n in found.needed if lib_base(n).startswith(ASCEND_DEPS)]
        if deps:
            info["transport"] = path
            runner.note(f"Ascend transport: {path} (NEEDED {', '.join(found.needed)})")
            return step, info, None
    return step, info, ("no ascend_transport.so linked against libascendcl/libllm_datadist was installed "
                        "(the source does not build USE_ASCEND_DIRECT?)")


def check_placed(python: str, placed: Sequence[str], env: Dict[str, str], runner: Runner) -> Optional[str]:
    """fix --apply: the problem with a placed Mooncake, or None."""
    _step, _info, problem = verify_placed(python, placed, env, runner)
    return problem


def set_env_of(cann_home: Optional[str]) -> str:
    """CANN's set_env.sh for the toolkit the build used: next to its ``latest`` (8.x:
    /usr/local/Ascend/ascend-toolkit/set_env.sh) or in it (9.x: /usr/local/Ascend/cann/set_env.sh)."""
    if cann_home:
        home = cann_home.rstrip("/")
        for cand in (os.path.join(home, "set_env.sh"), os.path.join(os.path.dirname(home), "set_env.sh")):
            if os.path.isfile(cand):
                return cand
    return "/usr/local/Ascend/ascend-toolkit/set_env.sh"


def _post_notes(opts: BuildOptions, res: BuildResult) -> None:
    lib = os.path.join(opts.prefix, "lib")
    if res.transport and os.path.dirname(res.transport) == lib:
        res.notes.append(BuildNote(T("mooncake_build.note.loader_path", lib=lib),
                                   f"export LD_LIBRARY_PATH={shlex.quote(lib)}:$LD_LIBRARY_PATH"))
    res.notes.append(BuildNote(T("mooncake_build.note.source_cann"), f"source {shlex.quote(set_env_of(res.cann_home))}"))
