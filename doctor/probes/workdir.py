"""Source folders in the working directory that shadow installed packages.

``python -m ...`` and ``python script.py`` put the working directory first on sys.path, so a
``vllm`` checkout folder there wins over the installed vllm ("cannot import name ... from 'vllm'
(unknown location)" when it is the repository root without __init__.py).
"""
from __future__ import annotations

import os
from typing import Optional

from doctor.facts import PackagesFacts, ShadowFact, WorkdirFacts, canonical
from doctor.shell.host.root import Host

WATCHED = ("vllm", "vllm_ascend", "torch", "torch_npu", "mooncake", "triton")


def _installed_dir(packages: Optional[PackagesFacts], module: str) -> Optional[str]:
    if packages is None:
        return None
    dist = packages.dists.get(canonical(module))
    if dist is None:
        return None
    if dist.editable and dist.direct_url and dist.direct_url.startswith("file://"):
        return os.path.join(dist.direct_url[len("file://"):], module)
    return os.path.join(dist.location, module)


def probe_workdir(host: Host, cwd: str, packages: Optional[PackagesFacts]) -> WorkdirFacts:
    """``host`` reads the live file system: the working directory is the doctor's own."""
    facts = WorkdirFacts(cwd=cwd)
    for name in WATCHED:
        path = os.path.join(cwd, name)
        if not host.is_dir(path):
            continue
        installed = _installed_dir(packages, name)
        same = bool(installed and host.realpath(installed) == host.realpath(path))
        facts.shadows.append(ShadowFact(
            name=name, path=path, is_package=host.exists(os.path.join(path, "__init__.py")),
            same_as_installed=same,
        ))
    return facts
