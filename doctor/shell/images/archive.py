"""Read a ``docker save`` or OCI-layout tarball without extracting it.

Every layer blob is read once, as a stream (gzip, zstd, xz, bzip2 or plain tar): its entries are
written to an index file in a private workspace, and only the files the probes read
(doctor/parse/image_files.py) are copied out. Memory stays flat whatever the size of the image:
nothing but the current tar header, one copy buffer and the small JSON documents (manifests,
configs) is held.

Bounded whatever the archive says (an archive is untrusted input): the members read (``Limits``),
the bytes written to the workspace, the JSON documents held (parsed only when asked for, each
capped in bytes and shape: doctor/parse/oci.py), the size of a tar header extension (a GNU long
name or a PAX record is read whole by tarfile: capped before it is read) and the command's
deadline, checked on the decompressed bytes too (a bzip2 layer of a few KB can hold gigabytes).
A bound that is hit is an ``ArchiveError("image.error.limit", bound=...)``: one line, exit 2.

Two ways in:

- a file (``--image-tar``): the outer tar is listed first (headers only, seeking over the data),
  the manifest picks the image and the platform, and only that image's layers are read; plain
  tar layers inside a plain tar are read by seeking, so a 10 GB image costs its headers.
- a stream (the engine's ``GET /images/{name}/get``): ``docker save`` writes blobs before its
  manifest, so every blob is indexed as it passes and the manifest is applied at the end.
"""
from __future__ import annotations

import functools
import io
import json
import os
import posixpath
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Set, Tuple, Type, Union

from doctor.parse import image_files, oci
from doctor.parse.overlay import DIR, FILE, HARDLINK, OTHER, SYMLINK, WANTED, Entry, classify, normalize
from doctor.shell.host import files

MIB = 1024 * 1024
GIB = 1024 * MIB
COPY_CHUNK = 1024 * 1024
TAR_BUFSIZE = 1024 * 1024  # tarfile's stream buffer: big reads when skipping large blobs

GZIP, ZSTD, XZ, BZIP2, PLAIN = "gzip", "zstd", "xz", "bzip2", "none"
# a byte stream read here: an open file or tar member (IO[bytes]), a decompressor (GzipFile,
# LZMAFile: BufferedIOBase) or one of the wrappers below (RawIOBase)
Stream = Union[IO[bytes], io.BufferedIOBase, io.RawIOBase]
_MAGIC = ((b"\x1f\x8b", GZIP), (b"\x28\xb5\x2f\xfd", ZSTD), (b"\xfd7zXZ\x00", XZ), (b"BZh", BZIP2))


@dataclass(frozen=True)
class Limits:
    """What one image may make the doctor read, hold and write. Four have options
    (``--max-image-entries``, ``--max-image-disk``, ``--max-image-layer``, ``--max-image-size``:
    an image with millions of files, large libraries re-added in many layers, or model weights
    baked into a layer, may need more); the others no image the engine can run comes near
    (docs/docker.md)."""

    # members of the layers, applied in all (a vllm-ascend image: ~300,000). Directories stay in the
    # merged tree (~300 bytes each): 1,000,000 crafted directories cost ~300 MB of memory
    entries: int = 1_000_000
    disk: int = 2048 * MIB  # bytes written to the private workspace: kept files and the layer indexes
    json_member: int = 8 * MIB  # one JSON document of the archive (a 200-layer config is ~100 KB)
    json_total: int = 32 * MIB  # the JSON documents parsed and held together
    header: int = 1 * MIB  # one tar header extension: a GNU long name or link, a PAX header
    members: int = 100_000  # members of the outer archive (docker save of 125 layers: ~400)
    sparse: int = 1_000  # regions of one GNU sparse member
    # decompressed bytes: a bzip2 layer of 800 KB (concatenated streams) expands to 1 TiB, which
    # kept a CPU busy for the whole deadline. A real serving image's largest layer is < 30 GB
    layer_bytes: int = 64 * GIB  # of one compressed layer
    image_bytes: int = 256 * GIB  # of the compressed layers read, together (and of a compressed archive)
    ratio: int = 200  # decompressed bytes per compressed byte of one stream (real layers: 2-10) ...
    ratio_floor: int = 1 * GIB  # ... once it is past this many decompressed bytes


# the option that raises each bound ("" when none: no real image comes near it)
OPTIONS = {"entries": "--max-image-entries", "disk": "--max-image-disk", "layer_bytes": "--max-image-layer",
           "image_bytes": "--max-image-size"}


class ArchiveError(ValueError):
    """The input cannot be read as an image; ``key`` names the message (doctor/i18n/image.toml)."""

    def __init__(self, key: str, **params: Any):
        self.key, self.params = key, params
        super().__init__(f"{key}: {params}")


def zstd_missing(layer: str) -> ArchiveError:
    """A zstd layer and no zstd reader (Python < 3.14 without zstandard): install it into the
    doctor's own environment (the requirement of the ``image`` extra)."""
    from doctor.program import IMAGE_EXTRA, own_pip_install, requirements

    return ArchiveError("image.error.zstd", layer=layer,
                        install=own_pip_install(*(requirements(IMAGE_EXTRA, ("zstandard",)) or ("zstandard>=0.19",))))


def _size(n: int) -> str:
    return f"{n // GIB} GiB" if n >= GIB and n % GIB == 0 else f"{n // MIB} MiB"


def limit_error(bound: str, limit: int, **params: Any) -> ArchiveError:
    return ArchiveError("image.error.limit", bound=bound, limit=limit, **params)


class DeadlinePassed(Exception):
    """The image read's total deadline passed (Workspace.tick)."""


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
        files.remove_tree(self.dir)

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
    """What was read: the indexed layers, the links between names, and the JSON documents,
    parsed only when asked for (``doc``), each within ``limits.json_member`` bytes and all of
    them within ``limits.json_total``."""

    names: Set[str] = field(default_factory=set)
    layers: Dict[str, LayerIndex] = field(default_factory=dict)
    links: Dict[str, str] = field(default_factory=dict)  # legacy path -> blob path (Docker >= 25)
    unreadable: Dict[str, str] = field(default_factory=dict)  # blob -> the compression we cannot read
    bytes_read: int = 0
    limits: Limits = field(default_factory=Limits)
    # name -> the member's bytes when it may be a JSON document (None: it is not one)
    sources: Dict[str, Callable[[], Optional[bytes]]] = field(default_factory=dict)
    too_big: Set[str] = field(default_factory=set)  # JSON members over limits.json_member
    held: int = 0  # bytes of the documents parsed so far
    _parsed: Dict[str, Any] = field(default_factory=dict)

    def resolve(self, name: str) -> str:
        seen = set()
        name = _name(name)
        while name in self.links and name not in seen:
            seen.add(name)
            name = self.links[name]
        return name

    def doc(self, name: str) -> Any:
        key = self.resolve(name)
        if key in self._parsed:
            return self._parsed[key]
        if key in self.too_big:
            raise limit_error("json_member", self.limits.json_member)
        read = self.sources.get(key)
        data = read() if read is not None else None
        value = None
        if data is not None:
            self.held += len(data)
            if self.held > self.limits.json_total:
                raise limit_error("json_total", self.limits.json_total)
            try:
                value = oci.load_json(data)
            except oci.LimitError as e:
                raise limit_error(e.bound, e.limit) from None
        self._parsed[key] = value
        return value


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
            raise DeadlinePassed()
        if self.progress is not None and n:
            self.progress(self.count)
        return n


class _Ticking(io.RawIOBase):
    """A decompressed stream that checks the deadline as it is read: the source may be read
    rarely while its output is large (a few KB of bzip2 are gigabytes of tar). ``count(n)`` is
    told every read's size: it raises once a bound on the decompressed bytes is passed."""

    def __init__(self, raw, deadline: Optional[float], count: Optional[Callable[[int], None]] = None):
        self.raw, self.deadline, self.count = raw, deadline, count

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlinePassed()
        if self.count is not None and n:
            self.count(n)
        return n


# tarfile's decoder of number fields, which its stub does not list
_nti = tarfile.nti  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=8)
def _tarinfo(limits: Limits) -> Type[tarfile.TarInfo]:
    """tarfile reads a GNU long name, a PAX header and a sparse map whole, whatever size the
    header claims (2 GiB of long name: 4 GB of memory): a TarInfo that refuses them past the
    bounds before reading. (The methods are tarfile's own hooks, the same from 3.9 to 3.14.)"""

    class Capped(tarfile.TarInfo):
        def _proc_gnulong(self, tf):
            if self.size > limits.header:
                raise limit_error("header", limits.header)
            return super()._proc_gnulong(tf)  # type: ignore[misc]

        def _proc_pax(self, tf):
            if self.size > limits.header:
                raise limit_error("header", limits.header)
            return super()._proc_pax(tf)  # type: ignore[misc]

        def _proc_sparse(self, tf):
            # the old GNU format: extension blocks of 21 regions each, chained without end
            structs, isextended, origsize = self._sparse_structs  # type: ignore[attr-defined]
            del self._sparse_structs  # type: ignore[attr-defined]
            while isextended:
                buf = tf.fileobj.read(tarfile.BLOCKSIZE)
                if len(buf) < tarfile.BLOCKSIZE:
                    raise tarfile.ReadError("unexpected end of data in a sparse header")
                for i in range(21):
                    try:
                        offset = _nti(buf[i * 24:i * 24 + 12])
                        numbytes = _nti(buf[i * 24 + 12:i * 24 + 24])
                    except ValueError:
                        break
                    if offset and numbytes:
                        structs.append((offset, numbytes))
                if len(structs) > limits.sparse:
                    raise limit_error("sparse", limits.sparse)
                isextended = bool(buf[504])
            self.sparse = structs
            self.offset_data = tf.fileobj.tell()
            tf.offset = self.offset_data + self._block(self.size)  # type: ignore[attr-defined]
            self.size = origsize
            return self

        def _proc_gnusparse_10(self, next, pax_headers, tf):
            # the PAX 1.0 format: a count, then numbers one a line; a count too large (or a
            # line without end) would be read for ever
            buf = tf.fileobj.read(tarfile.BLOCKSIZE)
            head, _, buf = buf.partition(b"\n")
            try:
                fields = int(head)
            except ValueError:
                raise tarfile.ReadError("a damaged sparse map") from None
            if fields > limits.sparse:
                raise limit_error("sparse", limits.sparse)
            sparse: List[int] = []
            while len(sparse) < fields * 2:
                if b"\n" not in buf:
                    block = tf.fileobj.read(tarfile.BLOCKSIZE)
                    if not block or len(buf) > 64 * fields + tarfile.BLOCKSIZE:
                        raise tarfile.ReadError("a damaged sparse map")
                    buf += block
                    continue
                number, _, buf = buf.partition(b"\n")
                try:
                    sparse.append(int(number))
                except ValueError:
                    raise tarfile.ReadError("a damaged sparse map") from None
            next.offset_data = tf.fileobj.tell()
            next.sparse = list(zip(sparse[::2], sparse[1::2]))

    return Capped


def _open_tar(fileobj, mode: Literal["r:", "r|"], limits: Limits) -> tarfile.TarFile:
    return tarfile.open(fileobj=fileobj, mode=mode, bufsize=TAR_BUFSIZE, tarinfo=_tarinfo(limits))


def _members(tf: tarfile.TarFile, limit: int, bound: str) -> Iterator[tarfile.TarInfo]:
    """The members of a tar, one at a time, at most ``limit``. tarfile keeps every header it has
    read (``members``): a layer of millions of entries would cost gigabytes of headers, so the
    list is emptied as it goes (nothing here needs it again)."""
    n = 0
    while True:
        m = tf.next()
        if m is None:
            return
        n += 1
        if n > limit:
            raise limit_error(bound, limit)
        yield m
        # the list tarfile appends every header to (not in its stub)
        tf.members.clear()  # type: ignore[attr-defined]


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


NAME_MAX, PATH_MAX = 255, 4095  # what a Linux filesystem (and so the engine's extraction) accepts


class Reader:
    """Indexes layers into a workspace. ``extra`` are exact image paths worth keeping (from the
    image config); ``progress(bytes)`` and the total ``deadline`` (time.monotonic) are optional;
    ``limits`` bound what the image may cost."""

    def __init__(self, ws: Workspace, extra: Iterable[str] = (), progress: Optional[Callable[[int], None]] = None,
                 deadline: Optional[float] = None, limits: Optional[Limits] = None):
        self.ws = ws
        self.extra = frozenset(extra)
        self.progress = progress
        self.deadline = deadline
        self.limits = limits or Limits()
        self.media_types: Dict[str, str] = {}  # layer key -> media type, when a manifest says
        self.entries = 0  # members of every layer read so far
        self.written = 0  # bytes written to the workspace so far
        self.inflated = 0  # decompressed bytes of the layers read so far

    def _inflating(self, key: str, source: "_Counter", layer: bool = True, total: bool = True) -> Callable[[int], None]:
        """What a decompressed stream (``key``: a layer blob, or the archive when ``layer`` is
        False) tells its reads to: past ``layer_bytes`` (one layer), ``image_bytes`` (the layers
        together, or the archive) or ``ratio`` times the compressed bytes read from ``source``
        (past ``ratio_floor``) it raises ArchiveError naming the bound and the layer."""
        limits = self.limits
        got = [0]

        def count(n: int) -> None:
            got[0] += n
            if layer and got[0] > limits.layer_bytes:
                raise limit_error("layer_bytes", limits.layer_bytes, layer=key)
            if layer and total:
                self.inflated += n
            if (self.inflated if layer else got[0]) > limits.image_bytes:
                raise limit_error("image_bytes", limits.image_bytes, layer=key)
            if got[0] > limits.ratio_floor and got[0] > limits.ratio * max(source.count, 1):
                raise ArchiveError("image.error.ratio", layer=key, ratio=limits.ratio, floor=_size(limits.ratio_floor),
                                   compressed=source.count, expanded=got[0])

        return count

    def tick(self) -> None:
        """Raises DeadlinePassed once the total deadline has passed (called inside every walk)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DeadlinePassed()

    def _write(self, n: int) -> None:
        self.written += n
        if self.written > self.limits.disk:
            raise limit_error("disk", self.limits.disk)

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
            source = _Counter(raw, None, None)  # the compressed bytes read, for the ratio
            fileobj, mode = decompressed(source, compression), "r|"
            if fileobj is None:
                raise zstd_missing(key)
            fileobj = _Ticking(fileobj, self.deadline, self._inflating(key, source))
        layer_dir = self.ws.new_file(self.ws.store)
        os.mkdir(layer_dir)
        kept: Dict[str, Tuple[str, int]] = {}  # image path -> (kept file, size): a later entry replaces it
        try:
            with _open_tar(fileobj, mode, self.limits) as tf, \
                    open(idx.entries_file, "w", encoding="utf-8") as out, \
                    open(idx.whiteouts_file, "w", encoding="utf-8") as wh:
                for m in _members(tf, self.limits.entries - self.entries, "entries"):
                    idx.members += 1
                    idx.bytes += m.size
                    self._member(tf, m, layer_dir, idx, out, wh, kept)
        except (SourceError, ArchiveError, DeadlinePassed):
            raise
        except _decode_errors() as e:
            raise ArchiveError("image.error.bad_layer", layer=key, error=_short(e)) from None
        finally:
            self.entries += idx.members
        return idx

    def _member(self, tf: tarfile.TarFile, m: tarfile.TarInfo, layer_dir: str, idx: LayerIndex, out, wh,
                kept: Dict[str, Tuple[str, int]]) -> None:
        path = normalize(m.name)
        if path is None:
            return  # a name that would leave the root: never applied (as docker refuses it)
        if len(path.encode("utf-8", "surrogateescape")) > PATH_MAX or \
                any(len(p.encode("utf-8", "surrogateescape")) > NAME_MAX for p in path.split("/")):
            raise ArchiveError("image.error.bad_layer", layer=idx.key,
                               error=f"a path no filesystem can hold ({len(path)} bytes, a name over {NAME_MAX} bytes or "
                                     f"a path over {PATH_MAX}): {path[:80]}...")
        what, target = classify(path)
        if what != "entry":
            self._line(wh, json.dumps([what, target]))
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
        previous = kept.pop(path, None)
        if previous is not None:  # the same path twice in one layer: the last one counts
            os.unlink(previous[0])
            self.written -= previous[1]
            idx.kept -= 1
            idx.kept_bytes -= previous[1]
        wanted = image_files.want(path, self.extra) if kind in (FILE, HARDLINK) else None
        if wanted == image_files.EXISTS:
            ref = ""  # materialised as an empty file: its existence is what is tested
        elif wanted and kind == HARDLINK:
            ref = WANTED
        elif wanted and kind == FILE:
            cap = image_files.TEXT_MAX if wanted == image_files.TEXT else image_files.BINARY_MAX
            if m.size <= cap:
                self._write(m.size)
                ref = self._keep(tf, m, layer_dir)
                kept[path] = (ref, m.size)
                idx.kept += 1
                idx.kept_bytes += m.size
        self._line(out, json.dumps([path, kind, m.size, m.mode & 0o7777, link, ref]))

    def _line(self, fh, text: str) -> None:
        self._write(len(text) + 1)
        fh.write(text + "\n")

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
        documents are known (the manifest and the configs of the chosen image); it may read
        them (``contents.doc``) only while it runs."""
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
                tf = _open_tar(counter, "r:", self.limits)
            except tarfile.TarError:
                raise ArchiveError("image.error.not_tar", path=path) from None
            contents = Contents(limits=self.limits)
            try:
                with tf:
                    members: Dict[str, tarfile.TarInfo] = {}
                    for m in _members(tf, self.limits.members, "members"):
                        name = _name(m.name)
                        contents.names.add(name)
                        members[name] = m
                        if m.issym():
                            contents.links[name] = posixpath.normpath(posixpath.join(posixpath.dirname(name), m.linkname))
                        elif m.islnk():
                            contents.links[name] = _name(m.linkname)
                        elif m.isreg() and m.size > 0:
                            contents.sources[name] = self._json_member(tf, m, contents)
                    for key in choose(contents):
                        self.tick()
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
            finally:
                contents.sources = {}  # the tarball is closed: nothing more can be read from it
            contents.bytes_read = counter.count
            return contents

    def _json_member(self, tf: tarfile.TarFile, m: tarfile.TarInfo, contents: Contents) -> Callable[[], Optional[bytes]]:
        """Reads a member of the outer tarball when it is asked for as a JSON document."""

        def read() -> Optional[bytes]:
            src = tf.extractfile(m)
            if src is None:
                return None
            head = src.read(512)
            if not _looks_json(head):
                return None
            if m.size > self.limits.json_member:
                raise limit_error("json_member", self.limits.json_member)
            return head + src.read(self.limits.json_member)

        return read

    def fetch(self, path: str, wanted: Dict[str, Set[str]]) -> Dict[Tuple[str, str], str]:
        """A second, targeted read of a tarball on disk: the content of the given files of the
        given layer blobs (hard-link targets whose names did not look interesting on the first
        pass). Returns (blob, image path) -> kept file."""
        out: Dict[Tuple[str, str], str] = {}
        try:
            with open(path, "rb") as fh, _open_tar(_Counter(fh, None, self.deadline), "r:", self.limits) as tf:
                members = {_name(m.name): m for m in _members(tf, self.limits.members, "members")}
                for blob, paths in wanted.items():
                    m = members.get(blob)
                    src = tf.extractfile(m) if m is not None and m.isreg() else None
                    if src is None:
                        continue
                    kind = sniff(src.read(512))
                    src.seek(0)
                    if kind is None:
                        continue
                    source = _Counter(src, None, None)
                    fileobj = decompressed(source if kind != PLAIN else src, kind)
                    mode: Literal["r:", "r|"] = "r:" if kind == PLAIN else "r|"
                    if fileobj is None:
                        continue
                    if kind != PLAIN:  # a second read of the layer: its own bounds, not the image's again
                        fileobj = _Ticking(fileobj, self.deadline, self._inflating(blob, source, total=False))
                    layer_dir = self.ws.new_file(self.ws.store)
                    os.mkdir(layer_dir)
                    with _open_tar(fileobj, mode, self.limits) as inner:
                        for im in _members(inner, self.limits.entries, "entries"):
                            p = normalize(im.name)
                            if p in paths and im.isreg() and im.size <= image_files.BINARY_MAX:
                                old = out.pop((blob, p), None)
                                if old is not None:
                                    os.unlink(old)
                                    self.written -= im.size
                                self._write(im.size)
                                out[(blob, p)] = self._keep(inner, im, layer_dir)
        except (SourceError, ArchiveError, DeadlinePassed):
            raise
        except _decode_errors() as e:
            raise ArchiveError("image.error.truncated", path=path, error=_short(e)) from None
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
        contents = Contents(limits=self.limits)
        source = _Counter(raw, None, None)  # the compressed bytes read, for the ratio
        stream = decompressed(source if outer != PLAIN else raw, outer)
        if stream is None or outer == ZSTD:
            raise ArchiveError("image.error.not_tar", path=label)
        if outer != PLAIN:  # docker save | gzip: the whole archive is one compressed stream
            stream = _Ticking(stream, self.deadline, self._inflating(label, source, layer=False))
        saved = 0  # bytes of JSON members kept for later
        try:
            with _open_tar(stream, "r|", self.limits) as tf:
                for m in _members(tf, self.limits.members, "members"):
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
                    if _looks_json(head):
                        # docker save writes the manifest last: every document is kept (on disk,
                        # parsed only if the manifest leads to it)
                        if m.size > self.limits.json_member:
                            contents.too_big.add(name)
                            continue
                        saved += m.size
                        if saved > self.limits.json_total:
                            raise limit_error("json_total", self.limits.json_total)
                        contents.sources[name] = self._save_json(head + src.read(self.limits.json_member))
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
        except (SourceError, ArchiveError, DeadlinePassed):
            raise
        except _decode_errors() as e:
            raise ArchiveError("image.error.truncated", path=label, error=_short(e)) from None
        contents.bytes_read = (counter or raw).count if isinstance(counter or raw, _Counter) else 0
        return contents

    def _save_json(self, data: bytes) -> Callable[[], Optional[bytes]]:
        """A JSON member of a streamed archive, kept in the workspace until the manifest is known."""
        self._write(len(data))
        dest = self.ws.new_file(self.ws.index, ".json")
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

        def read() -> Optional[bytes]:
            with open(dest, "rb") as fh:
                return fh.read(self.limits.json_member + 1)

        return read


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


def _short(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:200]
