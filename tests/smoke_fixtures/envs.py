"""Real environments for the smoke tests, built once and cached under .cache/ (git-ignored):
the CPU torch venv of fakehost.torchenv with transformers added, a tiny Llama-style model made
with transformers, and the stand-in vllm installed with pip into a directory of its own (put on
PYTHONPATH only by the tests that want vllm)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fakehost.shared import exclusive
from fakehost.torchenv import with_packages

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "smoke-fixtures"
HERE = Path(__file__).resolve().parent


def target_python() -> Path:
    return with_packages(["transformers", "safetensors"], ["transformers", "safetensors"])


def tiny_llama() -> Path:
    out = CACHE / "tiny-llama"
    with exclusive(CACHE / "tiny-llama.lock"):
        if not (out / "model.safetensors").is_file() or not (out / "tokenizer.json").is_file():
            subprocess.run([str(target_python()), str(HERE / "make_tiny_llama.py"), str(out)], check=True,
                           timeout=600, capture_output=True)
    return out


def standin_vllm_site() -> Path:
    site = CACHE / "vllm-standin-site"
    with exclusive(CACHE / "vllm-standin-site.lock"):
        if not (site / "vllm" / "__init__.py").is_file():
            subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                            str(HERE / "standin_vllm")], check=True, timeout=600)
    return site
