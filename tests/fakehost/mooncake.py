"""Mooncake on a fake host: real ELF shared objects built with the C compiler, laid out the way
the NPU wheel, the generic wheels and a ``make install`` leave them (facts/mooncake.md §1.4, §2),
and stub CANN libraries (libascendcl, libllm_datadist, libmetadef) with their headers.

Only the libraries' dynamic sections matter to the doctor (NEEDED, RUNPATH/RPATH), so each
object is a few bytes of C linked with ``--no-as-needed`` against exactly the libraries the real
one needs.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import List, Optional

from .dists import Stub

CC = shutil.which("cc") or shutil.which("gcc")
EXT_SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
CANN_STUBS = {
    "libascendcl.so": "int aclrtGetDevice(int *d) { *d = 0; return 0; }\n",
    "libllm_datadist.so": "int AdxlEngineInitialize(void) { return 0; }\n",
    "libmetadef.so": "int metadef_version(void) { return 1; }\n",
    "libhccl.so": "int HcclGetRootInfo(void *p) { return 0; }\n",
    "libcudart.so.12": "int cudaGetDevice(int *d) { *d = 0; return 0; }\n",
}
CANN_HEADERS = {
    "acl/acl.h": "#pragma once\n#include <stdint.h>\n#define ACL_SUCCESS 0\n"
                 "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint aclrtGetDevice(int32_t *device);\n"
                 "#ifdef __cplusplus\n}\n#endif\n",
    "adxl/adxl_engine.h": "#pragma once\nnamespace adxl {\nextern \"C\" int AdxlEngineInitialize(void);\n}\n"
                          "extern \"C\" int metadef_version(void);\n"
                          "// Status TransferAsync(...) is declared by CANN >= 8.5\n",
}


def compile_so(out: Path, source: str, libs: List[str] = (), lib_dirs: List[Path] = (), rpath: Optional[str] = None,
               runpath: bool = True, soname: Optional[str] = None) -> Path:
    """cc -shared; ``libs`` are file names linked as -l:<name> so NEEDED lists them verbatim."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.with_name(out.name + ".c")
    src.write_text(source)
    argv = [CC, "-shared", "-fPIC", "-o", str(out), str(src), "-Wl,--no-as-needed",
            "-Wl,-soname," + (soname or out.name)]
    argv += [f"-L{d}" for d in lib_dirs] + [f"-l:{n}" for n in libs]
    if rpath:
        argv += [f"-Wl,-rpath,{rpath}", "-Wl,--enable-new-dtags" if runpath else "-Wl,--disable-new-dtags"]
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    src.unlink()
    return out


class ElfKit:
    """Compiled once per user and compiler into the test cache (16 compiler runs, about 3 s of
    CPU, were paid by every worker of every run), then copied to ``base``; scenarios copy the
    files they need."""

    def __init__(self, base: Path, compile_here: bool = False):
        self.base = Path(base)
        self.cann = self.base / "cann"
        self.npu = self.base / "npu-wheel"
        self.cuda = self.base / "cuda-wheel"
        self.src_ascend = self.base / "source-ascend"
        self.src_v037 = self.base / "source-v0.3.7.post2"
        self.src_tcp = self.base / "source-tcp"
        if compile_here:
            self._compile()
        else:
            shutil.copytree(_compiled_kit(), self.base, symlinks=True, dirs_exist_ok=True)
            (self.base / COMPILED).unlink()

    def _compile(self) -> None:
        for name, code in CANN_STUBS.items():
            compile_so(self.cann / name, code)
        cann = [self.cann]
        compile_so(self.npu / "ascend_transport.so", "int ascend_direct_transport_install(void) { return 0; }\n",
                   ["libascendcl.so", "libllm_datadist.so", "libmetadef.so"], cann, rpath="$ORIGIN")
        compile_so(self.npu / "libtransfer_engine.so", "int te(void) { return 0; }\n", ["ascend_transport.so"],
                   [self.npu], rpath="$ORIGIN")
        compile_so(self.npu / f"engine{EXT_SUFFIX}", "int PyInit_engine(void) { return 0; }\n",
                   ["libtransfer_engine.so", "libascendcl.so"], [self.npu] + cann, rpath="$ORIGIN")
        compile_so(self.cuda / "libtransfer_engine.so", "int te(void) { return 0; }\n", ["libcudart.so.12"], cann,
                   rpath="$ORIGIN")
        compile_so(self.cuda / f"engine{EXT_SUFFIX}", "int PyInit_engine(void) { return 0; }\n",
                   ["libtransfer_engine.so", "libcudart.so.12"], [self.cuda] + cann, rpath="$ORIGIN")
        # make install, ASCEND_DIRECT: libs in <prefix>/lib, engine in site-packages with $ORIGIN.
        compile_so(self.src_ascend / "lib" / "ascend_transport.so", "int ascend_direct_transport_install(void) { return 0; }\n",
                   ["libascendcl.so", "libllm_datadist.so", "libmetadef.so"], cann)
        compile_so(self.src_ascend / "lib" / "libtransfer_engine.so", "int te(void) { return 0; }\n",
                   ["ascend_transport.so", "libascendcl.so"], [self.src_ascend / "lib"] + cann)
        compile_so(self.src_ascend / "pkg" / f"engine{EXT_SUFFIX}", "int PyInit_engine(void) { return 0; }\n",
                   ["libtransfer_engine.so", "libascendcl.so"], [self.src_ascend / "lib"] + cann, rpath="$ORIGIN",
                   runpath=False)
        # make install of v0.3.7.post2: the transport compiled into engine.so, which links CANN directly.
        compile_so(self.src_v037 / "pkg" / f"engine{EXT_SUFFIX}",
                   'const char *src = "ascend_direct_transport.cpp";\nint PyInit_engine(void) { return 0; }\n',
                   ["libascendcl.so", "libllm_datadist.so", "libmetadef.so"], cann, rpath="$ORIGIN", runpath=False)
        (self.src_v037 / "lib").mkdir()
        # make install without USE_ASCEND_DIRECT: TCP only.
        compile_so(self.src_tcp / "lib" / "libtransfer_engine.so", "int te(void) { return 0; }\n")
        compile_so(self.src_tcp / "pkg" / f"engine{EXT_SUFFIX}", "int PyInit_engine(void) { return 0; }\n",
                   ["libtransfer_engine.so"], [self.src_tcp / "lib"], rpath="$ORIGIN", runpath=False)


COMPILED = ".compiled"


def _compiled_kit() -> Path:
    """The kit in the per-user test cache, named by this file's text and the compiler, compiled
    by the first worker that needs it (the others wait on the lock)."""
    from .shared import exclusive
    from .torchenv import content_key, shared_cache

    assert CC is not None, "a C compiler (cc) is needed"
    cc = os.stat(CC)
    target = shared_cache() / f"elf-kit-{content_key(Path(__file__).read_text(), CC, cc.st_size, cc.st_mtime_ns)}"
    with exclusive(target.parent / f"{target.name}.lock"):
        if not (target / COMPILED).is_file():
            shutil.rmtree(target, ignore_errors=True)
            ElfKit(target, compile_here=True)
            (target / COMPILED).write_text("")
    return target


def cann_libs(fake, kit: Optional[ElfKit] = None, names=("libascendcl.so", "libllm_datadist.so", "libmetadef.so"),
              headers: bool = True) -> Path:
    """Put compiled CANN stubs (and headers) into the fake toolkit's lib64 / include; without a
    kit they are compiled right there."""
    from doctor.shell.host.root import Host

    home = Host(str(fake.root)).path(fake.cann_home)  # follows the absolute `cann` link inside the root
    arch_dir = home / f"{fake.machine}-linux"
    lib64 = arch_dir / "lib64"
    lib64.mkdir(parents=True, exist_ok=True)
    for n in names:
        target = lib64 / n
        if target.exists() or target.is_symlink():
            target.unlink()
        if kit is not None:
            shutil.copy2(kit.cann / n, target)
        else:
            compile_so(target, CANN_STUBS[n])
    for rel, text in (CANN_HEADERS.items() if headers else ()):
        h = arch_dir / "include" / rel
        h.parent.mkdir(parents=True, exist_ok=True)
        h.write_text(text)
    return lib64


def _record(site: Path, stub: Stub, files: List[str]) -> None:
    record = site / stub.dist_info_name / "RECORD"
    lines = record.read_text().splitlines()
    record.write_text("\n".join(lines + [f"{f},," for f in files]) + "\n")


def npu_wheel(fake, kit: ElfKit, version: str = "0.3.11.post1") -> Path:
    """pip install mooncake-transfer-engine-npu: everything flattened into mooncake/ ($ORIGIN)."""
    stub = Stub("mooncake-transfer-engine-npu", version, import_name="mooncake")
    fake.install({stub.name: stub})
    pkg = fake.site / "mooncake"
    for f in kit.npu.iterdir():
        shutil.copy2(f, pkg / f.name)
    _record(fake.site, stub, [f"mooncake/{f.name}" for f in kit.npu.iterdir()])
    return pkg


def generic_wheel(fake, kit: ElfKit, name: str = "mooncake-transfer-engine", version: str = "0.3.9") -> Path:
    """A CUDA (or non-CUDA) Mooncake wheel: no ascend_transport.so, CUDA runtime among NEEDED."""
    stub = Stub(name, version, import_name="mooncake")
    fake.install({stub.name: stub})
    pkg = fake.site / "mooncake"
    for f in kit.cuda.iterdir():
        shutil.copy2(f, pkg / f.name)
    _record(fake.site, stub, [f"mooncake/{f.name}" for f in kit.cuda.iterdir()])
    return pkg


def make_install(fake, kit: ElfKit, ascend: bool = True, site: Optional[Path] = None,
                 master_output: Optional[str] = "mooncake_master\n", layout: Optional[Path] = None) -> Path:
    """What `make install` of a source build leaves: mooncake/ with the auto-generated __init__.py
    under the first site-packages, native libs in /usr/local/lib, mooncake_master in /usr/local/bin.
    ``master_output`` is what ``mooncake_master --version`` prints (gflags prints only the program
    name before v0.3.11 set a version string)."""
    tree = layout or (kit.src_ascend if ascend else kit.src_tcp)
    pkg = (site or fake.site) / "mooncake"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("# Auto-generated by CMake\n")
    for f in (tree / "pkg").iterdir():
        shutil.copy2(f, pkg / f.name)
    lib = fake.p("/usr/local/lib")
    lib.mkdir(parents=True, exist_ok=True)
    for f in (tree / "lib").iterdir():
        shutil.copy2(f, lib / f.name)
    if master_output is not None:
        out = fake.write("/usr/local/bin/.mooncake_master-output", master_output)
        fake.write("/usr/local/bin/mooncake_master", f'#!/bin/sh\ncat "{out}"\n', 0o755)
    return pkg


def meminfo(fake, total_gb: int, available_gb: Optional[int] = None) -> None:
    """/proc/meminfo in the kernel's format (the fields the doctor reads, and a few around them)."""
    kb = total_gb * 1024 * 1024
    avail = (available_gb if available_gb is not None else total_gb) * 1024 * 1024
    fake.write("/proc/meminfo", f"MemTotal:       {kb} kB\nMemFree:        {avail - 1024} kB\n"
                                f"MemAvailable:   {avail} kB\nBuffers:          123456 kB\nCached:         4567890 kB\n")
