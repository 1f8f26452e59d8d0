"""doctor/record.py: records behave as the dataclasses they replace, for every reader."""
from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Dict, List, Optional

import pytest

from doctor.record import asdict, field, fields_of, record, replace


@record
class Plain:
    name: str
    version: str = "0"
    requires: List[str] = field(default_factory=list)
    extra: Dict[str, str] = field(default_factory=dict, metadata={"doc": "free keys"})
    note: Optional[str] = field(default=None, repr=False, compare=False)


@record(frozen=True)
class Frozen:
    a: int
    b: str = "x"


@record
class WithPost:
    items: Optional[List[int]] = None

    def __post_init__(self) -> None:
        if self.items is None:
            self.items = []


@dataclasses.dataclass
class PlainDC:
    name: str
    version: str = "0"
    requires: List[str] = dataclasses.field(default_factory=list)
    extra: Dict[str, str] = dataclasses.field(default_factory=dict, metadata={"doc": "free keys"})
    note: Optional[str] = dataclasses.field(default=None, repr=False, compare=False)


def test_construction_as_a_dataclass():
    for cls in (Plain, PlainDC):
        p = cls("torch", requires=["numpy"])
        assert (p.name, p.version, p.requires, p.extra, p.note) == ("torch", "0", ["numpy"], {}, None)
        assert cls("a").requires is not cls("a").requires  # a fresh default per instance
        assert cls("a", "1", ["x"], {"k": "v"}, "n").note == "n"
    assert repr(Plain("a", requires=["x"])) == repr(PlainDC("a", requires=["x"])).replace("PlainDC", "Plain")
    assert Plain.version == "0" and not hasattr(Plain, "requires")  # class attributes as dataclasses leave them


def test_constructor_errors_as_a_dataclass():
    for cls in (Plain, PlainDC):
        with pytest.raises(TypeError, match="missing 1 required positional argument: 'name'"):
            cls()
        with pytest.raises(TypeError, match="unexpected keyword argument 'nme'"):
            cls(nme="x")
        with pytest.raises(TypeError, match="multiple values for argument 'name'"):
            cls("a", name="b")
        with pytest.raises(TypeError, match="positional arguments but 7 were given"):
            cls("a", "1", [], {}, None, "extra")
    with pytest.raises(ValueError, match="mutable default"):
        @record
        class Bad:
            items: List[int] = []  # noqa: RUF012
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        @record
        class Order:
            a: int = 1
            b: int


def test_equality_hash_and_frozen():
    assert Plain("a", note="x") == Plain("a", note="y")  # compare=False
    assert Plain("a") != Plain("b") and Plain("a") != PlainDC("a")
    with pytest.raises(TypeError):
        hash(Plain("a"))  # eq without frozen: unhashable, as dataclasses
    assert hash(Frozen(1)) == hash(Frozen(1)) and {Frozen(1), Frozen(1)} == {Frozen(1)}
    f = Frozen(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.a = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del f.b  # type: ignore[misc]
    assert WithPost().items == [] and WithPost([1]).items == [1]


def test_the_dataclasses_api_reads_records():
    assert dataclasses.is_dataclass(Plain) and dataclasses.is_dataclass(Plain("a"))
    names = [f.name for f in dataclasses.fields(Plain)]
    assert names == [f.name for f in dataclasses.fields(PlainDC)] == [s.name for s in fields_of(Plain)]
    assert dataclasses.fields(Plain)[3].metadata["doc"] == "free keys"
    p = Plain("a", requires=["x"])
    assert dataclasses.asdict(p) == asdict(p) == dataclasses.asdict(PlainDC("a", requires=["x"]))
    assert dataclasses.replace(p, version="2") == replace(p, version="2") == Plain("a", "2", ["x"])
    assert dataclasses.replace(Frozen(1), b="y") == Frozen(1, "y")
    assert dataclasses.astuple(Frozen(1)) == (1, "x")


def test_copies_and_pickles():
    for obj in (Plain("a", requires=["x"]), Frozen(3)):
        assert copy.copy(obj) == obj and copy.deepcopy(obj) == obj
        assert pickle.loads(pickle.dumps(obj)) == obj


def test_recursive_repr_ends():
    p = Plain("a")
    p.extra = {"self": p}  # type: ignore[dict-item]
    assert "..." in repr(p)


def test_the_snapshot_classes_are_records():
    """The classes check imports are records, never dataclasses compiled at import (issue 26):
    a dataclass added to these modules shows here."""
    import doctor.facts
    import doctor.findings
    import doctor.matrix.model

    for module in (doctor.facts, doctor.matrix.model, doctor.findings):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__ and dataclasses.is_dataclass(value):
                assert "__record_fields__" in value.__dict__, f"{value.__name__}: use @record, not @dataclass"
