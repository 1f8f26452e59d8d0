"""Shared by the explain tests: the shipped catalog, compiled once per test session."""
from __future__ import annotations

from functools import lru_cache

from doctor.explain.answers import select
from doctor.explain.catalog import Catalog
from doctor.parse.logscan import scan_text
from shipped import matrix


@lru_cache(maxsize=None)
def catalog() -> Catalog:
    cat = Catalog.from_matrix(matrix())
    _ = cat.compiled  # compile the scan now, once
    return cat


def answers(text: str):
    cat = catalog()
    return cat.answers(scan_text(text, cat.compiled))


def selected(text: str):
    return select(answers(text))
