"""How to spell installer commands (pip or uv) for a target interpreter, as argv lists, and
which one resolves and installs (``choose``).

Pure: which pip to use (the target's own, or the doctor's with ``--python``), where uv is and
whether the target lets uv install into it are decided by the caller
(:func:`detect`, at the end of this module) and passed in.

pip reads the user's configuration itself (pip.conf, PIP_* variables), so pip commands carry only
what the matrix adds (``--extra-index-url`` of the release row). uv reads none of pip's
configuration, so uv commands get the user's pip configuration translated into uv flags
(:func:`uv_flags`) and environment variables (:func:`uv_env`): indexes, find-links, trusted
hosts, no-index, constraints, pre-releases, binary-only choices, certificates, proxies and
timeouts. uv's own configuration (uv.toml, UV_* variables) is not read: the same settings give the
same pins with either installer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlparse

from doctor.shell.install.index import IndexConfig
from doctor.pep668 import break_system

PIP, UV, AUTO = "pip", "uv", "auto"
INSTALLERS = (AUTO, PIP, UV)


@dataclass(frozen=True)
class Installer:
    kind: str  # pip | uv
    python: str  # the target interpreter
    prefix: Tuple[str, ...]  # ("/t/bin/python", "-m", "pip") or (doctor python, -m, pip, --python, T) or ("uv", "pip")
    uv_index_args: Tuple[str, ...] = ()  # the user's pip configuration, as uv flags
    note: Optional[str] = None  # "the target has no pip: using the doctor's pip with --python"
    uv_env: Tuple[Tuple[str, str], ...] = ()  # the rest of it, as uv's environment variables
    system: Tuple[str, ...] = ()  # pip's --break-system-packages for an EXTERNALLY-MANAGED target

    def environ(self, env: Mapping[str, str]) -> Dict[str, str]:
        """The environment a uv command runs in: the user's, without uv's own configuration
        variables, plus the pip settings uv reads from variables (certificates, proxies)."""
        if not self.is_uv:
            return dict(env)
        return with_uv_env(env, dict(self.uv_env))

    @property
    def is_uv(self) -> bool:
        return self.kind == UV

    def _cmd(self, sub: str) -> List[str]:
        if self.is_uv:
            return list(self.prefix) + [sub, "--python", self.python]
        return list(self.prefix) + [sub] + (list(self.system) if sub in ("install", "uninstall") else [])

    def install(self, specs: Sequence[str], *, no_deps: bool = True, extra_index_urls: Sequence[str] = (),
                constraint: Optional[str] = None) -> List[str]:
        """The command a person would run for this step (dry-run plans show these)."""
        argv = self._cmd("install")
        if no_deps:
            argv.append("--no-deps")
        if constraint:
            argv += ["--constraint", constraint]
        argv += list(specs)
        argv += index_flags(extra_index_urls)
        if self.is_uv:
            argv += list(self.uv_index_args)
            if (extra_index_urls or "--extra-index-url" in self.uv_index_args) and "--index-strategy" not in argv:
                # pip merges all indexes and takes the best version; uv stops at the first index
                # that has the name unless told otherwise (torch is on PyPI *and* the CPU index).
                argv += ["--index-strategy", "unsafe-best-match"]
        return argv

    def install_files(self, files: Sequence[str]) -> List[str]:
        """Install downloaded files only: no index, no dependencies, replace what is there."""
        argv = self._cmd("install") + ["--no-index", "--no-deps"]
        argv += ["--no-config", "--reinstall"] if self.is_uv else ["--force-reinstall"]
        return argv + list(files)

    def install_from_dir(self, specs: Sequence[str], wheel_dir: str, constraint: Optional[str]) -> List[str]:
        """Install with dependencies, resolving only against the downloaded files, under the pins."""
        argv = self._cmd("install") + ["--no-index", "--find-links", wheel_dir]
        if constraint:
            argv += ["--constraint", constraint]
        return argv + list(specs)

    def uninstall(self, names: Sequence[str]) -> List[str]:
        argv = self._cmd("uninstall")
        if not self.is_uv:
            argv.append("-y")
        return argv + list(names)


@dataclass(frozen=True)
class Downloader:
    """``pip download``: uv has no download command, so downloads always go through pip."""

    prefix: Tuple[str, ...]

    def download(self, specs: Sequence[str], dest: str, *, no_deps: bool, extra_index_urls: Sequence[str] = (),
                 constraint: Optional[str] = None) -> List[str]:
        argv = list(self.prefix) + ["download", "--dest", dest]
        if no_deps:
            argv.append("--no-deps")
        if constraint:
            argv += ["--constraint", constraint]
        return argv + list(specs) + index_flags(extra_index_urls)


def index_flags(urls: Sequence[str]) -> List[str]:
    out: List[str] = []
    for u in urls:
        out += ["--extra-index-url", u]
    return out


class UvCannot(ValueError):
    """The user's pip configuration holds something uv cannot be given (one line)."""


def uv_flags(cfg: IndexConfig) -> List[str]:
    """The user's pip configuration as uv flags (uv ignores pip.conf and PIP_*). Raises
    UvCannot for an index URL uv cannot use (another scheme than http, https or file)."""
    out: List[str] = ["--no-config"]  # uv.toml files would add indexes pip does not know
    for url in ([cfg.index_url] if cfg.index_url else []) + list(cfg.extra_index_urls):
        check_uv_url(url, cfg)
    if cfg.no_index:
        out.append("--no-index")
    elif cfg.index_url:
        out += ["--index-url", cfg.index_url]
    if not cfg.no_index:
        for u in cfg.extra_index_urls:
            out += ["--extra-index-url", u]
    for f in cfg.find_links:
        out += ["--find-links", f]
    for h in cfg.trusted_hosts:
        out += ["--allow-insecure-host", h]
    if len(cfg.urls) + len(cfg.find_links) > 1:
        # pip merges all indexes and links and takes the best version; uv stops at the first
        # index that has the name unless told otherwise
        out += ["--index-strategy", "unsafe-best-match"]
    for c in cfg.constraints:
        out += ["--constraints", c]
    if cfg.pre:
        out += ["--prerelease", "allow"]
    for x in cfg.only_binary:
        out += ["--only-binary", x]
    for x in cfg.no_binary:
        out += ["--no-binary", x]
    if cfg.keyring_provider:
        out += ["--keyring-provider", cfg.keyring_provider]
    return out


def check_uv_url(url: str, cfg: IndexConfig) -> None:
    scheme = urlparse(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        where = next((o.split(" from ", 1)[1] for o in cfg.origin if " from " in o), "pip's configuration")
        raise UvCannot(f"index URL {url!r} (from {where}) is not one uv can use (http, https or file): "
                       "fix it, or resolve with pip: --installer pip")


# uv's own configuration variables: the user's pip configuration decides instead
_UV_KEEP = ("UV_CACHE_DIR", "UV_NO_CACHE", "UV_OFFLINE", "UV_CONCURRENT_DOWNLOADS", "UV_CONCURRENT_BUILDS",
            "UV_CONCURRENT_INSTALLS", "UV_NO_PROGRESS", "UV_LINK_MODE")


def uv_env(cfg: IndexConfig) -> Dict[str, str]:
    """The pip settings uv takes from environment variables (it has no flags for them)."""
    out: Dict[str, str] = {}
    if cfg.cert:
        out["SSL_CERT_FILE"] = cfg.cert  # pip trusts only this bundle; uv reads it from here
    if cfg.client_cert:
        out["SSL_CLIENT_CERT"] = cfg.client_cert
    if cfg.proxy:  # pip's --proxy applies to every scheme
        out["HTTPS_PROXY"] = out["HTTP_PROXY"] = out["https_proxy"] = out["http_proxy"] = cfg.proxy
    if cfg.timeout:
        out["UV_HTTP_TIMEOUT"] = cfg.timeout
    if cfg.retries:
        out["UV_HTTP_RETRIES"] = cfg.retries
    return out


def with_uv_env(env: Mapping[str, str], extra: Mapping[str, str]) -> Dict[str, str]:
    out = {k: v for k, v in env.items() if not k.startswith("UV_") or k in _UV_KEEP}
    out.update(extra)
    out.setdefault("UV_NO_PROGRESS", "1")
    return out


def uv_allowed(prefix: Optional[str], python_version: Optional[str], externally_managed: bool,
               is_venv: bool) -> Optional[str]:
    """Why uv may not install into this target (None: it may): uv runs on Python >= 3.8, and a
    system interpreter marked EXTERNALLY-MANAGED is left to its own pip."""
    if python_version:
        try:
            major, minor = (int(x) for x in python_version.split(".")[:2])
        except ValueError:
            major, minor = 0, 0
        if (major, minor) < (3, 8):
            return f"uv installs into Python 3.8 and newer; this is Python {python_version}"
    if externally_managed and not is_venv:
        return f"{prefix} is marked EXTERNALLY-MANAGED"
    return None


@dataclass
class Choice:
    """Which commands resolve, install and are shown (what detect() found), and notes for messages."""

    installer: Installer  # carries the plan out (apply)
    downloader: Downloader
    notes: List[str] = field(default_factory=list)
    resolve_with: Optional[Installer] = None  # resolves the plan (default: ``installer``)
    show_with: Optional[Installer] = None  # spells the plan's printed commands (default: ``installer``)
    index: Optional[IndexConfig] = None  # the user's pip configuration, as read

    @property
    def resolver(self) -> Installer:
        return self.resolve_with or self.installer

    @property
    def shown(self) -> Installer:
        return self.show_with or self.installer


def choose(kind: str, target_python: str, doctor_python: str, target_has_pip: bool, uv_path: Optional[str],
           cfg: Optional[IndexConfig], uv_refused: Optional[str] = None, system: Sequence[str] = ()) -> Choice:
    """Pure decision. pip: the target's pip when it has one, else the doctor's pip with
    --python (pip >= 22.3). ``auto`` (the default): uv resolves, and installs where the target
    allows it (``uv_refused`` says why not), while the printed commands stay pip's (what a person
    runs by hand); pip does all of it when uv is missing or cannot carry the pip configuration.
    ``uv``: uv for everything, printed commands included (a usage error when it is missing)."""
    notes: List[str] = []
    if target_has_pip:
        pip_prefix: Tuple[str, ...] = (target_python, "-m", "pip")
    else:
        pip_prefix = (doctor_python, "-m", "pip", "--python", target_python)
        notes.append(f"{target_python} has no pip: using the doctor's pip with --python {target_python}")
    downloader = Downloader(pip_prefix)
    pip = Installer(PIP, target_python, pip_prefix, note=notes[0] if notes else None, system=tuple(system))
    if kind == PIP:
        return Choice(pip, downloader, notes, index=cfg)
    cannot: Optional[str] = None
    if uv_path is None:
        cannot = "uv is not on PATH"
    elif cfg is not None and cfg.uv_cannot:
        cannot = "pip's configuration sets " + ", ".join(f"{k} ({w})" for k, w in cfg.uv_cannot) + \
            ", which uv has no equivalent of"
    if kind == UV and cannot:
        raise LookupError(f"--installer uv: {cannot} (pip install uv, or use --installer pip)")
    if cannot:
        notes.append(f"resolving and installing with pip: {cannot}")
        return Choice(pip, downloader, notes, index=cfg)
    assert uv_path is not None
    flags = tuple(uv_flags(cfg)) if cfg is not None else ("--no-config",)
    envs = tuple(sorted(uv_env(cfg).items())) if cfg is not None else ()
    uv = Installer(UV, target_python, (uv_path, "pip"), flags, uv_env=envs)
    if kind == UV:
        return Choice(uv, downloader, notes, index=cfg)
    if uv_refused:
        notes.append(f"uv resolves; pip installs ({uv_refused})")
        return Choice(pip, downloader, notes, resolve_with=uv, show_with=pip, index=cfg)
    return Choice(uv, downloader, notes, resolve_with=uv, show_with=pip, index=cfg)


# ---------------------------------------------------------------------------------------------
# detection (I/O at the edge: PATH, the target's files, the user's pip configuration)


def find_uv(env: Mapping[str, str]) -> Optional[str]:
    """uv: the binary of the ``uv`` distribution the doctor depends on (its wheel carries it
    for x86_64 and aarch64), else the first ``uv`` on PATH."""
    import os
    import shutil
    import sys

    here = os.path.join(os.path.dirname(sys.executable), "uv")
    if os.path.isfile(here) and os.access(here, os.X_OK):
        return here
    try:
        import uv

        path = uv.find_uv_bin()
        if path and os.access(path, os.X_OK):
            return str(path)
    except (ImportError, FileNotFoundError, AttributeError):
        pass
    return shutil.which("uv", path=env.get("PATH"))


def externally_managed(base_prefix: Optional[str], version: Optional[str]) -> bool:
    """PEP 668: the distribution's interpreter says its packages belong to the system."""
    import os

    if not base_prefix or not version:
        return False
    mm = ".".join(version.split(".")[:2])
    return os.path.isfile(os.path.join(base_prefix, "lib", f"python{mm}", "EXTERNALLY-MANAGED"))


def detect(kind: str, facts, env: Mapping[str, str], doctor_python: Optional[str] = None,
           target_python: Optional[str] = None) -> Choice:
    """Which pip/uv resolves, installs and spells the commands for the target of ``facts``;
    ``target_python``: the interpreter the commands name where the facts ran none (the owner of
    --site-packages directories). Bad input (an unreadable pip.conf, an index URL uv cannot use)
    is a UsageError: exit 2."""
    import sys

    from packaging.version import Version

    from doctor.errors import UsageError

    from doctor.i18n import T
    from doctor.shell.install.index import IndexFetchError, pip_index_config

    if kind not in INSTALLERS:
        raise UsageError(T("fix.error.bad_installer", value=repr(kind)))
    py = facts.python
    python = (py.executable if py and py.executable else None) or target_python or "python3"
    has_pip = bool(facts.packages and "pip" in facts.packages.dists)
    if not has_pip:  # importlib.metadata costs ~20 ms: only for a target without pip
        from importlib import metadata

        try:
            version = metadata.version("pip")
        except metadata.PackageNotFoundError:
            raise UsageError(T("fix.error.no_pip", python=python))
        if Version(version) < Version("22.3"):
            raise UsageError(T("fix.error.old_pip", python=python, version=version))
    try:
        cfg = pip_index_config(env, prefix=py.prefix if py else None)
    except IndexFetchError as e:
        raise UsageError(e.args[0] if len(e.args) == 1 else str(e))  # a catalogue Text stays one
    uv = find_uv(env) if kind != PIP else None
    refused = None
    if py is not None:
        refused = uv_allowed(py.prefix, py.version, externally_managed(py.base_prefix, py.version),
                             bool(py.prefix and py.base_prefix and py.prefix != py.base_prefix))
    managed = bool(py is not None and (py.externally_managed or (
        py.source != "image" and not (py.prefix and py.base_prefix and py.prefix != py.base_prefix)
        and externally_managed(py.base_prefix, py.version))))
    pip_version = facts.packages.dists["pip"].version if has_pip else own_pip_version()
    try:
        return choose(kind, python, doctor_python or sys.executable, has_pip, uv, cfg, refused,
                      system=break_system(managed, pip_version))
    except (LookupError, UvCannot) as e:
        raise UsageError(str(e))


def own_pip_version() -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version("pip")
    except metadata.PackageNotFoundError:
        return None
