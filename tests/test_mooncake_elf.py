"""The pure-Python ELF reader and loader model against the real tools (readelf, ldconfig)."""
from __future__ import annotations

import glob
import os
import re
import shutil
import struct
import subprocess

import pytest
from fakehost.mooncake import CC, ElfKit

from doctor.parse import elf
from doctor.shell.host import files
from doctor.parse import ldcache as loader

needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler to build test libraries")


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    if CC is None:
        pytest.skip("no C compiler")
    return ElfKit(tmp_path_factory.mktemp("elfkit"))


def readelf(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, timeout=30).stdout

    def field(tag):
        return re.findall(r"\(" + tag + r"\).*\[(.*)\]", out)

    return {"needed": field("NEEDED"), "soname": (field("SONAME") or [None])[0],
            "runpath": [p for r in field("RUNPATH") for p in r.split(":") if p],
            "rpath": [p for r in field("RPATH") for p in r.split(":") if p]}


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf not installed")
@needs_cc
def test_matches_readelf_on_the_kit_and_system_libraries(kit):
    paths = [str(p) for p in kit.base.rglob("*.so*")]
    paths += sorted(glob.glob("/usr/lib/*-linux-gnu/*.so*"))[:80] + sorted(glob.glob("/lib*/ld-linux*.so*"))
    checked = 0
    for p in paths:
        if not os.path.isfile(p) or os.path.islink(p):
            continue
        try:
            info = files.read_elf(p)
        except elf.ElfError:
            continue  # linker scripts (libc.so) are text
        want = readelf(p)
        assert (info.needed, info.soname, info.runpath, info.rpath) == \
            (want["needed"], want["soname"], want["runpath"], want["rpath"]), p
        checked += 1
    assert checked >= 15


@needs_cc
def test_kit_layouts(kit):
    t = files.read_elf(str(kit.npu / "ascend_transport.so"))
    assert t.needed[:3] == ["libascendcl.so", "libllm_datadist.so", "libmetadef.so"] and t.runpath == ["$ORIGIN"]
    engine = files.read_elf(str(next(kit.src_ascend.glob("pkg/engine*.so"))))
    assert engine.rpath == ["$ORIGIN"] and not engine.runpath  # old-style RPATH


def test_not_elf_and_truncated(tmp_path):
    text = tmp_path / "libc.so"
    text.write_text("/* GNU ld script */\nGROUP ( /lib/libc.so.6 )\n")
    with pytest.raises(elf.ElfError, match="not an ELF"):
        files.read_elf(str(text))
    stub = tmp_path / "libascendcl.so"
    stub.write_text("ELF stub\n")
    with pytest.raises(elf.ElfError):
        files.read_elf(str(stub))
    with pytest.raises(elf.ElfError):
        files.read_elf(str(tmp_path / "missing.so"))


@needs_cc
def test_truncated_real_library(kit, tmp_path):
    data = (kit.npu / "ascend_transport.so").read_bytes()
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[:200])
    with pytest.raises(elf.ElfError):
        files.read_elf(str(cut))


def _elf32_be(needed, soname):
    """A minimal big-endian 32-bit shared object: header, PT_LOAD + PT_DYNAMIC, .dynamic, .dynstr."""
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n in needed + [soname])
    offsets, pos = [], 1
    for n in needed + [soname]:
        offsets.append(pos)
        pos += len(n) + 1
    ehsize, phentsize = 52, 32
    dyn_off = ehsize + 2 * phentsize
    dyn = [(1, o) for o in offsets[:-1]] + [(14, offsets[-1]), (5, 0x1000 + 0), (10, len(strtab)), (0, 0)]
    dyn_bytes = b"".join(struct.pack(">iI", t, v) for t, v in dyn)
    str_off = dyn_off + len(dyn_bytes)
    dyn = [(t, (0x1000 + str_off) if t == 5 else v) for t, v in dyn]
    dyn_bytes = b"".join(struct.pack(">iI", t, v) for t, v in dyn)
    total = str_off + len(strtab)
    ident = b"\x7fELF" + bytes([1, 2, 1]) + b"\0" * 9
    header = ident + struct.pack(">HHIIIIIHHHHHH", 3, 20, 1, 0, ehsize, 0, 0, ehsize, phentsize, 2, 40, 0, 0)
    load = struct.pack(">IIIIIIII", 1, 0, 0x1000, 0x1000, total, total, 5, 0x1000)
    dynamic = struct.pack(">IIIIIIII", 2, dyn_off, 0x1000 + dyn_off, 0, len(dyn_bytes), len(dyn_bytes), 6, 4)
    return header + load + dynamic + dyn_bytes + strtab


def test_big_endian_32_bit(tmp_path):
    p = tmp_path / "be.so"
    p.write_bytes(_elf32_be(["libascendcl.so", "libc.so.6"], "ascend_transport.so"))
    info = files.read_elf(str(p))
    assert (info.bits, info.machine, info.needed, info.soname) == (32, "20", ["libascendcl.so", "libc.so.6"], "ascend_transport.so")


@needs_cc
def test_contains_finds_source_names(kit, tmp_path):
    lib = tmp_path / "ascend_transport.so"
    from fakehost.mooncake import compile_so

    compile_so(lib, 'const char *f = "ascend_direct_transport.cpp";\n')
    with files.open_binary(str(lib)) as fh:
        assert files.contains(fh, [b"ascend_direct_transport"])
        assert elf.read_elf_bytes(lib.read_bytes()).needed == elf.read_elf_file(fh).needed  # bytes or a reader
    with files.open_binary(str(kit.cuda / "libtransfer_engine.so")) as fh:
        assert not files.contains(fh, [b"AscendDirectTransport"])


# -- loader ---------------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/etc/ld.so.cache") or shutil.which("ldconfig") is None
                    and not os.path.exists("/sbin/ldconfig"), reason="no ld.so.cache / ldconfig here")
def test_ld_cache_matches_ldconfig():
    import platform

    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
    want = sorted(re.findall(r"^\s+(\S+) \((.*)\) => (\S+)$", out, re.MULTILINE))
    with open("/etc/ld.so.cache", "rb") as fh:
        got = loader.parse_ld_cache(fh.read(), platform.machine())
    label = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine())
    if label is None:
        pytest.skip(f"no ld.so.cache flag mapping for {platform.machine()}")
    mine = sorted((k, p) for k, v in got.items() for p in v)
    assert mine == sorted((n, p) for n, flags, p in want if label in flags) and len(mine) > 10


def test_ld_cache_errors():
    with pytest.raises(loader.CacheError):
        loader.parse_ld_cache(b"garbage")
    with pytest.raises(loader.CacheError):
        loader.parse_ld_cache(b"glibc-ld.so.cache1.1" + b"\0" * 10)


def test_resolution_order():
    files = {"/pkg/libtransfer_engine.so", "/ld/libtransfer_engine.so", "/run/libx.so", "/cache/liby.so", "/usr/lib/libz.so",
             "/lib/x86_64-linux-gnu/libm.so.6"}
    exists = files.__contains__
    cache = {"liby.so": ["/cache/liby.so"], "libtransfer_engine.so": ["/cache/libtransfer_engine.so"]}
    # RPATH ($ORIGIN) wins over LD_LIBRARY_PATH when there is no RUNPATH ...
    assert loader.resolve("libtransfer_engine.so", "/pkg/engine.so", ["$ORIGIN"], [], ["/ld"], cache, exists) == \
        ("/pkg/libtransfer_engine.so", "RPATH")
    # ... but RUNPATH comes after LD_LIBRARY_PATH, and disables RPATH.
    assert loader.resolve("libtransfer_engine.so", "/pkg/engine.so", ["$ORIGIN"], ["$ORIGIN"], ["/ld"], cache, exists) == \
        ("/ld/libtransfer_engine.so", "LD_LIBRARY_PATH")
    assert loader.resolve("libx.so", "/pkg/engine.so", [], ["/run"], [], cache, exists) == ("/run/libx.so", "RUNPATH")
    assert loader.resolve("liby.so", "/pkg/engine.so", [], [], ["/nowhere"], cache, exists) == ("/cache/liby.so", "ld.so.cache")
    assert loader.resolve("libz.so", "/pkg/engine.so", [], [], [], {}, exists) == ("/usr/lib/libz.so", "default")
    assert loader.resolve("libm.so.6", "/p/e.so", [], [], [], {}, exists, machine="x86_64")[1] == "default"
    # /usr/local/lib is NOT searched unless listed somewhere (the make-install trap).
    assert loader.resolve("ascend_transport.so", "/pkg/engine.so", [], [], [], {}, lambda p: p == "/usr/local/lib/ascend_transport.so") == (None, "")
