"""The doctor's own sources parsed once per test process: several tests walk every module's
syntax tree (the catalogue keys, the inline errors, rule construction, the import graph)."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Tuple


@lru_cache(maxsize=None)
def tree(path: Path) -> ast.Module:
    """The module's tree (shared: read it, never change it)."""
    return ast.parse(Path(path).read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def nodes(path: Path) -> Tuple[ast.AST, ...]:
    """Every node of the module, in ast.walk's order."""
    return tuple(ast.walk(tree(path)))
