"""Who and where the doctor runs: user, groups, machine, container."""
from __future__ import annotations

import os
import sys

from doctor.facts import HostFacts
from doctor.shell.host.root import Host


def _groups(host: Host) -> dict:
    text = host.read_text("/etc/group") or ""
    out = {}
    for line in text.splitlines():
        bits = line.split(":")
        if len(bits) >= 3 and bits[2].isdigit() and len(bits[2]) <= 10:
            out[bits[0]] = int(bits[2])
    return out


def probe_host(host: Host) -> HostFacts:
    import pwd

    # The effective ids: they decide what this process may open (a doctor run through sudo -u
    # or a setuid wrapper reads as that user).
    uid = os.geteuid()
    try:
        user = pwd.getpwuid(uid).pw_name
    except KeyError:  # no passwd entry in a container: the uid is what matters
        user = str(uid)
    gids = sorted(set([os.getegid()] + os.getgroups()))
    in_container = host.exists("/.dockerenv") or host.exists("/run/.containerenv")
    return HostFacts(
        root=str(host.root), cwd=host.cwd, uid=uid, gids=gids, user=user,
        groups=_groups(host), machine=os.uname().machine, in_container=in_container, doctor_python=sys.executable,
    )
