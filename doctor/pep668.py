"""PEP 668 in pip's terms: which option a pip run needs to change an externally managed
interpreter. Pure: the facts (the marker, pip's version) come from the probes."""
from __future__ import annotations

from typing import List, Optional

# pip 23.0 refuses to change an interpreter marked EXTERNALLY-MANAGED (PEP 668) and documents
# --break-system-packages as the way to do it anyway (pip.pypa.io/en/stable/cli/pip_install/);
# older pips ignore the marker and do not know the option
BREAK_SYSTEM = "--break-system-packages"
BREAK_SYSTEM_SINCE = (23, 0)


def break_system(externally_managed: bool, pip_version: Optional[str]) -> List[str]:
    """The option a pip install/uninstall needs to change the judged interpreter: the flag for an
    externally managed one, when the pip that runs it enforces the marker."""
    if not externally_managed or not pip_version:
        return []
    try:
        parts = tuple(int(x) for x in pip_version.split(".")[:2])
    except ValueError:
        return [BREAK_SYSTEM]
    parts = (parts + (0, 0))[:2]  # "23" is 23.0 (a tuple (23,) sorts before (23, 0))
    return [BREAK_SYSTEM] if parts >= BREAK_SYSTEM_SINCE else []
