"""How to spell installer commands (pip or uv) for a target interpreter, as argv lists.

Pure: which pip to use (the target's own, or the doctor's with ``--python``) and whether uv is
on PATH are decided by the caller (``doctor.shell.apply.detect_installer``) and passed in.

pip reads the user's configuration itself (pip.conf, PIP_* variables), so pip commands carry only
what the matrix adds (``--extra-index-url`` of the release row). uv reads none of pip's
configuration, so uv commands get the user's pip index settings translated into uv flags.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from doctor.shell.index import IndexConfig

PIP, UV = "pip", "uv"


@dataclass(frozen=True)
class Installer:
    kind: str  # pip | uv
    python: str  # the target interpreter
    prefix: Tuple[str, ...]  # ("/t/bin/python", "-m", "pip") or (doctor python, -m, pip, --python, T) or ("uv", "pip")
    uv_index_args: Tuple[str, ...] = ()  # the user's pip index configuration, as uv flags
    note: Optional[str] = None  # "the target has no pip: using the doctor's pip with --python"

    @property
    def is_uv(self) -> bool:
        return self.kind == UV

    def _cmd(self, sub: str) -> List[str]:
        if self.is_uv:
            return list(self.prefix) + [sub, "--python", self.python]
        return list(self.prefix) + [sub]

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
            if extra_index_urls or "--extra-index-url" in self.uv_index_args:
                # pip merges all indexes and takes the best version; uv stops at the first index
                # that has the name unless told otherwise (torch is on PyPI *and* the CPU index).
                argv += ["--index-strategy", "unsafe-best-match"]
        return argv

    def install_files(self, files: Sequence[str]) -> List[str]:
        """Install downloaded files only: no index, no dependencies, replace what is there."""
        argv = self._cmd("install") + ["--no-index", "--no-deps"]
        argv.append("--reinstall" if self.is_uv else "--force-reinstall")
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


def uv_flags(cfg: IndexConfig) -> List[str]:
    """The user's pip index configuration as uv flags (uv ignores pip.conf and PIP_*)."""
    out: List[str] = []
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
    return out


@dataclass
class Choice:
    """What detect() found, for messages."""

    installer: Installer
    downloader: Downloader
    notes: List[str] = field(default_factory=list)


def choose(kind: str, target_python: str, doctor_python: str, target_has_pip: bool, uv_path: Optional[str],
           cfg: Optional[IndexConfig]) -> Choice:
    """Pure decision: the target's pip when it has one, else the doctor's pip with --python
    (pip >= 22.3); uv only when asked for and on PATH."""
    notes: List[str] = []
    if target_has_pip:
        pip_prefix: Tuple[str, ...] = (target_python, "-m", "pip")
    else:
        pip_prefix = (doctor_python, "-m", "pip", "--python", target_python)
        notes.append(f"{target_python} has no pip: using the doctor's pip with --python {target_python}")
    downloader = Downloader(pip_prefix)
    if kind == UV:
        if uv_path is None:
            raise LookupError("--installer uv: uv is not on PATH (pip install uv, or use the default --installer pip)")
        flags = tuple(uv_flags(cfg)) if cfg is not None else ()
        notes.append("uv installs; downloads go through pip (uv has no download command)")
        return Choice(Installer(UV, target_python, (uv_path, "pip"), flags), downloader, notes)
    return Choice(Installer(PIP, target_python, pip_prefix, note=notes[0] if notes else None), downloader, notes)
