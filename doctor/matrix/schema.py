"""Validation of the matrix TOML files: every problem is reported with its file and line.

A schema is a dict of :class:`Field`; :func:`validate_rows` checks an array of tables against it
and returns plain dicts with defaults filled in. Checks are deliberately strict (unknown keys are
errors) because a typo in a curated row silently changes a verdict otherwise.
"""
from __future__ import annotations

import re
from doctor.record import record
from typing import Any, Callable, Dict, List, Optional, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from doctor.lazyre import lazy


class MatrixError(ValueError):
    """A matrix file is unreadable or violates its schema. ``str()`` is one line: ``file:line: msg``."""

    def __init__(self, path: str, line: Optional[int], message: str):
        self.path, self.line, self.message = path, line, message
        where = f"{path}:{line}" if line else path
        super().__init__(f"{where}: {message}")


# ---------------------------------------------------------------------------------------------
# value checkers: return an error message or None

_ASCEND_RE = lazy(r"^\d+(\.\d+)*([.\-]?(rc|RC|alpha|beta|b)\.?\d*)*(\.\d+)*(-beta\.\d+)?$")


def check_pep440(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return "must be a string"
    try:
        Version(value)
    except InvalidVersion:
        return f"{value!r} is not a PEP 440 version"
    return None


def check_specifier(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return "must be a string"
    try:
        SpecifierSet(value)
    except InvalidSpecifier:
        return f"{value!r} is not a PEP 440 specifier (e.g. '>=3.9,<3.12')"
    return None


def check_requirement(value: Any) -> Optional[str]:
    # Imported here: validation only runs when the matrix cache is cold.
    from packaging.requirements import InvalidRequirement, Requirement

    if not isinstance(value, str):
        return "must be a string"
    try:
        Requirement(value)
    except InvalidRequirement:
        return f"{value!r} is not a PEP 508 requirement"
    return None


def check_ascend(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return "must be a string"
    if not _ASCEND_RE.match(value):
        return f"{value!r} is not an Ascend version (e.g. 8.2.RC1, 8.5.0, 9.1.0-beta.1, 25.0.rc1.1)"
    return None


def check_text(value: Any) -> Optional[str]:
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    return None


def check_bool(value: Any) -> Optional[str]:
    return None if isinstance(value, bool) else "must be true or false"


def check_date(value: Any) -> Optional[str]:
    import datetime

    if isinstance(value, datetime.date):
        return None
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}$", value):
        return None
    return "must be a date (YYYY-MM-DD)"


def check_regex(value: Any) -> Optional[str]:
    if not isinstance(value, str) or not value:
        return "must be a non-empty regular expression"
    try:
        re.compile(value)
    except re.error as e:
        return f"invalid regular expression: {e}"
    return None


def check_layer(value: Any) -> Optional[str]:
    from doctor.layers import LAYERS

    return None if value in LAYERS else f"{value!r} is not a layer ({', '.join(LAYERS)})"


def one_of(*choices: str) -> Callable[[Any], Optional[str]]:
    def check(value: Any) -> Optional[str]:
        if value not in choices:
            return f"{value!r} is not one of {', '.join(choices)}"
        return None

    return check


@record(frozen=True)
class Field:
    check: Callable[[Any], Optional[str]]
    required: bool = False
    many: bool = False  # a list of values, each checked
    table: Optional[Dict[str, "Field"]] = None  # a list of sub-tables with their own schema
    mapping: bool = False  # a table of free keys with checked values
    keys: Optional[Sequence[str]] = None  # allowed keys of a mapping (None: any)
    default: Any = None
    doc: str = ""


def _default(field: Field) -> Any:
    if field.default is not None:
        return field.default
    if field.many or field.table is not None:
        return []
    if field.mapping:
        return {}
    return None


# ---------------------------------------------------------------------------------------------
# line lookup (tomllib does not keep positions)


def locate(text: str, array: str, index: int, key: Optional[str] = None) -> Optional[int]:
    """Line (1-based) of ``key`` inside the ``index``-th ``[[array]]`` table, or of its header."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\[\s*" + re.escape(array) + r"\s*\]\]")
    count = -1
    start = None
    for n, line in enumerate(lines):
        if header.match(line):
            count += 1
            if count == index:
                start = n
                break
    if start is None:
        return None
    if key is None:
        return start + 1
    top = key.split(".")[0]
    key_re = re.compile(r"^\s*\"?" + re.escape(top) + r"\"?\s*=")
    sub_re = re.compile(r"^\s*\[+\s*" + re.escape(array) + r"\." + re.escape(top) + r"\s*\]+")
    for n in range(start + 1, len(lines)):
        line = lines[n]
        if re.match(r"^\s*\[", line) and not re.match(r"^\s*\[+\s*" + re.escape(array) + r"\.", line):
            break
        if key_re.match(line) or sub_re.match(line):
            return n + 1
    return start + 1


def validate_rows(
    rows: Any, schema: Dict[str, Field], *, path: str, text: str, array: str
) -> List[Dict[str, Any]]:
    if not isinstance(rows, list):
        raise MatrixError(path, None, f"[[{array}]] must be an array of tables")
    out = []
    for i, row in enumerate(rows):
        out.append(_validate_table(row, schema, path=path, text=text, array=array, index=i, prefix=""))
    return out


def _validate_table(row: Any, schema: Dict[str, Field], *, path: str, text: str, array: str, index: int,
                    prefix: str) -> Dict[str, Any]:
    def fail(key: Optional[str], msg: str) -> MatrixError:
        name = f"{prefix}{key}" if key else prefix.rstrip(".") or array
        where = (prefix + key) if key else (prefix.rstrip(".") or None)  # a sub-table: its header
        return MatrixError(path, locate(text, array, index, where),
                           f"[[{array}]] #{index + 1}: {name}: {msg}")

    if not isinstance(row, dict):
        raise fail(None, "must be a table")
    unknown = sorted(set(row) - set(schema))
    if unknown:
        raise fail(unknown[0], f"unknown key (allowed: {', '.join(sorted(schema))})")
    clean: Dict[str, Any] = {}
    for key, field in schema.items():
        if key not in row:
            if field.required:
                raise fail(None, f"missing required key {prefix}{key!r}")
            clean[key] = _default(field)
            continue
        value = row[key]
        if field.table is not None:
            items = value if isinstance(value, list) else None
            if items is None:
                raise fail(key, "must be an array of tables")
            clean[key] = [
                _validate_table(item, field.table, path=path, text=text, array=array, index=index,
                                prefix=f"{prefix}{key}.")
                for item in items
            ]
        elif field.mapping:
            if not isinstance(value, dict):
                raise fail(key, "must be a table")
            for sub, subvalue in value.items():
                if field.keys is not None and sub not in field.keys:
                    raise fail(key, f"unknown key {sub!r} (allowed: {', '.join(field.keys)})")
                err = field.check(subvalue)
                if err:
                    raise fail(key, f"{sub}: {err}")
            clean[key] = dict(value)
        elif field.many:
            if not isinstance(value, list):
                raise fail(key, "must be a list")
            for item in value:
                err = field.check(item)
                if err:
                    raise fail(key, err)
            clean[key] = list(value)
        else:
            err = field.check(value)
            if err:
                raise fail(key, err)
            clean[key] = value
    return clean
