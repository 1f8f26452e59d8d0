"""Reading files that may be anything: only regular files are read, never more than a cap.

A FIFO in place of a version file would block ``open()`` for ever, a character device
(``/dev/zero``) would fill memory, a symlink swapped in after the check would lead elsewhere. So
every read of a file the doctor did not write itself goes through :func:`open_regular`: the file
is opened non-blocking (opening a FIFO without a writer returns at once), checked with ``fstat``
to be a regular file, and read up to a cap.
"""
from __future__ import annotations

import errno
import io
import os
import stat
from typing import TYPE_CHECKING, BinaryIO, Iterable, Iterator, List, Optional, Tuple

if TYPE_CHECKING:
    from doctor.parse.elf import ElfInfo

DEFAULT_CAP = 1024 * 1024


class NotRegularFile(OSError):
    """The path exists but is a FIFO, a device, a socket or a directory."""

    def __init__(self, path: str, mode: int, kind: str = ""):
        kind = kind or ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode)
                        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                        else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", path)
        self.kind = kind


def _open_fd(path: str, follow: bool, dir_fd: Optional[int] = None) -> int:
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd  # O_NONBLOCK stays: it means nothing for a regular file


def open_binary(path: str, follow: bool = True) -> BinaryIO:
    """A regular file opened for reading (seekable), or OSError (NotRegularFile for a FIFO,
    device, socket or directory). ``follow=False`` refuses a symlink as the last component."""
    return io.open(_open_fd(str(path), follow), "rb", closefd=True)


def open_regular_at(dir_fd: int, name: str) -> int:
    """The descriptor of the regular file ``name`` in the directory open as ``dir_fd``, never
    through a symlink (O_NOFOLLOW: ELOOP). ``name`` is one component: the caller checks it."""
    return _open_fd(name, False, dir_fd)


def open_dir_at(dir_fd: Optional[int], name: str) -> int:
    """The descriptor of the directory ``name`` (in ``dir_fd``, or a path when None), never
    through a symlink: a symlink is ELOOP (or ENOTDIR), anything but a directory ENOTDIR."""
    return os.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
                   | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)


def create_at(dir_fd: Optional[int], name: str, data: bytes, mode: int = 0o644) -> None:
    """Create the file ``name`` in the directory open as ``dir_fd`` (a path when None): it must not exist yet
    (O_CREAT|O_EXCL|O_NOFOLLOW: a file or symlink already there is FileExistsError, never
    written through)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                 mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def open_regular(path: str, cap: int = DEFAULT_CAP, follow: bool = True) -> bytes:
    """At most ``cap`` bytes of a regular file. Raises OSError (NotRegularFile included)."""
    fd = _open_fd(str(path), follow)
    try:
        return read_fd(fd, cap)
    finally:
        os.close(fd)


def read_fd(fd: int, cap: int) -> bytes:
    """At most ``cap`` bytes from an open regular file's descriptor (left open)."""
    first = os.read(fd, cap)
    if len(first) < min(cap, 65536) or len(first) == cap:
        return first  # nearly every file: one read (a short read is the end of a regular file)
    chunks = [first]
    left = cap - len(first)
    while left > 0:
        block = os.read(fd, min(left, 1 << 20))
        if not block:
            break
        chunks.append(block)
        left -= len(block)
    return b"".join(chunks)


def read_text(path: str, cap: int = DEFAULT_CAP, follow: bool = True) -> Optional[str]:
    """The text of a regular file (undecodable bytes replaced), or None when it cannot be read."""
    try:
        return open_regular(path, cap, follow).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def lines(path: str, cap: int = 64 * 1024 * 1024, chunk: int = 1 << 16) -> Iterator[str]:
    """The lines of a regular file, streamed (memory stays small whatever the file's size); at
    most ``cap`` bytes are read. Raises OSError when the file cannot be opened."""
    fh = open_binary(path)
    with fh:
        left = cap
        pending = b""
        while left > 0:
            block = fh.read(min(chunk, left))
            if not block:
                break
            left -= len(block)
            pending += block
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                yield raw.decode("utf-8", errors="replace")
        if pending:
            yield pending.decode("utf-8", errors="replace")


def _replaceable(path: str) -> str:
    """The file ``path`` names for :func:`write_atomic`: the path itself when nothing is there or
    a regular file is, the file a symlink leads to when that is a regular file. Anything else (a
    device, a FIFO, a directory, a socket, a symlink to one of those, to nothing or into /proc)
    raises NotRegularFile: renaming over it would replace /dev/null or a named pipe with a file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISLNK(mode):
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, mode)
        return path
    hop = path
    for _ in range(40):  # the kernel's limit on a chain of symlinks
        parent = os.path.realpath(os.path.dirname(os.path.abspath(hop)))
        if parent == "/proc" or parent.startswith("/proc/"):
            # /proc/self/fd/1, /dev/stdout: a descriptor, whatever file it has open today
            raise NotRegularFile(path, mode, kind="a symlink to a file descriptor")
        hop = os.path.join(parent, os.path.basename(hop))
        if not os.path.islink(hop):
            break
        hop = os.path.join(parent, os.readlink(hop))
    else:
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
    try:
        target = os.lstat(hop).st_mode
    except FileNotFoundError:
        raise NotRegularFile(path, mode, kind="a symlink to nothing") from None
    if not stat.S_ISREG(target):
        raise NotRegularFile(path, target, kind="a symlink to " + NotRegularFile(hop, target).kind)
    return hop


def write_atomic(path: str, text: str) -> None:
    """Write a file the user named (a snapshot, a patch) so that a reader never sees half of it:
    a temporary file next to it, renamed over it. Only a regular file (or one a symlink leads
    to) is replaced, or a new one made. Raises OSError (NotRegularFile for anything else)."""
    path = _replaceable(path)
    directory = os.path.dirname(os.path.abspath(path))
    # O_EXCL and a random name: a file (or symlink) already at the temporary name is never written through
    import secrets  # here: random, hmac and hashlib are ~4 ms that check never needs

    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def read_elf(path: str) -> "ElfInfo":
    """The dynamic section of the shared object at ``path`` (doctor.parse.elf reads it), opened
    as a regular file only: a FIFO or a device planted there is an ElfError, never a hang."""
    from doctor.parse import elf

    try:
        with open_binary(path) as fh:
            return elf.read_elf_file(fh)
    except OSError as e:
        raise elf.ElfError(e.strerror or str(e)) from None


def contains(fh: BinaryIO, needles: Iterable[bytes], limit: int = 512 * 1024 * 1024) -> bool:
    """Any of the byte strings in an opened regular file, mapped rather than read (glog keeps
    source file names such as ascend_direct_transport.cpp in the binary, even stripped)."""
    import mmap

    try:
        size = os.fstat(fh.fileno()).st_size
        if size == 0 or size > limit:
            return False
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return any(mm.find(n) >= 0 for n in needles)
    except (OSError, ValueError):
        return False


def remove_tree(top: str) -> None:
    """Remove a directory tree, whatever its depth: without recursion (a crafted layer can put a
    kept file a thousand directories deep: shutil.rmtree before Python 3.13 recurses once per
    level) and through directory descriptors, two at a time (a path below the workspace may be
    longer than a system call accepts)."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(top, flags)
    except OSError:
        return

    def clear(fd: int) -> List[str]:
        """Unlink what is not a directory; the subdirectories still to visit."""
        subdirs = []
        try:
            with os.scandir(fd) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            subdirs.append(e.name)
                        else:
                            os.unlink(e.name, dir_fd=fd)
                    except OSError:
                        pass
        except OSError:
            pass
        return subdirs

    frames: List[Tuple[str, List[str]]] = [("", clear(fd))]  # (name in the parent, subdirectories left)
    while frames:
        name, pending = frames[-1]
        if pending:
            sub = pending.pop()
            try:
                child = os.open(sub, flags, dir_fd=fd)
            except OSError:
                continue
            os.close(fd)
            fd = child
            frames.append((sub, clear(fd)))
            continue
        frames.pop()
        if not frames:
            break
        try:
            parent = os.open("..", flags, dir_fd=fd)
        except OSError:
            break
        os.close(fd)
        fd = parent
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            pass
    os.close(fd)
    try:
        os.rmdir(top)
    except OSError:
        pass
