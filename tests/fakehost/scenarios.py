"""Complete environments for a release, built from the matrix row (data), with overrides."""
from __future__ import annotations

from typing import Dict, Optional, Union

from doctor.versions import AscendVersion, satisfies

from . import FakeHost
from .dists import TORCH_COMPANIONS, Stub
from shipped import matrix as shipped_matrix

TRANSFORMERS = ("4.52.4", "4.53.0", "4.57.1", "4.57.3", "4.57.4", "5.5.3", "5.5.4", "5.13.0", "5.14.1")
NUMPY = ("2.1.0", "1.26.4")


def row(version: str):
    matrix = shipped_matrix()
    r = next((x for x in matrix.releases if x.vllm_ascend == version), None)
    assert r is not None, f"no matrix row {version}"
    return r


def _pick(candidates, spec: Optional[str]) -> str:
    for c in reversed(candidates):
        if spec is None or satisfies(c, spec):
            return c
    raise AssertionError(f"no candidate satisfies {spec}")


def release_packages(version: str, **overrides: Union[str, Stub, None]) -> Dict[str, Stub]:
    """The package set a correct install of this release has (CPU torch, the wheel's torch-npu
    pin, the paired vLLM from the index, numpy/transformers inside the row's ranges)."""
    r = row(version)
    vision, _audio = TORCH_COMPANIONS[r.torch]
    pkgs: Dict[str, Stub] = {
        "torch": Stub("torch", r.torch + "+cpu"),
        "torch-npu": Stub("torch-npu", r.torch_npu),
        "torchvision": Stub("torchvision", vision),
        "vllm": Stub("vllm", r.vllm),
        "vllm-ascend": Stub("vllm-ascend", r.vllm_ascend),
        "numpy": Stub("numpy", _pick(NUMPY, r.numpy)),
        "transformers": Stub("transformers", _pick(TRANSFORMERS, r.transformers)),
    }
    if r.triton_ascend:
        pkgs["triton-ascend"] = Stub("triton-ascend", r.triton_ascend)
    for name, value in overrides.items():
        name = name.replace("_", "-")
        if value is None:
            pkgs.pop(name, None)
        else:
            pkgs[name] = value if isinstance(value, Stub) else Stub(name, value)
    return pkgs


def ascend_host(fake: FakeHost, release: str, *, container: bool = True, npu: str = "npu-smi-910b4-32g.txt",
                driver: str = "driver-25.0.rc1.1.info", cann: Optional[str] = None, **overrides) -> FakeHost:
    """A healthy A2 machine (or container with the standard mounts) for a release."""
    r = row(release)
    cann = cann or r.cann[0]
    layout = "cann" if AscendVersion(cann) >= AscendVersion("8.5.0") else "ascend-toolkit"
    if AscendVersion(cann) >= AscendVersion("9.0.0") and driver == "driver-25.0.rc1.1.info":
        fake.driver_version("25.5.1")  # CANN 9.x does not run on 25.0 drivers
    else:
        fake.driver(driver)
    fake.toolkit(cann, layout=layout).devices().npu_smi(npu).sourced()
    if container:
        fake.container()
    else:
        fake.firmware()
    fake.venv(release_packages(release, **overrides))
    return fake
