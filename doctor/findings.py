"""Findings and the verdict: root cause first, "blocked by" for what follows from it."""
from __future__ import annotations

from doctor.record import field, record
import shlex
from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple, Union

from doctor.i18n import Join, Text
from doctor.layers import order, upstream_of
from doctor.program import spelled

class Status(str, Enum):
    """What a finding says. A ``str``: it compares, hashes, formats and serialises as its value
    (``"fail"``), so JSON, goldens and snapshots read by older doctors stay the same."""

    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"

    def __str__(self) -> str:
        return self.value


class Fixable(str, Enum):
    """Who repairs a finding: the plan (``fix --apply``), the user (its commands), the vendor's
    installer, or nobody (an observation). A ``str`` like :class:`Status`."""

    AUTO = "auto"
    MANUAL = "manual"
    VENDOR = "vendor"
    NONE = "none"

    def __str__(self) -> str:
        return self.value


OK, INFO, WARN, FAIL, SKIP = Status.OK, Status.INFO, Status.WARN, Status.FAIL, Status.SKIP
STATUSES = tuple(Status)
FIXABLE = tuple(Fixable)

EXIT_OK, EXIT_DOCTOR, EXIT_USAGE, EXIT_FAIL, EXIT_WARN = 0, 1, 2, 3, 4


@record(frozen=True)
class Msg:
    """Inline English and Chinese words: the old way, left for shell/smoke/scripts.py until its texts
    move to the catalogue (doctor/i18n). New code uses catalogue Texts (``doctor.i18n.T``)."""

    en: str
    zh: str

    def text(self, lang: str = "en", **values: object) -> str:
        template = self.zh if lang == "zh" else self.en
        return template.format(**values) if values else template


def msg(en: str, zh: str) -> Msg:
    return Msg(en, zh)


Message = Union[Msg, Text]  # a catalogue Text (Msg: smoke's inline words, until they move)
# observed / expected are data, shown in English in every language (scripts compare them); a
# Text there (a list of problems) is rendered in English.
Datum = Union[str, Text, Join, None]


def _en(value: Datum) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    return value.text("en")  # a Text, a Join, catalogue Words


@record(frozen=True)
class Command:
    """A command the user may run, shown on a line of its own exactly as ``shell()`` prints it,
    so that it runs when copied. ``label`` says what it does when there are alternatives."""

    argv: Tuple[str, ...]
    label: Optional[Text] = None
    env: Tuple[Tuple[str, str], ...] = ()  # VAR=value set for this command only

    def shown_argv(self) -> Tuple[str, ...]:
        """The argv as it runs: ``ascend-doctor`` spelled the way this doctor was started."""
        return spelled(self.argv)

    def shell(self) -> str:
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env)
        return (prefix + " " if prefix else "") + shlex.join(self.shown_argv())

    def to_json(self, lang: str = "en") -> Dict:
        out: Dict = {"argv": list(self.shown_argv()), "shell": self.shell()}
        if self.env:
            out["env"] = dict(self.env)
        if self.label is not None:
            out["label"] = self.label.text(lang)
        return out


def cmd(*argv: str, label: Optional[Text] = None, **env: str) -> Command:
    return Command(tuple(str(a) for a in argv), label, tuple(sorted(env.items())))


def command_groups(commands: Sequence[Command]) -> List[List[Command]]:
    """A finding's commands as its groups of alternatives: a labelled command starts a group, the
    unlabelled ones after it belong to it and run in order."""
    groups: List[List[Command]] = []
    for c in commands:
        if c.label is not None or not groups:
            groups.append([])
        groups[-1].append(c)
    return groups


def first_group(commands: Sequence[Command]) -> List[Command]:
    groups = command_groups(commands)
    return groups[0] if groups else []


@record(frozen=True)
class Edit:
    """A change to the user's launch script that ``fix --tuning-patch`` writes as a diff:
    ``export`` / ``unset`` a variable, set a ``flag`` (``--name value``; value None for a bare
    flag) or ``drop`` one."""

    action: str  # export | unset | flag | drop
    name: str
    value: Optional[str] = None

    def to_json(self) -> Dict:
        return {"action": self.action, "name": self.name, "value": self.value}


@record
class Finding:
    id: str
    status: Status  # a plain "fail" is taken and checked (Status("fail")): a typo is an error
    title: Message
    observed: Datum = None
    expected: Datum = None
    hint: Optional[Message] = None
    fixable: Fixable = Fixable.NONE  # "manual" is taken and checked like the status
    source: Optional[str] = None
    # data (English in JSON); a Text shows translated. Sequence: a rule's List[str] is one too
    evidence: Sequence[Datum] = field(default_factory=list)
    root_cause: bool = False
    blocked_by: Optional[str] = None
    commands: List[Command] = field(default_factory=list)  # each runnable as printed
    edits: List[Edit] = field(default_factory=list)  # launch-script changes (fix --tuning-patch)

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        self.fixable = Fixable(self.fixable)

    @property
    def layer(self) -> str:
        return self.id.split(".", 1)[0]

    def to_json(self, lang: str = "en") -> Dict:
        return {
            "id": self.id,
            "layer": self.layer,
            "status": self.status.value,
            "title": self.title.text(lang),
            "observed": _en(self.observed),
            "expected": _en(self.expected),
            "root_cause": self.root_cause,
            "blocked_by": self.blocked_by,
            "fixable": self.fixable.value,
            "hint": self.hint.text(lang) if self.hint else None,
            "source": self.source,
            "evidence": [_en(e) for e in self.evidence],
            **({"commands": [c.to_json(lang) for c in self.commands]} if self.commands else {}),
            **({"edits": [e.to_json() for e in self.edits]} if self.edits else {}),
        }


@record
class Verdict:
    findings: List[Finding]
    root_cause: Optional[str]

    def counts(self) -> Dict[str, int]:
        out = {s.value: 0 for s in (OK, WARN, FAIL, SKIP, INFO)}
        for f in self.findings:
            out[f.status.value] += 1
        return out

    def exit_code(self, fail_on: str = "fail") -> int:
        statuses = {f.status for f in self.findings}
        if FAIL in statuses:
            return EXIT_FAIL
        if WARN in statuses:
            return EXIT_FAIL if fail_on == "warn" else EXIT_WARN
        return EXIT_OK


def judge(findings: List[Finding]) -> Verdict:
    """Order findings by layer (stable within a layer), mark the first failure as the root cause
    and point every other problem at the earliest failure in a layer it rests on."""
    ordered = sorted(findings, key=lambda f: order(f.layer))
    first_fail: Dict[str, Finding] = {}
    for f in ordered:
        if f.status == FAIL and f.layer not in first_fail:
            first_fail[f.layer] = f
    root = next((f for f in ordered if f.status == FAIL), None)
    for f in ordered:
        f.root_cause = f is root
        if f.status not in (FAIL, WARN) or f is root or f.blocked_by:
            continue
        for layer in upstream_of(f.id):
            if layer in first_fail:
                f.blocked_by = first_fail[layer].id
                break
    return Verdict(findings=ordered, root_cause=root.id if root else None)

