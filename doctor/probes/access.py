"""Permission denied, told apart from "not there".

The driver installer makes its files readable by the HwHiAiUser group (and root); a user outside
that group sees an existing /usr/local/Ascend/driver/version.info or CANN directory refuse to
open. Reported as missing, that sends the user to reinstall or remount what is there; reported
as denied, with the path that refused and its group, it says what to do.
"""
from __future__ import annotations

import stat as stat_mod
from typing import Optional

from doctor.facts import DeniedPath, HostFacts
from doctor.shell.host.root import Host


def denied_path(host: Host, path: str, me: Optional[HostFacts]) -> Optional[DeniedPath]:
    """The denial that keeps ``path`` from being read, or None (readable or missing)."""
    refused = host.denied(path)
    if refused is None:
        return None
    out = DeniedPath(path=path, refused_by=refused)
    st = host.stat(refused)  # its parent may be searched: the stat itself is allowed
    if st is not None:
        out.is_dir = stat_mod.S_ISDIR(st.st_mode)
        out.mode, out.uid, out.gid = stat_mod.S_IMODE(st.st_mode), st.st_uid, st.st_gid
        by_gid = {gid: name for name, gid in (me.groups if me else {}).items()}
        out.group = by_gid.get(st.st_gid, "")
        out.owner = "root" if st.st_uid == 0 else str(st.st_uid)
    return out
