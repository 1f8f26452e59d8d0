"""Real environments for the smoke tests, built once and cached in the per-user test cache
(fakehost.torchenv.shared_cache), each under a name keyed by what makes it:
the CPU torch venv of fakehost.torchenv with transformers added, a tiny Llama-style model made
with transformers, and the stand-in vllm installed with pip into a directory of its own (put on
PYTHONPATH only by the tests that want vllm)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict

from fakehost.shared import exclusive
from fakehost.torchenv import DEFAULT, content_key, shared_cache, with_packages

HERE = Path(__file__).resolve().parent


def _tree_key(root: Path) -> str:
    """A key of the files under ``root`` (names and bytes; caches and bytecode left out)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                   and not any(part.endswith(".egg-info") or part == "build" for part in p.relative_to(root).parts))
    return content_key(*(f"{p.relative_to(root)}\0{p.read_bytes().hex()}" for p in files))


def bare_env(**more: str) -> Dict[str, str]:
    """The environment of a target that sees nothing of the test's own: PATH, and one OpenMP thread
    (torch's spare threads spin between parallel regions; with eight workers on two cores that is
    CPU taken from the other tests). Only the smoke targets get it: set for the whole suite, the
    kit and printed-command tests took two to three times their CPU (measured; why was not found)."""
    return {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", **more}


def target_python() -> Path:
    return with_packages(["transformers", "safetensors"], ["transformers", "safetensors"])


def tiny_llama() -> Path:
    out = shared_cache() / f"tiny-llama-{content_key((HERE / 'make_tiny_llama.py').read_bytes(), DEFAULT.name)}"
    with exclusive(out.parent / f"{out.name}.lock"):
        if not (out / "model.safetensors").is_file() or not (out / "tokenizer.json").is_file():
            subprocess.run([str(target_python()), str(HERE / "make_tiny_llama.py"), str(out)], check=True,
                           timeout=600, capture_output=True)
    return out


def standin_vllm_site() -> Path:
    site = shared_cache() / f"vllm-standin-site-{_tree_key(HERE / 'standin_vllm')}"
    with exclusive(site.parent / f"{site.name}.lock"):
        if not (site / "vllm" / "__init__.py").is_file():
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                            str(HERE / "standin_vllm")], check=True, timeout=600)
    return site
