"""The part of vllm's API that the vllm stage uses, extracted from real vllm sources by parsing
(never importing) them: classes, their fields, methods and parameters.

    python tests/smoke_fixtures/vllm_api.py SDIST... > tests/data/vllm_api.json

SDISTs are the vllm-X.tar.gz files from PyPI (``pip download --no-deps --no-binary :all:``;
with --no-build-isolation and VLLM_TARGET_DEVICE=empty in an environment that has torch,
setuptools-scm and setuptools-rust, since pip prepares the metadata before it keeps the file;
pip reports a version mismatch (X+empty) and prints the file's URL, which it then downloads
without complaint). The listing
records each file's name and sha256, so anyone can check it against PyPI. The same extractor
reads the stand-in package of the tests, so stand-in and releases are held to one list.
"""
from __future__ import annotations

import ast
import hashlib
import json
import sys
import tarfile
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

CLASSES = ("LLM", "SamplingParams", "EngineArgs", "FlexibleArgumentParser", "TokensPrompt", "RequestOutput",
           "CompletionOutput", "Logprob")


def _members(node: ast.ClassDef) -> Dict[str, List[str]]:
    out: Dict[str, List[str]] = {"fields": [], "methods": []}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            out["fields"].append(item.target.id)
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = item.args
            params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
            if a.vararg:
                params.append("*" + a.vararg.arg)
            if a.kwarg:
                params.append("**kwargs")
            out["methods"].append(item.name)
            out.setdefault("params", {})[item.name] = params  # type: ignore[index]
    return out


def extract(files: Iterable[Tuple[str, str]]) -> Dict[str, object]:
    """(path, source) pairs of a vllm tree -> {"classes": {name: {...}}, "init_names": [...]}."""
    classes: Dict[str, Dict[str, object]] = {}
    init_names: List[str] = []
    for path, source in files:
        if not path.startswith("vllm/") or not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        if path == "vllm/__init__.py":
            init_names = sorted(_init_names(tree))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name in CLASSES:
                entry = dict(_members(node), file=path)
                # the defining module wins over re-declarations (e.g. protocol stubs)
                if node.name not in classes or len(str(entry)) > len(str(classes[node.name])):
                    classes[node.name] = entry
    return {"classes": classes, "init_names": init_names}


def _init_names(tree: ast.Module) -> List[str]:
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
            value = node.value
            if isinstance(value, (ast.List, ast.Tuple)):   # __all__ = [...]
                names.update(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            if isinstance(value, ast.Dict):                 # MODULE_ATTRS = {"LLM": ...} (lazy imports)
                names.update(k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return sorted(names)


def from_sdist(path: Path) -> Tuple[str, Dict[str, object]]:
    files = []
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if m.isfile() and rel.startswith("vllm/") and rel.endswith(".py"):
                fh = tar.extractfile(m)
                if fh:
                    files.append((rel, fh.read().decode("utf-8", "replace")))
    version = path.name[len("vllm-"):-len(".tar.gz")]
    data = extract(files)
    data["source"] = {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                      "from": "https://pypi.org/project/vllm/" + version + "/#files"}
    return version, data


def from_tree(root: Path) -> Dict[str, object]:
    return extract((str(p.relative_to(root)), p.read_text()) for p in root.rglob("*.py"))


if __name__ == "__main__":
    listing = dict(from_sdist(Path(p)) for p in sys.argv[1:])
    json.dump(listing, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
