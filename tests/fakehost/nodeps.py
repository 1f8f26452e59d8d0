"""An environment installed with ``--no-deps`` (issue 11): torch 2.7.1+cpu, torch-npu 2.7.1,
vllm 0.11.0 and vllm-ascend 0.11.0rc3 with their *complete* Requires-Dist (vllm and vllm-ascend
from tests/data/index-metadata.json, torch from its published METADATA), and nothing they
require. A wheelhouse of leaf stubs holds every requirement at a version that satisfies all of
them, so real pip can resolve the repair.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .dists import Stub, index_metadata
from .wheelhouse import write_wheel

# torch 2.7.1's Requires-Dist (the +cpu wheel's METADATA on the PyTorch CPU index; the CUDA
# wheel adds nvidia-* and triton for Linux x86_64)
TORCH_271 = ["filelock", "typing-extensions>=4.10.0", 'setuptools; python_version >= "3.12"', "sympy>=1.13.3",
             "networkx", "jinja2", "fsspec", 'opt-einsum>=3.3; extra == "opt-einsum"', 'optree>=0.13.0; extra == "optree"']
STACK = {"torch": "2.7.1+cpu", "torch-npu": "2.7.1", "vllm": "0.11.0", "vllm-ascend": "0.11.0rc3"}
LEFT_ALONE = {"torch", "torch-npu", "vllm", "vllm-ascend", "torchaudio", "xformers", "triton", "flashinfer-python",
              "pip", "setuptools"}  # the venv has pip and setuptools; a stub must not replace them


def full_requires(name: str, version: str) -> List[str]:
    if name == "torch":
        return list(TORCH_271)
    meta = index_metadata()[(canonicalize_name(name), version)]
    return list(meta["requires_dist"])


def stubs() -> Dict[str, Stub]:
    return {n: Stub(n, v, requires=full_requires(n, v.split("+")[0])) for n, v in STACK.items()}


def _applies(req: Requirement, env: Dict[str, str]) -> bool:
    return req.marker is None or req.marker.evaluate(dict(env, extra=""))


def _pick(specs: List[SpecifierSet]) -> str:
    """A version every specifier accepts: one of the versions they mention (or just above)."""
    cands = {"1.0", "0.1", "99.0"}
    for s in specs:
        for sp in s:
            v = sp.version.rstrip(".*")
            cands.add(v)
            try:
                base = Version(v)
                cands.add(f"{base.major}.{base.minor}.{(base.micro or 0) + 1}")
            except InvalidVersion:
                pass
    good = []
    for c in cands:
        try:
            vc = Version(c)
        except InvalidVersion:
            continue
        if all(s.contains(vc, prereleases=True) for s in specs):
            good.append(vc)
    if not good:
        raise ValueError(f"no version satisfies {specs}")
    exact = [v for v in good if any(sp.operator == "==" and Version(sp.version.rstrip('.*')) == v
                                    for s in specs for sp in s if not sp.version.endswith("*"))]
    return str(max(exact or good))


def leaves(env: Dict[str, str]) -> Dict[str, str]:
    """name -> version for every requirement of the stack (and of torchvision) that applies here."""
    wanted: Dict[str, List[SpecifierSet]] = {}
    for stub in stubs().values():
        for text in stub.requires or []:
            req = Requirement(text)
            name = canonicalize_name(req.name)
            if name in LEFT_ALONE or name.startswith(("nvidia-", "torchvision")) or not _applies(req, env):
                continue
            wanted.setdefault(name, []).append(req.specifier)
    return {n: _pick(specs) for n, specs in sorted(wanted.items())}


def build(root: Path) -> Path:
    """The leaf wheels (no requirements of their own) in ``root``."""
    env = default_environment()
    for name, version in leaves(env).items():
        write_wheel(root, Stub(name, version, requires=[]))
    return root


def environment(fake, template: Path) -> None:
    """The host of 0.11.0rc3 with only the four stack distributions (and torchvision) installed,
    every other requirement missing."""
    from .scenarios import ascend_host

    fake.venv({}, template=template)
    ascend_host(fake, "0.11.0rc3", numpy=None, transformers=None)
    fake.install(stubs())
