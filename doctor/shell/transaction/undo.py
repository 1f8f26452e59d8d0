"""Undoing a transaction's changes, shared by a failed fix --apply (engine), a killed one that
``rollback`` finishes, and the rollback of a committed one: each path checked against the roots
the doctor computes for the environment."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from doctor.facts import Distribution
from doctor.shell.transaction import journal as J
from doctor.shell.transaction.files import remove_tree
from doctor.shell.transaction.roots import Roots


def undo_placed(journal: J.Journal, roots: Roots) -> List[str]:
    """Delete what a staged install put in place (each path checked against the roots)."""
    problems = []
    for dest in reversed(journal.data.get("placed") or []):
        if not roots.inside(dest):
            problems.append(f"not deleted (outside this environment): {dest}")
        elif not remove_tree(dest, roots):
            problems.append(f"cannot delete {dest}")
    return problems


def remove_made_dirs(journal: J.Journal, roots: Roots) -> List[str]:
    for d in sorted(journal.data.get("made_dirs") or [], key=len, reverse=True):
        if roots.inside(d) and os.path.isdir(d) and not os.path.islink(d):
            try:
                os.rmdir(d)
            except OSError:
                pass
    return []


def diff_dists(want: Dict[str, Optional[str]], have: Dict[str, Distribution]) -> List[str]:
    out = []
    for name in sorted(set(want) | set(have)):
        a = want.get(name)
        b = have[name].version if name in have else None
        if a != b:
            out.append(f"{name}: {b or 'missing'} instead of {a or 'absent'}")
    return out


def prune_old_backups(state: Path, keep: str) -> None:
    """Only the last committed transaction can be rolled back; the backups and downloads of
    older transactions that are over go. Never those of a transaction that is unfinished, whose
    rollback failed, or whose journal cannot be trusted: they are what `rollback` restores from."""
    for t in J.transactions(state):
        if isinstance(t, J.Damaged) or t.id == keep or not t.status.final:
            continue
        for sub in ("backup", "wheels", "stage"):
            shutil.rmtree(t.dir / sub, ignore_errors=True)


def changes(now: Dict[str, Distribution],
            final: Dict[str, Distribution]) -> Dict[str, Tuple[Optional[str], Optional[str]]]:
    return {n: (now[n].version if n in now else None, final[n].version if n in final else None)
            for n in sorted(set(now) | set(final))
            if (now[n].version if n in now else None) != (final[n].version if n in final else None)}
