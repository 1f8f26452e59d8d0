"""Named kit scenarios: the fake hosts the check and fix outputs are pinned on (tests/golden).

Each builder takes a FakeHost and leaves it ready to judge. Names are file names of the goldens.
"""
from __future__ import annotations

from typing import Callable, Dict

from . import FakeHost, official_image
from .dists import Stub
from .scenarios import ascend_host, release_packages

Builder = Callable[[FakeHost], None]

NVIDIA = {n: Stub(n, v) for n, v in (("nvidia-cuda-runtime-cu12", "12.6.77"), ("nvidia-cublas-cu12", "12.6.4.1"),
                                     ("nvidia-cudnn-cu12", "9.5.1.17"), ("nvidia-nccl-cu12", "2.26.2"))}


def _seed_001(f: FakeHost) -> None:
    ascend_host(f, "0.11.0rc3")
    f.install(official_image(workspace=f.base / "vllm-workspace"))


def _not_sourced(f: FakeHost) -> None:
    ascend_host(f, "0.11.0rc3")
    for var in ("LD_LIBRARY_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ASCEND_AICPU_PATH",
                "ATB_HOME_PATH"):
        f.env.pop(var, None)


def _no_driver_mounts(f: FakeHost) -> None:
    ascend_host(f, "0.11.0rc3")
    f.remove("/usr/local/Ascend/driver")
    f.remove("/etc/ascend_install.info")
    f.remove("/usr/local/bin/npu-smi")


def _build_stage(f: FakeHost) -> None:
    f.toolkit("8.3.RC2").sourced(driver=False)
    f.venv(release_packages("0.11.0rc3"))


def _build_stage_broken(f: FakeHost) -> None:
    f.toolkit("8.3.RC2").sourced(driver=False)
    f.venv(release_packages("0.11.0rc3", vllm="0.11.2"))


def _npu_smi(output: str, code: int) -> Builder:
    def build(f: FakeHost) -> None:
        ascend_host(f, "0.11.0rc3")
        f.npu_smi(output, exit_code=code)
    return build


def _vllm_folder_in_cwd(f: FakeHost) -> None:
    ascend_host(f, "0.11.0rc3")
    (f.workdir / "vllm" / "vllm").mkdir(parents=True)


def _nnal_missing(f: FakeHost) -> None:
    ascend_host(f, "0.13.0")
    f.remove("/usr/local/Ascend/nnal")


def _kernels_missing(f: FakeHost) -> None:
    ascend_host(f, "0.11.0rc3")
    f.remove("/usr/local/Ascend/ascend-toolkit/8.3.RC2/opp_kernel")
    f.remove("/usr/local/Ascend/ascend-toolkit/latest/opp_kernel")


def _stale_vllm_version(f: FakeHost) -> None:
    ascend_host(f, "0.20.2rc1", triton="3.2.0", transformers="5.5.3")
    f.env["VLLM_VERSION"] = "0.18.0"


def _reboot_pending(f: FakeHost) -> None:
    """Driver 25.0.rc1.1 installed over 24.1.rc3 without a reboot: npu-smi still reports the
    loaded 24.1.rc3 (the recording as it is)."""
    ascend_host(f, "0.11.0rc3", container=False, torch_npu="2.7.1.post1")
    f.npu_smi("npu-smi-910b4-32g.txt", driver=None)


def _pythonpath_shadows_vllm(f: FakeHost) -> None:
    """Seed 001 after its fix: vllm 0.11.0 reinstalled from the index, but the environment keeps
    the image's PYTHONPATH entry for the vllm 0.11.2 source tree (`import vllm` loads that)."""
    ascend_host(f, "0.11.0rc3")
    tree = f.base / "vllm-workspace" / "vllm"
    (tree / "vllm").mkdir(parents=True)
    (tree / "vllm" / "__init__.py").write_text('__version__ = "0.11.2"\n')
    f.env["PYTHONPATH"] = str(tree)


SCENARIOS: Dict[str, Builder] = {
    "healthy_a2": lambda f: ascend_host(f, "0.11.0rc3", container=False, torch_npu="2.7.1.post1"),
    # CANN 8.5.0 with driver 25.0.rc1.1: a pairing its release notes document (the README's example)
    "healthy_a2_documented": lambda f: ascend_host(f, "0.13.0", container=False),
    "healthy_a2_container": lambda f: ascend_host(f, "0.11.0rc3"),
    "seed_001_official_image": _seed_001,
    "torch_moved_by_vllm": lambda f: ascend_host(f, "0.11.0rc3", torch="2.8.0"),
    "seed_001_naive_fix": lambda f: ascend_host(f, "0.11.0rc3", torch="2.8.0", torch_npu="2.8.0", torchvision="0.23.0"),
    "cuda_torch": lambda f: ascend_host(f, "0.11.0rc3", torch=Stub("torch", "2.7.1", cuda="12.6"), **NVIDIA),
    "triton_next_to_triton_ascend": lambda f: ascend_host(f, "0.13.0", triton="3.4.0"),
    "numpy_2": lambda f: ascend_host(f, "0.11.0rc3", numpy="2.1.0"),
    "transformers_5": lambda f: ascend_host(f, "0.11.0rc3", transformers="5.5.3"),
    "cann_not_sourced": _not_sourced,
    "container_without_driver_mounts": _no_driver_mounts,
    "build_stage": _build_stage,
    "build_stage_broken": _build_stage_broken,
    "npu_smi_8005": _npu_smi("npu-smi-8005.txt", 255),
    "a3": lambda f: ascend_host(f, "0.11.0rc3", npu="npu-smi-a3.txt"),
    "first_generation_910": lambda f: ascend_host(f, "0.11.0rc3", npu="npu-smi-910a-warning.txt"),
    "driver_firmware_mismatch": lambda f: ascend_host(f, "0.11.0rc3", container=False, driver="driver-24.1.rc2.2.info"),
    "vllm_folder_in_cwd": _vllm_folder_in_cwd,
    "nnal_missing": _nnal_missing,
    "kernels_missing": _kernels_missing,
    "cann_too_old_073": lambda f: ascend_host(f, "0.7.3rc2", cann="8.0.RC2.2"),
    "driver_too_old_for_cann": lambda f: ascend_host(f, "0.23.0", driver="driver-24.1.rc3.info"),
    "stale_vllm_version_env": _stale_vllm_version,
    "plugin_entry_point_missing": lambda f: ascend_host(
        f, "0.10.2rc1", vllm_ascend=Stub("vllm-ascend", "0.10.2rc1", entry_points={"other": {"x": "y"}})),
    "no_vllm_ascend": lambda f: ascend_host(f, "0.11.0rc3", **{"vllm-ascend": None}),
    "reboot_pending": _reboot_pending,
    "pythonpath_shadows_vllm": _pythonpath_shadows_vllm,
}
