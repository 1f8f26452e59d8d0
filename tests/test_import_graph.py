"""The shape of the package, read from the source (the AST of every module, nothing imported):
the pure core imports nothing that touches the world, and no two modules import each other."""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from tests import source_kit

ROOT = Path(__file__).resolve().parents[1]
DOCTOR = ROOT / "doctor"
# Judgement in pure functions: these read facts and data, never the host.
PURE_PACKAGES = ("doctor.rules", "doctor.plan", "doctor.parse", "doctor.profile")
PURE_MODULES = ("doctor.matrix.query", "doctor.matrix.model", "doctor.matrix.schema", "doctor.matrix.load",
                "doctor.matrix.sync", "doctor.matrix.verify", "doctor.matrix.images",
                "doctor.findings", "doctor.layers", "doctor.versions", "doctor.facts", "doctor.i18n", "doctor.textsafe",
                "doctor.pep668")
# What touches the world or drives the workflow.
FORBIDDEN = ("doctor.shell", "doctor.probes", "doctor.usecases", "doctor.cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


MODULES: Dict[str, Path] = {module_name(p): p for p in DOCTOR.rglob("*.py") if "__pycache__" not in p.parts}


def _resolve(current: str, node: ast.AST) -> List[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    base = node.module or ""
    if node.level:
        pkg = current if MODULES[current].name == "__init__.py" else current.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            pkg = pkg.rsplit(".", 1)[0]
        base = f"{pkg}.{base}" if base else pkg
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


def imports(name: str) -> List[Tuple[str, bool]]:
    """(imported doctor module, at module level?) for every import statement of a module."""
    tree = source_kit.tree(MODULES[name])
    out: List[Tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.extend((m, top) for m in _resolve(name, child) if m.split(".")[0] == "doctor")
            # `if TYPE_CHECKING:` blocks run for the type checker only
            typing_only = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not typing_only
            visit(child, inner)

    visit(tree, True)
    return out


class _Graph(dict):
    """module -> imports(module), parsed on first use (not while every test worker collects)."""

    def __missing__(self, name: str) -> List[Tuple[str, bool]]:
        self[name] = imports(name)
        return self[name]


GRAPH: Dict[str, List[Tuple[str, bool]]] = _Graph()


def _pure(name: str) -> bool:
    return name in PURE_MODULES or any(name == p or name.startswith(p + ".") for p in PURE_PACKAGES)


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def _loaded_by(name: str) -> Set[str]:
    """What importing ``name`` executes: its module-level imports, transitively, with the
    packages around each module (importing a.b.c runs a/__init__ and a/b/__init__ first)."""
    seen: Set[str] = set()
    todo = [name]
    while todo:
        cur = todo.pop()
        if cur in seen or cur not in MODULES:
            continue
        seen.add(cur)
        parts = cur.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(m for m, top in GRAPH[cur] if top)
    return seen


def test_the_scan_sees_the_package():
    assert {"doctor.rules.engine", "doctor.plan.builder", "doctor.cli.main", "doctor.shell.runtime.proc"} <= set(MODULES)
    assert ("doctor.rules.base", True) in GRAPH["doctor.rules.cann"]
    assert any(m == "doctor.rules.all_rules" and not top for m, top in GRAPH["doctor.rules.engine"])


@pytest.mark.slow  # ~1 s of CPU or more: imports every module
def test_the_pure_core_imports_nothing_that_touches_the_world():
    pure = sorted(n for n in MODULES if _pure(n))
    assert len(pure) > 25
    direct = [f"{n} imports {m}" for n in pure for m, _ in GRAPH[n] if _forbidden(m)]
    assert not direct, direct
    loaded = [f"importing {n} loads {m}" for n in pure for m in sorted(_loaded_by(n)) if _forbidden(m)]
    assert not loaded, loaded


def _cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


@pytest.mark.slow  # ~1 s of CPU or more: imports every module
def test_no_import_circles():
    # every import statement counts, deferred ones too: a circle is a circle even when it is
    # only closed at run time (cli.fix importing cli.main in a function was one)
    edges = {n: {m for m, _ in GRAPH[n] if m in MODULES and m != n} for n in MODULES}
    # a package importing its own submodules is how packages re-export, not a circle
    for n in edges:
        edges[n] = {m for m in edges[n] if not (MODULES[m].name == "__init__.py" and n.startswith(m + "."))}
    assert _cycles(edges) == []


def test_the_cycle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.slow  # ~0.5 s of CPU or more: every module parsed
def test_the_parsers_open_nothing():
    """doctor/parse reads the bytes, text and readers it is given: no module there imports what
    opens files or processes, nor calls open()."""
    touching = {"os", "io.open", "mmap", "subprocess", "socket", "shutil", "glob", "tempfile", "pathlib"}
    found = []
    for name, path in MODULES.items():
        if not name.startswith("doctor.parse"):
            continue
        for n in source_kit.nodes(path):
            if isinstance(n, ast.Import):
                found += [f"{name} imports {a.name}" for a in n.names if a.name.split(".")[0] in touching]
            elif isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] in touching:
                found.append(f"{name} imports from {n.module}")
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "open":
                found.append(f"{name}:{n.lineno} calls open()")
    assert not found, found


# doctor/shell/ by subsystem (issue 27): one package each, no module left flat in doctor/shell/.
SHELL = "doctor.shell"
SHELL_BASE = {"runtime": set(), "host": {"runtime"}}  # what the base imports of the shell, nothing else
# one subsystem in three packages: the installers, the step kinds and the transaction that runs them
SHELL_GROUPS = [{"install", "steps", "transaction"}]
# what one subsystem may import of another (besides the base): its named entry points
SHELL_ENTRIES = {
    "transaction": {"doctor.shell.transaction.engine", "doctor.shell.transaction.runner",
                    "doctor.shell.transaction.placing", "doctor.shell.transaction.recovery",
                    "doctor.shell.transaction.target"},
    "mooncake": {"doctor.shell.mooncake.build", "doctor.shell.mooncake.master"},
    "smoke": {"doctor.shell.smoke.endpoint_bench"},
}


def _subsystem(name: str) -> str:
    return name.split(".")[2]


def test_the_shell_is_one_package_per_subsystem():
    flat = sorted(n for n in MODULES if n.startswith(SHELL + ".") and len(n.split(".")) == 3
                  and MODULES[n].name != "__init__.py")
    assert flat == [], f"modules directly in doctor/shell/ (put them in a subsystem's package): {flat}"
    packages = {_subsystem(n) for n in MODULES if n.startswith(SHELL + ".")}
    assert {"host", "runtime", "install", "transaction", "steps", "images", "mooncake", "smoke", "fleet",
            "profile"} == packages
    tests = ROOT / "tests" / "shell"
    untested = sorted(p for p in packages if not list((tests / p).glob("test_*.py")))
    assert untested == [], f"subsystems without tests under tests/shell/<package>/: {untested}"


def test_the_base_of_the_shell_imports_nothing_above_it():
    wrong = [f"{n} imports {m}" for n in MODULES if n.startswith(SHELL + ".") and _subsystem(n) in SHELL_BASE
             for m, _ in GRAPH[n] if m.startswith(SHELL + ".") and _subsystem(m) != _subsystem(n)
             and _subsystem(m) not in SHELL_BASE[_subsystem(n)]]
    assert wrong == [], wrong


def _crossing(n: str, m: str) -> bool:
    a, b = _subsystem(n), _subsystem(m)
    return a != b and b not in SHELL_BASE and not any({a, b} <= g for g in SHELL_GROUPS)


@pytest.mark.slow  # ~0.5 s of CPU or more: every module parsed
def test_shell_subsystems_meet_only_through_named_entry_points():
    found = [(n, m) for n in MODULES if n.startswith(SHELL + ".") for m, _ in GRAPH[n]
             if m.startswith(SHELL + ".") and _crossing(n, m)]
    assert found, "no subsystem imports another: the rule below checks nothing"
    wrong = [f"{n} imports {m}" for n, m in found if m not in SHELL_ENTRIES.get(_subsystem(m), set())]
    assert wrong == [], wrong
    used = {m for _, m in found}
    unused = sorted(e for entries in SHELL_ENTRIES.values() for e in entries if e not in used)
    assert unused == [], f"entry points nothing imports any more (drop them): {unused}"


def test_the_entry_point_rule_finds_a_stray_import():
    assert _crossing("doctor.shell.images.view", "doctor.shell.fleet.transport")
    assert not _crossing("doctor.shell.images.view", "doctor.shell.host.files")  # the base
    assert not _crossing("doctor.shell.transaction.run_plan", "doctor.shell.steps.pip")  # one subsystem
    assert "doctor.shell.fleet.transport" not in SHELL_ENTRIES.get("fleet", set())


def test_every_module_the_code_tests_and_docs_name_exists():
    """A dotted `doctor.…` name in code, tests, benches and docs (a monkeypatch target, a lazy
    import, a `python -m`, a doc's pointer) names a module, or an attribute of one, that exists:
    after a module moves, a name left behind fails here rather than at run time."""
    import importlib
    import importlib.util
    import re

    root = Path(__file__).resolve().parent.parent
    names: Dict[str, str] = {}

    def own_files(top: Path):
        """The repository's own files: no cache, no venv a bench or a test made under it (pruned,
        not walked: a bench's work directory holds ~90,000 files)."""
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "__")) and d != "site-packages")
            for f in sorted(filenames):
                if f.endswith((".py", ".md", ".toml")) and not f.startswith((".", "__")):
                    yield Path(dirpath) / f

    for top in ("doctor", "tests", "bench", "docs", "matrices"):
        for path in own_files(root / top):
            text = path.read_text(encoding="utf-8", errors="replace")
            for m in re.finditer(r"(?<![\w.])doctor(?:\.[a-z_][a-z_0-9]*)+", text):
                names.setdefault(m.group(0), str(path.relative_to(root)))
            for m in re.finditer(r"from (doctor(?:\.[a-z_0-9]+)*) import ([a-z_0-9]+(?:, [a-z_0-9]+)*)$", text, re.M):
                for n in m.group(2).split(", "):
                    names.setdefault(f"{m.group(1)}.{n}", str(path.relative_to(root)))

    def exists(name: str) -> bool:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            try:
                found = importlib.util.find_spec(module) is not None
            except ImportError:
                found = False
            if found:
                obj: object = importlib.import_module(module)
                for attr in parts[i:]:
                    if not hasattr(obj, attr):
                        return False
                    obj = getattr(obj, attr)
                return True
        return False

    # not module names: dataclass metadata keys, a prose prefix (`doctor.rules.mooncake_*`),
    # mutmut's generated names, and variables called `doctor` (a Popen in the fault tests)
    keys = {"doctor.matrix.field", "doctor.matrix.sourced", "doctor.matrix.row"}
    packages = {p.stem for p in (root / "doctor").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    named = {n: w for n, w in names.items() if n not in keys and not n.endswith("_") and "__mutmut" not in n
             and n.split(".")[1] in packages}
    assert len(named) > 300  # the scan reads what it should
    missing = sorted(f"{where}: {name}" for name, where in named.items() if not exists(name))
    assert not missing, missing
