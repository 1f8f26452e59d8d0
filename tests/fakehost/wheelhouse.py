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
from typing import Dict, Iterable, Mapping, Optional

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


def layout(root: Path) -> Dict[str, Path]:
    """{"pypi": dir, "pytorch-cpu": dir, "ascend": dir} of a wheelhouse below ``root``."""
    return {k: Path(root) / k for k in (PYPI, CPU, ASCEND)}


def build(root: Path) -> Dict[str, Path]:
    """Write the wheelhouse below ``root``; returns its :func:`layout`."""
    dirs = layout(root)
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
        for dirpath, _dirnames, filenames in os.walk(root):
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


# ---------------------------------------------------------------------------------------------
# a venv with pip, made once per process and copied (making one takes seconds, copying 0.3 s)

_TEMPLATE: Dict[str, Path] = {}


def template_venv(base: Path, python: Optional[str] = None) -> Path:
    import subprocess
    import sys

    key = str(base)
    if key not in _TEMPLATE:
        target = Path(base) / "template-venv"
        if not (target / "bin" / "python").exists() and not (python is None and _venv_by_uv(target)):
            subprocess.run([python or sys.executable, "-m", "venv", str(target)], check=True, timeout=300,
                           capture_output=True)
            _same_pip_as_the_tests(target / "bin" / "python")
        _TEMPLATE[key] = target
    return _TEMPLATE[key]


def _venv_by_uv(target: Path) -> bool:
    """The venv `python -m venv` makes (pip, and the setuptools ensurepip bundles), made in a
    fifth of the time: venv without pip, then uv installs the tests' pip and ensurepip's own
    setuptools wheel, byte-compiled (ensurepip spends ~5 s of CPU unpacking and compiling pip
    23.2 only for it to be replaced). False, with nothing left behind, where uv cannot."""
    import ensurepip
    import shutil
    import subprocess
    import sys
    from importlib import metadata

    from .installs import uv_binary, uv_index_flags

    uv = uv_binary()
    bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("setuptools-*.whl"))
    if not uv:
        return False
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True, timeout=300,
                   capture_output=True)
    done = subprocess.run([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(target / "bin" / "python"),
                           f"pip=={metadata.version('pip')}", *map(str, bundled), *uv_index_flags()],
                          capture_output=True, timeout=300)
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        return False
    return True


def _same_pip_as_the_tests(python: Path) -> None:
    """The template's pip brought to the release the test extras installed (pip 23.2, which
    venv puts in for Python 3.11, spends 0.3 s of CPU importing itself on every run; the real pip
    runs of the suite add up to a minute of it). Left as venv made it where that install fails
    (no index, no cache): the tests then only run slower."""
    import subprocess
    from importlib import metadata

    from .installs import uv_binary, uv_index_flags

    want = metadata.version("pip")
    uv = uv_binary()
    argv = ([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", str(python), f"pip=={want}", *uv_index_flags()] if uv
            else [str(python), "-m", "pip", "install", "--quiet", f"pip=={want}"])
    subprocess.run(argv, capture_output=True, timeout=300)


# ---------------------------------------------------------------------------------------------
# the scenarios of issue 4, shared by tests/test_fix_apply.py and bench/fix_bench.py


def _stub(name: str, version: str, **kw) -> Stub:
    if name == "triton-ascend":
        kw.setdefault("import_name", "triton")  # triton-ascend installs the 'triton' package
    return Stub(name, version, **kw)


def _host(fake, release: str, template: Path, cann: Optional[str] = None, **overrides):
    from .scenarios import ascend_host

    fake.venv({}, template=template)
    return ascend_host(fake, release, cann=cann, **overrides)


def seed_001(fake, template: Path) -> None:
    """quay.io/ascend/vllm-ascend:v0.11.0rc3: vllm 0.11.2+empty and vllm-ascend installed
    editable from /vllm-workspace (a local build: it cannot be downloaded again)."""
    ws = fake.base / "vllm-workspace"
    vllm = Stub("vllm", "0.11.2+empty", editable=str(ws / "vllm"))
    va = Stub("vllm-ascend", "0.11.0rc3", editable=str(ws / "vllm-ascend"))
    _host(fake, "0.11.0rc3", template, vllm=vllm, vllm_ascend=va)
    for stub in (vllm, va):
        record_editable_pth(fake.site, stub)


def torch_moved(fake, template: Path, pip_env_: Dict[str, str]) -> None:
    """A healthy 0.11.0rc3 install after `pip install vllm==0.11.0` (real pip) moved torch."""
    import subprocess

    _host(fake, "0.11.0rc3", template)
    subprocess.run([str(fake.python), "-m", "pip", "install", "vllm==0.11.0"], env=pip_env_, check=True,
                   capture_output=True, timeout=300)


def cuda_torch(fake, template: Path) -> None:
    nvidia = {n: Stub(n, v) for n, v in (r.split("==") for r in NVIDIA_FOR_TORCH["2.7.1"])}
    _host(fake, "0.11.0rc3", template, torch=Stub("torch", "2.7.1", cuda="12.6"), **nvidia)


def triton_next_to_triton_ascend(fake, template: Path) -> None:
    _host(fake, "0.13.0", template, triton="3.4.0", triton_ascend=_stub("triton-ascend", "3.2.0"),
          transformers="4.57.4")


def numpy_2(fake, template: Path) -> None:
    _host(fake, "0.11.0rc3", template, numpy="2.1.0")


def fresh(fake, template: Path) -> None:
    """No vllm-ascend at all on a CANN 8.3.RC2 host: an empty venv."""
    _host(fake, "0.11.0rc3", template, **{n: None for n in ("torch", "torch-npu", "torchvision", "vllm", "vllm-ascend",
                                                             "numpy", "transformers")})


def upgrade(fake, template: Path) -> None:
    _host(fake, "0.12.0rc1", template)


def downgrade(fake, template: Path) -> None:
    _host(fake, "0.13.0rc1", template, transformers="4.57.4")


# name -> (builder, extra fix arguments, naive commands users ran, what a correct fix ends with)
SCENARIOS = {
    "seed_001": (seed_001, [], [["pip", "install", "vllm==0.11.0"], ["pip", "install", "vllm==0.11.0", "torch_npu==2.8.0"]],
                 {"vllm": "0.11.0", "vllm-ascend": "0.11.0rc3", "torch": "2.7.1+cpu"}),
    "torch_moved": (torch_moved, [], [["pip", "install", "vllm==0.11.0", "torch_npu==2.8.0"]],
                    {"torch": "2.7.1+cpu", "torch-npu": "2.7.1", "vllm": "0.11.0"}),
    "cuda_torch": (cuda_torch, [], [["pip", "install", "vllm-ascend==0.11.0rc3"]],
                   {"torch": "2.7.1+cpu", "nvidia-cublas-cu12": None}),
    "triton": (triton_next_to_triton_ascend, [],
               [["pip", "install", "--force-reinstall", "--no-deps", "triton-ascend==3.2.0"]],
               {"triton": None, "triton-ascend": "3.2.0"}),
    "numpy_2": (numpy_2, [], [["pip", "install", "vllm==0.11.0"]], {"numpy": "1.26.4"}),
    "fresh": (fresh, [], [["pip", "install", "vllm-ascend==0.13.0rc1"],
                          ["pip", "install", "vllm==0.13.0", "vllm-ascend==0.13.0rc1"]],
              {"vllm-ascend": "0.13.0rc1", "vllm": "0.13.0", "torch": "2.8.0+cpu", "torch-npu": "2.8.0"}),
    "upgrade": (upgrade, ["--target", "vllm-ascend==0.13.0rc1"], [["pip", "install", "vllm-ascend==0.13.0rc1"]],
                {"vllm-ascend": "0.13.0rc1", "vllm": "0.13.0"}),
    "downgrade": (downgrade, ["--target", "vllm-ascend==0.11.0"], [["pip", "install", "vllm-ascend==0.11.0"]],
                  {"vllm-ascend": "0.11.0", "vllm": "0.11.0", "torch": "2.7.1+cpu", "torch-npu": "2.7.1.post1"}),
}


def versions(site: Path) -> Dict[str, str]:
    """name -> version of every distribution in a site directory."""
    from packaging.utils import canonicalize_name

    out = {}
    for entry in Path(site).iterdir():
        if entry.name.endswith(".dist-info"):
            name, _, version = entry.name[: -len(".dist-info")].partition("-")
            out[canonicalize_name(name)] = version
    return out
