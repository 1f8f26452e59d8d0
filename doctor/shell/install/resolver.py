"""Ask the installer's own resolver what an install would do, without installing anything.

pip: ``pip install --dry-run --report - --quiet --progress-bar off --log FILE ...`` against the user's pip
configuration (pip reads its config files, PIP_* variables, requirement and constraint files,
markers, index options and hashes itself). The report on stdout names the exact version, the
file (URL) and the hashes of every distribution pip would install; the debug log holds what pip
says only there: the conflict explanation and every index host it could not reach, with why.

uv: ``uv pip compile --format pylock.toml`` (uv has no dry-run report; its lock file carries the
same facts, sizes included). uv reads none of pip's configuration: the caller passes the user's
pip index settings translated into uv flags (doctor.shell.install.installer.uv_flags).

Sizes: pip's report has none, so they come from the file itself (file:// links) or a HEAD
request per file, all under one total deadline.
"""
from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from doctor.parse.pipreport import Failure, OTHER, ReportError, Resolved, classify, parse_pylock, parse_report
from doctor.shell.runtime import proc

RESOLVE_TIMEOUT = 600.0  # one resolution, total
SIZE_DEADLINE = 20.0  # all HEAD requests together
MAX_LOG = 8 * 1024 * 1024  # the tail of pip's debug log that is read
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT[\d:,.]+ ")


@dataclass(frozen=True)
class TargetPlatform:
    """Resolve for another machine (a bundle): pip's --platform/--python-version/--abi."""

    platforms: Sequence[str]  # manylinux_2_28_aarch64, linux_aarch64 ...
    python_version: str  # "3.11"
    abis: Sequence[str] = ()  # cp311
    implementation: str = "cp"

    def pip_args(self) -> List[str]:
        out: List[str] = []
        for p in self.platforms:
            out += ["--platform", p]
        out += ["--python-version", self.python_version, "--implementation", self.implementation]
        for a in self.abis:
            out += ["--abi", a]
        return out + ["--only-binary=:all:"]

    def to_json(self) -> Dict:
        return {"platforms": list(self.platforms), "python_version": self.python_version, "abis": list(self.abis),
                "implementation": self.implementation}


@dataclass
class Request:
    """What to resolve. ``args`` are passed to pip as given (a guarded command's own options)."""

    requirements: List[str] = field(default_factory=list)
    constraints: List[str] = field(default_factory=list)  # written to a constraints file
    overrides: List[str] = field(default_factory=list)  # uv only: --overrides (pip has none)
    args: List[str] = field(default_factory=list)
    index_args: List[str] = field(default_factory=list)  # uv: the part of ``args`` that names indexes
    no_deps: bool = False
    ignore_installed: bool = False
    extra_index_urls: List[str] = field(default_factory=list)
    find_links: List[str] = field(default_factory=list)
    no_index: bool = False
    platform: Optional[TargetPlatform] = None


@dataclass
class Resolution:
    ok: bool
    packages: List[Resolved]
    failure: Optional[Failure]
    argv: List[str]
    seconds: float
    installer: str = "pip"
    log_tail: str = ""

    def by_name(self) -> Dict[str, Resolved]:
        return {p.name: p for p in self.packages}

    @property
    def total_size(self) -> int:
        return sum(p.size or 0 for p in self.packages)

    @property
    def unknown_sizes(self) -> int:
        return sum(1 for p in self.packages if p.size is None)

    def to_json(self) -> Dict:
        out: Dict = {"ok": self.ok, "installer": self.installer, "seconds": round(self.seconds, 2),
                     "packages": [p.to_json() for p in self.packages]}
        if self.failure is not None:
            out["failure"] = self.failure.to_json()
        return out


# ---------------------------------------------------------------------------------------------
# pip


def pip_argv(pip_prefix: Sequence[str], req: Request, constraint_file: Optional[str], log_file: str) -> List[str]:
    # --log makes pip log at debug level, and then pip (23.2 at least) draws its download
    # progress bar on stdout, ahead of the report, even with --quiet: --progress-bar off
    argv = list(pip_prefix) + ["install", "--dry-run", "--report", "-", "--quiet", "--progress-bar", "off",
                               "--log", log_file]
    if req.no_deps:
        argv.append("--no-deps")
    if req.ignore_installed or req.platform is not None:
        argv.append("--ignore-installed")
    if req.no_index:
        argv.append("--no-index")
    for u in req.extra_index_urls:
        argv += ["--extra-index-url", u]
    for f in req.find_links:
        argv += ["--find-links", f]
    if req.platform is not None:
        # pip takes platform options only with --target (an empty directory: nothing installed)
        argv += req.platform.pip_args() + ["--target", os.path.join(os.path.dirname(log_file), "target")]
    if constraint_file:
        argv += ["--constraint", constraint_file]
    return argv + list(req.args) + list(req.requirements)


def resolve_pip(pip_prefix: Sequence[str], req: Request, env: Mapping[str, str], *,
                timeout: float = RESOLVE_TIMEOUT, sizes: bool = True) -> Resolution:
    """Run pip's resolver in report mode (through shell.runtime.proc: it dies with the doctor);
    ``timeout`` is the total deadline, file sizes included. Never raises for pip's own failures
    (they are the result's ``failure``)."""
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-resolve-") as tmp:
        constraint = None
        if req.constraints:
            constraint = os.path.join(tmp, "constraints.txt")
            Path(constraint).write_text("\n".join(req.constraints) + "\n", encoding="utf-8")
        log = os.path.join(tmp, "pip.log")
        argv = pip_argv(pip_prefix, req, constraint, log)
        env2 = dict(env)
        env2.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        env2["PIP_NO_INPUT"] = "1"  # never wait for a password prompt
        began = time.monotonic()
        done = proc.run(argv, timeout, env=env2, max_output=64 * 1024 * 1024)
        seconds = time.monotonic() - began
        log_text = _read_tail(log)
    shown = _shown(argv, constraint, req.constraints)
    if done.error or not done.found:
        return Resolution(False, [], Failure(OTHER, f"cannot run {argv[0]}: {done.error or 'not found'}"), shown, seconds)
    if done.timed_out:
        return Resolution(False, [], Failure(OTHER, f"pip did not finish resolving within {timeout:.3g} s"), shown, seconds)
    output = done.stderr + "\n" + log_text
    if done.returncode != 0:
        return Resolution(False, [], classify(output), shown, seconds, log_tail=log_text[-4000:])
    try:
        packages = parse_report(done.stdout)
    except ReportError as e:
        return Resolution(False, [], Failure(OTHER, str(e)), shown, seconds, log_tail=log_text[-4000:])
    if sizes:  # within what is left of the same total deadline
        fill_sizes(packages, env, min(SIZE_DEADLINE, max(0.0, timeout - seconds)))
    return Resolution(True, packages, None, shown, seconds, log_tail=log_text[-4000:])


def _shown(argv: List[str], constraint: Optional[str], lines: Sequence[str]) -> List[str]:
    """The argv as run, with the temporary files named for what they held."""
    out = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--log":
            skip = True
            continue
        out.append("<constraints: " + ", ".join(lines) + ">" if constraint and a == constraint else a)
    return out


def _read_tail(path: str) -> str:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            if size > MAX_LOG:
                fh.seek(size - MAX_LOG)
            raw = fh.read(MAX_LOG)
    except OSError:
        return ""
    return "\n".join(_STAMP.sub("", x) for x in raw.decode("utf-8", "replace").splitlines())


# ---------------------------------------------------------------------------------------------
# uv


def uv_argv(uv: str, python: str, req: Request, infile: str, constraint_file: Optional[str],
            override_file: Optional[str], uv_index_args: Sequence[str], output: Optional[str] = None) -> List[str]:
    argv = [uv, "pip", "compile", "--format", "pylock.toml", "--quiet", "--no-header", "--python", python]
    if output:
        argv += ["--output-file", output]
    if "--no-config" not in uv_index_args:
        argv.append("--no-config")
    if req.no_deps:
        argv.append("--no-deps")
    if req.platform is not None:
        argv += ["--python-version", req.platform.python_version]
        plat = _uv_platform(req.platform.platforms)
        if plat:
            argv += ["--python-platform", plat]
        argv += ["--only-binary", ":all:"]
    argv += uv_index_part(req, uv_index_args)
    if constraint_file:
        argv += ["--constraints", constraint_file]
    if override_file:
        argv += ["--overrides", override_file]
    return argv + list(req.args) + [infile]


def uv_index_part(req: Request, uv_index_args: Sequence[str]) -> List[str]:
    """The user's index flags, then the ones this request adds (the row's extra indexes, a
    bundle's folder), with pip's merge of every index (uv's unsafe-best-match) when there are more."""
    out = list(uv_index_args)
    if req.no_index and "--no-index" not in out:
        out.append("--no-index")
    for u in req.extra_index_urls:
        out += ["--extra-index-url", u]
    for f in req.find_links:
        out += ["--find-links", f]
    if (req.extra_index_urls or req.find_links) and "--index-strategy" not in out:
        # pip takes the best version over all indexes; uv stops at the first index with the name
        out += ["--index-strategy", "unsafe-best-match"]
    return out


def _uv_platform(platforms: Sequence[str]) -> Optional[str]:
    for p in platforms:
        if p.endswith("aarch64"):
            return "aarch64-unknown-linux-gnu"
        if p.endswith("x86_64"):
            return "x86_64-unknown-linux-gnu"
    return None


def preferences_lock(installed: Sequence[Tuple[str, str]]) -> str:
    """The installed versions as a pylock.toml uv reads as its previous output: uv keeps a
    version it finds there when it satisfies the request (pip keeps what is installed)."""
    lines = ['lock-version = "1.0"', 'created-by = "uv"', "packages = []" if not installed else "", ""]
    for name, version in installed:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+!-]*", name + version.replace("+", "")):
            continue  # nothing that needs quoting goes into the TOML
        lines += ["[[packages]]", f'name = "{name}"', f'version = "{version}"', ""]
    return "\n".join(lines) + "\n"


_UV_CHANGE = re.compile(r"^ ([+~-]) ([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(\S+)\s*$")


def parse_uv_dry_run(text: str) -> List[Tuple[str, str]]:
    """(name, version) of every distribution ``uv pip install --dry-run`` would install."""
    out: List[Tuple[str, str]] = []
    for line in text.splitlines():
        m = _UV_CHANGE.match(line)
        if m and m.group(1) in "+~":
            out.append((canon(m.group(2)), m.group(3)))
    return out


@contextlib.contextmanager
def _no_lock_left(python: str) -> Iterator[None]:
    """uv's dry run takes a lock file in the target's prefix (``<venv>/.lock``, created if
    missing, and left there): a dry run must leave the target as it found it, so a lock file
    that was not there before and is still the empty regular file uv makes is removed."""
    lock = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(python))), ".lock")
    existed = os.path.lexists(lock)
    try:
        yield
    finally:
        if not existed:
            try:
                st = os.lstat(lock)
                if stat.S_ISREG(st.st_mode) and st.st_size == 0:
                    os.unlink(lock)
            except OSError:
                pass


def _uv_run_failed(done: Any, uv: str, argv: Sequence[str], shown: List[str], seconds: float, timeout: float,
                   cert: Optional[str], proxy: Optional[str]) -> Optional[Resolution]:
    """The failed Resolution of a uv run that could not start, timed out or failed; None if it ran."""
    if done.error or not done.found:
        return Resolution(False, [], Failure(OTHER, f"cannot run {uv}: {done.error or 'not found'}"), shown, seconds, "uv")
    if done.timed_out:
        return Resolution(False, [], Failure(OTHER, f"uv did not finish resolving within {timeout:.3g} s"), shown, seconds, "uv")
    if done.returncode != 0:
        return Resolution(False, [], _uv_failure(done.stderr, argv, cert, proxy), shown, seconds, "uv",
                          log_tail=done.stderr[-4000:])
    return None


def resolve_uv(uv: str, python: str, req: Request, env: Mapping[str, str], uv_index_args: Sequence[str] = (), *,
               timeout: float = RESOLVE_TIMEOUT, sizes: bool = True, preferences: Sequence[Tuple[str, str]] = (),
               metadata: bool = True, cert: Optional[str] = None, proxy: Optional[str] = None) -> Resolution:
    """What uv would install, with the files: against the target environment (what is installed
    and satisfies the request stays, as with pip) ``uv pip install --dry-run --python PY``
    names the versions, then ``uv pip compile --no-deps`` of exactly those names the files; for
    another machine or a bundle (nothing installed) ``uv pip compile`` alone. Then the metadata
    of every file (doctor.shell.install.wheelmeta), all under ``timeout``. ``env`` is the environment uv
    runs in (Installer.environ: the user's pip settings uv takes from variables, none of uv's own
    configuration)."""
    if req.no_deps or req.ignore_installed or req.platform is not None:
        return _compile(uv, python, req, env, uv_index_args, timeout, sizes, preferences, metadata, cert, proxy)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-resolve-") as tmp:
        infile = os.path.join(tmp, "requirements.in")
        Path(infile).write_text("\n".join(req.requirements) + "\n", encoding="utf-8")
        argv = [uv, "pip", "install", "--dry-run", "--python", python]
        if "--no-config" not in uv_index_args:
            argv.append("--no-config")
        argv += uv_index_part(req, uv_index_args)
        constraint = None
        if req.constraints:
            constraint = os.path.join(tmp, "constraints.txt")
            Path(constraint).write_text("\n".join(req.constraints) + "\n", encoding="utf-8")
            argv += ["--constraints", constraint]
        argv += list(req.args) + (["-r", infile] if req.requirements else [])
        with _no_lock_left(python):
            done = proc.run(argv, timeout, env=dict(env), max_output=64 * 1024 * 1024)
    seconds = time.monotonic() - began
    shown = ["<requirements: " + ", ".join(req.requirements) + ">" if a == infile else
             "<constraints: " + ", ".join(req.constraints) + ">" if a == constraint else a for a in argv]
    failed = _uv_run_failed(done, uv, argv, shown, seconds, timeout, cert, proxy)
    if failed is not None:
        return failed
    wanted = parse_uv_dry_run(done.stderr + "\n" + done.stdout)
    if not wanted:
        return Resolution(True, [], None, shown, seconds, "uv")
    pinned = Request(requirements=[f"{n}=={v}" for n, v in wanted], no_deps=True, no_index=req.no_index,
                     extra_index_urls=list(req.extra_index_urls), find_links=list(req.find_links),
                     args=list(req.index_args))
    # the dry run has just read every project page these files are on: take them from uv's cache
    files = _compile(uv, python, pinned, env, uv_index_args, max(1.0, timeout - seconds), sizes, (), metadata, cert,
                     proxy, offline=True)
    if not files.ok:
        files = _compile(uv, python, pinned, env, uv_index_args, max(1.0, timeout - (time.monotonic() - began)), sizes,
                         (), metadata, cert, proxy)
    requested = {canon(r) for r in req.requirements}
    for p in files.packages:
        p.requested = p.name in requested
    files.argv = shown
    files.seconds = time.monotonic() - began
    return files


def _compile(uv: str, python: str, req: Request, env: Mapping[str, str], uv_index_args: Sequence[str],
             timeout: float, sizes: bool, preferences: Sequence[Tuple[str, str]], metadata: bool,
             cert: Optional[str], proxy: Optional[str], offline: bool = False) -> Resolution:
    """``uv pip compile`` to a pylock.toml (``preferences``: versions uv keeps when they
    satisfy the request), then the metadata of every file it names."""
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ascend-doctor-resolve-") as tmp:
        infile = os.path.join(tmp, "requirements.in")
        Path(infile).write_text("\n".join(req.requirements) + "\n", encoding="utf-8")
        constraint = override = None
        if req.constraints:
            constraint = os.path.join(tmp, "constraints.txt")
            Path(constraint).write_text("\n".join(req.constraints) + "\n", encoding="utf-8")
        if req.overrides:
            override = os.path.join(tmp, "overrides.txt")
            Path(override).write_text("\n".join(req.overrides) + "\n", encoding="utf-8")
        output = os.path.join(tmp, "pylock.toml")
        Path(output).write_text(preferences_lock(preferences), encoding="utf-8")
        argv = uv_argv(uv, python, req, infile, constraint, override, uv_index_args, output)
        if offline:
            argv.insert(3, "--offline")
        done = proc.run(argv, timeout, env=dict(env), max_output=64 * 1024 * 1024)
        try:
            lock = Path(output).read_text(encoding="utf-8") if done.returncode == 0 else ""
        except OSError:
            lock = ""
    seconds = time.monotonic() - began
    shown = []
    for a in argv:
        if a == infile:
            a = "<requirements: " + ", ".join(req.requirements) + ">"
        elif a == output:
            a = "<pylock.toml>"
        elif a == constraint:
            a = "<constraints: " + ", ".join(req.constraints) + ">"
        shown.append(a)
    failed = _uv_run_failed(done, uv, argv, shown, seconds, timeout, cert, proxy)
    if failed is not None:
        return failed
    try:
        packages = parse_pylock(lock)
    except ReportError as e:
        return Resolution(False, [], Failure(OTHER, str(e)), shown, seconds, "uv")
    requested = {canon(r) for r in req.requirements}
    for p in packages:
        p.requested = p.name in requested
    if metadata:
        from doctor.shell.install.wheelmeta import fill_metadata

        left = max(1.0, timeout - (time.monotonic() - began))
        problems = fill_metadata(packages, env, deadline=left, cert=cert, proxy=proxy)
        if problems:
            return Resolution(False, [], Failure(OTHER, "; ".join(problems[:3])), shown, time.monotonic() - began, "uv")
    if sizes:  # within what is left of the same total deadline
        fill_sizes(packages, env, min(SIZE_DEADLINE, max(0.0, timeout - (time.monotonic() - began))))
    return Resolution(True, packages, None, shown, time.monotonic() - began, "uv")


def _indexes_of(argv: Sequence[str]) -> List[str]:
    out: List[str] = []
    for i, a in enumerate(argv[:-1]):
        if a in ("--index-url", "--extra-index-url", "--default-index", "--index") and argv[i + 1] not in out:
            out.append(argv[i + 1])
    return out


def probe_hosts(urls: Sequence[str], cert: Optional[str], proxy: Optional[str], deadline: float = 10.0) -> List:
    """uv stops at the first index that does not answer; pip names every one. Ask each http(s)
    index once (in parallel, within ``deadline``) and say how each one that did not answer failed."""
    import requests

    from doctor.parse.pipreport import HostFailure, _how

    hosts: Dict[str, str] = {}
    for u in urls:
        p = urlparse(u)
        if p.scheme in ("http", "https") and p.hostname:
            hosts.setdefault(p.netloc.rsplit("@", 1)[-1], u)
    found: List = []
    lock = threading.Lock()

    def ask(host: str, url: str) -> None:
        try:
            r = requests.get(url, timeout=(min(5.0, deadline), min(5.0, deadline)), verify=cert or True,
                             proxies={"http": proxy, "https": proxy} if proxy else None, stream=True)
            r.close()
            how = f"HTTP {r.status_code}" if r.status_code >= 500 else None
            detail = f"{url} answered HTTP {r.status_code}"
        except requests.RequestException as e:
            detail = f"{type(e).__name__}: {str(e)[:200]}"
            how = _how(detail) or _how(repr(e)) or ("timed out" if isinstance(e, requests.Timeout) else "refused")
        if how:
            with lock:
                found.append(HostFailure(host, how, detail[:300]))

    threads = [threading.Thread(target=ask, args=(h, u), daemon=True) for h, u in hosts.items()]
    for t in threads:
        t.start()
    end = time.monotonic() + deadline
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    with lock:
        return list(found)


def _uv_failure(stderr: str, argv: Sequence[str], cert: Optional[str], proxy: Optional[str]) -> Failure:
    """uv's failure, with every index host that does not answer (not only the first one)."""
    from doctor.parse.pipreport import DOWN, UNREACHABLE

    failure = classify(stderr)
    if failure.kind != UNREACHABLE:
        return failure
    known = {h.host for h in failure.hosts}
    for h in probe_hosts(_indexes_of(argv), cert, proxy):
        if h.host not in known and h.how in DOWN + tuple(x for x in [h.how] if x.startswith("HTTP 5")):
            failure.hosts.append(h)
    return failure


def canon(requirement: str) -> str:
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return requirement


# ---------------------------------------------------------------------------------------------
# sizes


def fill_sizes(packages: Sequence[Resolved], env: Mapping[str, str], deadline: float = SIZE_DEADLINE) -> None:
    """The size of every file: stat for local files, HEAD for remote ones (in parallel, one
    total deadline; a size that cannot be had stays None)."""
    remote = []
    for p in packages:
        if p.size is not None:
            continue
        u = urlparse(p.url)
        if u.scheme == "file" or (not u.scheme and p.url):
            try:
                p.size = os.path.getsize(unquote(u.path) if u.scheme else p.url)
            except OSError:
                pass
        elif u.scheme in ("http", "https"):
            remote.append(p)
    if not remote:
        return
    import requests

    end = time.monotonic() + deadline
    verify = env.get("PIP_CERT") or env.get("REQUESTS_CA_BUNDLE") or True

    def head(p: Resolved) -> None:
        left = end - time.monotonic()
        if left <= 0:
            return
        try:
            r = requests.head(p.url, allow_redirects=True, timeout=(min(5.0, left), min(10.0, left)), verify=verify)
            # an answer after the deadline is dropped: the caller has moved on (the thread is abandoned)
            if r.ok and r.headers.get("Content-Length", "").isdigit() and time.monotonic() < end:
                p.size = int(r.headers["Content-Length"])
        except (requests.RequestException, ValueError):
            pass

    threads = [threading.Thread(target=head, args=(p,), daemon=True) for p in remote]
    for i in range(0, len(threads), 8):  # at most 8 requests at a time
        batch = threads[i:i + 8]
        for t in batch:
            t.start()
        for t in batch:
            t.join(max(0.0, end - time.monotonic()))
