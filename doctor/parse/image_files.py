"""Which files of an image the probes read, decided from the path alone while a layer streams by.

An image is never extracted: the reader keeps the content of the few files the probes open and
notes the existence of a few more (libraries the loader lookups test for, interpreters on PATH).
Everything else is metadata in the tree. The rules are path patterns, not the merged state, so
they work whatever order the layers arrive in (``docker save`` streams blobs before its manifest).
"""
from __future__ import annotations

import posixpath
import re
from typing import Iterable, Optional

from doctor.parse.libnames import interesting, is_mooncake_lib, lib_base

TEXT, BINARY, EXISTS = "text", "binary", "exists"
TEXT_MAX = 4 * 1024 * 1024  # a METADATA or RECORD is well below; bigger "text" files are not what we look for
BINARY_MAX = 1024 * 1024 * 1024  # a Mooncake transfer engine with debug info is a few hundred MB

_DIST_FILES = {"METADATA", "INSTALLER", "direct_url.json", "entry_points.txt", "top_level.txt", "REQUESTED"}
_EGG_FILES = {"PKG-INFO", "requires.txt", "entry_points.txt", "top_level.txt"}
_VENDOR_NAMES = {"version.info", "version.cfg", "set_env.sh", "ascend_install.info", "ascend_toolkit_install.info",
                 "ascend_ops_install.info", "ascend_nnal_install.info", "pyvenv.cfg", "patchlevel.h"}
_ETC = {"/etc/group", "/etc/passwd", "/etc/os-release", "/usr/lib/os-release", "/etc/ld.so.cache",
        "/etc/ld.so.conf", "/etc/pip.conf", "/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/environment",
        "/etc/ascend_install.info", "/etc/debian_version", "/etc/openEuler-release", "/etc/redhat-release"}
_HOME_FILES = {".bashrc", ".profile", ".bash_profile"}
_INTERPRETER = re.compile(r"^python(3(\.\d+)?)?$")
_LIBC = re.compile(r"^(libc\.so\.6|libc-\d+\.\d+\.so|ld-musl-[\w]+\.so\.1)$")
_SO = re.compile(r"\.so(\.\d+)*$")
_DRIVER_LIBS = ("libascend_hal", "libdcmi")  # the driver probe tests that they exist
# Python files a probe opens: package markers (shadowing, mooncake), torch's build, the KV
# connector registries of vllm-ascend and vLLM.
_PY = re.compile(r"/(?:(?:vllm|vllm_ascend|torch|torch_npu|mooncake|triton)/__init__\.py"
                 r"|torch/version\.py"
                 r"|vllm_ascend/distributed/(?:[\w/]+/)?\w+\.py"
                 r"|vllm/distributed/kv_transfer/kv_connector/factory\.py)$")


def want(path: str, extra: Iterable[str] = ()) -> Optional[str]:
    """TEXT (keep the content), BINARY (keep the content, larger cap), EXISTS (note it exists)
    or None. ``extra`` are exact paths from the image config (MOONCAKE_CONFIG_PATH ...)."""
    base = posixpath.basename(path)
    parent = posixpath.dirname(path)
    pbase = posixpath.basename(parent)
    if pbase.endswith(".dist-info"):
        if base in _DIST_FILES or (base == "RECORD" and pbase.lower().startswith("mooncake")):
            return TEXT
        return None
    if pbase.endswith(".egg-info"):
        return TEXT if base in _EGG_FILES else None
    if base.endswith(".egg-info") or (base.endswith(".pth") and pbase in ("site-packages", "dist-packages")):
        return TEXT
    if base in _VENDOR_NAMES or path in _ETC or path.startswith(("/etc/ld.so.conf.d/", "/etc/profile.d/")):
        return TEXT
    if base in _HOME_FILES and (parent == "/root" or parent.startswith("/home/")):
        return TEXT
    if path in extra:
        return TEXT
    if _PY.search(path):
        return TEXT
    if _SO.search(base):
        if is_mooncake_lib(base) or (pbase == "mooncake" and base.startswith(("engine", "store"))):
            return BINARY
        if _LIBC.match(base):
            return BINARY
        if interesting(base) or lib_base(base) in _DRIVER_LIBS or pbase == "mooncake" or base == "libjemalloc.so.2":
            return EXISTS  # the loader lookups and the CANN/driver probes test that they exist
        return None
    if _LIBC.match(base):
        return BINARY
    if pbase == "mooncake":
        return EXISTS  # the probe lists the package's files
    if pbase == "bin" and _INTERPRETER.match(base):
        return EXISTS
    return None
