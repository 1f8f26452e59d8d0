"""A metadata-faithful wheelhouse: real zip wheels (METADATA, WHEEL, RECORD with hashes) with the
real name, version, Requires-Python and Requires-Dist (limited to the stack's packages, from
tests/data/index-metadata.json via :class:`fakehost.dists.Stub`), laid out like the three places
the stack comes from, so that real pip resolves exactly as it would for the real packages:

- ``pypi/``: the public index (torch here is the x86_64 CUDA build that pulls nvidia-*),
- ``pytorch-cpu/``: the PyTorch CPU index (``torch-X+cpu``, ``torchvision-Y+cpu`` ...),
- ``ascend/``: the Ascend pip mirror (torch-npu ``.postN`` builds not on the public index,
  triton-ascend >= 3.2.1).

Point pip at it with PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_FIND_LINKS="<dirs>".
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import zipfile
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional

from .dists import NVIDIA_FOR_TORCH, TORCH_COMPANIONS, Stub

PYPI, CPU, ASCEND = "pypi", "pytorch-cpu", "ascend"

# What the scenarios of tests/test_fix_*.py and bench/fix_bench.py need (and what real pip
# reaches from them: vllm's xformers/flashinfer pins, torch's nvidia-* and triton).
TORCHES = ("2.7.1", "2.8.0", "2.9.0")
CUDA_OF = {"2.7.1": "12.6", "2.8.0": "12.8", "2.9.0": "12.8"}
TRITON_OF = {"2.7.1": "3.3.1", "2.8.0": "3.4.0", "2.9.0": "3.5.0"}
PYPI_PACKAGES = [
    ("torch-npu", "2.7.1"), ("torch-npu", "2.8.0"), ("torch-npu", "2.8.0.post2"),
    ("vllm", "0.11.0"), ("vllm", "0.12.0"), ("vllm", "0.13.0"),
    ("vllm-ascend", "0.11.0rc3"), ("vllm-ascend", "0.11.0"), ("vllm-ascend", "0.12.0rc1"),
    ("vllm-ascend", "0.13.0rc1"), ("vllm-ascend", "0.13.0"),
    ("triton-ascend", "3.2.0"),
    ("transformers", "4.57.1"), ("transformers", "4.57.3"), ("transformers", "4.57.4"),
    ("numpy", "1.26.4"), ("numpy", "2.1.0"),
    ("xformers", "0.0.32.post1"), ("flashinfer-python", "0.5.3"),
    ("mooncake-transfer-engine-npu", "0.3.11.post1"),
]
ASCEND_PACKAGES = [("torch-npu", "2.7.1.post1"), ("torch-npu", "2.8.0.post1"), ("triton-ascend", "3.2.1"),
                   ("triton-ascend", "3.2.2")]


def _b64(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def wheel_name(name: str, version: str, tag: str = "py3-none-any") -> str:
    return f"{re.sub(r'[-_.]+', '_', name)}-{version}-{tag}.whl"


def write_wheel(dest: Path, stub: Stub, extra_files: Optional[Mapping[str, bytes]] = None,
                tag: str = "py3-none-any") -> Path:
    """A real wheel for ``stub``: its module files, METADATA, WHEEL, entry points and a RECORD
    with sha256 hashes, as a build backend writes them."""
    dest.mkdir(parents=True, exist_ok=True)
    info = stub.dist_info_name
    files: Dict[str, bytes] = {k: v.encode() for k, v in stub.module_files().items()}
    for k, v in (extra_files or {}).items():
        files[k] = v
    files[f"{info}/METADATA"] = stub.metadata().encode()
    files[f"{info}/WHEEL"] = f"Wheel-Version: 1.0\nGenerator: ascend-doctor-tests\nRoot-Is-Purelib: true\nTag: {tag}\n".encode()
    if stub.entry_points:
        files[f"{info}/entry_points.txt"] = stub.entry_points_txt().encode()
    record = []
    for path, data in files.items():
        record.append(f"{path},sha256={_b64(hashlib.sha256(data).digest())},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    out = dest / wheel_name(stub.name, stub.version, tag)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files.items():
            z.writestr(path, data)
    return out


def torch_stub(version: str, cuda: Optional[str]) -> Stub:
    """PyPI's x86_64 torch is a CUDA build that requires nvidia-* and triton; the CPU index's
    ``+cpu`` build requires neither."""
    if cuda is None:
        return Stub("torch", version, requires=[])
    base = version.split("+")[0]
    nvidia = NVIDIA_FOR_TORCH.get(base, NVIDIA_FOR_TORCH["2.8.0"])
    marker = '; platform_system == "Linux" and platform_machine == "x86_64"'
    return Stub("torch", version, requires=[r + marker for r in nvidia] + [f"triton=={TRITON_OF[base]}{marker}"],
                cuda=cuda)


def build(root: Path) -> Dict[str, Path]:
    """Write the wheelhouse below ``root``; returns {"pypi": dir, "pytorch-cpu": dir, "ascend": dir}."""
    dirs = {k: Path(root) / k for k in (PYPI, CPU, ASCEND)}
    nvidia = set()
    for torch in TORCHES:
        write_wheel(dirs[PYPI], torch_stub(torch, CUDA_OF[torch]))
        write_wheel(dirs[CPU], torch_stub(f"{torch}+cpu", None))
        vision, audio = TORCH_COMPANIONS[torch]
        for name, version in (("torchvision", vision), ("torchaudio", audio)):
            write_wheel(dirs[PYPI], Stub(name, version))
            write_wheel(dirs[CPU], Stub(name, f"{version}+cpu", requires=[f"torch=={torch}"]))
        write_wheel(dirs[PYPI], Stub("triton", TRITON_OF[torch], requires=[]))
        nvidia.update(NVIDIA_FOR_TORCH.get(torch, NVIDIA_FOR_TORCH["2.8.0"]))
    for req in sorted(nvidia):
        name, version = req.split("==")
        write_wheel(dirs[PYPI], Stub(name, version, requires=[]))
    for name, version in PYPI_PACKAGES:
        write_wheel(dirs[PYPI], Stub(name, version))
    for name, version in ASCEND_PACKAGES:
        write_wheel(dirs[ASCEND], Stub(name, version))
    return dirs


def pip_env(base: Mapping[str, str], dirs: Iterable[Path]) -> Dict[str, str]:
    """An environment where pip reads no configuration file and sees only these directories."""
    env = dict(base)
    for k in list(env):
        if k.startswith(("PIP_", "UV_")):
            del env[k]
    env.update({"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
                "PIP_FIND_LINKS": " ".join(str(d) for d in dirs),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    return env


def tree_state(*roots: Path) -> Dict[str, str]:
    """Every file (sha256) and directory under the roots: equal states mean the same
    distributions, versions and bytes on disk."""
    out: Dict[str, str] = {}
    for root in roots:
        root = Path(root)
        for dirpath, dirnames, filenames in os.walk(root):
            rel = os.path.relpath(dirpath, root)
            out[f"{root}:{rel}/"] = "dir"
            for f in filenames:
                p = os.path.join(dirpath, f)
                if os.path.islink(p):
                    out[f"{root}:{os.path.join(rel, f)}"] = "link:" + os.readlink(p)
                    continue
                with open(p, "rb") as fh:
                    out[f"{root}:{os.path.join(rel, f)}"] = hashlib.sha256(fh.read()).hexdigest()
    return out


def record_editable_pth(site: Path, stub: Stub) -> None:
    """List an editable stub's .pth in its RECORD, as pip's PEP 660 installs do."""
    info = site / stub.dist_info_name
    record = info / "RECORD"
    pth = f"__editable__.{stub.module}.pth"
    if (site / pth).exists() and pth not in record.read_text():
        record.write_text(record.read_text() + f"{pth},,\n")
