"""Every command the doctor prints runs as printed (issue 10).

For every kit scenario, every command of check and fix (text and JSON, English and Chinese) is
taken as the user would copy it and checked:

- it is one line of its own in the text report, exactly as the JSON spells it, never inside
  prose, never wrapped;
- it shell-parses (shlex) back to the argv the JSON gives;
- every file it names exists (host paths under the fake root);
- pip commands run with real pip against a wheelhouse laid out like the real indexes, with only
  the index options the command itself carries (``--dry-run --ignore-installed`` for installs,
  a throwaway copy of the environment for uninstalls), so a requirement that lives only on the
  PyTorch CPU index or the Ascend mirror fails without that index;
- ascend-doctor commands parse as the doctor's own command line, on the same target;
- shell builtins (source, export, unset) run in sh.

Identical commands (paths of the scenario aside) are run once. The wheels of the kit wheelhouse
are placed by recorded facts, not by what the doctor asks for: torch ``+cpu`` builds only on the
CPU index, torch-npu versions absent from PyPI's listing (tests/data/index-versions-torch-npu.txt)
only on the Ascend mirror, triton-ascend after 3.2.0 only there (the public index lists 3.2.0 and
older), the rest on PyPI.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import pytest
from fakehost import wheelhouse as wh
from fakehost.dists import Stub
from kitrun import kit_run, names
from packaging.requirements import Requirement
from packaging.version import Version
import doctor_fork

DATA = Path(__file__).parent / "data"
INDEXES = {
    "https://pypi.org/simple": wh.PYPI,
    "https://download.pytorch.org/whl/cpu": wh.CPU,
    "https://mirrors.huaweicloud.com/ascend/repos/pypi": wh.ASCEND,
}
PUBLIC_TORCH_NPU = {line.strip() for line in (DATA / "index-versions-torch-npu.txt").read_text().splitlines()
                    if line.strip() and not line.startswith("#")}
BUILTINS = ("source", "export", "unset")
TEXTS = ("check.en.txt", "check.zh.txt", "fix.en.txt", "fix.zh.txt")


# ---------------------------------------------------------------------------------------------
# the commands of one scenario


class Printed:
    """A command as printed, where it was printed and on which scenario."""

    def __init__(self, shell: str, argv: Optional[List[str]], scenario: str, where: str):
        self.shell, self.argv, self.scenario, self.where = shell, argv, scenario, where


def json_commands(name: str) -> List[Printed]:
    run = kit_run(name)
    out: List[Printed] = []
    for key in ("check.json", "check.zh.json"):
        for f in json.loads(run.out[key][1])["findings"]:
            for c in f.get("commands", []):
                argv = [f"{k}={v}" for k, v in (c.get("env") or {}).items()] + c["argv"]
                out.append(Printed(c["shell"], argv, name, f"{key} {f['id']}"))
    plan = json.loads(run.out["fix.json"][1])
    for s in plan["steps"]:
        if s.get("argv"):
            env = [f"{k}={v}" for k, v in (s.get("env") or {}).items()]
            shell = " ".join([f"{k}={shlex.quote(v)}" for k, v in (s.get("env") or {}).items()] + [shlex.join(s["argv"])])
            out.append(Printed(shell, env + s["argv"], name, f"fix.json step {s['kind']}/{s.get('action')}"))
        elif s.get("command"):
            out.append(Printed(s["command"], None, name, f"fix.json step {s['kind']}"))
    for a in plan.get("alternatives") or []:
        out.append(Printed(a["command"], None, name, "fix.json alternative"))
    return out


COMMAND_LINE = re.compile(r"^\s+((\S*/)?ascend-doctor |source |export |unset |npu-smi |reboot$|\S*/python\S* -m pip |python3 -m pip )")


def text_commands(name: str) -> Dict[str, List[str]]:
    """The lines of each text report that are commands (indented, starting with a program)."""
    run = kit_run(name)
    return {key: [line.strip() for line in run.out[key][1].splitlines() if COMMAND_LINE.match(line)]
            for key in TEXTS}


# a command named inside prose (the doctor's own, with or without options after it)
PROSE_COMMAND = re.compile(r"(pip install|pip uninstall|ascend-doctor (fix|check|rollback|snapshot|smoke|guard|explain|matrix)\b"
                           r"|source /)")


@pytest.mark.parametrize("name", names())
def test_every_command_is_a_line_of_its_own_in_both_languages(name):
    run = kit_run(name)
    lines = text_commands(name)
    shown_ids = set()
    for key in ("check.en.txt",):
        for line in run.out[key][1].splitlines():
            m = re.match(r"^[✗!i✓-] (\S+)\s", line)
            if m:
                shown_ids.add(m.group(1))
    for p in json_commands(name):
        if p.where.startswith("check.json"):
            if p.where.split()[1] not in shown_ids:
                continue  # a note the default report leaves out (-v shows it)
            for key in ("check.en.txt", "check.zh.txt"):
                assert p.shell in lines[key], f"{name}: {p.where}: {p.shell!r} is not a line of {key}"
        elif p.where.startswith("fix.json"):
            for key in ("fix.en.txt", "fix.zh.txt"):
                assert p.shell in lines[key], f"{name}: {p.where}: {p.shell!r} is not a line of {key}"
    for key in TEXTS:
        for line in run.out[key][1].splitlines():
            if COMMAND_LINE.match(line) or line.startswith("ascend-doctor 0"):
                continue
            assert not PROSE_COMMAND.search(line), f"{name}/{key}: a command inside prose: {line!r}"


# ---------------------------------------------------------------------------------------------
# running them


@pytest.fixture(scope="module")
def kit_house(house, tmp_path_factory):
    """The session wheelhouse, copied, to which the test adds the wheels of other versions (placed
    by the recorded facts above) without changing what other tests resolve."""
    base = tmp_path_factory.mktemp("kit-house")
    dirs = {k: base / k for k in house["dirs"]}
    for k, d in house["dirs"].items():
        shutil.copytree(d, dirs[k])
    return {"dirs": dirs, "template": house["template"]}


def place(name: str, version: str) -> str:
    """Which index has this file (the wheelhouse directory)."""
    if name in ("torch", "torchvision", "torchaudio"):
        return wh.CPU if "+cpu" in version else wh.PYPI
    if name == "torch-npu":
        return wh.PYPI if version in PUBLIC_TORCH_NPU else wh.ASCEND
    if name == "triton-ascend":
        return wh.PYPI if Version(version) <= Version("3.2.0") else wh.ASCEND
    return wh.PYPI


def _have(dirs, name: str) -> List[Tuple[str, str]]:
    prefix = re.sub(r"[-_.]+", "_", name) + "-"
    out = []
    for key, d in dirs.items():
        for f in d.glob(prefix + "*.whl"):
            out.append((key, f.name[len(prefix):].split("-")[0]))
    return out


def provide(kit, requirement: str) -> None:
    """Make sure a wheel for ``requirement`` exists where the real one is (no-op when the
    wheelhouse already has one that satisfies it)."""
    req = Requirement(requirement)
    name = req.name.lower().replace("_", "-")
    exact = [s.version for s in req.specifier if s.operator == "=="]
    if exact:
        version = exact[0]
        key = place(name, version)
        if not any(v == version for k, v in _have(kit["dirs"], name) if k == key):
            wh.write_wheel(kit["dirs"][key], Stub(name, version, requires=[]))
        return
    if any(req.specifier.contains(v, prereleases=True) for _, v in _have(kit["dirs"], name)):
        return
    assert req.specifier.contains("1.0.0"), f"the test cannot model a wheel for {requirement}"
    wh.write_wheel(kit["dirs"][place(name, "1.0.0")], Stub(name, "1.0.0", requires=[]))


def split_pip(argv: List[str]) -> Tuple[List[str], str, List[str]]:
    """(the program up to the pip subcommand, the subcommand, its arguments)."""
    i = argv.index("pip") + 1
    while argv[i].startswith("-"):  # pip's general options before the subcommand (--python X)
        i += 2 if argv[i] == "--python" else 1
    return argv[:i], argv[i], argv[i + 1:]


def index_dirs(kit, args: List[str]) -> List[Path]:
    keys = [wh.PYPI]
    for i, a in enumerate(args):
        if a in ("--index-url", "-i", "--extra-index-url"):
            url = args[i + 1].rstrip("/")
            assert url in INDEXES, f"an index the test does not know: {url}"
            keys = [INDEXES[url]] if a != "--extra-index-url" else keys + [INDEXES[url]]
    return [kit["dirs"][k] for k in keys]


def requirements_of(args: List[str]) -> List[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--index-url", "-i", "--extra-index-url", "-c", "--constraint", "-r", "--requirement"):
            skip = True
            continue
        if not a.startswith("-"):
            out.append(a)
    return out


def pip_env(dirs: Iterable[Path]) -> Dict[str, str]:
    return wh.pip_env(os.environ, list(dirs))


def run_pip_install(kit, argv: List[str]) -> subprocess.CompletedProcess:
    program, sub, args = split_pip(argv)
    for r in requirements_of(args):
        provide(kit, r)
    return subprocess.run(program + [sub, "--dry-run", "--ignore-installed", "--no-cache-dir", "--quiet"] + args,
                          env=pip_env(index_dirs(kit, args)), capture_output=True, text=True, timeout=300)


def run_pip_uninstall(kit, argv: List[str], fake, scratch: Path) -> subprocess.CompletedProcess:
    """On a throwaway copy of the environment: the same pip, the same names."""
    program, sub, args = split_pip(argv)
    copy = scratch / "venv"
    shutil.copytree(fake.base / "venv", copy, symlinks=True)
    target = str(fake.python)
    swapped = [str(copy / "bin" / "python") if a == target else a for a in program]
    assert swapped != program, f"{argv}: the uninstall does not name the judged environment"
    names = [a for a in args if not a.startswith("-")]
    site = Path(str(fake.site).replace(str(fake.base / "venv"), str(copy)))
    before = {n for n in names if any(site.glob(re.sub(r"[-_.]+", "_", n) + "-*.dist-info"))}
    assert before == set(names), f"{argv}: uninstalls what is not installed: {set(names) - before}"
    proc = subprocess.run(swapped + [sub] + args, env=pip_env([]), capture_output=True, text=True, timeout=300)
    left = {n for n in names if any(site.glob(re.sub(r"[-_.]+", "_", n) + "-*.dist-info"))}
    assert not left, f"{argv}: still installed after it ran: {left}"
    return proc


# pip commands this run has run as printed and seen succeed, by what decides their outcome: the
# judged interpreter and everything after pip's subcommand (the host's directory normalised).
# The in-process test and the README-shell test print the same commands, spelled with their own
# doctor's interpreter: whichever runs one first resolves it; the other checks its spelling (that
# interpreter starts pip, the target is the judged one), not resolving it a second time.
# The record is shared by the xdist workers of the run (the two tests run on different workers,
# at once): a command is resolved under a lock of its own, so the other test waits for that run
# instead of making it a second time, then reads that it succeeded.
PROVEN_PIP: Dict[str, bool] = {}


class _Proof:
    def __init__(self, key: str, path: Optional[Path]):
        self.key, self.path = key, path

    @property
    def proven(self) -> bool:
        return self.key in PROVEN_PIP or (self.path is not None and self.path.is_file())

    def done(self) -> None:
        PROVEN_PIP[self.key] = True
        if self.path is not None:
            self.path.write_text(self.key)


@contextlib.contextmanager
def pip_proof(key: str) -> Iterator[_Proof]:
    """Whether the pip command ``key`` (``pip_key``) ran as printed and succeeded in this run; held
    (an exclusive lock per key) while the caller resolves it. Never nested."""
    import kitrun
    from fakehost.shared import exclusive

    if kitrun.SHARED is None:
        yield _Proof(key, None)
        return
    where = kitrun.SHARED / "proven-pip"
    name = hashlib.sha256(key.encode()).hexdigest()[:32]
    with exclusive(where / f"{name}.lock"):
        yield _Proof(key, where / name)


_STARTS: Dict[Tuple[str, ...], Optional[str]] = {}


def _pip_starts(program: Tuple[str, ...], env: Dict[str, str]) -> Optional[str]:
    """None when ``program`` (``X -m pip``) starts pip (asked once per interpreter)."""
    if program not in _STARTS:
        proc = subprocess.run([*program, "--version"], env=env, capture_output=True, text=True, timeout=120)
        _STARTS[program] = None if proc.returncode == 0 and proc.stdout.startswith("pip ") else \
            f"{shlex.join(program)}: exit {proc.returncode}: {proc.stderr[-300:]}"
    return _STARTS[program]


PIP_VALUED = ("--index-url", "-i", "--extra-index-url", "-c", "--constraint", "-r", "--requirement")


def pip_key(argv: List[str], base: str) -> str:
    """What decides the outcome of a pip command: the judged interpreter, the subcommand, its
    options and its requirements, as sets (pip's option parser reads `--no-deps X --extra-index-url
    U` and `--no-deps --extra-index-url U X` alike; each spelling is still parsed on its own)."""
    program, sub, args = split_pip(argv)
    target = program[program.index("--python") + 1] if "--python" in program else program[0]
    options, reqs, i = [], [], 0
    while i < len(args):
        if args[i] in PIP_VALUED and i + 1 < len(args):
            options.append(f"{args[i]} {args[i + 1]}")
            i += 2
            continue
        (options if args[i].startswith("-") else reqs).append(args[i])
        i += 1
    return shlex.join([target, sub, *sorted(options), "--", *sorted(reqs)]).replace(base, "<BASE>")


def parse_doctor(argv: List[str]) -> None:
    """The doctor's own command line accepts it (parsed, not run), and for ``fix`` so do the
    checks of its options the command makes before it reads anything (--apply with --from or
    --site-packages, --from with --python ...: a usage error, exit 2)."""
    import typer.main

    from doctor.cli.main import make_app

    command = typer.main.get_command(make_app())
    args = list(argv[1:])
    ctx = command.make_context("ascend-doctor", [], resilient_parsing=True)  # a group: no options here
    while hasattr(command, "get_command"):  # a group: the next word names the command
        name, args = args[0], args[1:]
        command = command.get_command(ctx, name)
        assert command is not None, f"no command {name}"
        group = hasattr(command, "get_command")
        ctx = command.make_context(name, [] if group else list(args), parent=ctx, resilient_parsing=group)
    if ctx.command_path.split()[1:] == ["fix"]:
        from doctor.cli.fix import fix_options
        from doctor.usecases import check, fix

        opts = fix_options(ctx.params, "en")
        fix.validate(opts)
        check.validate(opts.check)


def host_path(fake, path: str) -> bool:
    return os.path.exists(path) or os.path.exists(str(fake.root) + path)


def check_one(p: Printed, kit, scratch: Path, fake=None) -> Optional[str]:
    """None when the command runs as printed, else why not."""
    fake = fake or kit_run(p.scenario).fake
    try:
        argv = shlex.split(p.shell)
    except ValueError as e:
        return f"does not shell-parse: {e}"
    if p.argv is not None and argv != p.argv:
        return f"shell {argv} != argv {p.argv}"
    while argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):
        argv = argv[1:]  # VAR=value for this command only
    for a in argv:
        if a.startswith("/") and not a.startswith("//"):
            if not host_path(fake, a):
                return f"names {a}, which does not exist"
    program = argv[0]
    if program == "export" and "=" in argv[-1]:  # export LD_PRELOAD=/path: a preload of a missing file breaks every command after it
        for item in argv[-1].split("=", 1)[1].split(":"):
            if item.startswith("/") and item.endswith(".so.2") and not host_path(fake, item):
                return f"exports {item}, which does not exist"
    if program in ("apt-get", "yum"):  # the host's own package manager: parsed, never run
        return None if argv[1:3] == ["install", "-y"] and len(argv) > 3 else f"a {program} command the test does not know"
    if program in BUILTINS:
        script = p.shell.replace("source ", ". ", 1) if program == "source" else p.shell
        if program == "source":
            script = ". " + shlex.quote(argv[1] if os.path.exists(argv[1]) else str(fake.root) + argv[1])
        proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60, env={"PATH": os.defpath})
        return None if proc.returncode == 0 else f"sh: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
    if os.path.basename(program) == "ascend-doctor":
        try:
            parse_doctor(argv)
        except Exception as e:  # click's usage errors
            return f"the doctor's command line refuses it: {type(e).__name__}: {getattr(e, 'message', e)}"
        if "--python" in argv:
            target = argv[argv.index("--python") + 1]
            if target != str(fake.python):
                return f"runs on another interpreter ({target}) than the one judged ({fake.python})"
        return None
    if program == "npu-smi":
        return None if argv[1:2] == ["info"] else "an npu-smi command the test does not know"
    if program == "reboot":  # the host's own: parsed, never run
        return None if argv == ["reboot"] else "a reboot with options the test does not know"
    if "pip" in argv and argv[argv.index("pip") - 1] == "-m":
        program, sub, _ = split_pip(argv)
        with pip_proof(pip_key(argv, str(fake.base))) as proof:
            if proof.proven:  # resolved as printed by the README-shell test
                return _pip_starts(tuple(program[:3]), dict(os.environ))
            if sub == "install":
                proc = run_pip_install(kit, argv)
            elif sub == "uninstall":
                proc = run_pip_uninstall(kit, argv, fake, scratch)
            else:
                return f"a pip subcommand the test does not run: {sub}"
            if proc.returncode == 0:
                proof.done()
                return None
        return f"pip: exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-600:]}"
    return f"a program the test does not know how to run: {program}"


def normalised(p: Printed) -> str:
    fake = kit_run(p.scenario).fake
    return p.shell.replace(str(fake.base), "<BASE>")


def all_printed() -> List[Printed]:
    out: List[Printed] = []
    for name in names():
        out.extend(json_commands(name))
        for key, lines in text_commands(name).items():
            out.extend(Printed(line, None, name, key) for line in lines)
    return out


@pytest.mark.slow  # ~50 real pip runs and every kit scenario: 65 s of CPU, the longest test of the suite
def test_every_printed_command_runs_as_printed(kit_house, tmp_path):
    unique: Dict[str, Printed] = {}
    spellings: Dict[str, List[Printed]] = {}  # the other spellings of a pip command run once
    for p in all_printed():
        key = normalised(p)
        if " -m pip " in p.shell and key not in unique:
            words, env = shlex.split(p.shell), []
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                env, words = env + [words[0]], words[1:]
            meaning = "pip: " + " ".join(env) + " " + pip_key(words, str(kit_run(p.scenario).fake.base))
            if meaning in unique:
                spellings.setdefault(meaning, []).append(p)
                continue
            key = meaning
        unique.setdefault(key, p)
    for others in spellings.values():  # each spelling parses to the argv its JSON gives
        for p in others:
            words = shlex.split(p.shell)
            assert p.argv is None or words == p.argv, (p.shell, p.argv)
    assert len(unique) > 20  # check's hints and fix's steps on 25 scenarios
    pips = {k: p for k, p in unique.items() if " -m pip " in p.shell}
    assert any("install" in k for k in pips) and any("uninstall" in k for k in pips)

    def one(item):
        i, (key, p) = item
        scratch = tmp_path / str(i)
        scratch.mkdir()
        return key, p, check_one(p, kit_house, scratch)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, enumerate(sorted(unique.items()))))
    bad = [f"{p.scenario} {p.where}: {key}\n    -> {why}" for key, p, why in results if why]
    assert not bad, f"{len(bad)} of {len(unique)} printed commands do not run as printed:\n" + "\n".join(bad)


@pytest.mark.slow  # real pip on a copy of the wheelhouse, like the test above
def test_the_requirements_file_installs_the_stack_with_its_own_index_lines(kit_house, tmp_path):
    """fix --requirements FILE: `pip install --no-deps -r FILE` (its header's promise) resolves
    every pin with the index lines the file carries (the CPU torch, the Ascend mirror)."""
    from kitrun import run_cli

    for name in ("seed_001_naive_fix", "cuda_torch"):
        fake = kit_run(name).fake
        pins = tmp_path / f"{name}.txt"
        code, _, err = run_cli(fake, ("fix", "--offline", "--requirements", str(pins)))
        assert code in (0, 3, 4) and pins.exists(), err
        text = pins.read_text()
        assert "pip install --no-deps -r THIS_FILE" in text
        lines = [x.strip() for x in text.splitlines() if x.strip() and not x.startswith("#")]
        index_args = [a for x in lines if x.startswith("--") for a in x.split()]
        for req in (x for x in lines if not x.startswith("-")):
            provide(kit_house, req)
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-cache-dir",
                               "--quiet", "--no-deps", "-r", str(pins)],
                              env=pip_env(index_dirs(kit_house, index_args)), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{name}: {text}\n{proc.stderr[-1500:]}"


@pytest.mark.slow  # real pip on a copy of the wheelhouse, like the test above
def test_a_command_without_its_index_fails_here(kit_house, tmp_path):
    """The test can fail: torch-npu 2.7.1.post1 without the Ascend mirror (the issue's case) does
    not resolve, and a torch +cpu pin without the CPU index does not either."""
    for argv in ([sys.executable, "-m", "pip", "install", "--no-deps", "torch-npu==2.7.1.post1"],
                 [sys.executable, "-m", "pip", "install", "--no-deps", "torch==2.7.1+cpu"]):
        assert run_pip_install(kit_house, argv).returncode != 0, argv
    ok = [sys.executable, "-m", "pip", "install", "--no-deps", "--extra-index-url",
          "https://mirrors.huaweicloud.com/ascend/repos/pypi", "torch-npu==2.7.1.post1"]
    assert run_pip_install(kit_house, ok).returncode == 0


@pytest.mark.slow  # a wheel build and a venv install (10 s of CPU), as the README-shell test
def test_the_dockerfile_example_installs_the_doctor_in_its_own_venv_and_runs(doctor_wheel):
    """docs/fix.md (and its Chinese twin): the doctor goes into a virtualenv of its own, as the
    repository's Dockerfile does, never into the serving environment it judges; every RUN step is
    valid sh and every ascend-doctor command in it is one the doctor accepts."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    for name in ("fix.md", "fix.zh.md"):
        text = (docs / name).read_text(encoding="utf-8")
        block = re.search(r"```dockerfile\n(.*?)```", text, re.S).group(1)
        steps, current = [], None
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            if line.startswith(("RUN ", "FROM ")):
                current = [line]
                steps.append(current)
            elif current is not None and line.strip():
                current.append(line)
        runs = ["\n".join(s)[4:] for s in steps if s[0].startswith("RUN ")]
        assert runs, name
        for script in runs:
            proc = subprocess.run(["sh", "-n", "-c", script], capture_output=True, text=True, timeout=30)
            assert proc.returncode == 0, f"{name}: not valid sh: {script}\n{proc.stderr}"
            for m in re.finditer(r"\bpip install[^\n;&]*?\s'?ascend-doctor(?=[\s\['$])", script + "\n"):
                before = script[:m.start()].rstrip().rsplit(None, 1)[-1]
                assert before.startswith("/opt/ascend-doctor/"), f"{name}: the doctor goes into the serving env: {script}"
            for line in re.findall(r"(?:^|&&|;)\s*(ascend-doctor [^;&]*)", script.replace("\\\n", " ")):
                argv = shlex.split(line.replace('"$(command -v python3)"', "/usr/bin/python3"))
                parse_doctor(argv)
        assert re.search(r"python3 -m venv /opt/ascend-doctor\b", block), name
        _the_doctor_installs_from_what_the_block_copies(name, block, doctor_wheel)


_BUILT: Dict[str, bool] = {}


def _the_doctor_installs_from_what_the_block_copies(name: str, block: str, checkout_wheel: Path) -> None:
    """The package is not on PyPI: the doctor's pip installs a directory the block's COPY lines
    fill from the build context (the repository), and that directory builds the same wheel as the
    whole checkout (the session's build, ``checkout_wheel``): every module and data file
    (matrices, texts)."""
    import tempfile
    import zipfile

    repo = Path(__file__).resolve().parents[1]
    installs = re.findall(r"/opt/ascend-doctor/bin/pip install (?:--\S+ )*(\S+)", block)
    assert installs and all(x.startswith("/") for x in installs), f"{name}: the doctor is not installed from the checkout: {installs}"
    key = "\n".join(x for x in block.splitlines() if x.startswith("COPY ")) + repr(installs)
    if key in _BUILT:  # the Chinese page's block copies and installs the same (one build proves both)
        return
    _BUILT[key] = True
    with tempfile.TemporaryDirectory(prefix="dockerfile-") as tmp:
        image = Path(tmp) / "image"
        for line in block.splitlines():
            if line.startswith("COPY "):  # COPY SRC... DIR/ puts each in DIR; COPY SRC DEST names it
                *sources, dest = line.split()[1:]
                for s in sources:
                    target = image / dest.lstrip("/") / Path(s).name if dest.endswith("/") else image / dest.lstrip("/")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    (shutil.copytree if (repo / s).is_dir() else shutil.copy)(repo / s, target)
        for src in installs:
            where = image / src.lstrip("/")
            assert (where / "pyproject.toml").exists(), f"{name}: nothing COPYed to {src}"
            proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                                   "-w", str(Path(tmp) / "wheels"), str(where)], capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, f"{name}: {src} does not build: {proc.stderr[-1500:]}"
            wheel = next((Path(tmp) / "wheels").glob("ascend_doctor-*.whl"))
            files = {f for f in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in f}
            assert {"doctor/entry.py", "doctor/matrices/vllm-ascend.toml", "doctor/i18n/common.toml"} <= files, name
            whole = {f for f in zipfile.ZipFile(checkout_wheel).namelist() if ".dist-info/" not in f}
            assert files == whole, f"{name}: the COPY lines leave out {sorted(whole - files)[:10]}"


# ---------------------------------------------------------------------------------------------
# after the README's own set-up (issue 22)
#
# A clean clone of the repository at HEAD (uncommitted changes are not in it), the README's
# set-up command run as written in bash, and then the shell the user has: the environment that
# command leaves (its venv activated) or a new shell where nothing is activated and the doctor is
# started by its path. Reports of check, fix (dry run), guard, explain, snapshot / check --from
# and --image-tar, in English and Chinese, and every command they print run through bash as
# pasted, in the shell it was printed in. Doctor commands run for real (an --apply under a
# terminal that answers "n" at its prompt); pip commands as printed plus --dry-run against the
# wheelhouse (the machine's pip configuration); builtins in sh; an image's RUN lines are
# parsed by sh (no docker engine here); `mooncake build` is parsed only (it would install into
# /usr/local and the target).

# one host per kind of command (the in-process test above covers every scenario's commands)
README_HOSTS = ("seed_001_official_image", "seed_001_naive_fix", "cuda_torch", "cann_too_old_073", "healthy_a2_documented")
SHELL_LINE = re.compile(r"^\s+((\S*/)?ascend-doctor |source |export |unset |npu-smi |reboot$|RUN |\S*/python\S* -m pip "
                        r"|python3 -m pip )")


def _machine_env() -> Dict[str, str]:
    """This machine's environment as a new login would have it: no virtualenv active and no
    doctor on PATH (the one running the tests may be)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "VIRTUAL_ENV", "COV_"))}
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and not os.path.exists(os.path.join(d, "ascend-doctor")))
    return env


@pytest.fixture(scope="session")
def readme_env(tmp_path_factory):
    """The README's set-up, once per run: {"clone", "bin", "env" (after it), "rc", "out"}."""
    from fakehost import REPO
    from fakehost.shared import once_per_run

    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")

    def make(base: Path) -> None:
        clone = base / "ascend-doctor"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, capture_output=True, timeout=300)
        setup = re.findall(r"```\n(.+?)\n```", (clone / "README.md").read_text())[0]
        script = f"set +e\ncd {shlex.quote(str(clone))}\n{setup}\necho $? > ../setup.rc\nenv -0 > ../setup.env\n"
        proc = subprocess.run(["bash", "-c", script], env=_machine_env(), capture_output=True, text=True, timeout=1200)
        (base / "setup.out").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)

    base = once_per_run(tmp_path_factory, "readme-env", make)
    env = dict(x.split("=", 1) for x in (base / "setup.env").read_text().split("\0") if "=" in x)
    clone = base / "ascend-doctor"
    return {"clone": clone, "bin": clone / ".venv" / "bin", "env": env, "rc": int((base / "setup.rc").read_text()),
            "out": (base / "setup.out").read_text()}


@pytest.mark.slow  # venv + pip + an isolated build of a clean clone: ~24 s of CPU; the fast loop has the test below
def test_the_readme_set_up_installs_activates_and_checks(readme_env):
    """On this machine (no Ascend stack) the set-up's check says so first and exits 3, and the
    shell it leaves has the doctor's venv active: `ascend-doctor` is this doctor."""
    assert readme_env["rc"] == 3, readme_env["out"][-3000:]
    lines = readme_env["out"].splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("ascend-doctor 0"))
    assert lines[start + 1].startswith("✗ Not an Ascend machine"), lines[start:start + 3]
    env = readme_env["env"]
    assert env["PATH"].split(os.pathsep)[0] == str(readme_env["bin"]) and env["VIRTUAL_ENV"].endswith(".venv")
    bare = subprocess.run(["bash", "-c", "ascend-doctor"], env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 0 and bare.stdout.startswith("Usage: ascend-doctor") and not bare.stderr


@pytest.mark.slow  # ~1 s of CPU or more: a venv of the built wheel
def test_the_doctor_installed_in_a_venv_of_its_own_checks_from_the_activated_shell(doctor_wheel, tmp_path):
    """The fast loop's share of the README set-up above (which runs it as written, in the full
    suite): the wheel `pip install .` builds from this checkout (the session's doctor_wheel, an
    isolated build), installed with its dependencies into a virtualenv of its own; in a shell of
    this machine with that venv active, `ascend-doctor` is that venv's script, bare it prints its
    usage, and `ascend-doctor check` says first that this is not an Ascend machine (exit 3)."""
    from fakehost.installs import install, make_venv

    setup = re.findall(r"```\n(.+?)\n```", (Path(__file__).resolve().parents[1] / "README.md").read_text())[0]
    assert setup == "python3 -m venv .venv && . .venv/bin/activate && pip install . && ascend-doctor check", setup
    venv = tmp_path / ".venv"
    install(make_venv(sys.executable, venv, with_pip=False), [str(doctor_wheel)], compile=False)
    env = _machine_env()
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}")
    proc = subprocess.run(["bash", "-c", "command -v ascend-doctor && ascend-doctor check"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == str(venv / "bin" / "ascend-doctor"), lines[:2]
    assert lines[1].startswith("ascend-doctor 0") and lines[2].startswith("✗ Not an Ascend machine"), lines[:4]
    bare = subprocess.run(["bash", "-c", "ascend-doctor"], env=env, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 0 and bare.stdout.startswith("Usage: ascend-doctor") and not bare.stderr


class Shell:
    """A shell on a kit host: ``activated`` is the one the README's set-up leaves, else a new
    shell where the doctor is started by its path."""

    def __init__(self, readme, fake, activated: bool, house_dirs: Iterable[Path]):
        self.fake, self.activated = fake, activated
        env = dict(fake.env)
        if activated:
            env.update(VIRTUAL_ENV=readme["env"]["VIRTUAL_ENV"], PATH=f"{readme['bin']}{os.pathsep}{fake.env['PATH']}")
        self.env = wh.pip_env(env, list(house_dirs))  # the machine's pip configuration: the wheelhouse
        self.doctor = "ascend-doctor" if activated else str(readme["bin"] / "ascend-doctor")

    def run(self, line: str, timeout: float = 300, tty_answer: Optional[str] = None) -> Tuple[int, str, str]:
        if tty_answer is not None:
            return _in_a_terminal(line, self.env, self.fake.workdir, tty_answer, timeout)
        p = subprocess.run(["bash", "-c", line], env=self.env, cwd=self.fake.workdir, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def doctor_line(self, *argv: str) -> str:
        return shlex.join([self.doctor, *argv])


def _in_a_terminal(line: str, env, cwd, answer: str, timeout: float) -> Tuple[int, str, str]:
    """``line`` in bash on a pseudo-terminal, ``answer`` typed at the first prompt ("?")."""
    import pty
    import select
    import time

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(["bash", "-c", line], env=env, cwd=cwd, stdin=secondary, stdout=secondary, stderr=secondary,
                            start_new_session=True)
    os.close(secondary)
    out, answered, end = b"", False, time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            ready, _, _ = select.select([primary], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
                if not answered and b"? [y/N]" in out:
                    os.write(primary, answer.encode() + b"\n")
                    answered = True
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=max(1.0, end - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(primary)
    return code, out.decode(errors="replace").replace("\r\n", "\n"), ""


def printed_lines(text: str) -> List[str]:
    return [x.strip() for x in text.splitlines() if SHELL_LINE.match(x)]


def _is_doctor(argv: List[str], shell: Shell) -> bool:
    return bool(argv) and argv[0] == shell.doctor


def run_printed(line: str, shell: Shell, kit, scratch: Path) -> Optional[str]:
    """None when ``line``, pasted into ``shell``, runs and does what it says; else why not."""
    fake = shell.fake
    if line.startswith("RUN "):
        proc = subprocess.run(["sh", "-n", "-c", line[4:]], capture_output=True, text=True, timeout=30)
        return None if proc.returncode == 0 else f"not a valid RUN line: {proc.stderr.strip()}"
    argv = shlex.split(line)
    words = argv
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    if os.path.basename(words[0]) == "ascend-doctor":
        if not _is_doctor(words, shell):
            return f"starts another doctor than this shell's ({shell.doctor})"
        if words[1:3] == ["mooncake", "build"]:
            parse_doctor(["ascend-doctor", *words[1:]])
            return None
        if "--python" in words and words[words.index("--python") + 1] != str(fake.python):
            return f"judges another interpreter than {fake.python}"
        if "--apply" in words:
            code, out, _ = shell.run(line, tty_answer="n")
            prompt = f"to {fake.python}?" if fake.python else "?"
            if code != 1 or prompt not in out:
                return f"--apply did not stop at its prompt for {fake.python}: exit {code}\n{out[-1500:]}"
            return None
        code, out, err = shell.run(line)
        if code in (1, 2, 127) or "error:" in err:
            return f"exit {code}: {(err or out).strip()[-800:]}"
        if words[1:2] == ["fix"] and not out.startswith("Plan for vllm-ascend") and "image " not in out.split("\n", 1)[0]:
            return f"fix printed no plan: {out[:500]}"
        if words[1:3] == ["matrix", "explain"] and words[3] not in out:
            return f"matrix explain does not explain {words[3]}"
        return None
    # pip, builtins, npu-smi: the checks of the in-process test, pip run through the shell
    if "pip" in words and words[words.index("pip") - 1] == "-m":
        program, sub, args = split_pip(words)

        def spelling() -> Optional[str]:
            # resolved as printed by the in-process test (the same command after the interpreter):
            # here its spelling, and that the interpreter it names runs pip
            target = program[program.index("--python") + 1] if "--python" in program else program[0]
            if target != str(fake.python):
                return f"drives another interpreter ({target}) than the one judged ({fake.python})"
            return _pip_runs(tuple(program[:3]), shell)

        with pip_proof(pip_key(words, str(fake.base))) as proof:
            if proof.proven:
                return spelling()
            if sub == "install":
                for r in requirements_of(args):
                    provide(kit, r)
                env = pip_env(index_dirs(kit, args))
                proc = subprocess.run(["bash", "-c", line + " --dry-run --ignore-installed --no-cache-dir --quiet"],
                                      env=dict(shell.env, **{k: v for k, v in env.items() if k.startswith("PIP_")}),
                                      cwd=fake.workdir, capture_output=True, text=True, timeout=300)
                if proc.returncode == 0:
                    proof.done()
                    return None
                return f"pip: exit {proc.returncode}: {proc.stderr.strip()[-600:]}"
        # an uninstall: run on a copy of the environment, as the in-process test does (it takes the proof)
    return check_one(Printed(line, None, "", "readme shell"), kit, scratch, fake)


def _the_activated_shell_starts_this_doctor(line: str, shell: Shell, readme) -> Optional[str]:
    words = shlex.split(line)
    if words[0] != "ascend-doctor":
        return f"not started as ascend-doctor in the activated shell: {line}"
    parse_doctor(words)
    code, out, err = shell.run("command -v ascend-doctor", timeout=60)
    found = out.strip()
    return None if code == 0 and found == str(readme["bin"] / "ascend-doctor") else \
        f"ascend-doctor in the activated shell is {found or 'nothing'} (exit {code}), not {readme['bin']}/ascend-doctor"


_PIP_RUNS: Dict[Tuple[str, ...], Optional[str]] = {}


def _pip_runs(program: Tuple[str, ...], shell: Shell) -> Optional[str]:
    """None when ``program`` (``X -m pip``) starts pip in this shell (once per interpreter)."""
    if program not in _PIP_RUNS:
        code, out, err = shell.run(shlex.join([*program, "--version"]), timeout=120)
        _PIP_RUNS[program] = None if code == 0 and out.startswith("pip ") else f"{shlex.join(program)}: exit {code}: {err[-300:]}"
    return _PIP_RUNS[program]


def _report_commands(shell: Shell, argv: Sequence[str], lang: str) -> Tuple[int, str, List[str]]:
    code, out, err = shell.run(shell.doctor_line(*argv, "--lang", lang))
    assert code not in (1, 2, 127) and "Traceback" not in err, f"{argv}: exit {code}\n{err[-1500:]}"
    return code, out, printed_lines(out)


def _program_of(line: str) -> str:
    words = shlex.split(line)
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]
    return words[0]


@pytest.mark.slow
def test_every_command_runs_as_printed_after_the_readme_set_up(readme_env, kit_house, house, tmp_path,
                                                               tmp_path_factory):
    from fakehost.kit import SCENARIOS

    from fakehost import FakeHost

    hosts: Dict[str, FakeHost] = {}
    todo: Dict[str, Tuple[str, Shell]] = {}  # normalised line -> (line, the shell it was printed in)
    problems: List[str] = []

    def collect(shell: Shell, where: str, lines: List[str]) -> None:
        for line in lines:
            program = _program_of(line)
            if os.path.basename(program) == "ascend-doctor" and program != shell.doctor:
                problems.append(f"{where}: printed for another doctor than the one started: {line}")
            key = line.replace(str(shell.fake.base), "<BASE>").replace(shell.doctor, "<DOCTOR>")
            # a doctor command runs in the shell it was printed in (its spelling is the point); a
            # plan carried out under --apply, pip and the builtins are the same line in both
            doctor = os.path.basename(program) == "ascend-doctor" and "--apply" not in line
            todo.setdefault(f"{shell.activated} {key}" if doctor else key, (line, shell))

    for name in README_HOSTS:
        fake = FakeHost(tmp_path / name)
        SCENARIOS[name](fake)
        hosts[name] = fake
        args = fake.args()
        # the shell the set-up leaves (activated) on two hosts; a new shell (nothing activated) on
        # every host: the spelling of the doctor depends on the shell, not on the host
        both = name in ("seed_001_official_image", "healthy_a2_documented")
        for activated, lang in ((True, "en"), (False, "zh")) if both else ((False, "zh"),):
            shell = Shell(readme_env, fake, activated, house["list"])
            code, text, lines = _report_commands(shell, ["check", *args], lang)
            lines0 = text.splitlines()
            assert lines0[1].startswith(("✗ ", "! ", "✓ ")), f"{name}: the verdict is not first: {lines0[:3]}"
            collect(shell, f"{name} check {lang}", lines)
            _, _, fix_lines = _report_commands(shell, ["fix", "--offline", *args], lang)
            collect(shell, f"{name} fix {lang}", fix_lines)
        if name == "healthy_a2_documented":
            assert code == 0, text

    # snapshot, then check --from it: the target has no pip, so the doctor's pip drives it
    seed = hosts["seed_001_official_image"]
    shell = Shell(readme_env, seed, True, house["list"])
    snap = tmp_path / "node.json"
    code, _, err = shell.run(shell.doctor_line("snapshot", *seed.args(), "--output", str(snap)))
    assert code == 0, err
    _, text, lines = _report_commands(shell, ["check", "--from", str(snap)], "en")
    pips = [x for x in lines if " -m pip " in x]
    assert pips and all(f"--python {seed.python} " in x for x in pips), pips
    collect(shell, "check --from", lines)

    # guard on a healthy host: the verdict first, then what to run instead, by the judged pip
    healthy = FakeHost(tmp_path / "guarded")
    wh._host(healthy, "0.11.0rc3", house["template"])
    for activated, lang in ((True, "en"), (False, "zh")):
        gshell = Shell(readme_env, healthy, activated, house["list"])
        code, out, err = gshell.run(gshell.doctor_line("guard", "--root", str(healthy.root), "--python", str(healthy.python),
                                                       "--lang", lang, "--", "pip", "install", "vllm==0.11.0",
                                                       "torch_npu==2.8.0"))
        assert code == 3, err
        glines = out.splitlines()
        assert glines[1].startswith("✗ ") and glines[2].startswith(("run instead:", "请改为执行：")), glines[:4]
        instead = glines[3].strip()
        assert instead.startswith(f"{healthy.python} -m pip install --no-deps ") and instead.endswith("vllm==0.11.0")
        collect(gshell, f"guard {lang}", [instead])

    # explain: the log's pin fills the fix, its confirmation runs here
    log = tmp_path / "pip.log"
    log.write_text("  torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible.\n")
    for activated, lang in ((True, "en"), (False, "zh")):
        eshell = Shell(readme_env, seed, activated, house["list"])
        code, out, err = eshell.run(eshell.doctor_line("explain", str(log), "--lang", lang))
        assert code in (0, 3) and "torch==2.7.1 " in out and "<pin>" not in out and "<固定版本>" not in out, out
        collect(eshell, f"explain {lang}", printed_lines(out))

    # an image: its hints and its plan are Dockerfile lines and dry runs, never --apply
    import imagekit

    tar = imagekit.seed_archives(tmp_path_factory)["docker25"]
    for activated, lang in ((True, "en"), (False, "zh")):
        ishell = Shell(readme_env, seed, activated, house["list"])
        for argv in (["check", "--image-tar", str(tar)], ["fix", "--offline", "--image-tar", str(tar)]):
            _, out, lines = _report_commands(ishell, argv, lang)
            assert not [x for x in lines if "--apply" in x], lines
            assert any(x.startswith("RUN /usr/local/python3.11.13/bin/python3 -m pip ") for x in lines), out
            collect(ishell, f"image {argv[0]} {lang}", lines)

    assert not problems, "\n".join(problems)
    assert len(todo) > 30
    bad = []
    # a doctor line of the activated shell whose twin (the same line, started by its path) runs in
    # a new shell: there, what the activated shell adds is checked, `ascend-doctor` being this
    # doctor, and the line parses as its command line; the twin runs it
    twins = {k for k in todo if k.startswith("True ") and "False " + k[len("True "):] in todo}
    assert twins or not any(k.startswith("True ") for k in todo)

    def one(item):
        i, (key, (line, shell)) = item
        scratch = tmp_path / f"run-{i}"
        scratch.mkdir()
        try:
            if key in twins:
                return key, _the_activated_shell_starts_this_doctor(line, shell, readme_env)
            return key, run_printed(line, shell, kit_house, scratch)
        except Exception as e:  # the doctor's command line refused it (parse_doctor)
            return key, f"{type(e).__name__}: {e}"

    with ThreadPoolExecutor(max_workers=2) as pool:
        for key, why in pool.map(one, enumerate(sorted(todo.items()))):
            if why:
                bad.append(f"{key}\n    -> {why}")
    assert not bad, f"{len(bad)} of {len(todo)} printed commands do not run as printed:\n" + "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# plans made from a snapshot or from directories


@pytest.mark.parametrize("name,lang", [("seed_001_naive_fix", "en"), ("seed_001_naive_fix", "zh"),
                                       ("no_vllm_ascend", "en")])  # the last with other ways (--vllm-from source)
def test_a_plan_from_a_snapshot_or_directories_prints_no_apply_the_doctor_refuses(name, lang, tmp_path):
    """fix --from SNAPSHOT and fix --site-packages DIR plan, and --apply refuses both (it changes a
    live environment): the dry run's "to carry out the plan" is the command for the host the
    snapshot was taken from, with the interpreter (and root) it records in place of --from, said
    to be for that host; for directories, the words that --apply needs --python instead. Every
    doctor command printed runs as printed (the doctor's own option checks accept it; the pip
    steps are the kit scenario's, run by the tests above)."""
    from kitrun import run_cli

    fake = kit_run(name).fake
    snap = tmp_path / "host.json"
    code, _, err = run_cli(fake, ("snapshot", "--output", str(snap)), lang=None)
    assert code in (0, None), err
    runs = {"--from": ("fix", "--offline", "--from", str(snap)),
            "--site-packages": ("fix", "--offline", "--root", str(fake.root), "--site-packages", str(fake.site))}
    carried = {}
    for how, argv in runs.items():
        code, out, err = run_cli(fake, argv, lang=lang, target=False)
        assert code == 3 and "Traceback" not in err, out + err
        lines = out.splitlines()
        commands = [x.strip() for x in lines if COMMAND_LINE.match(x) and " -m pip " not in x]
        bad = [f"{c}\n    -> {why}" for c in commands
               for why in [check_one(Printed(c, None, "", how), None, tmp_path, fake)] if why]
        assert not bad, "\n".join(bad)
        applies = [c for c in commands if "--apply" in shlex.split(c)]
        carried[how] = applies
        if name == "no_vllm_ascend":  # the other way is a plan made here the same way: a dry run
            assert [c for c in commands if "--vllm-from" in c and "--apply" not in c], out
        verdict = lines[1]
        if how == "--from":
            assert applies and shlex.split(applies[0])[1:] == ["fix", "--root", str(fake.root), "--python", str(fake.python),
                                                               "--apply", "--offline"], out
            assert lines[2].strip() == applies[0]  # the line right under the verdict
            assert ("the host the snapshot was taken from (not on this one)" if lang == "en" else "拍摄该快照的主机上（不是本机）") in verdict
        else:
            assert not applies, out
            assert "--python" in verdict and "--site-packages" in verdict and str(fake.site) in verdict, verdict
        assert not PROSE_COMMAND.search(verdict), verdict
    assert carried["--from"] and not carried["--site-packages"]


# ---------------------------------------------------------------------------------------------
# a refused --apply


@pytest.mark.slow  # ~0.5 s of CPU or more: real uv and pip against the wheelhouse
def test_a_refused_apply_prints_steps_that_name_no_file_it_did_not_write(kit_house, house, tmp_path):
    """fix --apply whose plan the resolver refuses (here: no index has numpy<2) changes nothing
    and shows the plan with pip's reason: its steps are commands a person runs next, so they carry
    the pins themselves and name no constraints file (only a transaction writes one), and each
    runs as printed (real pip against the kit wheelhouse)."""
    from fakehost import FakeHost

    fake = FakeHost(tmp_path / "host")
    wh.numpy_2(fake, house["template"])
    empty = tmp_path / "empty-index"
    empty.mkdir()
    proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--apply", "--yes", "--no-smoke", *fake.args()],
                          env=wh.pip_env(fake.env, [empty]), cwd=fake.workdir, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 3 and "--apply would fail" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    # nothing changed: not even the state directory a transaction would have kept its files in
    # (uv's resolver leaves a <venv>/.lock of its own when it resolves against the target: uv's, not ours)
    assert not (fake.base / "venv" / ".ascend-doctor").exists()
    lines = [line.strip() for line in proc.stdout.splitlines() if COMMAND_LINE.match(line)]
    steps = [x for x in lines if " -m pip install " in x and "numpy<2.0.0" in x]
    assert steps, proc.stdout
    bad = []
    for i, line in enumerate(lines):
        scratch = tmp_path / f"run-{i}"
        scratch.mkdir()
        why = check_one(Printed(line, None, "", "refused apply"), kit_house, scratch, fake)
        if why:
            bad.append(f"{line}\n    -> {why}")
    assert not bad, "\n".join(bad)


def test_on_a_machine_without_cann_the_plan_again_is_a_command_line_not_prose(tmp_path):
    """No CANN and no --python: fix plans the vendor layers only and says to plan again once they
    are in; that "again" is the command on a line of its own (the doctor as started, the same
    options), never "run ascend-doctor fix again" inside the note."""
    from fakehost import FakeHost

    fake = FakeHost(tmp_path / "bare")
    fake.python = None
    for lang in ("en", "zh"):
        proc = doctor_fork.run([sys.executable, "-m", "doctor", "fix", "--offline", "--root", str(fake.root), "--lang", lang],
                              env=dict(fake.env), cwd=fake.workdir, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 3 and "CANN" in proc.stdout, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        commands = [x.strip() for x in lines if COMMAND_LINE.match(x)]
        again = [x for x in commands if shlex.split(x)[1:2] == ["fix"]]
        assert len(again) == 1 and "--root" in again[0] and "--apply" not in again[0], proc.stdout
        assert check_one(Printed(again[0], None, "", "no cann"), None, tmp_path, fake) is None
        prose = [x for x in lines if not COMMAND_LINE.match(x) and not x.startswith("ascend-doctor 0")
                 and PROSE_COMMAND.search(x)]
        assert not prose, prose
