"""Layers applied in order into one tree: the OCI image-spec layer rules, as pure data.

- A file ``D/.wh.NAME`` in a layer deletes ``D/NAME`` (and everything below it) of the layers
  beneath; ``D/.wh..wh..opq`` makes ``D`` opaque: none of the lower layers' entries below ``D``
  stay visible. Whiteouts never hide entries of their own layer, so a layer's whiteouts are
  applied before its entries (a file deleted and re-added in one step is visible).
- A non-directory replaces whatever was at its path (a directory with all it held); a
  directory over a directory merges; missing parent directories are implied.
- A hard link is a regular file with the content of its target (found in the same layer or
  below: the target is resolved when the link is applied).

Each node keeps the index of the layer its current version came from: that is how a package
is traced back to the Dockerfile step that installed it. Directories and symlinks are all kept;
of the other files only those the reader kept or noted (``Entry.ref`` set), so that memory
follows what the probes read, not the size or file count of the image.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"

DIR, FILE, SYMLINK, HARDLINK, OTHER = "d", "f", "l", "h", "o"
# Entry.ref of a hard link whose content the probes read (it is its target's content).
WANTED = "?"


def normalize(name: str) -> Optional[str]:
    """A tar member name as an absolute path inside the image: ``./usr/bin/`` -> ``/usr/bin``.
    None for names that would leave the root (``..``) or are empty."""
    parts = []
    for part in name.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            return None
        parts.append(part)
    return "/" + "/".join(parts)


def classify(path: str) -> Tuple[str, str]:
    """("opaque", dir) / ("whiteout", deleted path) / ("entry", path) for a normalized path."""
    parent, base = posixpath.split(path)
    if base == OPAQUE:
        return "opaque", parent
    if base.startswith(WHITEOUT):
        return "whiteout", posixpath.join(parent, base[len(WHITEOUT):])
    return "entry", path


@dataclass
class Entry:
    """One member of a layer, as the archive reader records it."""

    path: str  # normalized, absolute
    kind: str  # DIR, FILE, SYMLINK, HARDLINK, OTHER (devices, fifos)
    size: int = 0
    mode: int = 0o644
    link: str = ""  # symlink target as written, or the hard link's target path (normalized)
    ref: Optional[str] = None  # where the content was kept; "" exists only; WANTED (hard links)


class Node:
    __slots__ = ("kind", "layer", "size", "mode", "link", "ref", "children")

    def __init__(self, kind: str, layer: int, size: int = 0, mode: int = 0o755, link: str = "",
                 ref: Optional[str] = None):
        self.kind = kind
        self.layer = layer
        self.size = size
        self.mode = mode
        self.link = link
        self.ref = ref
        self.children: Optional[Dict[str, "Node"]] = {} if kind == DIR else None

    def entries(self) -> Dict[str, "Node"]:
        """A directory's children (only directories have a dict: files cost no memory for one)."""
        if self.children is None:
            raise ValueError(f"not a directory (kind {self.kind!r})")
        return self.children


class Tree:
    """The merged filesystem of an image (metadata only; content stays where the reader put it)."""

    def __init__(self) -> None:
        self.root = Node(DIR, 0)
        # hard links whose content is read but was not kept: (layer of the target, link, target)
        self.missing_links: List[Tuple[int, str, str]] = []

    # -- lookups (literal paths: symlinks are not followed; the view resolves them) ---------------
    def get(self, path: str) -> Optional[Node]:
        node = self.root
        for part in _parts(path):
            if node.children is None:
                return None
            child = node.children.get(part)
            if child is None:
                return None
            node = child
        return node

    def _parent(self, path: str, layer: int, create: bool) -> Optional[Node]:
        node = self.root
        for part in _parts(posixpath.dirname(path)):
            child = node.entries().get(part)  # node is the root or a DIR child
            if child is None or child.kind != DIR:
                if not create:
                    return None
                child = Node(DIR, layer)  # implied directory (or a file that a directory replaces)
                node.entries()[part] = child
            node = child
        return node

    # -- applying a layer ------------------------------------------------------------------------
    def whiteout(self, path: str) -> None:
        parent = self._parent(path, 0, create=False)
        if parent is not None:
            parent.entries().pop(posixpath.basename(path), None)

    def opaque(self, path: str) -> None:
        node = self.get(path)
        if node is not None and node.kind == DIR:
            node.children = {}

    def add(self, e: Entry, layer: int) -> None:
        if e.path == "/":
            if e.kind == DIR:
                self.root.mode, self.root.layer = e.mode, layer
            return
        parent = self._parent(e.path, layer, create=True)
        assert parent is not None  # create=True makes every missing directory
        children = parent.entries()
        name = posixpath.basename(e.path)
        old = children.get(name)
        if e.kind == DIR and old is not None and old.kind == DIR:
            old.layer, old.mode = layer, e.mode  # merged: lower entries below it stay
            return
        if e.kind != DIR and e.kind != SYMLINK and e.ref is None:
            # A file no probe reads is not kept: memory grows with what is read and with the
            # directories, not with the size of the image. It still replaces what was there.
            if old is not None:
                del children[name]
            return
        node = Node(e.kind, layer, e.size, e.mode, e.link, e.ref)
        if e.kind == HARDLINK:
            target = self.get(e.link)
            if target is not None and target.kind in (FILE, HARDLINK):
                node.size = target.size
                if e.ref == WANTED:  # the link's content is read: it is the target's
                    node.ref = target.ref or None
            else:
                node.ref = None if e.ref == WANTED else e.ref
            if e.ref == WANTED and not node.ref:
                self.missing_links.append((target.layer if target is not None else layer, e.path, e.link))
        children[name] = node

    def apply(self, layer: int, opaque: List[str], whiteouts: List[str], entries: Iterable[Entry]) -> None:
        """One layer: its opaque dirs and whiteouts first (they hide lower layers only), then
        its entries in archive order."""
        for d in opaque:
            self.opaque(d)
        for w in whiteouts:
            self.whiteout(w)
        for e in entries:
            self.add(e, layer)

    # -- walking ---------------------------------------------------------------------------------
    def fill(self, link: str, target: str, ref: str) -> None:
        """Content found for a hard link listed in missing_links (if a later layer did not
        replace the link)."""
        node = self.get(link)
        if node is not None and node.kind == HARDLINK and node.link == target:
            node.ref = ref

    def walk(self) -> Iterator[Tuple[str, Node]]:
        """Every (path, node) below the root, parents before children."""
        stack: List[Tuple[str, Node]] = [("", self.root)]
        while stack:
            prefix, node = stack.pop()
            children = node.entries()  # only DIR nodes are pushed
            for name in sorted(children, reverse=True):
                child = children[name]
                path = f"{prefix}/{name}"
                yield path, child
                if child.kind == DIR:
                    stack.append((path, child))

    def resolve(self, path: str, depth: int = 0) -> Optional[str]:
        """The path a lookup ends at, following symlinks the way the kernel would inside the
        image (absolute targets from the image root, ``..`` never above it); None when a
        component is missing or the links loop. One step down the tree per component (a path
        a thousand directories deep costs a thousand steps, not a million)."""
        parts = _parts(path)
        done: List[str] = []
        node = self.root
        for i, part in enumerate(parts):
            child = node.children.get(part) if node.children is not None else None
            if child is None:
                return None
            if child.kind == SYMLINK:
                if depth >= 40:
                    return None
                current = "/" + "/".join(done)
                target = child.link if child.link.startswith("/") else posixpath.join(current, child.link)
                rest = "/".join(parts[i + 1:])
                return self.resolve(clamp(target + ("/" + rest if rest else "")), depth + 1)
            done.append(part)
            node = child
        return "/" + "/".join(done)


def clamp(path: str) -> str:
    """Normalize an absolute path so that ``..`` stops at the root (as in a chroot)."""
    out: List[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if out:
                out.pop()
            continue
        out.append(part)
    return "/" + "/".join(out)


def relative_link(link_path: str, target: str) -> str:
    """A symlink target rewritten relative to the link's directory and clamped to the image
    root, so that the link resolves inside a materialised copy of the tree and never outside."""
    base = posixpath.dirname(link_path)
    absolute = clamp(target if target.startswith("/") else posixpath.join(base, target))
    rel = posixpath.relpath(absolute, base)
    return rel


def _parts(path: str) -> List[str]:
    return [p for p in path.split("/") if p and p != "."]
