"""Every finding of every rule, word for word in both languages, on a table of literal hosts:
the unit-level goldens of the rules (fast: no host, no processes).

Each case is the healthy host with one thing changed; outputs.json keeps the healthy host's
findings in full and, for every other case, the findings that differ from them. A change is a
regression or on purpose: ``UPDATE_GOLDENS=1 pytest tests/rules/test_outputs.py`` rewrites the
file; review its diff.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

from doctor.facts import CommandFact, DeniedPath, ElfFacts, HccnDevice, HccnFacts, HttpFact, ImportLocation, \
    ImportsFacts, LibLookup, MasterFacts, MooncakeDist, MooncakeFacts, NpuPing, NpuProcess, NpuSmiInfo, ProbeError, \
    ShadowFact, WorkdirFacts
from doctor.matrix.model import CannDriver, KnownProblem
from doctor.rules.engine import make_context, run_rules
from doctor.rules.pipcheck import Conflict

from . import build as b
from goldens import match

EXPECTED = Path(__file__).with_name("outputs.json")

SITE = "/env/lib/python3.11/site-packages"
PKG = f"{SITE}/mooncake"
PIP_ROW = b.release(vllm_ascend="0.23.0", mooncake="0.3.11.post1", mooncake_install="pip", triton_ascend="3.2.0",
                    glibc_min="2.34", known_problems=(KnownProblem("a known problem", "https://example.org/kp"),))
TRANSPORT = [ElfFacts(path=f"{PKG}/engine.so", needed=["libtransfer_engine.so"]),
             ElfFacts(path=f"{PKG}/ascend_transport.so", needed=["libascendcl.so", "libllm_datadist.so"])]
LOOKUPS = [LibLookup("libtransfer_engine.so", f"{PKG}/engine.so", found=f"{PKG}/libtransfer_engine.so", how="RUNPATH"),
           LibLookup("ascend_transport.so", f"{PKG}/libtransfer_engine.so", found=f"{PKG}/ascend_transport.so",
                     how="RUNPATH")]
DENIED_DRIVER = DeniedPath("/usr/local/Ascend/driver/version.info", "/usr/local/Ascend/driver/version.info", False, 0o440,
                           0, 1000, "root", "HwHiAiUser")
DENIED_CANN = DeniedPath("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/ascend-toolkit", True, 0o750, 0,
                         1000, "root", "HwHiAiUser")
DENIED_FIRMWARE = DeniedPath("/usr/local/Ascend/firmware/version.info", "/usr/local/Ascend/firmware/version.info", False,
                             0o400, 0, 0, "root", "root")
CONFIG = ('{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "", '
          '"master_server_address": "10.0.0.2:50088", "global_segment_size": "64GB", "local_hostname": "x"}')


def mc(**kw) -> MooncakeFacts:
    base = dict(dists=[MooncakeDist("mooncake-transfer-engine-npu", "0.3.11.post1", SITE, owns_package=True)],
                package_dir=PKG, package_dirs=[PKG], version="0.3.11.post1", version_source="dist",
                elf=list(TRANSPORT), lookups=list(LOOKUPS))
    base.update(kw)
    return MooncakeFacts(**base)


def conflict(requirer, required, spec="==1.0", installed="2.0"):
    return Conflict(requirer, "1.0", f"{required}{spec}", required, spec, installed)


def dists(**versions):
    return b.packages(b.stack(**versions))


def with_extra(*extra, **versions):
    d = b.stack(**versions)
    for x in extra:
        d[x.name] = x
    return b.packages(d)


def mooncake_case(m, row=PIP_ROW, **kw):
    return dict(f=b.facts(mooncake=m, packages=dists(vllm_ascend=row.vllm_ascend), **kw), m=b.matrix([row]), row=row)


HCCN_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
PORT_QUERIES = ("link", "net_health", "ip", "gateway", "lldp", "tls")


def ran(device: int, query: str, ok: bool = True, **kw) -> CommandFact:
    base = dict(argv=[HCCN_TOOL, "-i", str(device), f"-{query}", "-g"], returncode=0 if ok else 1,
                stderr="" if ok else "hccn_tool: dsmi error -8005")
    base.update(kw)
    return CommandFact(**base)


def port(i: int, failed: tuple = (), **kw) -> HccnDevice:
    """NPU i's port as a healthy node reports it (29.1.0.1+i/16 via 29.1.0.254, TLS off);
    ``failed``: queries hccn_tool answered with an error."""
    base = dict(device=i, link="UP", net_health="Success", ip=f"29.1.0.{i + 1}", netmask="255.255.0.0",
                gateway="29.1.0.254", lldp_ifname=f"100GE1/0/{i + 1}", tls_switch=0,
                commands={q: ran(i, q, q not in failed) for q in PORT_QUERIES})
    base.update(kw)
    return HccnDevice(**base)


def a3_port(i: int, **kw) -> HccnDevice:
    d = port(i, vnic_link="UP", vnic_ip=f"192.168.1.{i + 1}", spod={"SDID": i, "Super Pod ID": 1, "Server Index": 0})
    d.commands["vnic"] = ran(i, "vnic")
    d.commands["spod-info"] = ran(i, "spod-info")
    for k, v in kw.items():
        setattr(d, k, v)
    return d


def hccn(devices=None, **kw) -> HccnFacts:
    """hccn_tool ran on two ports; /etc/hccn.conf agrees; eth0 (10.0.0.5, up) and lo."""
    base = dict(hostname="node0", tool=HCCN_TOOL, tool_how="driver tools",
                devices=[port(0), port(1)] if devices is None else devices, conf_found=True,
                conf={"0": {"address": "29.1.0.1"}, "1": {"address": "29.1.0.2"}},
                interfaces={"lo": ["127.0.0.1"], "eth0": ["10.0.0.5", "fe80::1"], "eth1": []},
                interfaces_up={"eth0": "up", "eth1": "up"})
    base.update(kw)
    return HccnFacts(**base)


def hccn_case(h=None, env=None, serve_args=None, **kw) -> dict:
    f = dict(hccn=hccn() if h is None else h)
    if env is not None:
        f["env"] = dict(b.SOURCED_ENV, **env)
    if serve_args is not None:
        f["mooncake"] = MooncakeFacts(serve_args=serve_args)
    return dict(f=b.facts(**f), **kw)


def ping(address: str, transmitted=None, received=None, **kw) -> NpuPing:
    return NpuPing(0, address, "node1", transmitted=transmitted, received=received,
                   command=CommandFact([HCCN_TOOL, "-i", "0", "-ping", "-g", "address", address], **kw))


def cases() -> Dict[str, dict]:
    """name -> keywords of build.context()."""
    bad_health = b.npu_smi(b.chips(("OK", "Critical", "Warning")), processes=[NpuProcess(0, 0, 42, "python", "1")])
    no_env = {k: v for k, v in b.SOURCED_ENV.items() if k != "ASCEND_OPP_PATH"}
    c = {
        "healthy": {},
        "healthy build stage": dict(stage="build"),
        "no release": dict(row=None),
        "dev build": dict(release_note="a development build"),
        "container without driver": dict(f=b.facts(host=b.host(in_container=True),
                                                    driver=b.driver(found=False, version=None, hal_lib_found=False),
                                                    firmware=b.firmware(found=False, version=None))),
        "host without driver": dict(f=b.facts(driver=b.driver(found=False, version=None), devices=b.devices(count=0))),
        "driver unreadable": dict(f=b.facts(driver=b.driver(malformed="garbage", hal_lib_found=False))),
        "firmware rejected": dict(f=b.facts(driver=b.driver(compatible_fw=[["7.0.0", "7.5.99"]]))),
        "firmware rejects": dict(f=b.facts(firmware=b.firmware(compatible_drv=[["23.0", "23.0."]]))),
        "firmware missing": dict(f=b.facts(firmware=b.firmware(found=False, version=None))),
        "management nodes missing": dict(f=b.facts(devices=b.devices(
            management=[b.node(p, exists=p == "/dev/davinci_manager") for p in b.MANAGEMENT]))),
        "nodes blocked": dict(f=b.facts(devices=b.devices(davinci=[b.node("/dev/davinci0", accessible=False)]))),
        "no npu-smi in a container": dict(f=b.facts(host=b.host(in_container=True),
                                                    devices=b.devices(npu_smi_path=None, npu_smi=None, npu_smi_info=None))),
        "npu-smi hangs": dict(f=b.facts(devices=b.devices(**b.npu_smi(timed_out=True, returncode=None)))),
        "npu-smi -8005": dict(f=b.facts(devices=b.devices(**b.npu_smi(returncode=255, stdout="dcmi failed. ret is -8005")))),
        "sick chips": dict(f=b.facts(devices=b.devices(**bad_health))),
        "310P": dict(hardware="310P"),
        "first 910": dict(hardware="910"),
        "cann missing": dict(f=b.facts(cann=b.cann(found=False, version=None, searched=["/usr/local/Ascend"]))),
        "cann missing, no release": dict(f=b.facts(cann=b.cann(found=False, version=None)), row=None),
        "cann incomplete": dict(f=b.facts(cann=b.cann(libs={"libascendcl.so": False}))),
        "cann unversioned": dict(f=b.facts(cann=b.cann(version=None, malformed="empty"))),
        "cann odd": dict(f=b.facts(cann=b.cann(malformed="odd", other_versions=["8.2.RC1", "8.3.RC2"]))),
        "kernels missing": dict(f=b.facts(cann=b.cann(ops_found=False))),
        "kernels other": dict(f=b.facts(cann=b.cann(ops_version="8.2.RC1"))),
        "nnal missing": dict(f=b.facts(cann=b.cann(nnal=b.nnal(found=False)))),
        "nnal other": dict(f=b.facts(cann=b.cann(nnal=b.nnal(version="8.2.RC1")))),
        "old cann": dict(f=b.facts(cann=b.cann(version="8.2.RC1"))),
        "newer cann": dict(f=b.facts(cann=b.cann(version="8.5.0"))),
        "driver too old": dict(f=b.facts(driver=b.driver(version="23.0.7")),
                               m=b.matrix(cann_driver=[CannDriver(cann="8.3.RC2", compatible=("25.2", "25.0"),
                                                                  incompatible=("24.1",), source="s")])),
        "driver older, undocumented": dict(f=b.facts(driver=b.driver(version="23.0.7"))),
        "driver newer": dict(f=b.facts(driver=b.driver(version="26.0.rc1"))),
        "driver excluded": dict(f=b.facts(driver=b.driver(version="24.1.rc2")),
                                m=b.matrix(cann_driver=[CannDriver(cann="8.3.RC2", compatible=("25.0",), incompatible=("24.1",),
                                                                   source="s")])),
        "driver unknown": dict(f=b.facts(driver=b.driver(version="25.1.0"))),
        "site-packages only": dict(f=b.facts(python=b.python(source="site-packages", found=False))),
        "interpreter broken": dict(f=b.facts(python=b.python(found=False, error="exec format error"))),
        "python 3.12": dict(f=b.facts(python=b.python(version="3.12.1")), row=b.release(requires_python=">=3.9,<3.12")),
        "python outside docs": dict(f=b.facts(python=b.python(version="3.12.1"))),
        "ppc64le": dict(f=b.facts(python=b.python(machine="ppc64le"))),
        "old glibc": dict(f=b.facts(python=b.python(glibc="2.17"))),
        "no glibc": dict(f=b.facts(python=b.python(glibc=None))),
        "torch moved": dict(f=b.facts(packages=with_extra(b.dist("vllm", "0.11.0", requires=["torch==2.8.0"]), torch="2.8.0"))),
        "torch missing": dict(f=b.facts(packages=dists(torch=None))),
        "cuda torch": dict(f=b.facts(packages=with_extra(b.dist("torch", "2.7.1+cu126", details={"cuda": "12.6"}),
                                                         *(b.dist(f"nvidia-{n}-cu12", "1") for n in "abcd")))),
        "rocm torch": dict(f=b.facts(packages=dists(torch="2.7.1+rocm6.3"))),
        "nvidia leftovers": dict(f=b.facts(packages=with_extra(b.dist("nvidia-nccl-cu12", "2.26.2")))),
        "torchvision other": dict(f=b.facts(packages=dists(torchvision="0.23.0"))),
        "torch-npu other": dict(f=b.facts(packages=dists(torch_npu="2.6.0"))),
        "torch-npu missing": dict(f=b.facts(packages=dists(torch_npu=None))),
        "torch-npu not recommended": dict(f=b.facts(packages=dists(torch_npu="2.7.1"))),
        "torch-npu wants another torch": dict(
            f=b.facts(packages=with_extra(b.dist("torch-npu", "2.7.1.post1", requires=["torch==2.7.1"]), torch="2.6.0")),
            row=None),
        "torch-npu unknown build": dict(f=b.facts(packages=dists(torch_npu="9.9.9"))),
        "torch-npu for newer cann": dict(f=b.facts(cann=b.cann(version="8.2.RC1"))),
        "vllm other": dict(f=b.facts(packages=with_extra(b.dist("vllm", "0.12.0", editable=True, direct_url="file:///s")))),
        "vllm missing": dict(f=b.facts(packages=dists(vllm=None))),
        "vllm +empty": dict(f=b.facts(packages=dists(vllm="0.11.0+empty"))),
        "vllm-ascend missing": dict(f=b.facts(packages=dists(vllm_ascend=None))),
        "generated row": dict(row=b.release(curated=False)),
        "plugin missing": dict(f=b.facts(packages=with_extra(b.dist("vllm-ascend", "0.11.0rc3")))),
        "plugin not selected": dict(f=b.facts(env=dict(b.SOURCED_ENV, VLLM_PLUGINS="lora"))),
        "other plugins": dict(f=b.facts(packages=with_extra(
            b.dist("x-plugin", "1", entry_points={"vllm.platform_plugins": {"x": "x:r"}})))),
        "numpy 2": dict(f=b.facts(packages=dists(numpy="2.2.0"))),
        "numpy missing": dict(f=b.facts(packages=dists(numpy=None))),
        "transformers old": dict(f=b.facts(packages=dists(transformers="4.40.0"))),
        "mainline triton": dict(f=b.facts(packages=with_extra(b.dist("triton", "3.3.0")))),
        "unused triton-ascend": dict(f=b.facts(packages=with_extra(b.dist("triton-ascend", "3.2.0")))),
        "triton row ok": dict(f=b.facts(packages=with_extra(b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.23.0")),
                              m=b.matrix([PIP_ROW]), row=PIP_ROW),
        "triton row both": dict(f=b.facts(packages=with_extra(b.dist("triton-ascend", "3.2.0"), b.dist("triton", "3.3.0"),
                                                              vllm_ascend="0.23.0")), m=b.matrix([PIP_ROW]), row=PIP_ROW),
        "triton row missing": dict(f=b.facts(packages=dists(vllm_ascend="0.23.0")), m=b.matrix([PIP_ROW]), row=PIP_ROW),
        "triton row other": dict(f=b.facts(packages=with_extra(b.dist("triton-ascend", "3.1.0"), vllm_ascend="0.23.0")),
                                 m=b.matrix([PIP_ROW]), row=PIP_ROW),
        "triton on 310P": dict(f=b.facts(packages=with_extra(b.dist("triton-ascend", "3.2.0"), vllm_ascend="0.23.0")),
                               m=b.matrix([PIP_ROW]), row=PIP_ROW, hardware="310P"),
        "no env": dict(f=b.facts(env={})),
        "no env, build": dict(f=b.facts(env={}), stage="build"),
        "opp unset": dict(f=b.facts(env=no_env)),
        "stale homes": dict(f=b.facts(env=dict(b.SOURCED_ENV, ASCEND_HOME_PATH="/old", ASCEND_TOOLKIT_HOME="/old2"))),
        "atb other abi": dict(f=b.facts(env=dict(b.SOURCED_ENV, ATB_HOME_PATH="/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1"))),
        "vllm version override": dict(f=b.facts(env=dict(b.SOURCED_ENV, VLLM_VERSION="0.18.0", VLLM_TARGET_DEVICE="cuda"))),
        "vllm version override ok": dict(f=b.facts(env=dict(b.SOURCED_ENV, VLLM_VERSION="0.11.0"))),
        "cwd shadows": dict(f=b.facts(workdir=WorkdirFacts("/w", [ShadowFact("vllm", "/w/vllm", False, False),
                                                                  ShadowFact("torch_npu", "/w/torch_npu", True, False),
                                                                  ShadowFact("vllm_ascend", "/w/vllm_ascend", True, True)]))),
        "pip conflicts": dict(pip_conflicts=[conflict("vllm-ascend", "pybind11", ">=2", None),
                                             conflict("transformers", "tokenizers"), conflict("foo", "bar"),
                                             conflict("vllm", "torch", "==2.8.0", "2.7.1+cpu"),
                                             conflict("torch-npu", "torch", "==2.7.1", "2.6.0"),
                                             conflict("vllm-ascend", "numpy", "<2", "2.2")]),
        "pip unrelated": dict(pip_conflicts=[conflict("foo", "bar")]),
        "pip residual only": dict(pip_conflicts=[conflict("vllm", "torch", "==2.8.0", "2.7.1+cpu")]),
        "pip computed": dict(f=b.facts(packages=with_extra(b.dist("foo", "1.0", requires=["bar>=2", "numpy<1"])))),
        "shadowed": dict(f=b.facts(packages=b.packages(shadowed=[b.dist("numpy", "2.1.0", location="/usr/lib/py")]))),
        "probe crashed": dict(f=b.facts(probe_errors=[ProbeError("npu-smi", "boom"), ProbeError("workdir", "x")])),
        "no sections": dict(f=b.facts(driver=None, firmware=None, cann=None, devices=None, python=None, packages=None,
                                      workdir=None)),
        # Mooncake
        "mooncake wheel": mooncake_case(mc()),
        "mooncake old wheel": mooncake_case(mc(dists=[MooncakeDist("mooncake-transfer-engine-npu", "0.3.10", SITE,
                                                                   owns_package=True)], version="0.3.10")),
        "mooncake old glibc": mooncake_case(mc(version="0.3.10"), python=b.python(glibc="2.31")),
        "mooncake generic wheel": mooncake_case(mc(dists=[MooncakeDist("mooncake-transfer-engine", "0.3.9", SITE,
                                                                       owns_package=True)],
                                                   elf=[ElfFacts(f"{PKG}/engine.so", needed=["libcudart.so.12"])])),
        "mooncake two builds": mooncake_case(mc(dists=[MooncakeDist("mooncake-transfer-engine-npu", "0.3.11.post1", SITE,
                                                                    owns_package=True),
                                                       MooncakeDist("mooncake-transfer-engine", "0.3.9", SITE,
                                                                    owns_package=True)])),
        "mooncake source ok": mooncake_case(mc(dists=[], version="0.3.7.post2"), row=b.release()),
        "mooncake source other": mooncake_case(mc(dists=[], version="0.3.6"), row=b.release()),
        "mooncake source unknown": mooncake_case(mc(dists=[], version=None), row=b.release()),
        "mooncake source vs pip": mooncake_case(mc(dists=[], version="0.3.9")),
        "mooncake none needed": mooncake_case(mc(dists=[], package_dir=None, package_dirs=[], version=None, elf=[],
                                                 lookups=[], serve_args="vllm serve m --kv-transfer-config "
                                                 "'{\"kv_connector\": \"MooncakeConnectorV1\", \"kv_role\": \"kv_both\"}'")),
        "mooncake off path": mooncake_case(mc(dists=[], package_dir=None, package_dirs=[],
                                              off_path_dirs=["/cann/site-packages/mooncake"])),
        "mooncake metadata only": mooncake_case(mc(package_dir=None, package_dirs=[])),
        "mooncake builtin transport": mooncake_case(mc(elf=[ElfFacts(f"{PKG}/engine.so",
                                                                     needed=["libllm_datadist.so", "libascendcl.so"])])),
        "mooncake unlinked": mooncake_case(mc(elf=[ElfFacts(f"{PKG}/ascend_transport.so", needed=["libc.so.6"])])),
        "mooncake no libraries": mooncake_case(mc(elf=[])),
        "mooncake legacy": mooncake_case(mc(dists=[], elf=[ElfFacts("/usr/local/lib/libtransfer_engine.so",
                                                                    needed=["libhccl.so"])])),
        "mooncake lib not found": mooncake_case(mc(lookups=[LibLookup("libtransfer_engine.so", f"{PKG}/engine.so",
                                                                      on_disk=["/usr/local/lib/libtransfer_engine.so"])],
                                                   transport_files=["/usr/local/lib/ascend_transport.so"])),
        "mooncake lib nowhere": mooncake_case(mc(lookups=[LibLookup("libtransfer_engine.so", f"{PKG}/engine.so")])),
        "mooncake cann not sourced": mooncake_case(mc(lookups=[LibLookup("libascendcl.so", f"{PKG}/ascend_transport.so",
                                                                         on_disk=["/x/libascendcl.so"])])),
        "mooncake cann lacks hixl": mooncake_case(mc(lookups=[LibLookup("libllm_datadist.so", f"{PKG}/t.so")],
                                                     ld_missing_dirs=["/usr/local/mooncake/lib"])),
        "mooncake config": mooncake_case(mc(config_var="/c.json", config_found=True, config_text=CONFIG,
                                            mem_total_kb=512 * 2 ** 20, mem_available_kb=40 * 2 ** 20,
                                            serve_args="vllm serve m --tensor-parallel-size 8")),
        "mooncake config missing": mooncake_case(mc(config_var="/c.json", config_error="is a directory"),
                                                 host=b.host(root="/img")),
        "mooncake config unknown memory": mooncake_case(mc(config_var="/c.json", config_found=True, config_text=CONFIG)),
        "mooncake env": mooncake_case(mc(), env=dict(b.SOURCED_ENV, ASCEND_BUFFER_POOL="4:8", ASCEND_USE_ASYNC_TRANSFER="0",
                                                     ASCEND_CONNECT_TIMEOUT="x", ASCEND_ENABLE_USE_FABRIC_MEM="1")),
        "mooncake master down": mooncake_case(mc(master=MasterFacts("10.0.0.2:50088", "--mooncake-master", "10.0.0.2",
                                                                    50088, "http://10.0.0.2:9003", tcp_error="refused",
                                                                    health=HttpFact("u", error="refused")))),
        "mooncake master ok": mooncake_case(mc(master=MasterFacts(
            "10.0.0.2:50088", "MOONCAKE_MASTER", "10.0.0.2", 50088, "http://10.0.0.2:9003", tcp_ok=True,
            health=HttpFact("h", status=200, body="OK"),
            metrics=HttpFact("m", status=200, body="master_total_capacity_bytes 100\nmaster_allocated_bytes 96\n"),
            summary=HttpFact("s", status=200, body="Mem Storage: 96 B / 100 B (96%) | Keys: 3 | Clients: 2")))),
        "mooncake probe errors": mooncake_case(mc(errors=["elf: denied", "ldconfig: missing"])),
        "mooncake old snapshot": dict(f=b.facts(packages=with_extra(b.dist("mooncake-transfer-engine", "0.3.9")))),
        "mooncake master at build": dict(mooncake_case(mc(master=MasterFacts("2.2.2.2:50058", "MOONCAKE_CONFIG_PATH",
                                                                             skipped="build"))), stage="build"),
        "mooncake config at build": dict(mooncake_case(mc(config_var="/c.json", config_found=True, config_text=CONFIG)),
                                         stage="build"),
        "mooncake config without mooncake": mooncake_case(
            mc(dists=[], package_dir=None, package_dirs=[], version=None, elf=[], lookups=[]),
            env=dict(b.SOURCED_ENV, MOONCAKE_CONFIG_PATH="/c.json")),
        "mooncake master not mooncake": mooncake_case(mc(master=MasterFacts(
            "10.0.0.2:50088", "MOONCAKE_MASTER", "10.0.0.2", 50088, "http://10.0.0.2:9003", tcp_ok=True,
            health=HttpFact("h", status=200, body="<html>welcome to nginx</html>")))),
        "mooncake master without segments": mooncake_case(mc(master=MasterFacts(
            "10.0.0.2:50088", "MOONCAKE_MASTER", "10.0.0.2", 50088, "http://10.0.0.2:9003", tcp_ok=True,
            health=HttpFact("h", status=200, body="OK"),
            metrics=HttpFact("m", status=200, body="master_total_capacity_bytes 0\nmaster_allocated_bytes 0\n"),
            summary=HttpFact("s", status=200, body="Mem Storage: 0 B / 0 B (0%) | Keys: 0 | Clients: 1")))),
        # issue 10: verdicts that were wrong
        "driver reboot pending": dict(f=b.facts(devices=b.devices(npu_smi_info=NpuSmiInfo(
            driver_version="24.1.rc3", layout="910B", chips=b.chips())))),
        "driver denied": dict(f=b.facts(host=b.host(in_container=True, user="alice", uid=1001),
                                        driver=b.driver(found=False, version=None, denied=DENIED_DRIVER))),
        "cann denied": dict(f=b.facts(host=b.host(user="alice", uid=1001),
                                      cann=b.cann(found=False, version=None, denied=DENIED_CANN))),
        "firmware denied": dict(f=b.facts(firmware=b.firmware(found=False, version=None, denied=DENIED_FIRMWARE))),
        "firmware malformed": dict(f=b.facts(firmware=b.firmware(version=None, malformed="Version= 'x;y' is not a version"))),
        "kernels malformed": dict(f=b.facts(cann=b.cann(ops_version=None, ops_malformed="version= 'x;y' is not a version"))),
        "nnal malformed": dict(f=b.facts(cann=b.cann(nnal=b.nnal(version=None, malformed="'x;y' is not a version")))),
        "pythonpath shadow": dict(f=b.facts(imports=ImportsFacts(
            python_path=["/vllm-workspace/vllm"], python_path_source="launch.sh",
            sys_path=["/vllm-workspace/vllm", SITE],
            located=[ImportLocation("vllm", "vllm", "/vllm-workspace/vllm/vllm", "/vllm-workspace/vllm", "package",
                                    f"{SITE}/vllm", False)]))),
        # hccn: the NPU ports (hccn_tool, /etc/hccn.conf) and the control-plane interfaces
        "hccn healthy": hccn_case(),
        "hccn at build": dict(hccn_case(), stage="build"),
        "hccn no devices": hccn_case(hccn(devices=[])),
        "hccn tool fails": hccn_case(hccn(devices=[port(0, link=None, net_health=None, ip=None, gateway=None,
                                                        lldp_ifname=None, tls_switch=None, failed=PORT_QUERIES)])),
        "hccn tool fails in a container": dict(f=b.facts(host=b.host(in_container=True), hccn=hccn(devices=[
            port(0, commands={"link": ran(0, "link", False, error="permission denied")})]))),
        "hccn tool hangs": hccn_case(hccn(timeout_s=2.5, devices=[
            port(0), port(1, link=None, net_health=None, ip=None, gateway=None, lldp_ifname=None, tls_switch=None,
                          commands={"link": ran(1, "link", False, timed_out=True, returncode=None)},
                          skipped=["net_health", "ip", "gateway", "lldp", "tls"])])),
        "hccn link down": hccn_case(hccn(devices=[port(0), port(1, link="DOWN")])),
        "hccn link unreadable": hccn_case(hccn(devices=[port(0), port(1, link=None, failed=("link",))])),
        "hccn net_health fault": hccn_case(hccn(devices=[port(0, net_health="Init"), port(1, net_health="Fault")])),
        "hccn net_health init": hccn_case(hccn(devices=[port(0), port(1, net_health="Init")])),
        "hccn net_health unreadable": hccn_case(hccn(devices=[port(0), port(1, net_health=None, failed=("net_health",))])),
        "hccn ip missing": hccn_case(hccn(devices=[port(0), port(1, ip=None, netmask=None)])),
        "hccn ip duplicate": hccn_case(hccn(devices=[port(0), port(1, ip="29.1.0.1")], conf={})),
        "hccn ip differs from the conf": hccn_case(hccn(conf={"0": {"address": "29.1.0.9"}})),
        "hccn ip unreadable": hccn_case(hccn(devices=[port(0), port(1, ip=None, gateway=None, failed=("ip", "gateway"))],
                                             conf={})),
        "hccn gateway missing": hccn_case(hccn(devices=[port(0), port(1, gateway=None)])),
        "hccn gateway outside": hccn_case(hccn(devices=[port(0), port(1, gateway="30.0.0.1")])),
        "hccn gateway unreadable": hccn_case(hccn(devices=[port(0), port(1, gateway=None, failed=("gateway",))])),
        "hccn lldp none": hccn_case(hccn(devices=[port(0), port(1, lldp_ifname=None)])),
        "hccn tls mixed": hccn_case(hccn(devices=[port(0, tls_switch=1), port(1)])),
        "hccn tls on": hccn_case(hccn(devices=[port(0, tls_switch=1, tls_expiration=[0]), port(1, tls_switch=1)])),
        "hccn tls expired": hccn_case(hccn(devices=[port(0, tls_switch=1, tls_expiration=[0, 2]),
                                                    port(1, tls_switch=1, tls_expiration=[1])])),
        "hccn tls near": hccn_case(hccn(devices=[port(0, tls_switch=1, tls_expiration=[1]), port(1, tls_switch=1)])),
        "hccn tls unreadable": hccn_case(hccn(devices=[port(0, tls_switch=None, failed=("tls",)),
                                                       port(1, tls_switch=None)])),
        "hccn conf missing": hccn_case(hccn(conf_found=False, conf={})),
        "hccn conf missing in a container": dict(f=b.facts(host=b.host(in_container=True),
                                                            hccn=hccn(conf_found=False, conf={}))),
        "hccn conf bad lines": hccn_case(hccn(conf_bad_lines=["address_0=29.1.0.1.7", "garbage"])),
        "hccn A3": hccn_case(hccn(devices=[a3_port(0), a3_port(1)]), hardware="A3"),
        "hccn A3 vnic down": hccn_case(hccn(devices=[a3_port(0), a3_port(1, vnic_link="DOWN", vnic_ip=None)]),
                                       hardware="A3"),
        "hccn A3 superpod split": hccn_case(hccn(devices=[a3_port(0), a3_port(1, spod={"Super Pod ID": 2,
                                                                                       "Server Index": 3})]),
                                            hardware="A3"),
        "hccn A3 superpod unreadable": hccn_case(hccn(devices=[a3_port(0), a3_port(1, spod={})]), hardware="A3"),
        "hccn pings": hccn_case(hccn(pings=[ping("29.1.0.3", 3, 3), ping("29.1.0.4", 3, 3)])),
        "hccn pings lost": hccn_case(hccn(pings=[ping("29.1.0.3", 3, 3), ping("29.1.0.4", 3, 1),
                                                 ping("29.1.0.5", returncode=1, stderr="ping failed")])),
        "hccl_if_ip here": hccn_case(env={"HCCL_IF_IP": "10.0.0.5"}),
        "hccl_if_ip elsewhere": hccn_case(env={"HCCL_IF_IP": "10.0.0.6"}),
        "hccl_if_ip invalid": hccn_case(env={"HCCL_IF_IP": "10.0.0"}),
        "hccl_if_ip without interfaces": hccn_case(hccn(interfaces=None), env={"HCCL_IF_IP": "10.0.0.5"}),
        "hccl_if_ip from the launch script": dict(f=b.facts(hccn=hccn(), mooncake=MooncakeFacts(
            serve_args="vllm serve m", serve_env={"HCCL_IF_IP": "10.0.0.7"}))),
        "socket ifname ok": hccn_case(env={"HCCL_SOCKET_IFNAME": "eth", "GLOO_SOCKET_IFNAME": "eth0,eth1",
                                           "TP_SOCKET_IFNAME": "eth0"}),
        "socket ifname none": hccn_case(env={"GLOO_SOCKET_IFNAME": "ens3", "TP_SOCKET_IFNAME": "eth"}),
        "socket ifname no address": hccn_case(env={"HCCL_SOCKET_IFNAME": "=eth1"}),
        "socket ifname down": hccn_case(hccn(interfaces_up={"eth0": "down"}), env={"TP_SOCKET_IFNAME": "eth0"}),
        "socket ifname and hccl_if_ip": hccn_case(
            hccn(interfaces={"lo": ["127.0.0.1"], "eth0": ["10.0.0.5"], "eth1": ["10.1.0.5"]}),
            env={"HCCL_SOCKET_IFNAME": "eth1", "HCCL_IF_IP": "10.0.0.5"}),
        "socket ifname without interfaces": hccn_case(hccn(interfaces=None), env={"GLOO_SOCKET_IFNAME": "eth0"}),
        "dp master here": hccn_case(env={"VLLM_DP_MASTER_IP": "10.0.0.5", "VLLM_DP_MASTER_PORT": "13399"}),
        "dp master follower": hccn_case(serve_args="vllm serve m --data-parallel-address 10.0.0.9 "
                                                   "--data-parallel-rpc-port 13399 --data-parallel-size 4 "
                                                   "--data-parallel-size-local 2 --data-parallel-start-rank 2"),
        "dp master short options": hccn_case(serve_args="vllm serve m --data-parallel-address 10.0.0.5 "
                                                        "--data-parallel-rpc-port 13399 -dp 2 -dpl 4 --headless"),
        "dp master elsewhere": hccn_case(env={"VLLM_DP_MASTER_IP": "10.0.0.9", "VLLM_DP_MASTER_PORT": "13399"}),
        "dp master loopback": hccn_case(env={"VLLM_DP_MASTER_IP": "127.0.0.1"}),
        "dp master bad": hccn_case(serve_args="vllm serve m --data-parallel-address master "
                                              "--data-parallel-rpc-port 70000 --data-parallel-size 2 "
                                              "--data-parallel-size-local 4"),
        "dp sizes from the environment": hccn_case(env={"VLLM_DP_MASTER_PORT": "0", "VLLM_DP_SIZE": "2",
                                                        "VLLM_DP_SIZE_LOCAL": "8"}),
    }
    return c


def _render(findings) -> Dict[str, str]:
    out = {}
    for i, f in enumerate(findings):
        doc = {k: v for k, v in f.to_json("en").items() if v not in (None, [], False) and k not in ("id", "layer")}
        zh = f.to_json("zh")
        doc["zh"] = zh["title"] + (" → " + zh["hint"] if zh["hint"] else "")
        out[f"{f.id}#{sum(1 for g in findings[:i] if g.id == f.id)}"] = json.dumps(doc, ensure_ascii=False, sort_keys=True)
    return out


# Judged with the stage the engine picks (the skip texts name why).
AUTO = {"auto stage, no NPU": b.facts(driver=None, devices=b.devices(count=0, management=[], npu_smi_path=None,
                                                                     npu_smi=None, npu_smi_info=None)),
        "auto stage, NPU": b.facts()}


# Cases with hccn facts are kept as their difference from this one (the healthy host has none).
HCCN_BASE = "hccn healthy"


def outputs() -> Dict[str, Dict[str, str]]:
    healthy = None
    full: Dict[str, Dict[str, str]] = {}
    out = {}
    contexts = [(name, b.context(**kw)) for name, kw in cases().items()]
    contexts += [(name, make_context(f, b.matrix())) for name, f in AUTO.items()]
    for name, ctx in contexts:
        got = full[name] = _render(run_rules(ctx).findings)
        if healthy is None:
            healthy = got
            out[name] = got
        else:
            base = full[HCCN_BASE] if ctx.facts.hccn is not None and name != HCCN_BASE else healthy
            out[name] = {k: v for k, v in got.items() if base.get(k) != v}
            out[name].update({k: "(absent)" for k in base if k not in got})
    return out


@pytest.mark.slow  # ~0.5 s of CPU or more: every rule's records rendered
def test_every_finding_word_for_word():
    match(outputs(), EXPECTED)


def test_each_record_reports_its_own_id():
    from doctor.rules.all_rules import RULES

    for name, kw in cases().items():
        ctx = b.context(**kw)
        for r in RULES:
            ids = {f.id for f in r.check(ctx)}
            assert ids <= {r.id}, (name, r.id, ids)
            assert r.layer == r.id.split(".")[0] and r.why.key == f"why.{r.id}" or r.id.endswith(".probe_error")


@pytest.mark.slow  # ~0.5 s of CPU or more: every rule's records rendered
def test_the_table_reaches_every_finding_id():
    from doctor.rules.all_rules import RULES

    seen = {key.split("#")[0] for per_case in outputs().values() for key in per_case}
    ids = {r.id for r in RULES if r.layer != "tuning"}  # its words: tests/rules/test_tuning_outputs.py
    assert ids <= seen, sorted(ids - seen)
