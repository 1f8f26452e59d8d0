"""Plain Facts and Matrix literals for the rule tests: a healthy Atlas A2 host serving
vllm-ascend 0.11.0rc3 by default, every section overridable. No files, no processes."""
from __future__ import annotations

import dataclasses
from typing import Dict, Iterable, List, Optional

from doctor.facts import (
    CannFacts, Chip, CommandFact, DeviceNode, DevicesFacts, Distribution, DriverFacts, Facts, FirmwareFacts,
    HostFacts, NnalFacts, NpuProcess, NpuSmiInfo, PackagesFacts, PythonFacts, WorkdirFacts, canonical,
)
from doctor.findings import Finding
from doctor.matrix.model import CannDriver, Matrix, Release, TorchNpu, TorchRow
from doctor.rules.base import STAGE_FORCED, Context

TOOLKIT = "/usr/local/Ascend/ascend-toolkit/latest"
DRIVER_LIB = "/usr/local/Ascend/driver/lib64"


def release(**kw) -> Release:
    base = dict(vllm_ascend="0.11.0rc3", vllm="0.11.0", python=">=3.9,<3.12", cann=("8.3.RC2",), torch="2.7.1",
                torch_npu="2.7.1", torch_npu_recommended="2.7.1.post1", glibc_min="2.24", hardware=("A2", "A3"),
                source="matrices/vllm-ascend.toml", torchvision="==0.22.1", numpy="<2.0.0",
                transformers=">=4.56.0", mooncake="0.3.7.post2", mooncake_install="source")
    base.update(kw)
    return Release(**base)


def _shipped() -> Matrix:
    from shipped import matrix  # loaded once per process (tests/shipped.py)

    return matrix()


def mooncake_knowledge() -> Dict[str, Dict]:
    """What the Mooncake rules hand the pure checks, from the shipped matrix."""
    from doctor.rules.mooncake import config_knowledge, env_knowledge, serve_knowledge

    return {"config": config_knowledge(_shipped()), "serve": serve_knowledge(_shipped()), "env": env_knowledge(_shipped())}


def matrix(releases: Iterable[Release] = (), cann_driver: Iterable[CannDriver] = (), torch_npu: Iterable[TorchNpu] = (),
           torch: Iterable[TorchRow] = ()) -> Matrix:
    """A literal matrix; the Mooncake knowledge (key windows, thresholds, package sets) is the
    shipped one, which the rules read as data."""
    shipped = _shipped()
    return Matrix(mooncake_keys=shipped.mooncake_keys, thresholds=shipped.thresholds,
                  package_sets=shipped.package_sets,
                  releases=list(releases) or [release()],
                  cann_driver=list(cann_driver) or [CannDriver(cann="8.3.RC2", compatible=("25.2", "25.0", "24.1"),
                                                               source="matrices/cann-driver.toml")],
                  torch_npu=list(torch_npu) or [TorchNpu(version="2.7.1", torch="2.7.1", cann="8.3.RC1",
                                                         python=">=3.9", source="matrices/torch-npu.toml"),
                                                TorchNpu(version="2.7.1.post1", torch="2.7.1", cann="8.3.RC1",
                                                         python=">=3.9", index="ascend-mirror",
                                                         source="matrices/torch-npu.toml")],
                  torch=list(torch) or [TorchRow(torch="2.7.1", torchvision="0.22.1", torchaudio="2.7.1",
                                                 python=">=3.9", source="matrices/torch-npu.toml")],
                  signatures=[], files=[])


def host(**kw) -> HostFacts:
    base = dict(root="/", cwd="/work", uid=0, gids=[0], user="root", machine="x86_64", in_container=False)
    base.update(kw)
    return HostFacts(**base)


def driver(**kw) -> DriverFacts:
    base = dict(install_info_path="/etc/ascend_install.info", install_info_found=True,
                version_path="/usr/local/Ascend/driver/version.info", found=True, version="25.0.rc1.1",
                compatible_fw=[["7.0.0", "7.7.99"]], lib_dir=DRIVER_LIB, hal_lib_found=True, dcmi_found=True)
    base.update(kw)
    return DriverFacts(**base)


def firmware(**kw) -> FirmwareFacts:
    base = dict(version_path="/usr/local/Ascend/firmware/version.info", found=True, version="7.7.0.1.231",
                compatible_drv=[["24.1", "24.1."], ["25.0", "25.0."]])
    base.update(kw)
    return FirmwareFacts(**base)


def nnal(**kw) -> NnalFacts:
    base = dict(found=True, path="/usr/local/Ascend/nnal/atb", version="8.3.RC2",
                set_env="/usr/local/Ascend/nnal/atb/set_env.sh")
    base.update(kw)
    return NnalFacts(**base)


def cann(**kw) -> CannFacts:
    base = dict(found=True, home=TOOLKIT, real_home="/usr/local/Ascend/ascend-toolkit/8.3.RC2", how="ASCEND_HOME_PATH",
                layout="ascend-toolkit", version="8.3.RC2", arch="x86_64",
                install_info_path=f"{TOOLKIT}/x86_64-linux/ascend_toolkit_install.info", ops_found=True,
                ops_package="Ascend-cann-kernels", ops_version="8.3.RC2", ops_path=f"{TOOLKIT}/opp_kernel/version.info",
                libs={"libascendcl.so": True, "libhccl.so": True},
                set_env="/usr/local/Ascend/ascend-toolkit/set_env.sh", nnal=nnal())
    base.update(kw)
    return CannFacts(**base)


def node(path: str, **kw) -> DeviceNode:
    base = dict(path=path, exists=True, mode=0o20660, uid=1000, gid=1000, group="HwHiAiUser", accessible=True)
    base.update(kw)
    return DeviceNode(**base)


MANAGEMENT = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")


def chips(health: Iterable[str] = ("OK",) * 8, name: str = "910B4") -> List[Chip]:
    return [Chip(npu=i, chip=0, name=name, health=h, phy_id=i, hbm_used_mb=3000, hbm_total_mb=32768)
            for i, h in enumerate(health)]


def npu_smi(chip_list: Optional[List[Chip]] = None, processes: Iterable[NpuProcess] = (), layout: str = "910B",
            **cmd) -> dict:
    """devices(...) keywords for an npu-smi info run (ok by default)."""
    command = dict(argv=["npu-smi", "info"], returncode=0, stdout="+---+\n| npu-smi 25.0.rc1.1 |\n")
    command.update(cmd)
    fact = CommandFact(**command)
    info = NpuSmiInfo(tool_version="25.0.rc1.1", driver_version="25.0.rc1.1", layout=layout,
                      chips=chips() if chip_list is None else chip_list, processes=list(processes))
    return dict(npu_smi_path="/usr/local/bin/npu-smi", npu_smi=fact, npu_smi_info=info if fact.ok else None)


def devices(count: int = 8, **kw) -> DevicesFacts:
    base = dict(davinci=[node(f"/dev/davinci{i}") for i in range(count)], management=[node(p) for p in MANAGEMENT])
    base.update(npu_smi())
    base.update(kw)
    return DevicesFacts(**base)


def python(**kw) -> PythonFacts:
    base = dict(source="interpreter", executable="/env/bin/python", found=True, version="3.11.7",
                implementation="cpython", machine="x86_64", glibc="2.36", prefix="/env", base_prefix="/usr",
                sys_path=["/env/lib/python3.11/site-packages"],
                markers={"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64",
                         "platform_system": "Linux", "implementation_name": "cpython", "os_name": "posix",
                         "python_full_version": "3.11.7", "platform_python_implementation": "CPython"})
    base.update(kw)
    return PythonFacts(**base)


def dist(name: str, version: str, **kw) -> Distribution:
    base = dict(name=canonical(name), version=version, display_name=name, location="/env/lib/python3.11/site-packages",
                metadata_path=f"/env/lib/python3.11/site-packages/{name}-{version}.dist-info")
    base.update(kw)
    return Distribution(**base)


def stack(**versions: Optional[str]) -> Dict[str, Distribution]:
    """The distributions of a healthy 0.11.0rc3 stack; name=None removes one, name="x" changes it."""
    plugin = {"vllm.platform_plugins": {"ascend": "vllm_ascend:register"}}
    wanted = {"torch": "2.7.1+cpu", "torch_npu": "2.7.1.post1", "torchvision": "0.22.1+cpu", "vllm": "0.11.0",
              "vllm_ascend": "0.11.0rc3", "numpy": "1.26.4", "transformers": "4.57.1"}
    wanted.update(versions)
    out = {}
    for key, version in wanted.items():
        if version is None:
            continue
        name = key.replace("_", "-")
        extra = {"entry_points": plugin} if name == "vllm-ascend" else {}
        if name == "torch-npu":
            extra["requires"] = ["torch==2.7.1"]
        out[canonical(name)] = dist(name, version, **extra)
    return out


def packages(dists: Optional[Dict[str, Distribution]] = None, shadowed: Iterable[Distribution] = ()) -> PackagesFacts:
    return PackagesFacts(paths=["/env/lib/python3.11/site-packages"], dists=stack() if dists is None else dists,
                         shadowed=list(shadowed))


SOURCED_ENV = {
    "LD_LIBRARY_PATH": f"{TOOLKIT}/lib64:{DRIVER_LIB}:{DRIVER_LIB}/driver:/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0/lib",
    "ASCEND_OPP_PATH": f"{TOOLKIT}/opp", "ASCEND_HOME_PATH": TOOLKIT, "ASCEND_TOOLKIT_HOME": TOOLKIT,
    "ATB_HOME_PATH": "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0",
}


def facts(**kw) -> Facts:
    """A healthy, sourced A2 host; pass a section (or None) to change it."""
    base = dict(tool_version="test", collected_at="2026-01-01T00:00:00Z", host=host(), env=dict(SOURCED_ENV),
                driver=driver(), firmware=firmware(), cann=cann(), devices=devices(), python=python(),
                packages=packages(), workdir=WorkdirFacts(cwd="/work"))
    base.update(kw)
    d = base["driver"]
    if "devices" not in kw and d is not None and d.version and base["devices"].npu_smi_info is not None:
        # a host rebooted since its driver was installed: npu-smi reports that driver as loaded
        base["devices"].npu_smi_info.driver_version = d.version
    return Facts(**base)


def context(f: Optional[Facts] = None, *, stage: str = "runtime", m: Optional[Matrix] = None,
            row: Optional[Release] = "default", hardware: Optional[str] = "A2", release_note: Optional[str] = None,
            pip_conflicts: Optional[list] = None) -> Context:
    m = m or matrix()
    return Context(facts=f or facts(), matrix=m, stage=stage, stage_reason=STAGE_FORCED,
                   release=m.releases[0] if row == "default" else row, release_note=release_note,
                   hardware=hardware, pip_conflicts=pip_conflicts)


def judge(check, ctx: Context) -> List[Finding]:
    return list(check(ctx))


def expect(findings: List[Finding], fid: str, status: str) -> Finding:
    """The one finding ``fid`` among ``findings``, which must have ``status``."""
    got = [f for f in findings if f.id == fid]
    assert len(got) == 1, f"{fid}: {[(f.id, f.status) for f in findings]}"
    assert got[0].status == status, f"{fid} is {got[0].status}, expected {status}: {got[0].title}"
    return got[0]


def absent(findings: List[Finding], fid: str) -> None:
    """``fid`` is not reported at all."""
    assert not [f for f in findings if f.id == fid], f"{fid} reported: {[(f.id, f.status) for f in findings]}"


def replace(obj, **kw):
    return dataclasses.replace(obj, **kw)
