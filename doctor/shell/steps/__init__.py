"""The shell half of the step kinds (the pure half, how a step is shown and what it touches, is
doctor/plan/steps.py): how each kind that runs is fetched in the download phase, when nothing in
the environment changes, and what it then does in the install phase (an ``Action`` the
transaction carries out). ``APPLIERS`` has one entry per kind that runs, under the same key.

Fetching goes in three rounds, because later kinds read what earlier ones fetched: ``exact``
(the pinned files, one download for all steps), ``source`` (clones and staged builds), ``deps``
(requirements read from the downloaded wheels, then one download under the pins).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Mapping, Optional, Protocol

if TYPE_CHECKING:
    from doctor.facts import Distribution
    from doctor.plan.builder import Plan, Step
    from doctor.shell.install.installer import Choice
    from doctor.shell.transaction.engine import Transaction

ROUNDS = ("exact", "source", "deps")


@dataclass
class Action:
    """What one step does in the install phase, decided once its files are fetched."""

    argv: Optional[List[str]] = None  # a command (the installer's, from the downloaded files only)
    env: Dict[str, str] = field(default_factory=dict)
    note: Optional[str] = None  # why nothing runs ("done in the download phase")
    removes: List[str] = field(default_factory=list)  # distributions the transaction removes itself
    files: List[str] = field(default_factory=list)  # wheel files: installed in one run with its neighbours
    packages: List[str] = field(default_factory=list)  # names it installs from the downloaded files
    stage: Optional[Path] = None  # a staged install tree the transaction puts in place
    verify: Optional[str] = None  # after placing: which check proves it (``mooncake``)

    @property
    def shared(self) -> bool:
        return bool(self.files)


@dataclass
class Fetching:
    """What the steps share in the download phase."""

    plan: "Plan"
    choice: "Choice"
    env: Mapping[str, str]
    txn: "Transaction"
    timeout: float
    markers: Dict[str, str]
    before: Dict[str, "Distribution"]
    exact_dir: Path
    deps_dir: Path
    constraint: Path
    stage_dir: Path
    exact: List[str] = field(default_factory=list)  # requirement strings for the one --no-deps download
    exact_index: List[str] = field(default_factory=list)
    deps: List[str] = field(default_factory=list)  # for the download under the pins
    deps_index: List[str] = field(default_factory=list)
    files: Dict[str, Path] = field(default_factory=dict)  # requirement string or name -> downloaded file
    sources: Dict[str, str] = field(default_factory=dict)  # "vllm" -> the clone a build step installs from
    found: Dict[int, List[str]] = field(default_factory=dict)  # a requirements step -> what it found missing

    def want(self, specs: List[str], indexes: List[str], *, exact: bool) -> None:
        target, index = (self.exact, self.exact_index) if exact else (self.deps, self.deps_index)
        for s in specs:
            if s not in target:
                target.append(s)
        for u in indexes:
            if u not in index:
                index.append(u)


class Applier(Protocol):
    key: str
    round: str  # when it fetches: one of ROUNDS

    def fetch(self, step: "Step", ctx: Fetching) -> None:
        """Get (or ask for) what the step needs; nothing in the environment changes."""

    def action(self, step: "Step", ctx: Fetching) -> Action:
        """What the step does in the install phase, from what was fetched."""


def appliers() -> Dict[str, Applier]:
    from doctor.shell.steps.build import MooncakeBuild, SourceBuild
    from doctor.shell.steps.fetch import Clone
    from doctor.shell.steps.pip import Install, Remove, Requirements

    return {a.key: a for a in (Remove(), Install(), Requirements(), SourceBuild(), MooncakeBuild(), Clone())}


def applier_of(step: "Step") -> Applier:
    from doctor.plan.steps import key_of

    found = appliers().get(key_of(step))
    if found is None:
        raise ValueError(f"step kind {key_of(step)} runs but has no applier (doctor.shell.steps)")
    return found
