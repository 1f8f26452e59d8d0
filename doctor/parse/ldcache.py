"""Where the dynamic loader will find a library, following ld.so(8):

DT_RPATH (only when there is no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, then
the default directories. ``$ORIGIN`` is the directory of the object that needs the library.
The cache is what ``ldconfig`` wrote: a directory listed in ld.so.conf does not help until
``ldconfig`` has run, which is exactly the `make install` trap (vllm-ascend #6949).
"""
from __future__ import annotations

import posixpath
import struct
from typing import Callable, Dict, List, Optional, Sequence, Tuple

CACHE_MAGIC = b"glibc-ld.so.cache1.1"
OLD_MAGIC = b"ld.so-1.7.0"
# ld.so.cache entry flags for 64-bit libc6 libraries, by machine.
ARCH_FLAGS = {"x86_64": 0x0300, "aarch64": 0x0A00}
DEFAULT_DIRS = {64: ("/lib64", "/usr/lib64", "/lib", "/usr/lib"), 32: ("/lib", "/usr/lib")}
MULTIARCH = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


class CacheError(ValueError):
    pass


def parse_ld_cache(data: bytes, machine: Optional[str] = None) -> Dict[str, List[str]]:
    """soname -> paths from the new-format cache (also when it follows an old-format one)."""
    start = data.find(CACHE_MAGIC)
    if start < 0:
        if data.startswith(OLD_MAGIC):
            raise CacheError("old-format (libc5-era) ld.so.cache only")
        raise CacheError("not an ld.so.cache")
    if len(data) < start + 48:
        raise CacheError("truncated ld.so.cache")
    # The flags byte says the byte order (2 = little endian, 3 = big endian; 0 = host).
    order = ">" if data[start + 28] == 3 else "<"
    nlibs, _len_strings = struct.unpack_from(order + "II", data, start + 20)
    want = ARCH_FLAGS.get(machine or "")
    out: Dict[str, List[str]] = {}
    entry = start + 48
    if entry + nlibs * 24 > len(data):
        raise CacheError("truncated ld.so.cache")
    for i in range(nlibs):
        flags, key, value, _osv, _hwcap = struct.unpack_from(order + "iIIIQ", data, entry + i * 24)
        if want is not None and (flags & 0xFF00) != want:
            continue
        name, path = _cstr(data, start + key), _cstr(data, start + value)
        if name and path:
            out.setdefault(name, []).append(path)
    return out


def _cstr(data: bytes, offset: int) -> str:
    if offset >= len(data):
        return ""
    end = data.find(b"\0", offset)
    return data[offset:end if end >= 0 else len(data)].decode("utf-8", errors="replace")


def expand_origin(entry: str, origin: str) -> str:
    return entry.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)


def search_order(obj_path: str, rpath: Sequence[str], runpath: Sequence[str], ld_library_path: Sequence[str],
                 bits: int = 64, machine: Optional[str] = None) -> List[Tuple[str, str]]:
    """(directory, how) in the order ld.so tries them, before and after the cache."""
    origin = posixpath.dirname(obj_path)
    dirs: List[Tuple[str, str]] = []
    if not runpath:
        dirs += [(expand_origin(d, origin), "RPATH") for d in rpath]
    dirs += [(d, "LD_LIBRARY_PATH") for d in ld_library_path if d]
    dirs += [(expand_origin(d, origin), "RUNPATH") for d in runpath]
    return dirs


def default_dirs(bits: int = 64, machine: Optional[str] = None) -> List[str]:
    out = []
    triplet = MULTIARCH.get(machine or "")
    if triplet:
        out += [f"/lib/{triplet}", f"/usr/lib/{triplet}"]
    return out + list(DEFAULT_DIRS.get(bits, DEFAULT_DIRS[64]))


def resolve(name: str, obj_path: str, rpath: Sequence[str], runpath: Sequence[str], ld_library_path: Sequence[str],
            cache: Dict[str, List[str]], exists: Callable[[str], bool], bits: int = 64,
            machine: Optional[str] = None) -> Tuple[Optional[str], str]:
    """(path, how) where the loader finds ``name`` for the object at ``obj_path``, or (None, "")."""
    if "/" in name:
        return (name, "path") if exists(name) else (None, "")
    for d, how in search_order(obj_path, rpath, runpath, ld_library_path, bits, machine):
        candidate = posixpath.join(d, name)
        if exists(candidate):
            return candidate, how
    for path in cache.get(name, []):
        if exists(path):
            return path, "ld.so.cache"
    for d in default_dirs(bits, machine):
        candidate = posixpath.join(d, name)
        if exists(candidate):
            return candidate, "default"
    return None, ""
