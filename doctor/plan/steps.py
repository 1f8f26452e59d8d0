"""Step kinds: what a plan step is, how it is shown, whether ``fix --apply`` runs it and which
installed distributions it may replace. Pure; how a step that runs is downloaded and carried
out is doctor/shell/apply.py's (``_download``, by the step's ``action``).

Adding a kind: a class here with ``name``, ``runs``, ``show`` and ``touches``, and one line in
KINDS (docs/development.md, "Add a step kind").
"""
from __future__ import annotations

import shlex
from typing import Dict, Iterable, List, Optional, Protocol, Set

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name


class Step(Protocol):
    """The fields of a plan step (doctor.plan.builder.Step) a kind reads."""
    kind: str
    argv: Optional[List[str]]
    env: Dict[str, str]
    command: Optional[str]
    packages: List[str]
    removes: List[str]
    touches_family: str


class StepKind(Protocol):
    name: str
    runs: bool  # carried out by fix --apply (else: shown for the user to do)

    def show(self, step: Step, lang: str) -> List[str]:
        """The lines under the step's why: the command as it runs (argv, shlex-quoted)."""

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        """Installed distributions the step may remove or replace (their files are backed up)."""


def _names(specs: Iterable[str]) -> Set[str]:
    out: Set[str] = set()
    for spec in specs:
        try:
            out.add(canonicalize_name(Requirement(spec).name))
        except InvalidRequirement:
            pass
    return out


def _argv_line(step: Step) -> List[str]:
    if not step.argv:
        return []
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in step.env.items())
    return [(env + " " if env else "") + shlex.join(step.argv)]


class Pip:
    name, runs = "pip", True

    def show(self, step: Step, lang: str) -> List[str]:
        return _argv_line(step)

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return (_names(step.packages) | set(step.removes)) & set(installed)


class Build:
    """A source build installed into the environment (vllm with VLLM_TARGET_DEVICE=empty, or
    Mooncake with -DUSE_ASCEND_DIRECT=ON): what it installs is named by its packages, or for
    Mooncake by the build's own package family."""

    name, runs = "build", True

    def show(self, step: Step, lang: str) -> List[str]:
        return _argv_line(step)

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        names = _names(step.packages)
        if step.touches_family:
            names |= {n for n in installed if n.startswith(step.touches_family)}
        return names & set(installed)


class Fetch:
    """Getting a source tree (git clone) in the download phase: changes no distribution."""

    name, runs = "fetch", True

    def show(self, step: Step, lang: str) -> List[str]:
        return _argv_line(step)

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set()


class Manual:
    """A command only the user can run (``source set_env.sh`` changes their shell)."""

    name, runs = "manual", False

    def show(self, step: Step, lang: str) -> List[str]:
        return [step.command] if step.command else []

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set()


class Vendor(Manual):
    """A vendor package (HDK driver/firmware, CANN toolkit/ops/NNAL) from Huawei."""

    name = "vendor"


KINDS: Dict[str, StepKind] = {k.name: k for k in (Pip(), Build(), Fetch(), Manual(), Vendor())}


def kind_of(step: Step) -> StepKind:
    try:
        return KINDS[step.kind]
    except KeyError:
        raise ValueError(f"unknown step kind {step.kind!r} (doctor.plan.steps.KINDS)") from None
