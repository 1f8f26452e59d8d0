"""What every rule is built from: the judging context and the rule record.

A rule is one record (conda's ``CondaHealthCheck(name, action, fixer)`` is the model): the
finding id it reports, its layer, a pure check over the context, the catalogue text that says
why it exists and where the knowledge comes from, and optionally the name of the plan fixer that
repairs what it finds (``doctor.plan`` owns the fixers; rules never import the plan). Rules
read facts and the matrix only: no files, no processes, no network.
"""
from __future__ import annotations

from doctor.record import field, record
from typing import Any, Callable, Dict, Iterable, Optional, Tuple

from doctor.facts import Facts
from doctor.findings import SKIP, Finding
from doctor.i18n import T, Text
from doctor.matrix.model import Matrix, Release

STAGE_BUILD_AUTO = "build.auto"
STAGE_FORCED = "forced"
STAGE_RUNTIME_AUTO = "runtime.auto"


@record
class Context:
    facts: Facts
    matrix: Matrix
    stage: str  # "build" or "runtime"
    stage_reason: str  # STAGE_* key: why this stage was chosen
    release: Optional[Release] = None
    release_note: Optional[str] = None  # how the row was chosen, when not exact
    hardware: Optional[str] = None  # A2 / A3 / 310P / A5 / "910" from npu-smi
    pip_conflicts: Optional[list] = None  # pip check's answer, computed before the rules run
    # what several rules derive from the facts, made once per run (the tuning rules' View)
    memo: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    doctor_python: Optional[str] = None  # the doctor's interpreter here (its pip drives a target without pip)
    doctor_pip: Optional[str] = "23.0"  # that pip's version (--break-system-packages since 23.0)
    # the options besides the root and the interpreter that shaped this verdict (--npu-smi PATH,
    # --stage, --target, --matrix ...): a follow-up ``fix`` command repeats them
    follow_up: Tuple[str, ...] = ()

    @property
    def build(self) -> bool:
        return self.stage == "build"

    def version(self, name: str) -> Optional[str]:
        return self.facts.version_of(name)

    @property
    def env(self) -> Dict[str, str]:
        """The one environment every rule reads: the host's, then the exports of the launch
        script (``--serve-args``/``--serve-args-file``), as the serving processes get it. Made
        once per context; rules read it, never change it."""
        cached = self.memo.get("env")
        if isinstance(cached, dict):
            return cached
        env = serving_env(self.facts)
        self.memo["env"] = env
        return env

    def stage_reason_text(self) -> Text:
        return T(f"stage.reason.{self.stage_reason}", stage=self.stage)

    def skip_build(self, fid: str) -> Finding:
        return Finding(fid, SKIP, T("stage.skipped_in_build", reason=self.stage_reason_text()))


def serving_env(facts: Facts) -> Dict[str, str]:
    """The host's environment with the launch script's exports applied (the Mooncake probe and
    the tuning probe read the same script; both keep its exports)."""
    env = dict(facts.env)
    if facts.mooncake is not None:
        env.update(facts.mooncake.serve_env)
    serve = facts.tuning.serve if facts.tuning is not None else None
    if serve is not None:
        env.update(serve.exports)
    return env


Check = Callable[[Context], Iterable[Finding]]


@record(frozen=True)
class Rule:
    id: str  # the finding id it reports (layer.topic); stable, a contract
    layer: str
    check: Check
    why: Optional[Text] = None  # why the rule exists (matrix explain, docs/findings.md)
    source: Optional[str] = None  # where the knowledge comes from: a public URL or a repo file
    fixer: Optional[str] = None  # the plan fixer that repairs it (FIXERS in doctor.plan.builder), or None
    # its failing, auto-fixable finding makes the fixer act although the installed versions are
    # the plan's (an install of the right version that is broken: reinstall it, complete it)
    reinstall: bool = False


def rule(fid: str, check: Check, source: str, fixer: Optional[str] = None, *, why: Optional[str] = None,
         reinstall: bool = False) -> Rule:
    """The record of finding id ``fid``: its layer is the id's first part, its why-text the
    catalogue message ``why.<fid>`` (or ``why``, a catalogue key several rules share, such as
    ``why.generic.probe_error``). The one way to write a rule."""
    return Rule(fid, fid.split(".", 1)[0], check, T(why or f"why.{fid}"), source, fixer, reinstall)


Rules = Tuple[Rule, ...]
