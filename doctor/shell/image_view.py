"""The read-only view of an image the probes read through ``Host(root=view.root)``.

The layers' indexes are merged in order (doctor/parse/overlay.py) into one tree, and the tree is
materialised in the private workspace: every directory, every symlink (rewritten relative and
clamped, so that it resolves inside the view even for code that does not go through Host), the
content of the files that were kept, and empty files where only existence matters. Nothing is
executable: no file in the view has an execute bit, so nothing from the image can be run by
mistake.

The tree stays in memory after materialising: ``layer_of(path)`` says which layer a file came
from, which is how a failing package is traced to the Dockerfile step that installed it.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from doctor.parse.overlay import DIR, FILE, HARDLINK, SYMLINK, Tree, relative_link
from doctor.shell.image_archive import ArchiveError, Contents, Workspace


@dataclass
class ViewStats:
    layers: int = 0
    entries: int = 0  # entries of the merged tree
    directories: int = 0
    files_kept: int = 0  # files materialised with content
    placeholders: int = 0
    symlinks: int = 0
    missing_links: List[str] = field(default_factory=list)  # hard links whose content was not kept


class ImageView:
    def __init__(self, root: str, tree: Tree, stats: ViewStats):
        self.root = root
        self.tree = tree
        self.stats = stats

    def real(self, path: str) -> str:
        """The view path of an image path (no symlink resolution)."""
        return self.root + ("" if path == "/" else path)

    def image_path(self, real: str) -> str:
        if real == self.root:
            return "/"
        return real[len(self.root):] if real.startswith(self.root + "/") else real

    def layer_of(self, path: str) -> Optional[int]:
        """The layer (1 = bottom) the visible version of ``path`` came from; symlinks in the
        parent directories are followed, the last component is not."""
        parent, _, name = path.rstrip("/").rpartition("/")
        base = self.tree.resolve(parent or "/") if parent else "/"
        if base is None:
            return None
        node = self.tree.get((base.rstrip("/") + "/" + name) if name else base)
        return node.layer if node is not None else None


def merge(contents: Contents, layers: List[str]) -> Tree:
    tree = Tree()
    for i, key in enumerate(layers, 1):
        blob = contents.resolve(key)
        idx = contents.layers.get(blob)
        if idx is None:
            if blob in contents.unreadable:
                raise ArchiveError("image.error.zstd", layer=key)
            raise ArchiveError("image.error.missing_layer", layer=key, path="")
        opaque, deleted = idx.whiteouts()
        tree.apply(i, opaque, deleted, idx.entries())
    return tree


def materialise(ws: Workspace, tree: Tree, layers: int) -> ImageView:
    root = os.path.join(ws.dir, "root")
    os.mkdir(root, 0o700)
    stats = ViewStats(layers=layers)
    for path, node in tree.walk():
        real = root + path
        stats.entries += 1
        if node.kind == DIR:
            os.mkdir(real, 0o755)
            stats.directories += 1
        elif node.kind == SYMLINK:
            os.symlink(relative_link(path, node.link), real)
            stats.symlinks += 1
        elif node.kind in (FILE, HARDLINK) and node.ref is not None:
            if node.ref == "":
                with open(real, "wb"):
                    pass
                os.chmod(real, 0o600)
                stats.placeholders += 1
            else:
                try:
                    os.link(node.ref, real)
                except OSError:
                    shutil.copyfile(node.ref, real)
                    os.chmod(real, 0o600)
                stats.files_kept += 1
    stats.missing_links = [f"{p} -> {t} (layer {n})" for n, p, t in tree.missing_links]
    return ImageView(root, tree, stats)


def build(ws: Workspace, contents: Contents, layers: List[str]) -> ImageView:
    tree = merge(contents, layers)
    return materialise(ws, tree, len(layers))


def counts_by_layer(tree: Tree) -> Dict[int, int]:
    """How many visible entries each layer contributes (for -v output)."""
    out: Dict[int, int] = {}
    for _, node in tree.walk():
        out[node.layer] = out.get(node.layer, 0) + 1
    return out
