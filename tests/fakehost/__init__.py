"""Fake Ascend hosts: a root tree with the real files of an Ascend machine (recorded outputs in
``data/``), npu-smi scripts that print recorded outputs, fail or hang, and a real virtualenv
holding stub distributions of the scenario. Only hardware and vendor binaries are faked.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Union

from .dists import TORCH_COMPANIONS, Stub, write_installed
import doctor_fork

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[2]


def fixture(name: str) -> str:
    return (DATA / name).read_text()


class FakeHost:
    def __init__(self, base: Path):
        self.base = Path(base)
        self.root = self.base / "root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.workdir = self.base / "work"
        self.workdir.mkdir(exist_ok=True)
        self.config = self.base / "config"
        self.env: Dict[str, str] = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(self.config),
        }
        self.python: Optional[Path] = None
        self.site: Optional[Path] = None
        self.machine = platform.machine()
        self.write("/etc/group", "root:x:0:\nHwHiAiUser:x:1000:\n")

    # -- files -----------------------------------------------------------------------------
    def p(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def write(self, path: str, text: str, mode: Optional[int] = None) -> Path:
        target = self.p(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        if mode is not None:
            target.chmod(mode)
        return target

    def symlink(self, path: str, target: str) -> None:
        link = self.p(path)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)

    def remove(self, path: str) -> None:
        target = self.p(path)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()

    # -- vendor layers ---------------------------------------------------------------------
    def driver(self, info: str = "driver-25.0.rc1.1.info", install_info: Optional[str] = "ascend_install-full.info",
               hal: bool = True) -> "FakeHost":
        if install_info:
            self.write("/etc/ascend_install.info", fixture(install_info))
        self.write("/usr/local/Ascend/driver/version.info", fixture(info))
        if hal:
            self.write("/usr/local/Ascend/driver/lib64/driver/libascend_hal.so", "ELF stub\n")
            self.write("/usr/local/Ascend/driver/lib64/common/libc_sec.so", "ELF stub\n")
        return self

    def driver_version(self, version: str, fw_range: str = "[7.0.0,8.9.9]") -> "FakeHost":
        """A driver version.info in the recorded format (formats.md 1a) for a version we have no
        verbatim copy of."""
        text = fixture("driver-25.0.rc1.1.info").replace("25.0.rc1.1", version)
        text = text.replace("compatible_version_fw=[7.0.0,7.7.99]", f"compatible_version_fw={fw_range}")
        self.driver()
        self.write("/usr/local/Ascend/driver/version.info", text)
        return self

    def firmware(self, info: str = "firmware-7.7.0.1.231.info") -> "FakeHost":
        self.write("/usr/local/Ascend/firmware/version.info", fixture(info))
        return self

    def toolkit(self, version: str, layout: str = "ascend-toolkit", kernels: bool = True, libs: bool = True,
                nnal: Optional[str] = "same", chip: str = "910b") -> "FakeHost":
        """CANN as its installer lays it out: <= 8.3 under ascend-toolkit/<ver> with a `latest`
        directory of relative links; >= 8.5 under cann-<ver> with an absolute `cann` symlink."""
        arch = self.machine
        info = (f"package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion=V100R001C25SPC001B212\n"
                f"compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]\n"
                f"arch={arch}\nos=linux\n")
        if layout == "ascend-toolkit":
            real = f"/usr/local/Ascend/ascend-toolkit/{version}"
            home = "/usr/local/Ascend/ascend-toolkit/latest"
            self.write(f"{real}/{arch}-linux/ascend_toolkit_install.info", info + f"path={real}/{arch}-linux\n")
            for comp in ("runtime", "compiler", "opp", "toolkit"):
                self.p(f"{real}/{comp}").mkdir(parents=True, exist_ok=True)
                self.symlink(f"{home}/{comp}", f"../{version}/{comp}")
            self.symlink(f"{home}/{arch}-linux", f"../{version}/{arch}-linux")
            self.symlink(f"{home}/lib64", f"{arch}-linux/lib64")
            if arch == "aarch64":
                self.symlink(f"{home}/arm64-linux", "aarch64-linux")
            if kernels:
                self.write(f"{real}/opp_kernel/version.info",
                           f"Version={version}.0.201\nversion_dir={version}\n")
                self.symlink(f"{home}/opp_kernel", f"../{version}/opp_kernel")
            self.write("/usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_TOOLKIT)
            lib_dir = f"{real}/{arch}-linux/lib64"
        else:
            real = f"/usr/local/Ascend/cann-{version}"
            home = "/usr/local/Ascend/cann"
            self.write(f"{real}/{arch}-linux/ascend_toolkit_install.info", info + f"path={real}/{arch}-linux\n")
            if kernels:
                self.write(f"{real}/{arch}-linux/ascend_ops_install.info",
                           f"package_name=Ascend-cann-{chip}-ops\nversion={version}\narch={arch}\n")
            self.symlink(home, real)  # absolute, as the installer makes it
            self.symlink(f"{real}/lib64", f"{arch}-linux/lib64")
            self.write(f"{real}/set_env.sh", SET_ENV_TOOLKIT)
            lib_dir = f"{real}/{arch}-linux/lib64"
        if libs:
            for lib in ("libascendcl.so", "libhccl.so"):
                self.write(f"{lib_dir}/{lib}", "ELF stub\n")
        self.cann_home = home
        if nnal:
            self.nnal(version if nnal == "same" else nnal)
        return self

    def nnal(self, version: str) -> "FakeHost":
        self.write("/usr/local/Ascend/nnal/atb/latest/version.info",
                   f"    Ascend-cann-atb : {version}\n    Ascend-cann-atb Version : {version}.B150\n    Platform : {self.machine}\n")
        self.write("/usr/local/Ascend/nnal/atb/set_env.sh", "# sets ATB_HOME_PATH for the torch C++ ABI\n")
        self.p("/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0/lib").mkdir(parents=True, exist_ok=True)
        return self

    def sourced(self, driver: bool = True, nnal: bool = True) -> "FakeHost":
        """The variables CANN's set_env.sh (and NNAL's) export (formats.md 3i)."""
        home = getattr(self, "cann_home", "/usr/local/Ascend/ascend-toolkit/latest")
        ld = [f"{home}/lib64", f"{home}/lib64/plugin/opskernel", f"{home}/lib64/plugin/nnengine"]
        if driver:
            ld += ["/usr/local/Ascend/driver/lib64/common/", "/usr/local/Ascend/driver/lib64/driver/"]
        if nnal:
            atb = "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0"
            ld = [f"{atb}/lib", f"{atb}/examples"] + ld
            self.env["ATB_HOME_PATH"] = atb
        self.env.update({
            "LD_LIBRARY_PATH": ":".join(ld) + ":",
            "ASCEND_TOOLKIT_HOME": home,
            "ASCEND_HOME_PATH": home,
            "ASCEND_OPP_PATH": f"{home}/opp",
            "ASCEND_AICPU_PATH": home,
        })
        return self

    def devices(self, count: int = 8, management: bool = True, mode: int = 0o660, gid: int = 1000) -> "FakeHost":
        for i in range(count):
            self._node(f"/dev/davinci{i}", mode, gid)
        if management:
            for name in ("davinci_manager", "devmm_svm", "hisi_hdc"):
                self._node(f"/dev/{name}", mode, gid)
        return self

    def _node(self, path: str, mode: int, gid: int) -> None:
        node = self.write(path, "", mode)
        os.chown(node, 0, gid)
        node.chmod(mode)

    def npu_smi(self, output: Optional[str] = "npu-smi-910b4-32g.txt", exit_code: int = 0, hang: bool = False,
                where: str = "/usr/local/bin", driver: Optional[str] = "installed") -> "FakeHost":
        """An npu-smi that prints a recorded output (or hangs, keeping its pipes open through a
        child process, the way a stuck driver call does).

        npu-smi's header names the driver that is loaded (``Version:``), which on a host that
        was rebooted after its last driver install is the one in driver/version.info. Our
        recordings come from hosts with other drivers than the fake's version.info, so by default
        (``driver="installed"``) the header line alone is rewritten to the installed version,
        both the tool's and the driver's, keeping the line's width; everything else stays the
        recorded output. ``driver=None`` prints the recording verbatim (a node upgraded without
        a reboot, when its version differs), a version string prints that version."""
        text = fixture(output) if output else ""
        version = self.installed_driver_version() if driver == "installed" else driver
        if version:
            text = npu_smi_with_driver(text, version)
        out = self.write(f"{where}/.npu-smi-output", text)
        body = "#!/bin/sh\n"
        if hang:
            body += "sleep 60 &\nwait\n"
        body += f'cat "{out}"\nexit {exit_code}\n'
        self.write(f"{where}/npu-smi", body, 0o755)
        return self

    def installed_driver_version(self) -> Optional[str]:
        """Version= of the fake's driver/version.info, if there is one."""
        path = self.p("/usr/local/Ascend/driver/version.info")
        if not path.is_file():
            return None
        for line in path.read_text(errors="replace").splitlines():
            key, _, value = line.strip().partition("=")
            if key.strip().lower() == "version":
                return value.strip()
        return None

    def container(self) -> "FakeHost":
        self.write("/.dockerenv", "")
        return self

    def ascend_host(self, cann: str = "8.3.RC2", driver: str = "driver-25.0.rc1.1.info",
                    npu: str = "npu-smi-910b4-32g.txt", layout: str = "ascend-toolkit") -> "FakeHost":
        """A healthy Atlas 800 A2 host with CANN sourced."""
        self.driver(driver).firmware().toolkit(cann, layout=layout).devices().npu_smi(npu).sourced()
        return self

    # -- python ----------------------------------------------------------------------------
    def venv(self, packages: Dict[str, Union[str, Stub]], python: str = sys.executable,
             template: Optional[Path] = None) -> Path:
        """A real virtualenv (no pip inside, it is not needed) with stub distributions; with
        ``template``, a copy of that venv instead (e.g. one made once per session with pip),
        whose files are hard links to the template's: pip and the doctor replace or remove
        files, they never write into one, and a copy of pip's 1,500 files costs 0.35 s of CPU.
        (The `house` fixture checks that the template is unchanged at the end of the run.)"""
        env_dir = self.base / "venv"
        if not env_dir.exists() and template is not None:
            shutil.copytree(template, env_dir, symlinks=True, copy_function=_link_or_copy)
        if not env_dir.exists():
            make_bare_venv(python, env_dir)
        self.python = env_dir / "bin" / "python"
        self.site = env_dir / purelib_of(self.python, env_dir)
        self.install(packages)
        return self.python

    def install(self, packages: Dict[str, Union[str, Stub]]) -> None:
        for name, spec in packages.items():
            stub = spec if isinstance(spec, Stub) else Stub(name, spec)
            self.uninstall(stub.name)  # as pip does before installing another version
            if stub.editable:
                for rel, text in stub.module_files().items():
                    path = Path(stub.editable) / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
            write_installed(self.site, stub)

    def uninstall(self, name: str) -> None:
        """As pip uninstalls: the files its RECORD lists (the package too), then the metadata."""
        from packaging.utils import canonicalize_name

        for entry in list(self.site.iterdir()):
            if entry.name.endswith(".dist-info") and canonicalize_name(entry.name.split("-")[0]) == canonicalize_name(name):
                record = entry / "RECORD"
                rows = record.read_text().splitlines() if record.is_file() else []
                for rel in {r.split(",", 1)[0] for r in rows if r and not r.startswith(entry.name + "/")}:
                    target = self.site / rel
                    if target.is_file() or target.is_symlink():
                        target.unlink()
                    parent = target.parent
                    while parent != self.site and parent.is_dir() and not any(parent.iterdir()):
                        parent.rmdir()
                        parent = parent.parent
                shutil.rmtree(entry)
            elif entry.name == f"__editable__.{canonicalize_name(name).replace('-', '_')}.pth":
                entry.unlink()

    # -- running the doctor ------------------------------------------------------------------
    def npu_smi_binary(self) -> Optional[str]:
        """The fake npu-smi, as a live path: nothing inside --root runs unless named with
        --npu-smi (the way a user points the doctor at a mounted host's tools)."""
        from doctor.shell.host.root import Host
        from doctor.shell.runtime.prefetch import NPU_SMI_DIRS

        host = Host(root=str(self.root), env=self.env)
        found = host.which("npu-smi", NPU_SMI_DIRS)
        return str(host.path(found)) if found else None

    def args(self, *extra: str) -> List[str]:
        args = ["--root", str(self.root)]
        if self.python:
            args += ["--python", str(self.python)]
        npu_smi = self.npu_smi_binary()
        if npu_smi:
            args += ["--npu-smi", npu_smi]
        return args + list(extra)

    def run(self, command: str = "check", *extra: str, timeout: float = 60, with_target: bool = True) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "doctor", command] + (self.args(*extra) if with_target else list(extra))
        env = dict(self.env, PYTHONPATH=str(REPO))
        return doctor_fork.run(argv, cwd=self.workdir, env=env, capture_output=True, text=True, timeout=timeout)

    def judge(self, **options) -> dict:
        """check --json, in-process (fast): the same pipeline and JSON as the command."""
        from doctor.usecases.check import CheckOptions, run_check, target_info
        from doctor.render import check_doc, json_text

        options.setdefault("npu_smi", self.npu_smi_binary())
        opts = CheckOptions(root=str(self.root), python=str(self.python) if self.python else None,
                            cwd=str(self.workdir), **options)
        result = run_check(opts, env=dict(self.env))
        doc = json.loads(json_text(check_doc(result.verdict, stage=result.ctx.stage, target=target_info(result.ctx),
                                             timings=result.timings, lang="en")))
        doc["exit_code"] = result.verdict.exit_code()
        return doc

    def check_json(self, *extra: str, timeout: float = 60) -> tuple:
        proc = self.run("check", "--json", *extra, timeout=timeout)
        assert proc.stdout.strip(), proc.stderr
        return proc.returncode, json.loads(proc.stdout)


def make_bare_venv(python: str, env_dir: Path) -> None:
    """``python -m venv --without-pip env_dir``. For the interpreter running the tests, the same
    stdlib builder is called in this process (the command line's options: symlinks on POSIX, the
    same pyvenv.cfg, ``command`` line included) instead of starting an interpreter for it: the
    suite makes hundreds of these venvs, ~0.1 s of CPU each as a process."""
    if os.path.realpath(python) == os.path.realpath(sys.executable) and os.name == "posix":
        import venv

        venv.EnvBuilder(symlinks=True, with_pip=False).create(str(env_dir))
        return
    subprocess.run([python, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)


# the venv's interpreter (resolved to the base one) -> its purelib directory relative to the venv:
# asked once per interpreter (the venv's own sysconfig, as before), not once per venv
_PURELIB: Dict[str, str] = {}


def purelib_of(python: Path, env_dir: Path) -> str:
    key = os.path.realpath(python)
    if key not in _PURELIB:
        out = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True, timeout=60)
        site = Path(out.stdout.strip())
        assert site.is_relative_to(env_dir), f"{python}: purelib {site} is outside its venv {env_dir}"
        _PURELIB[key] = str(site.relative_to(env_dir))
    return _PURELIB[key]


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


SET_ENV_TOOLKIT = """# CANN environment (the variables this script exports are listed in formats.md 3i)
export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest
"""


_NPU_SMI_HEADER = re.compile(r"^(\|\s*npu-smi\s+)(\S+)(\s+Version:\s+)(\S+)(\s*)\|\s*$")


def npu_smi_with_driver(text: str, version: str) -> str:
    """A recorded ``npu-smi info`` output whose header names ``version`` as the tool's and the
    driver's version; the line keeps its width (the rest of the recording is untouched)."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        m = _NPU_SMI_HEADER.match(body)
        if m:
            head, tool, mid, _drv, pad = m.groups()
            width = len(body)
            first = head + version + " " * max(1, len(tool) - len(version) + len(mid) - len(mid.lstrip()))
            new = first + mid.lstrip() + version
            new = new + " " * max(1, width - len(new) - 1) + "|"
            line = new + line[len(body):]
        out.append(line)
    return "".join(out)


def finding(doc: dict, fid: str) -> dict:
    """The first finding with this id in a check --json document."""
    for f in doc["findings"]:
        if f["id"] == fid:
            return f
    raise AssertionError(f"no finding {fid}; have {[f['id'] for f in doc['findings']]}")


def statuses(doc: dict) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for f in doc["findings"]:
        out.setdefault(f["id"], f["status"])
    return out


def official_image(vllm_ascend: str = "0.11.0rc3", vllm: str = "0.11.2+empty", torch: str = "2.7.1+cpu",
                   torch_npu: str = "2.7.1", workspace: Optional[Path] = None) -> Dict[str, Stub]:
    """The Python side of quay.io/ascend/vllm-ascend images: vllm built from source with
    VLLM_TARGET_DEVICE=empty and both installed editable under /vllm-workspace."""
    ws = workspace or Path("/vllm-workspace")
    base_torch = torch.split("+")[0]
    vision, audio = TORCH_COMPANIONS[base_torch]
    return {
        "torch": Stub("torch", torch),
        "torch-npu": Stub("torch-npu", torch_npu),
        "torchvision": Stub("torchvision", vision),
        "vllm": Stub("vllm", vllm, editable=str(ws / "vllm")),
        "vllm-ascend": Stub("vllm-ascend", vllm_ascend, editable=str(ws / "vllm-ascend")),
        "numpy": Stub("numpy", "1.26.4"),
        "transformers": Stub("transformers", "4.57.1"),
    }
