"""What was on disk before the install phase: every path (files and directories) under the
tracked roots. Anything found there afterwards that is not in the snapshot was made by the
transaction (including half-written files of a killed pip and pip's own ~-prefixed stash
directories), and goes on undo. Read back, a snapshot is checked against the roots the doctor
computes: its own list of roots is never believed."""
from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from doctor.shell.transaction.files import restore_files
from doctor.shell.transaction.roots import Roots
from doctor.shell.transaction.statedir import read_state, write_new

MAX_SNAPSHOT = 512 * 1024 * 1024


@dataclass
class Snapshot:
    roots: List[str]
    files: Set[str]
    dirs: Set[str]

    @classmethod
    def take(cls, roots: Iterable[str]) -> "Snapshot":
        files: Set[str] = set()
        dirs: Set[str] = set()
        real_roots = [r for r in dict.fromkeys(os.path.normpath(r) for r in roots) if os.path.isdir(r)]
        for root in real_roots:
            for dirpath, dirnames, filenames in os.walk(root):
                dirs.add(dirpath)
                for f in filenames:
                    files.add(os.path.join(dirpath, f))
                for dname in dirnames:  # symlinks to directories are files for our purpose
                    p = os.path.join(dirpath, dname)
                    if os.path.islink(p):
                        files.add(p)
        return cls(real_roots, files, dirs)

    def new_paths(self) -> Tuple[List[str], List[str]]:
        now = Snapshot.take(self.roots)
        return sorted(now.files - self.files), sorted(now.dirs - self.dirs)

    def to_json(self) -> Dict:
        return {"roots": self.roots, "files": sorted(self.files), "dirs": sorted(self.dirs)}

    def save(self, path: Path) -> None:
        """Written once (O_EXCL) and synced before the install phase depends on it."""
        write_new(path, json.dumps(self.to_json()).encode("utf-8"))

    @classmethod
    def load(cls, path: Path, roots: Roots) -> Tuple[Optional["Snapshot"], Optional[str]]:
        """(snapshot, None), or (None, why it cannot be trusted). Its roots must be the tracked
        roots the doctor computes now, and every path in it must lie below them."""
        try:
            raw = read_state(path, MAX_SNAPSHOT)
        except OSError as e:
            return None, f"its snapshot.json cannot be read: {e}"
        if raw is None:
            return None, "it has no snapshot.json (the list of what was on disk)"
        try:
            data = json.loads(raw.decode("utf-8"))
            listed = [os.path.normpath(r) for r in data["roots"]]
            files, dirs = data["files"], data["dirs"]
            if not all(isinstance(x, str) for x in list(files) + list(dirs)):
                raise TypeError("not a list of paths")
        except (ValueError, UnicodeDecodeError, RecursionError, KeyError, TypeError) as e:
            return None, f"its snapshot.json is damaged: {str(e)[:80]}"
        tracked = [r for r in roots.tracked if os.path.isdir(r)]
        if sorted(set(listed)) != sorted(set(tracked)):
            return None, (f"its snapshot.json lists other directories ({', '.join(listed[:3])}) than this "
                          f"environment's ({', '.join(tracked[:3])})")
        # the files it lists are only ever kept; its directories are made again, so they must lie inside
        for p in dirs:
            if p not in tracked and not roots.inside_tracked(p):
                return None, f"its snapshot.json names {p[:200]}, outside this environment"
        return cls(tracked, set(files), set(dirs)), None


def undo_to_snapshot(snapshot: Snapshot, backed_up: Iterable[str], backup_root: Path, roots: Roots) -> List[str]:
    """Delete what the transaction added under the tracked roots, then put every backed-up file
    back. Returns what could not be done ("cannot delete X", "cannot restore X")."""
    new_files, new_dirs = snapshot.new_paths()
    failed: List[str] = []
    for f in new_files:
        try:
            if os.path.isdir(f) and not os.path.islink(f):
                shutil.rmtree(f)
            else:
                os.unlink(f)
        except FileNotFoundError:
            pass
        except OSError:
            failed.append(f"cannot delete {f}")
    for d in sorted(new_dirs, key=len, reverse=True):
        shutil.rmtree(d, ignore_errors=True)
        if os.path.isdir(d):
            failed.append(f"cannot delete {d}/")
    failed += [f"cannot restore {f}" for f in restore_files(backed_up, backup_root, roots)]
    for d in sorted(snapshot.dirs):  # empty directories an uninstall removed
        if not os.path.isdir(d):
            try:
                os.makedirs(d, exist_ok=True)
            except OSError:
                failed.append(f"cannot recreate {d}/")
    return failed
