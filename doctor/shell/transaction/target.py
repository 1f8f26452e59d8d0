"""The environment a transaction changes: its interpreter, prefix and site directories, and
from them the roots the doctor may act on (never taken from the journal)."""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.facts import Facts
from doctor.shell.transaction.roots import Roots


@dataclass
class Target:
    python: str
    prefix: str
    base_prefix: str
    roots: List[str]  # site directories whose distributions the transaction tracks
    markers: Dict[str, str] = field(default_factory=dict)
    # where a source build run by the user installs (mooncake build --prefix): allowed for that
    # run only; a rollback later knows only the environment's own places (roots.py)
    install_prefixes: List[str] = field(default_factory=list)

    @property
    def is_venv(self) -> bool:
        return os.path.realpath(self.prefix) != os.path.realpath(self.base_prefix)

    @property
    def scripts_dir(self) -> Optional[str]:
        # A venv's bin/ holds only its own files: track it fully. A system prefix's bin/ (/usr/bin)
        # is left to the RECORD-based backups.
        d = os.path.join(self.prefix, "bin")
        return d if self.is_venv and os.path.isdir(d) else None

    @property
    def tracked(self) -> List[str]:
        return list(self.roots) + ([self.scripts_dir] if self.scripts_dir else [])

    def allowed(self) -> Roots:
        return Roots.of(self.roots, self.prefix, self.scripts_dir, self.install_prefixes)

    def rollback_command(self) -> str:
        from doctor.program import spelled

        return shlex.join(spelled(rollback_argv(self.python)))


def rollback_argv(python: str) -> List[str]:
    return ["ascend-doctor", "rollback", "--python", python]


def site_roots(prefix: str, paths: List[str]) -> List[str]:
    prefix = os.path.normpath(prefix)
    return [p for p in paths if (p + os.sep).startswith(prefix + os.sep) and ("-packages" in p)]


def target_from_facts(facts: Facts) -> Target:
    py = facts.python
    if py is None or not py.found or not py.executable or not py.prefix:
        raise UsageError(T("fix.error.apply_needs_python"))
    prefix = os.path.normpath(py.prefix)
    roots = site_roots(prefix, facts.packages.paths if facts.packages else [])
    if not roots:
        raise UsageError(T("fix.error.no_site_packages", python=py.executable, prefix=prefix))
    return Target(python=py.executable, prefix=prefix, base_prefix=py.base_prefix or prefix, roots=roots,
                  markers=dict(py.markers))
