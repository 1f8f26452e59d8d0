"""The places a transaction may change, computed by the doctor from the target environment and
never read from the journal: a planted journal naming ``/etc`` as a root, or backups of files
outside the environment, is refused (issue 21)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence, Tuple

# Where a source build (Mooncake's ``make install``) puts its native libraries and programs:
# the build's default CMAKE_INSTALL_PREFIX. The environment's own prefix is allowed as well.
INSTALL_PREFIXES = ("/usr/local",)


def _norm(p: str) -> str:
    return os.path.normpath(os.path.abspath(p))


def _under(path: str, root: str) -> bool:
    return path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class Roots:
    tracked: Tuple[str, ...]  # listed whole before the install phase (site directories, a venv's bin/)
    allowed: Tuple[str, ...]  # where anything may be written or deleted (tracked ones included)

    @classmethod
    def of(cls, site_dirs: Sequence[str], prefix: str, scripts_dir: "str | None",
           install_prefixes: Sequence[str] = ()) -> "Roots":
        tracked = [_norm(d) for d in site_dirs] + ([_norm(scripts_dir)] if scripts_dir else [])
        allowed = tracked + [_norm(os.path.join(prefix, "bin"))] + [_norm(p) for p in INSTALL_PREFIXES] + \
            [_norm(prefix)] + [_norm(p) for p in install_prefixes]
        return cls(tuple(dict.fromkeys(tracked)), tuple(dict.fromkeys(allowed)))

    def inside(self, path: str, roots: "Iterable[str] | None" = None) -> bool:
        """``path`` lies below one of the roots, both as written and once the symlinks of its
        parent directories are resolved (a planted ``site-packages/x -> /etc`` leads outside)."""
        if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
            return False
        p = os.path.normpath(path)
        if p != path:
            return False  # "..", "//" or "." components: not a path the doctor wrote
        for root in (self.allowed if roots is None else tuple(roots)):
            if _under(p, root) and _under(os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p)),
                                          os.path.realpath(root)):
                return True
        return False

    def inside_tracked(self, path: str) -> bool:
        return self.inside(path, self.tracked)
