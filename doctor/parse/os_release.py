"""/etc/os-release: which package manager the distribution has (pure: text in)."""
from __future__ import annotations

import re

APT, YUM = "apt", "yum"


def os_family(os_release: str) -> str:
    """``apt`` (Debian, Ubuntu), ``yum`` (openEuler, EulerOS, CentOS, RHEL and kin) or ``""``,
    from the ID and ID_LIKE lines."""
    ids = " ".join(re.findall(r"^(?:ID|ID_LIKE)=\"?([^\"\n]*)", os_release or "", re.MULTILINE)).lower()
    if any(w in ids for w in ("debian", "ubuntu")):
        return APT
    if any(w in ids for w in ("rhel", "centos", "fedora", "euleros", "openeuler", "rocky", "almalinux")):
        return YUM
    return ""
