"""Records (doctor/record.py) and dataclasses <-> JSON-able dicts, driven by type hints (for
snapshots)."""
from __future__ import annotations

import sys
import typing
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

T = TypeVar("T")


class SnapshotError(ValueError):
    pass


def _field_names(cls: type) -> Optional[List[str]]:
    """The fields of a record or dataclass, in declaration order; None for other types."""
    specs = getattr(cls, "__record_fields__", None)
    if specs is not None:
        return [s.name for s in specs]
    if hasattr(cls, "__dataclass_fields__"):
        import dataclasses

        return [f.name for f in dataclasses.fields(cls)]
    return None


def to_dict(obj: Any) -> Any:
    names = None if isinstance(obj, (str, int, float, bool, type(None), type)) else _field_names(type(obj))
    if names is not None:
        return {name: to_dict(getattr(obj, name)) for name in names}
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        module = sys.modules[cls.__module__]
        _HINTS[cls] = typing.get_type_hints(cls, vars(module))
    return _HINTS[cls]


def from_dict(cls: Type[T], data: Any, where: str = "") -> T:
    return _convert(cls, data, where or cls.__name__)


def _convert(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin is Union:
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value, where)
    names = _field_names(tp) if isinstance(tp, type) else None
    if names is not None:
        if not isinstance(value, dict):
            raise SnapshotError(f"{where}: expected an object")
        hints = _hints(tp)
        kwargs = {}
        for name in names:
            if name in value:
                kwargs[name] = _convert(hints[name], value[name], f"{where}.{name}")
        try:
            return tp(**kwargs)
        except TypeError as e:
            raise SnapshotError(f"{where}: {e}") from None
    if origin in (list, tuple, typing.List, typing.Tuple):
        if not isinstance(value, list):
            raise SnapshotError(f"{where}: expected a list")
        item = args[0] if args else Any
        out = [_convert(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(out) if origin in (tuple, typing.Tuple) else out
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            raise SnapshotError(f"{where}: expected an object")
        vt = args[1] if len(args) == 2 else Any
        return {k: _convert(vt, v, f"{where}.{k}") for k, v in value.items()}
    if tp in (int, float, str, bool):
        if tp is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
            raise SnapshotError(f"{where}: expected {tp.__name__}, got {type(value).__name__}")
        return value
    return value
