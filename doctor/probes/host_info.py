"""Who and where the doctor runs: user, groups, machine, container."""
from __future__ import annotations

import os

from doctor.facts import HostFacts
from doctor.shell.host import Host


def _groups(host: Host) -> dict:
    text = host.read_text("/etc/group") or ""
    out = {}
    for line in text.splitlines():
        bits = line.split(":")
        if len(bits) >= 3 and bits[2].isdigit() and len(bits[2]) <= 10:
            out[bits[0]] = int(bits[2])
    return out


def probe_host(host: Host) -> HostFacts:
    import getpass

    try:
        user = getpass.getuser()
    except Exception:  # no passwd entry in a container: the uid is what matters
        user = str(os.getuid())
    gids = sorted(set([os.getgid()] + os.getgroups()))
    in_container = host.exists("/.dockerenv") or host.exists("/run/.containerenv")
    return HostFacts(
        root=str(host.root), cwd=host.cwd, uid=os.getuid(), gids=gids, user=user,
        groups=_groups(host), machine=os.uname().machine, in_container=in_container,
    )
