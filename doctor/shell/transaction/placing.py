"""A staged install tree (``make install DESTDIR=stage``) as the units a transaction puts in
place: files and links one by one, a Python package directory (``mooncake/``) as a whole, so a
module the new build no longer has does not stay behind."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Tuple

Unit = Tuple[str, str, bool]  # (staged path, destination, a whole package directory)
PACKAGES = ("mooncake",)


def units(stage: Path) -> List[Unit]:
    out: List[Unit] = []
    for dirpath, dirnames, filenames in os.walk(stage):
        rel = os.path.relpath(dirpath, stage)
        dest_dir = "/" + ("" if rel == "." else rel)
        keep = []
        for d in sorted(dirnames):
            src = os.path.join(dirpath, d)
            dest = os.path.join(dest_dir, d)
            if d in PACKAGES and os.path.isfile(os.path.join(src, "__init__.py")) and not os.path.islink(src):
                out.append((src, dest, True))
            elif os.path.islink(src):
                out.append((src, dest, False))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            out.append((os.path.join(dirpath, f), os.path.join(dest_dir, f), False))
    return out


def existing_files(todo: List[Unit]) -> List[str]:
    """What the units replace: the files (and links) now at their destinations."""
    out: List[str] = []
    for _src, dest, whole in todo:
        if whole and os.path.isdir(dest) and not os.path.islink(dest):
            for dirpath, dirnames, filenames in os.walk(dest):
                for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                    out.append(os.path.join(dirpath, name))
        elif os.path.lexists(dest) and not (os.path.isdir(dest) and not os.path.islink(dest)):
            out.append(dest)
    return out


def put(src: str, dest: str, whole: bool) -> None:
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    if os.path.isdir(dest) and not os.path.islink(dest):
        if not whole:
            raise IsADirectoryError(f"a directory is where the build puts a file: {dest}")
        shutil.rmtree(dest)  # the old package, backed up file by file
    elif os.path.lexists(dest):
        os.unlink(dest)
    if whole:
        shutil.copytree(src, dest, symlinks=True)
    elif os.path.islink(src):
        os.symlink(os.readlink(src), dest)
    else:
        shutil.copy2(src, dest)
