"""Library names that matter for Mooncake on Ascend (docs/sources/mooncake.md: install, transport)."""
from __future__ import annotations

# Mooncake's own shared objects (source installs put them in <prefix>/lib; the wheel in mooncake/).
MOONCAKE_LIBS = ("libtransfer_engine", "ascend_transport", "libmooncake", "libasio_shared", "libetcd_wrapper")
# CANN libraries the Ascend transport links (the wheel excludes them: CANN must provide them).
CANN_LIBS = ("libascendcl", "libllm_datadist", "libmetadef", "libgraph", "libgraph_base", "libhccl", "libhixl",
             "libadxl", "libruntime", "libge_", "libc_sec", "libmmpa", "libplatform", "libregister",
             "liberror_manager", "libascendalog", "libprofapi", "libmsprofiler", "libascend_protobuf")
ASCEND_DEPS = ("libascendcl", "libllm_datadist", "libhixl", "libadxl")
CUDA_DEPS = ("libcudart", "libcuda.", "libnvidia", "libcublas", "libnccl")


def lib_base(name: str) -> str:
    """``libascendcl.so.1`` -> ``libascendcl``."""
    return name.split(".so")[0]


def is_mooncake_lib(name: str) -> bool:
    return lib_base(name).startswith(MOONCAKE_LIBS)


def is_cann_lib(name: str) -> bool:
    return lib_base(name).startswith(CANN_LIBS)


def interesting(name: str) -> bool:
    return is_mooncake_lib(name) or is_cann_lib(name)
