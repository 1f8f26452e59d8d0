"""Plain-data classes declared like dataclasses, at the start-up cost of a plain class.

``dataclasses.dataclass`` writes the source of ``__init__``, ``__repr__`` and ``__eq__`` for every
class and compiles it while the module is imported: ~0.5 ms a class, and `check` imports about a
hundred of them (a third of its run). ``@record`` makes the same classes from the same
declarations (annotations, defaults, :func:`field` with ``default_factory``, ``repr``, ``compare``,
``metadata``; ``frozen``; ``__post_init__``) with methods written once, here, and driven by a table
of the class's fields: nothing is compiled when a class is created.

They stay dataclasses for every reader: ``dataclasses.fields``, ``is_dataclass``, ``replace``,
``asdict`` work on them (``__dataclass_fields__`` is built the first time something asks, which
`check` never does), the snapshot serialiser (``doctor/parse/serial.py``) follows them, and mypy
reads ``@record`` as ``@dataclass`` (PEP 681 ``dataclass_transform``).
"""
from __future__ import annotations

import sys
import threading
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Tuple, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        return lambda f: f

__all__ = ["record", "field", "fields_of", "replace", "asdict", "MISSING"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
R = TypeVar("R")  # no default (dataclasses.MISSING once dataclasses is asked)


class FieldSpec:
    """One field: what ``dataclasses.Field`` holds, without importing dataclasses."""

    __slots__ = ("name", "type", "default", "default_factory", "repr", "compare", "metadata")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True,
                 compare: bool = True, metadata: Optional[Mapping[Any, Any]] = None) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare
        self.metadata: Mapping[Any, Any] = metadata if metadata is not None else {}

    def __repr__(self) -> str:
        return f"FieldSpec(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


def field(*, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True, compare: bool = True,
          metadata: Optional[Mapping[Any, Any]] = None) -> Any:
    """As ``dataclasses.field`` (the options records use)."""
    return FieldSpec(default, default_factory, repr, compare, metadata)


def fields_of(cls_or_obj: Any) -> Tuple[FieldSpec, ...]:
    """The fields of a record class or instance, in declaration order (cheaper than
    ``dataclasses.fields``, which builds ``dataclasses.Field`` objects the first time)."""
    cls: Any = cls_or_obj if isinstance(cls_or_obj, type) else type(cls_or_obj)
    specs: Tuple[FieldSpec, ...] = cls.__record_fields__
    return specs


def replace(obj: R, **changes: Any) -> R:
    """As ``dataclasses.replace``: a copy of a record with some fields changed."""
    values = {s.name: getattr(obj, s.name) for s in fields_of(obj)}
    values.update(changes)
    return type(obj)(**values)


def asdict(obj: Any) -> Any:
    """As ``dataclasses.asdict``: records (recursively, through lists, tuples and dicts) as dicts."""
    if hasattr(type(obj), "__record_fields__"):
        return {s.name: asdict(getattr(obj, s.name)) for s in fields_of(obj)}
    if isinstance(obj, (list, tuple)):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return {k: asdict(v) for k, v in obj.items()}
    return obj


# ---------------------------------------------------------------------------------------------
# the methods every record shares


def _init(self: Any, *args: Any, **kwargs: Any) -> None:
    cls = type(self)
    count, defaults, factories, post_init = cls.__record_init__
    d = self.__dict__
    d.update(defaults)
    if args:
        if len(args) > count:
            raise TypeError(f"{cls.__qualname__}.__init__() takes {count + 1} positional arguments "
                            f"but {len(args) + 1} were given")
        if kwargs and not kwargs.keys().isdisjoint(cls.__match_args__[:len(args)]):
            bad = next(k for k in cls.__match_args__[:len(args)] if k in kwargs)
            raise TypeError(f"{cls.__qualname__}.__init__() got multiple values for argument {bad!r}")
        d.update(zip(cls.__match_args__, args))
    if kwargs:
        if not cls.__record_names__.issuperset(kwargs):
            bad = next(k for k in kwargs if k not in cls.__record_names__)
            raise TypeError(f"{cls.__qualname__}.__init__() got an unexpected keyword argument {bad!r}")
        d.update(kwargs)
    for name, factory in factories:
        if name not in d:
            d[name] = factory()
    if len(d) < count:
        missing = [n for n in cls.__match_args__ if n not in d]
        listed = " and ".join(", ".join(repr(m) for m in missing).rsplit(", ", 1))
        raise TypeError(f"{cls.__qualname__}.__init__() missing {len(missing)} required positional "
                        f"argument{'s' if len(missing) > 1 else ''}: {listed}")
    if post_init:
        self.__post_init__()


_repr_running = threading.local()


def _repr(self: Any) -> str:
    running = _repr_running.__dict__.setdefault("ids", set())
    if id(self) in running:
        return "..."
    running.add(id(self))
    try:
        parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in type(self).__record_repr__)
    finally:
        running.discard(id(self))
    return f"{type(self).__qualname__}({parts})"


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self.__class__.__record_key__
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_key__(self))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    import dataclasses

    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


class _DataclassFields:
    """``__dataclass_fields__``, made the first time it is read (dataclasses API users: the
    snapshot reader, ``replace``, ``asdict``, tests), then stored on the class."""

    def __get__(self, obj: Any, owner: Any) -> Dict[str, Any]:
        import dataclasses

        private: Any = dataclasses
        out: Dict[str, Any] = {}
        for spec in fields_of(owner):
            f: Any = dataclasses.field(
                default=dataclasses.MISSING if spec.default is MISSING else spec.default,
                default_factory=dataclasses.MISSING if spec.default_factory is MISSING else spec.default_factory,
                repr=spec.repr, compare=spec.compare, metadata=spec.metadata)
            f.name, f.type = spec.name, spec.type
            f._field_type = private._FIELD  # what dataclasses.fields() keeps
            if sys.version_info >= (3, 10):
                f.kw_only = False
            out[spec.name] = f
        owner.__dataclass_fields__ = out
        return out


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


@overload
def record(cls: type[R], /) -> type[R]: ...


@overload
def record(*, frozen: bool = False) -> Callable[[type[R]], type[R]]: ...


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """``@dataclass`` / ``@dataclass(frozen=True)`` for plain data, without compiling anything."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def _make(cls: Any, frozen: bool) -> Any:
    specs: Dict[str, FieldSpec] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in base.__dict__.get("__record_fields__", ()):
            specs[spec.name] = spec
    own = cls.__dict__
    for name, annotation in own.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = own.get(name, MISSING)
        if isinstance(value, FieldSpec):
            spec = value
        elif type(value).__name__ == "Field" and type(value).__module__ == "dataclasses":
            import dataclasses  # a dataclasses.field(...) in a record: taken as it is

            spec = FieldSpec(MISSING if value.default is dataclasses.MISSING else value.default,
                             MISSING if value.default_factory is dataclasses.MISSING else value.default_factory,
                             value.repr, value.compare is not False, value.metadata)
        else:
            if value is not MISSING and type(value).__hash__ is None:
                raise ValueError(f"mutable default {type(value)} for field {name} is not allowed: use default_factory")
            spec = FieldSpec(value)
        spec.name, spec.type = name, annotation
        specs[name] = spec
        # as dataclasses leaves it: the class attribute is the default, or absent
        if spec.default is MISSING:
            if name in own:
                delattr(cls, name)
        else:
            setattr(cls, name, spec.default)
    seen_default = False
    for spec in specs.values():
        if spec.default is MISSING and spec.default_factory is MISSING:
            if seen_default:
                raise TypeError(f"non-default argument {spec.name!r} follows default argument")
        else:
            seen_default = True
    fields = tuple(specs.values())
    names = tuple(s.name for s in fields)
    cls.__record_fields__ = fields
    cls.__record_names__ = frozenset(names)
    cls.__record_init__ = (
        len(names),
        {s.name: s.default for s in fields if s.default is not MISSING},
        tuple((s.name, s.default_factory) for s in fields if s.default_factory is not MISSING),
        hasattr(cls, "__post_init__"),
    )
    cls.__record_repr__ = tuple(s.name for s in fields if s.repr)
    compared = [s.name for s in fields if s.compare]
    cls.__record_key__ = attrgetter(*compared) if len(compared) > 1 else (
        (lambda o, _get=attrgetter(compared[0]): (_get(o),)) if compared else (lambda o: ()))
    cls.__dataclass_fields__ = _DataclassFields()
    cls.__match_args__ = names  # type: ignore[misc]  # (a class attribute, not the instance's)
    for attr, method in (("__init__", _init), ("__repr__", _repr), ("__eq__", _eq)):
        if attr not in own:
            setattr(cls, attr, method)
    # dataclasses' rule: a __hash__ the class wrote stands, unless it is the None that
    # writing __eq__ implies
    if "__hash__" not in own or (own["__hash__"] is None and "__eq__" in own):
        cls.__hash__ = _hash if frozen else None
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    return cls
