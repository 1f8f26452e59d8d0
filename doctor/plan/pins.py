"""Typed requirements and pins, decoded once. A plan's ``pins`` map a name to a version
(``2.7.1``), a range (``>=4.57.3,<5``) or ``any``; a step's ``packages`` are requirement strings
(``vllm==0.11.0``, ``ray[cgraph]>=2.48``). Everything that reads them goes through these two
types instead of slicing strings. Pure."""
from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

ANY = "any"


class Pin:
    """What the plan says one package must be afterwards."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: str):
        self.name = canonicalize_name(name)
        self.value = value

    @property
    def exact(self) -> Optional[str]:
        """The one version it must be (``2.7.1``, ``0.11.2+empty``), or None for a range or any."""
        return self.value if self.value[:1].isdigit() else None

    @property
    def is_range(self) -> bool:
        return self.value[:1] in "<>=!~"

    def requirement(self) -> str:
        """As a requirement line: ``torch==2.7.1``, ``numpy<2``, ``numpy`` (any)."""
        if self.exact is not None:
            return f"{self.name}=={self.value}"
        if self.is_range:
            return f"{self.name}{self.value}"
        return self.name

    def constraint(self) -> Optional[str]:
        """As a constraints-file line (``any`` constrains nothing)."""
        return None if self.value == ANY else self.requirement()

    def __repr__(self) -> str:
        return f"Pin({self.name!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pin) and (self.name, self.value) == (other.name, other.value)

    def __hash__(self) -> int:
        return hash((self.name, self.value))


def pins(values: Mapping[str, str]) -> Dict[str, Pin]:
    return {canonicalize_name(n): Pin(n, v) for n, v in values.items()}


def exact_names(values: Mapping[str, str]) -> List[str]:
    """Names pinned to one version (their own step installs them)."""
    return sorted(p.name for p in pins(values).values() if p.exact is not None)


def constraint_lines(values: Mapping[str, str]) -> List[str]:
    return [c for c in (p.constraint() for _, p in sorted(pins(values).items())) if c]


class Spec:
    """One requirement string of a step, decoded once (None from ``parse`` for a bad one)."""

    __slots__ = ("text", "req", "name")

    def __init__(self, text: str, req: Requirement):
        self.text = text
        self.req = req
        self.name = canonicalize_name(req.name)

    @classmethod
    def parse(cls, text: str) -> Optional["Spec"]:
        try:
            return cls(text, Requirement(text))
        except InvalidRequirement:
            return None

    @property
    def exact(self) -> Optional[str]:
        """The version of a ``name==X`` requirement."""
        specs = list(self.req.specifier)
        if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
            return specs[0].version
        return None

    def __repr__(self) -> str:
        return f"Spec({self.text!r})"


def specs(texts: Iterable[str]) -> List[Spec]:
    return [s for s in (Spec.parse(t) for t in texts) if s is not None]


def names(texts: Iterable[str]) -> List[str]:
    return [s.name for s in specs(texts)]
