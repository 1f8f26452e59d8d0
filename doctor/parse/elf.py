"""A small ELF reader: the dynamic section (NEEDED, SONAME, RPATH, RUNPATH) of a shared object.

Enough to tell an Ascend build of Mooncake from a CUDA one and to follow what the loader will
look for, without loading the library (which is what ``import mooncake`` would do, and may be
the thing that crashes). Handles 32/64-bit and both byte orders; never raises past ElfError.
Pure: it reads an opened, seekable file or bytes it is given (``doctor.shell.host.files.read_elf``
opens a path, regular files only).
"""
from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, List, Optional, Tuple

PT_LOAD, PT_DYNAMIC = 1, 2
SHT_DYNAMIC = 6
DT_NULL, DT_NEEDED, DT_STRTAB, DT_STRSZ, DT_SONAME, DT_RPATH, DT_RUNPATH = 0, 1, 5, 10, 14, 15, 29
MACHINES = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv"}
MAX_HEADERS = 4096


class ElfError(ValueError):
    pass


@dataclass
class ElfInfo:
    bits: int
    machine: str
    soname: Optional[str] = None
    needed: List[str] = field(default_factory=list)
    rpath: List[str] = field(default_factory=list)
    runpath: List[str] = field(default_factory=list)


def _read(fh: BinaryIO, offset: int, size: int) -> bytes:
    fh.seek(offset)
    data = fh.read(size)
    if len(data) != size:
        raise ElfError("truncated file")
    return data


def read_elf_bytes(data: bytes) -> ElfInfo:
    """The dynamic section of a shared object held in memory."""
    return read_elf_file(io.BytesIO(data))


def read_elf_file(fh: BinaryIO) -> ElfInfo:
    """The dynamic section of an opened (seekable) file: anything with ``seek`` and ``read``."""
    try:
        return _parse(fh)
    except OSError as e:
        raise ElfError(e.strerror or str(e)) from None
    except struct.error as e:
        raise ElfError(f"malformed: {e}") from None


def _parse(fh: BinaryIO) -> ElfInfo:
    ident = fh.read(16)
    if len(ident) < 16 or ident[:4] != b"\x7fELF":
        raise ElfError("not an ELF file")
    bits = {1: 32, 2: 64}.get(ident[4])
    order = {1: "<", 2: ">"}.get(ident[5])
    if bits is None or order is None:
        raise ElfError("unknown ELF class or byte order")
    if bits == 64:
        head = struct.unpack(order + "HHIQQQIHHHHHH", _read(fh, 16, 48))
    else:
        head = struct.unpack(order + "HHIIIIIHHHHHH", _read(fh, 16, 36))
    _type, machine, _version, _entry, phoff, shoff, _flags, _ehsize, phentsize, phnum, shentsize, shnum, _shstrndx = head
    info = ElfInfo(bits=bits, machine=MACHINES.get(machine, str(machine)))
    loads, dynamic = _program_headers(fh, order, bits, phoff, phentsize, phnum)
    strtab_file: Optional[int] = None
    if dynamic is None:
        dynamic, strtab_file = _section_dynamic(fh, order, bits, shoff, shentsize, shnum)
    if dynamic is None:
        return info  # a static executable or an object file: no dependencies
    entries = _dynamic_entries(fh, order, bits, *dynamic)
    strtab = next((v for t, v in entries if t == DT_STRTAB), None)
    strsz = next((v for t, v in entries if t == DT_STRSZ), 0)
    if strtab_file is None:
        if strtab is None:
            raise ElfError("dynamic section without a string table")
        strtab_file = _to_offset(loads, strtab)
    if strtab_file is None:
        raise ElfError("string table outside every loadable segment")
    table = _read(fh, strtab_file, strsz) if strsz else b""

    def string(off: int) -> str:
        end = table.find(b"\0", off)
        if off >= len(table) or end < 0:
            raise ElfError("string offset outside the string table")
        return table[off:end].decode("utf-8", errors="replace")

    for tag, value in entries:
        if tag == DT_NEEDED:
            info.needed.append(string(value))
        elif tag == DT_SONAME:
            info.soname = string(value)
        elif tag == DT_RPATH:
            info.rpath.extend(p for p in string(value).split(":") if p)
        elif tag == DT_RUNPATH:
            info.runpath.extend(p for p in string(value).split(":") if p)
    return info


# (virtual address, file offset, size in the file) of a PT_LOAD segment; (file offset, size)
Load = Tuple[int, int, int]
Span = Tuple[int, int]


def _program_headers(fh: BinaryIO, order: str, bits: int, phoff: int, phentsize: int,
                     phnum: int) -> Tuple[List[Load], Optional[Span]]:
    loads: List[Load] = []
    dynamic: Optional[Span] = None
    if not phoff or not phnum or phnum > MAX_HEADERS:
        return loads, None
    fmt = order + ("IIQQQQQQ" if bits == 64 else "IIIIIIII")
    size = struct.calcsize(fmt)
    if phentsize < size:
        raise ElfError("program header entries too small")
    for i in range(phnum):
        raw = struct.unpack(fmt, _read(fh, phoff + i * phentsize, size))
        if bits == 64:
            p_type, _flags, offset, vaddr, _paddr, filesz, _memsz, _align = raw
        else:
            p_type, offset, vaddr, _paddr, filesz, _memsz, _flags, _align = raw
        if p_type == PT_LOAD:
            loads.append((vaddr, offset, filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (offset, filesz)
    return loads, dynamic


def _section_dynamic(fh: BinaryIO, order: str, bits: int, shoff: int, shentsize: int,
                     shnum: int) -> Tuple[Optional[Span], Optional[int]]:
    """Fallback for files without program headers: SHT_DYNAMIC and its linked string table."""
    if not shoff or not shnum or shnum > MAX_HEADERS:
        return None, None
    fmt = order + ("IIQQQQIIQQ" if bits == 64 else "IIIIIIIIII")
    size = struct.calcsize(fmt)
    sections = [struct.unpack(fmt, _read(fh, shoff + i * shentsize, size)) for i in range(shnum)]
    for sec in sections:
        if sec[1] == SHT_DYNAMIC:
            link = sec[6]
            if link >= len(sections):
                raise ElfError("dynamic section links to a missing string table")
            return (sec[4], sec[5]), sections[link][4]
    return None, None


def _dynamic_entries(fh: BinaryIO, order: str, bits: int, offset: int, size: int) -> List[Tuple[int, int]]:
    fmt = order + ("qQ" if bits == 64 else "iI")
    step = struct.calcsize(fmt)
    data = _read(fh, offset, min(size, step * 65536))
    out = []
    for i in range(0, len(data) - step + 1, step):
        tag, value = struct.unpack_from(fmt, data, i)
        if tag == DT_NULL:
            break
        out.append((tag, value))
    return out


def _to_offset(loads: Iterable[Load], vaddr: int) -> Optional[int]:
    for start, offset, filesz in loads:
        if start <= vaddr < start + filesz:
            return offset + (vaddr - start)
    return None
