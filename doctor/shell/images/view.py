"""The read-only view of an image the probes read through ``Host(root=view.root)``.

The layers' indexes are merged in order (doctor/parse/overlay.py) into one tree, and the part of
the tree the probes can reach is materialised in the private workspace: the content of the files
that were kept, empty files where only existence matters, the symlinks that lead to them or to
directories (rewritten relative and clamped, so that they resolve inside the view even for code
that does not go through Host) and the directories on the way. Nothing is
executable: no file in the view has an execute bit, so nothing from the image can be run by
mistake.

The tree stays in memory after materialising: ``layer_of(path)`` says which layer a file came
from, which is how a failing package is traced to the Dockerfile step that installed it.
"""
from __future__ import annotations

import errno
import os
import posixpath
import shutil
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Set

from doctor.parse.image_files import want
from doctor.parse.overlay import DIR, FILE, HARDLINK, SYMLINK, Tree, relative_link
from doctor.shell.images.archive import ArchiveError, Contents, Limits, Workspace, limit_error, zstd_missing

Tick = Callable[[], None]  # raises when the command's deadline has passed


def _never() -> None:
    pass


@dataclass
class ViewStats:
    layers: int = 0
    entries: int = 0  # entries of the merged tree
    directories: int = 0
    files_kept: int = 0  # files materialised with content
    placeholders: int = 0
    symlinks: int = 0
    too_long: int = 0  # entries whose path in the view is longer than the system allows
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


def merge(contents: Contents, layers: List[str], tick: Tick = _never, limits: Optional[Limits] = None) -> Tree:
    """The layers applied in order. A manifest may name one layer many times: the entries are
    counted as applied, at most ``limits.entries`` in all (checked before anything is applied)."""
    indexes = []
    for key in layers:
        blob = contents.resolve(key)
        idx = contents.layers.get(blob)
        if idx is None:
            what = contents.unreadable.get(blob)
            if what == "zstd":
                raise zstd_missing(key)
            if what:
                raise ArchiveError("image.error.compression", layer=key, what=what)
            raise ArchiveError("image.error.missing_layer", layer=key, path="")
        indexes.append(idx)
    limit = (limits or contents.limits).entries
    if sum(idx.members for idx in indexes) > limit:
        raise limit_error("entries", limit)
    tree = Tree()
    for i, idx in enumerate(indexes, 1):
        tick()
        opaque, deleted = idx.whiteouts()
        tree.apply(i, opaque, deleted, _ticking(idx.entries(), tick))
    return tree


def _ticking(entries, tick: Tick):
    for n, e in enumerate(entries):
        if n % 4096 == 0:
            tick()
        yield e


def materialise(ws: Workspace, tree: Tree, layers: int, dirs: Iterable[str] = (), tick: Tick = _never) -> ImageView:
    """Write the view: the files kept or noted, the symlinks that lead to a directory or to a
    file the probes read, and only the directories on the way to them (plus ``dirs``, image
    paths the environment names: LD_LIBRARY_PATH entries must exist when they exist in the
    image). A real image has tens of thousands of directories; creating all of them would cost
    more than reading the layers on a slow disk."""
    root = os.path.join(ws.dir, "root")
    os.mkdir(root, 0o700)
    stats = ViewStats(layers=layers)
    needed: Set[str] = set()
    links: Set[str] = set()
    for path, node in tree.walk():
        stats.entries += 1
        if stats.entries % 4096 == 0:
            tick()
        if node.kind in (FILE, HARDLINK) and node.ref is not None:
            _ancestors(needed, path)
        elif node.kind == SYMLINK:
            target = tree.resolve(path)
            into = tree.get(target) if target else None
            if target and into is not None and into.kind == DIR:
                links.add(path)
                _ancestors(needed, path)
                needed.add(target)
                _ancestors(needed, target)
            elif want(path) or want(posixpath.basename(node.link)) or (into is not None and into.ref is not None):
                links.add(path)
                _ancestors(needed, path)
    for n, d in enumerate(dirs):
        if n % 1024 == 0:
            tick()
        target = tree.resolve(d) if d.startswith("/") else None
        found = tree.get(target) if target else None
        if target and found is not None and found.kind == DIR:
            needed.add(target)
            _ancestors(needed, target)
    for n, (path, node) in enumerate(tree.walk()):
        if n % 4096 == 0:
            tick()
        try:
            _write(root, path, node, needed, links, stats)
        except OSError as e:
            if e.errno not in (errno.ENAMETOOLONG, errno.ENOENT):
                raise
            # the image path fits a filesystem, the view's (below the workspace) may not:
            # such a path is deeper than anything a probe reads
            stats.too_long += 1
    stats.missing_links = [f"{p} -> {t} (layer {n})" for n, p, t in tree.missing_links]
    return ImageView(root, tree, stats)


def _write(root: str, path: str, node, needed: Set[str], links: Set[str], stats: ViewStats) -> None:
    real = root + path
    if node.kind == DIR:
        if path in needed:
            os.mkdir(real, 0o755)
            stats.directories += 1
    elif node.kind == SYMLINK:
        if path in links:
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


def _ancestors(out: Set[str], path: str) -> None:
    parent = posixpath.dirname(path)
    while parent not in ("/", "") and parent not in out:
        out.add(parent)
        parent = posixpath.dirname(parent)


def build(ws: Workspace, contents: Contents, layers: List[str], refetch=None, dirs: Iterable[str] = (),
          tick: Tick = _never) -> ImageView:
    """Merge and materialise. ``refetch(wanted)`` (a tarball on disk can be read again) brings
    the content of hard-link targets the first pass did not keep; ``tick()`` raises once the
    command's deadline has passed."""
    tree = merge(contents, layers, tick)
    if tree.missing_links and refetch is not None:
        wanted: Dict[str, set] = {}
        for layer, _, target in tree.missing_links:
            wanted.setdefault(contents.resolve(layers[layer - 1]), set()).add(target)
        found = refetch(wanted)
        still = []
        for layer, link, target in tree.missing_links:
            ref = found.get((contents.resolve(layers[layer - 1]), target))
            if ref:
                tree.fill(link, target, ref)
            else:
                still.append((layer, link, target))
        tree.missing_links = still
    return materialise(ws, tree, len(layers), dirs, tick)
