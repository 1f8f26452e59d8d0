"""Installed distributions, read from metadata files on the target's sys.path (through Host:
regular files only, capped; the parsing is doctor.parse.metadata)."""
from __future__ import annotations

from typing import Iterable

from doctor.facts import PackagesFacts
from doctor.parse import metadata
from doctor.shell.host.root import Host


def scan(host: Host, paths: Iterable[str]) -> PackagesFacts:
    return metadata.scan(paths, host)
