"""Read a ``docker save`` or OCI-layout tarball without extracting it.

Every layer blob is read once, as a stream (gzip, zstd, xz, bzip2 or plain tar): its entries are
written to an index file in a private workspace, and only the files the probes read
(doctor/parse/image_files.py) are copied out. Memory stays flat whatever the size of the image:
nothing but the current tar header, one copy buffer and the small JSON documents (manifests,
configs) is held.

Two ways in:

- a file (``--image-tar``): the outer tar is listed first (headers only, seeking over the data),
  the manifest picks the image and the platform, and only that image's layers are read; plain
  tar layers inside a plain tar are read by seeking, so a 10 GB image costs its headers.
- a stream (the engine's ``GET /images/{name}/get``): ``docker save`` writes blobs before its
  manifest, so every blob is indexed as it passes and the manifest is applied at the end.
"""
from __future__ import annotations

import io
import json
import os
import posixpath
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterable, List, Literal, Optional, Set, Tuple, Type, Union

from doctor.parse import image_files
from doctor.parse.overlay import DIR, FILE, HARDLINK, OTHER, SYMLINK, WANTED, Entry, classify, normalize

JSON_MAX = 16 * 1024 * 1024  # a config of a 200-layer image is ~100 KB
COPY_CHUNK = 1024 * 1024
TAR_BUFSIZE = 1024 * 1024  # tarfile's stream buffer: big reads when skipping large blobs

GZIP, ZSTD, XZ, BZIP2, PLAIN = "gzip", "zstd", "xz", "bzip2", "none"
# a byte stream read here: an open file or tar member (IO[bytes]), a decompressor (GzipFile,
# LZMAFile: BufferedIOBase) or one of the wrappers below (RawIOBase)
Stream = Union[IO[bytes], io.BufferedIOBase, io.RawIOBase]
_MAGIC = ((b"\x1f\x8b", GZIP), (b"\x28\xb5\x2f\xfd", ZSTD), (b"\xfd7zXZ\x00", XZ), (b"BZh", BZIP2))


class ArchiveError(ValueError):
    """The input cannot be read as an image; ``key`` names the message (doctor/i18n/image.toml)."""

    def __init__(self, key: str, **params: Any):
        self.key, self.params = key, params
        super().__init__(f"{key}: {params}")


class Deadline(Exception):
    pass


class SourceError(OSError):
    """The source itself failed (the engine went away mid-export): not the archive's fault."""


class Workspace:
    """A private directory (mode 0700) for layer indexes, kept content and the materialised view;
    removed when closed."""

    def __init__(self, parent: Optional[str] = None):
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="ascend-doctor-image-", dir=parent))
        os.chmod(self.dir, 0o700)
        self.store = os.path.join(self.dir, "store")
        self.index = os.path.join(self.dir, "index")
        os.mkdir(self.store)
        os.mkdir(self.index)
        self._seq = 0

    def new_file(self, where: str, suffix: str = "") -> str:
        self._seq += 1
        return os.path.join(where, f"{self._seq}{suffix}")

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class LayerIndex:
    key: str  # archive path of the blob
    entries_file: str
    whiteouts_file: str
    compression: str
    members: int = 0
    bytes: int = 0  # uncompressed tar bytes
    kept: int = 0  # files whose content was kept
    kept_bytes: int = 0

    def whiteouts(self) -> Tuple[List[str], List[str]]:
        opaque: List[str] = []
        deleted: List[str] = []
        with open(self.whiteouts_file, encoding="utf-8") as fh:
            for line in fh:
                kind, path = json.loads(line)
                (opaque if kind == "opaque" else deleted).append(path)
        return opaque, deleted

    def entries(self) -> Iterable[Entry]:
        with open(self.entries_file, encoding="utf-8") as fh:
            for line in fh:
                path, kind, size, mode, link, ref = json.loads(line)
                yield Entry(path, kind, size, mode, link, ref)


@dataclass
class Contents:
    """What was read: the small JSON documents, the indexed layers, the links between names."""

    names: Set[str] = field(default_factory=set)
    docs: Dict[str, Any] = field(default_factory=dict)
    layers: Dict[str, LayerIndex] = field(default_factory=dict)
    links: Dict[str, str] = field(default_factory=dict)  # legacy path -> blob path (Docker >= 25)
    unreadable: Dict[str, str] = field(default_factory=dict)  # blob -> the compression we cannot read
    bytes_read: int = 0

    def resolve(self, name: str) -> str:
        seen = set()
        name = _name(name)
        while name in self.links and name not in seen:
            seen.add(name)
            name = self.links[name]
        return name

    def doc(self, name: str) -> Any:
        return self.docs.get(self.resolve(name))


class _Counter(io.RawIOBase):
    """Counts the bytes read from the source, reports progress, enforces the total deadline."""

    def __init__(self, raw, progress: Optional[Callable[[int], None]], deadline: Optional[float]):
        self.raw, self.progress, self.deadline = raw, progress, deadline
        self.count = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return bool(getattr(self.raw, "seekable", lambda: False)())

    def seek(self, offset: int, whence: int = 0) -> int:
        pos = self.raw.seek(offset, whence)
        self.count = max(self.count, pos)
        return pos

    def tell(self) -> int:
        return self.raw.tell()

    def readinto(self, b) -> int:
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Deadline()
        if self.progress is not None and n:
            self.progress(self.count)
        return n


def sniff(head: bytes) -> Optional[str]:
    """The compression of a blob from its first bytes; PLAIN for a tar; None otherwise."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if len(head) >= 262 and head[257:262] == b"ustar":
        return PLAIN
    if len(head) >= 512 and not head[:512].strip(b"\0"):
        return PLAIN  # an empty layer: the two zero blocks of an empty tar
    return None


def _looks_json(head: bytes) -> bool:
    return head.lstrip()[:1] in (b"{", b"[")


def decompressed(raw: Stream, compression: str) -> Optional[Stream]:
    """A reader of the decompressed bytes whose reads return at most what is asked for.
    (tarfile's own "r|gz" inflates a whole buffer at once: a megabyte of deflated zeros, common
    in layers, would become a gigabyte in memory.) None when zstd cannot be read here."""
    if compression == GZIP:
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == XZ:
        import lzma

        # LZMAFile reads any object with read(); its stub names the nominal IO[bytes] only
        return lzma.LZMAFile(raw)  # type: ignore[arg-type]
    if compression == BZIP2:
        import bz2

        return bz2.BZ2File(raw)
    if compression == ZSTD:
        return _zstd_reader(raw)
    return raw


def _zstd_reader(raw: Stream) -> Optional[Stream]:
    try:  # Python >= 3.14
        from compression import zstd

        return zstd.ZstdFile(raw)
    except ImportError:
        pass
    try:
        import zstandard
    except ImportError:
        return None
    # stream_reader reads any object with read(); zstandard's stub names the nominal IO[bytes] only
    return zstandard.ZstdDecompressor().stream_reader(raw, read_size=COPY_CHUNK)  # type: ignore[arg-type]


class _Prefixed(io.RawIOBase):
    """A stream with bytes that were already read put back in front."""

    def __init__(self, head: bytes, raw):
        self.head, self.raw = head, raw

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.head:
            n = min(len(b), len(self.head))
            b[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.raw.read(len(b))
        b[:len(data)] = data
        return len(data)


class Reader:
    """Indexes layers into a workspace. ``extra`` are exact image paths worth keeping (from the
    image config); ``progress(bytes)`` and the total ``deadline`` (time.monotonic) are optional."""

    def __init__(self, ws: Workspace, extra: Iterable[str] = (), progress: Optional[Callable[[int], None]] = None,
                 deadline: Optional[float] = None):
        self.ws = ws
        self.extra = frozenset(extra)
        self.progress = progress
        self.deadline = deadline
        self.media_types: Dict[str, str] = {}  # layer key -> media type, when a manifest says
    # -- one layer ---------------------------------------------------------------------------------
    def index_layer(self, key: str, raw: Stream, compression: str, seekable: bool = False) -> LayerIndex:
        """Read one layer blob (a file object positioned at its start)."""
        idx = LayerIndex(key=key, entries_file=self.ws.new_file(self.ws.index, ".idx"),
                         whiteouts_file=self.ws.new_file(self.ws.index, ".wh"), compression=compression)
        fileobj: Optional[Stream]
        mode: Literal["r:", "r|"]
        if compression == PLAIN:
            fileobj, mode = raw, ("r:" if seekable else "r|")
        else:
            fileobj, mode = decompressed(raw, compression), "r|"
            if fileobj is None:
                raise ArchiveError("image.error.zstd", layer=key)
        layer_dir = self.ws.new_file(self.ws.store)
        os.mkdir(layer_dir)
        try:
            with tarfile.open(fileobj=fileobj, mode=mode, bufsize=TAR_BUFSIZE) as tf, \
                    open(idx.entries_file, "w", encoding="utf-8") as out, \
                    open(idx.whiteouts_file, "w", encoding="utf-8") as wh:
                for m in tf:
                    idx.members += 1
                    idx.bytes += m.size
                    self._member(tf, m, layer_dir, idx, out, wh)
        except SourceError:
            raise
        except _decode_errors() as e:
            raise ArchiveError("image.error.bad_layer", layer=key, error=_short(e)) from None
        return idx

    def _member(self, tf: tarfile.TarFile, m: tarfile.TarInfo, layer_dir: str, idx: LayerIndex, out, wh) -> None:
        path = normalize(m.name)
        if path is None:
            return  # a name that would leave the root: never applied (as docker refuses it)
        what, target = classify(path)
        if what != "entry":
            wh.write(json.dumps([what, target]) + "\n")
            return
        link, ref = "", None
        if m.isdir():
            kind = DIR
        elif m.issym():
            kind, link = SYMLINK, m.linkname
        elif m.islnk():
            kind, link = HARDLINK, normalize(m.linkname) or ""
        elif m.isreg():
            kind = FILE
        else:
            kind = OTHER
        wanted = image_files.want(path, self.extra) if kind in (FILE, HARDLINK) else None
        if wanted == image_files.EXISTS:
            ref = ""  # materialised as an empty file: its existence is what is tested
        elif wanted and kind == HARDLINK:
            ref = WANTED
        elif wanted and kind == FILE:
            cap = image_files.TEXT_MAX if wanted == image_files.TEXT else image_files.BINARY_MAX
            if m.size <= cap:
                ref = self._keep(tf, m, layer_dir)
                idx.kept += 1
                idx.kept_bytes += m.size
        out.write(json.dumps([path, kind, m.size, m.mode & 0o7777, link, ref]) + "\n")

    def _keep(self, tf: tarfile.TarFile, m: tarfile.TarInfo, layer_dir: str) -> str:
        dest = self.ws.new_file(layer_dir)
        src = tf.extractfile(m)
        with open(dest, "wb") as fh:
            if src is not None:
                shutil.copyfileobj(src, fh, COPY_CHUNK)
        os.chmod(dest, 0o600)  # never executable, never shared
        return dest

    # -- a whole archive -------------------------------------------------------------------------
    def read_path(self, path: str, choose: Callable[[Contents], List[str]]) -> Contents:
        """A tarball on disk. ``choose(contents)`` returns the layer blobs to index once the JSON
        documents are known (the manifest and the configs of the chosen image)."""
        try:
            fh = open(path, "rb")
        except OSError as e:
            raise ArchiveError("image.error.tar_unreadable", path=path, error=e.strerror or str(e)) from None
        with fh:
            head = fh.read(512)
            fh.seek(0)
            outer = sniff(head)
            if outer is None:
                raise ArchiveError("image.error.not_tar", path=path)
            counter = _Counter(fh, self.progress, self.deadline)
            if outer != PLAIN:  # docker save | gzip: one pass over the stream, as from the engine
                return self._read_stream(counter, outer, path)
            try:
                tf = tarfile.open(fileobj=counter, mode="r:", bufsize=TAR_BUFSIZE)
            except tarfile.TarError:
                raise ArchiveError("image.error.not_tar", path=path) from None
            try:
                with tf:
                    members = {}
                    contents = Contents()
                    for m in tf.getmembers():
                        name = _name(m.name)
                        contents.names.add(name)
                        members[name] = m
                        if m.issym():
                            contents.links[name] = posixpath.normpath(posixpath.join(posixpath.dirname(name), m.linkname))
                        elif m.islnk():
                            contents.links[name] = _name(m.linkname)
                    for name, m in members.items():
                        src = tf.extractfile(m) if m.isreg() and 0 < m.size <= JSON_MAX else None
                        if src is not None:
                            head = src.read(512)
                            if _looks_json(head):
                                contents.docs[name] = _json(head + src.read(JSON_MAX))
                    for key in choose(contents):
                        blob = contents.resolve(key)
                        if blob in contents.layers or blob in contents.unreadable:
                            continue
                        member = members.get(blob)
                        src = tf.extractfile(member) if member is not None and member.isreg() else None
                        if src is None:
                            raise ArchiveError("image.error.missing_layer", layer=key, path=path)
                        head = src.read(512)
                        kind = sniff(head)
                        if kind is None:
                            what = self.media_types.get(key) or "first bytes " + head[:4].hex()
                            raise ArchiveError("image.error.compression", layer=key, what=what)
                        src.seek(0)
                        contents.layers[blob] = self.index_layer(blob, src, kind, seekable=(kind == PLAIN))
            except (tarfile.TarError, EOFError, OSError) as e:
                raise ArchiveError("image.error.truncated", path=path, error=_short(e)) from None
            contents.bytes_read = counter.count
            return contents

    def fetch(self, path: str, wanted: Dict[str, Set[str]]) -> Dict[Tuple[str, str], str]:
        """A second, targeted read of a tarball on disk: the content of the given files of the
        given layer blobs (hard-link targets whose names did not look interesting on the first
        pass). Returns (blob, image path) -> kept file."""
        out: Dict[Tuple[str, str], str] = {}
        with open(path, "rb") as fh, tarfile.open(fileobj=fh, mode="r:", bufsize=TAR_BUFSIZE) as tf:
            members = {_name(m.name): m for m in tf.getmembers()}
            for blob, paths in wanted.items():
                m = members.get(blob)
                src = tf.extractfile(m) if m is not None and m.isreg() else None
                if src is None:
                    continue
                kind = sniff(src.read(512))
                src.seek(0)
                if kind is None:
                    continue
                fileobj = decompressed(src, kind)
                mode: Literal["r:", "r|"] = "r:" if kind == PLAIN else "r|"
                if fileobj is None:
                    continue
                layer_dir = self.ws.new_file(self.ws.store)
                os.mkdir(layer_dir)
                with tarfile.open(fileobj=fileobj, mode=mode, bufsize=TAR_BUFSIZE) as inner:
                    for im in inner:
                        p = normalize(im.name)
                        if p in paths and im.isreg() and im.size <= image_files.BINARY_MAX:
                            out[(blob, p)] = self._keep(inner, im, layer_dir)
        return out

    def read_stream(self, raw, label: str) -> Contents:
        """A tarball streamed once from start to end (the engine's image export)."""
        counter = _Counter(raw, self.progress, self.deadline)
        head = counter.read(512)
        outer = sniff(head)
        if outer is None:
            raise ArchiveError("image.error.not_tar", path=label)
        return self._read_stream(_Prefixed(head, counter), outer, label, counter)

    def _read_stream(self, raw, outer: str, label: str, counter: Optional[_Counter] = None) -> Contents:
        contents = Contents()
        stream = decompressed(raw, outer)
        if stream is None or outer == ZSTD:
            raise ArchiveError("image.error.not_tar", path=label)
        try:
            with tarfile.open(fileobj=stream, mode="r|", bufsize=TAR_BUFSIZE) as tf:
                for m in tf:
                    name = _name(m.name)
                    contents.names.add(name)
                    if m.issym():
                        contents.links[name] = posixpath.normpath(posixpath.join(posixpath.dirname(name), m.linkname))
                        continue
                    if m.islnk():
                        contents.links[name] = _name(m.linkname)
                        continue
                    src = tf.extractfile(m) if m.isreg() and m.size > 0 else None
                    if src is None:
                        continue
                    head = src.read(512)
                    if _looks_json(head) and m.size <= JSON_MAX:
                        contents.docs[name] = _json(head + src.read(JSON_MAX))
                        continue
                    kind = sniff(head)
                    if kind is None:
                        if m.size > 1024:  # not a VERSION file: a blob in a format we cannot read
                            contents.unreadable[name] = "first bytes " + head[:4].hex()
                        continue
                    try:
                        contents.layers[name] = self.index_layer(name, _Prefixed(head, src), kind)
                    except ArchiveError as e:
                        if e.key != "image.error.zstd":
                            raise
                        contents.unreadable[name] = ZSTD  # an error only if the chosen image uses it
        except tarfile.TarError as e:
            if not contents.names:
                raise ArchiveError("image.error.not_tar", path=label) from None
            raise ArchiveError("image.error.truncated", path=label, error=_short(e)) from None
        except SourceError:
            raise
        except _decode_errors() as e:
            raise ArchiveError("image.error.truncated", path=label, error=_short(e)) from None
        contents.bytes_read = (counter or raw).count if isinstance(counter or raw, _Counter) else 0
        return contents


def _decode_errors() -> Tuple[Type[BaseException], ...]:
    """What a damaged stream raises on the way: tar, gzip (zlib), xz, zstd."""
    import lzma
    import zlib

    errors: Tuple[Type[BaseException], ...] = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)
    try:
        import zstandard

        errors += (zstandard.ZstdError,)
    except ImportError:
        pass
    return errors


def _name(name: str) -> str:
    n = posixpath.normpath(name)
    return n[2:] if n.startswith("./") else n.lstrip("/")


def _json(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _short(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:200]
