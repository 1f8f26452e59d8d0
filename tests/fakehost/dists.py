"""Stub distributions with the real metadata of the stack's packages.

Name, version, Requires-Python and Requires-Dist come from the package index
(tests/data/index-metadata.json, read with pip's dry-run report); Requires-Dist is limited to
the stack's own packages so an environment of stubs is self-consistent except where a scenario
makes it inconsistent on purpose.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

DATA = Path(__file__).resolve().parents[1] / "data"
STACK = ("torch", "torch-npu", "torchvision", "torchaudio", "vllm", "vllm-ascend", "triton", "triton-ascend",
         "transformers", "numpy", "xformers", "flashinfer-python")
STACK_PREFIXES = ("nvidia-", "mooncake-")
# torch -> (torchvision, torchaudio): PyTorch's published pairing.
TORCH_COMPANIONS = {
    "2.5.1": ("0.20.1", "2.5.1"), "2.6.0": ("0.21.0", "2.6.0"), "2.7.1": ("0.22.1", "2.7.1"),
    "2.8.0": ("0.23.0", "2.8.0"), "2.9.0": ("0.24.0", "2.9.0"), "2.10.0": ("0.25.0", "2.10.0"),
    "2.11.0": ("0.26.0", "2.11.0"),
}
# What a CUDA build of torch on x86_64 pulls in (a representative subset of the real pins).
NVIDIA_FOR_TORCH = {
    "2.8.0": ["nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cublas-cu12==12.8.4.1", "nvidia-cudnn-cu12==9.10.2.21",
              "nvidia-nccl-cu12==2.27.3"],
    "2.7.1": ["nvidia-cuda-runtime-cu12==12.6.77", "nvidia-cublas-cu12==12.6.4.1", "nvidia-cudnn-cu12==9.5.1.17",
              "nvidia-nccl-cu12==2.26.2"],
}


@functools.lru_cache(maxsize=1)
def index_metadata() -> Dict[tuple, dict]:
    data = json.loads((DATA / "index-metadata.json").read_text())
    return {(canonicalize_name(p["name"]), p["version"]): p for p in data["packages"]}


def is_stack(name: str) -> bool:
    name = canonicalize_name(name)
    return name in STACK or name.startswith(STACK_PREFIXES)


def stack_requires(name: str, version: str, cuda: bool = False) -> List[str]:
    """Requires-Dist of a stack package, limited to stack packages."""
    name = canonicalize_name(name)
    v = Version(version)
    base = v.public
    meta = index_metadata().get((name, base)) or index_metadata().get((name, version))
    if meta is not None:
        reqs = [r for r in meta["requires_dist"] if is_stack(Requirement(r).name)]
        if name == "vllm" and v.local == "empty":
            # VLLM_TARGET_DEVICE=empty builds take requirements/common.txt only: no torch pins.
            reqs = [r for r in reqs if Requirement(r).name not in ("torch", "torchvision", "torchaudio", "xformers",
                                                                  "flashinfer-python")]
        return reqs
    release = ".".join(str(p) for p in v.release[:3])
    if name == "torch-npu":
        return [f"torch=={release}"]
    if name in ("torchvision", "torchaudio"):
        for torch, (vision, audio) in TORCH_COMPANIONS.items():
            if (vision if name == "torchvision" else audio) == base:
                return [f"torch=={torch}"]
    if name == "torch" and cuda:
        return [f'{r}; platform_system == "Linux" and platform_machine == "x86_64"'
                for r in NVIDIA_FOR_TORCH.get(release, NVIDIA_FOR_TORCH["2.8.0"])]
    return []


def requires_python(name: str, version: str) -> Optional[str]:
    meta = index_metadata().get((canonicalize_name(name), Version(version).public))
    return meta["requires_python"] if meta else None


@dataclass
class Stub:
    name: str
    version: str
    requires: Optional[List[str]] = None  # None: derive from the index metadata
    editable: Optional[str] = None  # source directory of an editable install
    entry_points: Dict[str, Dict[str, str]] = field(default_factory=dict)
    cuda: Optional[str] = None  # torch only: the CUDA version of a CUDA build
    import_name: Optional[str] = None

    def __post_init__(self):
        if self.requires is None:
            self.requires = stack_requires(self.name, self.version, cuda=bool(self.cuda))
        if canonicalize_name(self.name) == "vllm-ascend" and not self.entry_points:
            self.entry_points = {"vllm.platform_plugins": {"ascend": "vllm_ascend:register"}}

    @property
    def module(self) -> str:
        return self.import_name or canonicalize_name(self.name).replace("-", "_")

    @property
    def dist_info_name(self) -> str:
        return f"{re.sub(r'[-_.]+', '_', self.name)}-{self.version}.dist-info"

    def metadata(self) -> str:
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        rp = requires_python(self.name, self.version)
        if rp:
            lines.append(f"Requires-Python: {rp}")
        lines += [f"Requires-Dist: {r}" for r in self.requires or []]
        return "\n".join(lines) + "\n\nStub of the real distribution, for ascend-doctor tests.\n"

    def module_files(self) -> Dict[str, str]:
        files = {f"{self.module}/__init__.py": f'__version__ = "{self.version}"\n'}
        if canonicalize_name(self.name) == "torch":
            cuda = repr(self.cuda) if self.cuda else "None"
            files["torch/version.py"] = (f"__version__ = '{self.version}'\ndebug = False\n"
                                         f"cuda: Optional[str] = {cuda}\nhip: Optional[str] = None\n")
        if canonicalize_name(self.name) == "vllm-ascend":
            from .vllm_ascend_src import source_files

            files.update(source_files(self.version))  # where its KV connectors are registered
        return files

    def entry_points_txt(self) -> str:
        out = []
        for group, items in self.entry_points.items():
            out.append(f"[{group}]")
            out += [f"{k} = {v}" for k, v in items.items()]
            out.append("")
        return "\n".join(out)


def write_installed(site: Path, stub: Stub) -> None:
    """Install a stub the way pip leaves an installed distribution on disk."""
    info = site / stub.dist_info_name
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(stub.metadata())
    (info / "INSTALLER").write_text("pip\n")
    records = [f"{stub.dist_info_name}/{n}" for n in ("METADATA", "INSTALLER", "RECORD")]
    if stub.entry_points:
        (info / "entry_points.txt").write_text(stub.entry_points_txt())
        records.append(f"{stub.dist_info_name}/entry_points.txt")
    if stub.editable:
        (info / "direct_url.json").write_text(json.dumps({"url": f"file://{stub.editable}", "dir_info": {"editable": True}}))
        records.append(f"{stub.dist_info_name}/direct_url.json")
        (site / f"__editable__.{stub.module}.pth").write_text(stub.editable + "\n")
    else:
        for rel, text in stub.module_files().items():
            path = site / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            records.append(rel)
    (info / "RECORD").write_text("".join(f"{r},,\n" for r in records))
