"""Device nodes (/dev/davinciN and the management nodes) and ``npu-smi info``."""
from __future__ import annotations

import posixpath
import re
import stat as stat_mod
from typing import Dict, List, Optional

from doctor.facts import DeviceNode, DevicesFacts, HostFacts
from doctor.shell.host.root import Host
from doctor.shell.runtime.prefetch import NPU_SMI_DIRS
from doctor.parse.npusmi import parse_npu_smi

MANAGEMENT = ("davinci_manager", "devmm_svm", "hisi_hdc")


def can_read_write(mode: int, uid: int, gid: int, my_uid: int, my_gids: List[int]) -> bool:
    """POSIX permission check from stat data (root bypasses it), so a fake host can model a
    non-root user in HwHiAiUser's group without actually being one."""
    if my_uid == 0:
        return True
    if uid == my_uid:
        need = stat_mod.S_IRUSR | stat_mod.S_IWUSR
    elif gid in my_gids:
        need = stat_mod.S_IRGRP | stat_mod.S_IWGRP
    else:
        need = stat_mod.S_IROTH | stat_mod.S_IWOTH
    return mode & need == need


def _node(host: Host, path: str, me: HostFacts, groups_by_gid: Dict[int, str]) -> DeviceNode:
    node = DeviceNode(path=path)
    st = host.stat(path)
    if st is None:
        return node
    node.exists = True
    node.mode, node.uid, node.gid = stat_mod.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    node.group = groups_by_gid.get(st.st_gid, str(st.st_gid))
    node.accessible = can_read_write(node.mode, node.uid, node.gid, me.uid, me.gids)
    return node


def probe_devices(host: Host, me: HostFacts, npu_smi_timeout: float, named: Optional[str] = None,
                  not_run: Optional[List[str]] = None) -> DevicesFacts:
    """The device nodes and ``npu-smi info``. An npu-smi found inside --root is not run (only
    one the user names with --npu-smi is): it goes to ``not_run``."""
    facts = DevicesFacts(npu_smi_timeout_s=npu_smi_timeout)
    groups_by_gid = {gid: name for name, gid in me.groups.items()}
    indices = sorted(int(m.group(1)) for m in (re.match(r"^davinci(\d{1,6})$", n) for n in host.listdir("/dev")) if m)
    facts.davinci = [_node(host, f"/dev/davinci{i}", me, groups_by_gid) for i in indices]
    facts.management = [_node(host, posixpath.join("/dev", n), me, groups_by_gid) for n in MANAGEMENT]
    path = named or host.which("npu-smi", NPU_SMI_DIRS)
    if path and not host.may_run(path):
        if not_run is not None:
            not_run.append(path)
        path = None
    facts.npu_smi_path = path
    if path:
        facts.npu_smi = host.run([path, "info"], timeout=npu_smi_timeout)
        if facts.npu_smi.stdout:
            facts.npu_smi_info = parse_npu_smi(facts.npu_smi.stdout)
    return facts
