"""Source files a vllm-ascend install has where its KV connectors are registered.

The doctor reads the registered connector names from the installed package's source (it never
imports it), so the stub vllm-ascend carries files of the same shape: a ``register_connector()``
calling ``KVConnectorFactory.register_connector("Name", "module", "Class")`` in
``vllm_ascend/distributed/__init__.py`` (<= v0.14) or ``.../distributed/kv_transfer/__init__.py``
(>= v0.15), and the modules it names. Which names each release registers was read from the
vllm-project/vllm-ascend tags (v0.11.0rc3, v0.13.0, v0.15.0rc1 ... v0.25.1rc1).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from packaging.version import Version

OLD = "vllm_ascend.distributed"
NEW = "vllm_ascend.distributed.kv_transfer"


def registrations(version: str) -> List[Tuple[str, str, str]]:
    v = Version(version)
    if v < Version("0.10.2rc1"):
        return []
    if v < Version("0.12.0rc1"):
        out = [("LLMDataDistCMgrConnector", f"{OLD}.llmdatadist_c_mgr_connector", "LLMDataDistCMgrConnector"),
               ("MooncakeConnectorV1", f"{OLD}.mooncake_connector", "MooncakeConnector")]
        if v >= Version("0.11.0rc0"):
            out.append(("MooncakeConnectorStoreV1", f"{OLD}.mooncake.mooncake_store_connector_v1", "MooncakeConnectorV1"))
        if v >= Version("0.11.0rc1"):
            out.append(("MooncakeLayerwiseConnector", f"{OLD}.mooncake_layerwise_connector", "MooncakeLayerwiseConnector"))
        return out
    if v < Version("0.15.0rc1"):
        pool = f"{OLD}.kvpool.ascend_store_connector" if v < Version("0.14.0rc1") else \
            f"{NEW}.kv_pool.ascend_store.ascend_store_connector"
        return [("MooncakeConnectorV1", f"{OLD}.mooncake_connector", "MooncakeConnector"),
                ("MooncakeConnectorStoreV1", pool, "AscendStoreConnector"),
                ("AscendStoreConnector", pool, "AscendStoreConnector"),
                ("MooncakeLayerwiseConnector", f"{OLD}.mooncake_layerwise_connector", "MooncakeLayerwiseConnector"),
                ("UCMConnector", f"{OLD}.ucm_connector", "UCMConnectorV1")]
    pool = f"{NEW}.kv_pool.ascend_store.ascend_store_connector"
    out = [("MooncakeConnectorV1", f"{NEW}.kv_p2p.mooncake_connector", "MooncakeConnector")]
    if v >= Version("0.18.0rc1"):
        out.insert(0, ("MultiConnector", f"{NEW}.ascend_multi_connector", "AscendMultiConnector"))
    if v >= Version("0.20.2rc1"):
        out.append(("MooncakeHybridConnector", f"{NEW}.kv_p2p.mooncake_hybrid_connector", "MooncakeConnector"))
    out += [("MooncakeConnectorStoreV1", pool, "AscendStoreConnector"),
            ("AscendStoreConnector", pool, "AscendStoreConnector"),
            ("MooncakeLayerwiseConnector", f"{NEW}.kv_p2p.mooncake_layerwise_connector", "MooncakeLayerwiseConnector"),
            ("UCMConnector", f"{NEW}.kv_pool.ucm_connector", "UCMConnectorV1")]
    if Version("0.18.0") <= v < Version("0.24.0rc1"):
        out.append(("LMCacheAscendConnector", f"{NEW}.kv_pool.lmcache_ascend_connector", "LMCacheConnectorV1"))
    return out


def source_files(version: str) -> Dict[str, str]:
    """relative path -> text, for a stub vllm-ascend of this version."""
    regs = registrations(version)
    if not regs:
        return {}
    new = Version(version) >= Version("0.15.0rc1")
    register = "vllm_ascend/distributed/kv_transfer/__init__.py" if new else "vllm_ascend/distributed/__init__.py"
    body = ["from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory", "", "",
            "def register_connector():"]
    for name, module, cls in regs:
        body.append(f'    KVConnectorFactory.register_connector(\n        "{name}", "{module}", "{cls}")')
    files: Dict[str, str] = {}
    for _name, module, cls in regs:
        parts = module.split(".")
        for i in range(2, len(parts)):
            files.setdefault("/".join(parts[:i]) + "/__init__.py", "")
        files["/".join(parts) + ".py"] = f"class {cls}:\n    pass\n"
    files[register] = "\n".join(body) + "\n"
    return files
