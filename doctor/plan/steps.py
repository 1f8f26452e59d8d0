"""Step kinds: what a plan step is, how it is shown and which installed distributions it may
replace (the pure half of each kind). How a kind that runs is fetched before anything changes
and carried out is its shell half, doctor/shell/steps/ (``APPLIERS``, under the same key).

A step's ``kind`` and ``action`` (its JSON, docs/fix.md) name its kind here: ``pip`` steps are
``pip.remove``, ``pip.install`` and ``pip.requirements``; a ``build`` is a source build installed
with the installer (``build.source``: vllm with VLLM_TARGET_DEVICE=empty) or a staged install
tree the transaction puts in place (``build.mooncake``).

Adding a kind: a class here with ``key``, ``runs``, ``show`` and ``touches``, one line in KINDS,
and for a kind that runs its applier in doctor/shell/steps/ (docs/development.md, "Add a step
kind").
"""
from __future__ import annotations

import shlex
from typing import Dict, Iterable, List, Optional, Protocol, Set

from doctor.plan.pins import names


class Step(Protocol):
    """The fields of a plan step (doctor.plan.builder.Step) a kind reads."""
    kind: str
    action: str
    argv: Optional[List[str]]
    env: Dict[str, str]
    command: Optional[str]
    packages: List[str]
    removes: List[str]
    touches_family: str


class StepKind(Protocol):
    key: str
    runs: bool  # carried out by fix --apply (else: shown for the user to do)

    def show(self, step: Step, lang: str) -> List[str]:
        """The lines under the step's why: the command as it runs (argv, shlex-quoted)."""

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        """Installed distributions the step may remove or replace (their files are backed up)."""


def argv_line(step: Step) -> List[str]:
    if not step.argv:
        return []
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in step.env.items())
    return [(env + " " if env else "") + shlex.join(step.argv)]


class _Runs:
    runs = True

    def show(self, step: Step, lang: str) -> List[str]:
        return argv_line(step)

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set(names(step.packages)) & set(installed)


class PipRemove(_Runs):
    """Distributions that must go (the transaction removes them from their RECORD, as pip does)."""

    key = "pip.remove"

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set(step.removes) & set(installed)


class PipInstall(_Runs):
    """Pinned packages from the index (exact files with --no-deps, or under the pins)."""

    key = "pip.install"


class PipRequirements(_Runs):
    """What a --no-deps install leaves missing, read from the downloaded wheels' metadata."""

    key = "pip.requirements"


class SourceBuild(_Runs):
    """A source tree installed by the installer (vllm with VLLM_TARGET_DEVICE=empty)."""

    key = "build.source"


class MooncakeBuild(_Runs):
    """Mooncake built with -DUSE_ASCEND_DIRECT=ON into a staging tree; the transaction puts the
    tree in place. It replaces the installed distributions of its family (``mooncake``)."""

    key = "build.mooncake"

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        found = set(names(step.packages))
        if step.touches_family:
            found |= {n for n in installed if n.startswith(step.touches_family)}
        return found & set(installed)


class Fetch(_Runs):
    """Getting a source tree (git clone) in the download phase: changes no distribution."""

    key = "fetch"

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set()


class Manual:
    """A command only the user can run (``source set_env.sh`` changes their shell)."""

    key, runs = "manual", False

    def show(self, step: Step, lang: str) -> List[str]:
        return [step.command] if step.command else []

    def touches(self, step: Step, installed: Iterable[str]) -> Set[str]:
        return set()


class Vendor(Manual):
    """A vendor package (HDK driver/firmware, CANN toolkit/ops/NNAL) from Huawei."""

    key = "vendor"


KINDS: Dict[str, StepKind] = {k.key: k for k in (PipRemove(), PipInstall(), PipRequirements(), SourceBuild(),
                                                  MooncakeBuild(), Fetch(), Manual(), Vendor())}


def key_of(step: Step) -> str:
    """The kind a step's ``kind`` and ``action`` name."""
    if step.kind == "pip":
        return f"pip.{step.action or 'install'}"
    if step.kind == "build":
        return "build.mooncake" if step.touches_family == "mooncake" else "build.source"
    return step.kind


def kind_of(step: Step) -> StepKind:
    try:
        return KINDS[key_of(step)]
    except KeyError:
        raise ValueError(f"unknown step kind {step.kind!r} (doctor.plan.steps.KINDS)") from None
