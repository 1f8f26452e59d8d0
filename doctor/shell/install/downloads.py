"""The files `pip download` left for a transaction: which distribution and version each one is
(``packaging`` parses wheel and sdist file names) and what its metadata says (the one metadata
reader, doctor.parse.metadata), checked before anything in the environment changes."""
from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from packaging.requirements import Requirement
from packaging.utils import (InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename,
                             parse_wheel_filename)
from packaging.version import InvalidVersion, Version

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.parse.metadata import CoreMetadata, parse_core_metadata

MAX_METADATA = 4 * 1024 * 1024


def file_name_version(filename: str) -> Optional[Tuple[str, str]]:
    """(canonical name, version) of a wheel or sdist file name, None for anything else."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return canonicalize_name(name), str(version)
        if filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            return canonicalize_name(name), str(version)
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion, ValueError):
        return None
    return None


def read_metadata(path: Path) -> CoreMetadata:
    """Name, Version and Requires-Dist of a downloaded wheel or sdist; DoctorError when the file
    is damaged."""
    try:
        if path.name.endswith(".whl"):
            with zipfile.ZipFile(path) as z:
                bad = z.testzip()
                if bad is not None:
                    raise DoctorError(T("shell.download.crc", file=path.name, member=bad))
                names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
                if not names:
                    raise DoctorError(T("shell.download.not_wheel", file=path.name))
                with z.open(names[0]) as fh:
                    raw = fh.read(MAX_METADATA)
        elif path.name.endswith(".tar.gz"):
            with tarfile.open(path, "r:gz") as tar:
                member = next((m for m in tar if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")), None)
                if member is None or not member.isfile():
                    raise DoctorError(T("shell.download.no_pkg_info", file=path.name))
                member_file = tar.extractfile(member)
                raw = member_file.read(MAX_METADATA) if member_file is not None else b""
        else:
            raise DoctorError(T("shell.download.unknown_format", file=path.name))
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as e:
        raise DoctorError(T("shell.download.corrupt", file=path.name, why=str(e)))
    meta = parse_core_metadata(raw)
    if meta.problem:
        raise DoctorError(T("shell.download.bad_metadata", file=path.name, why=meta.problem))
    return meta


def match_downloads(specs: Sequence[str], directory: Path) -> Dict[str, Path]:
    """The downloaded file for each requirement string, checked (readable, right name/version)."""
    files: Dict[str, List[Tuple[str, Path]]] = {}
    for p in sorted(directory.iterdir()):
        nv = file_name_version(p.name)
        if nv:
            files.setdefault(nv[0], []).append((nv[1], p))
    out: Dict[str, Path] = {}
    for spec in specs:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        cands = [p for v, p in files.get(name, []) if req.url or contains(req, v)]
        if not cands:
            raise DoctorError(T("shell.download.not_produced", spec=spec))
        meta = read_metadata(cands[0])
        if meta.canonical_name != name or (not req.url and not contains(req, meta.version)):
            raise DoctorError(T("shell.download.other_dist", file=cands[0].name, name=meta.canonical_name, version=meta.version, spec=spec))
        out[spec] = cands[0]
    return out


def contains(req: Requirement, version: str) -> bool:
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except (InvalidVersion, ValueError):
        return False


# ---------------------------------------------------------------------------------------------
# the resolved files, fetched by the doctor itself: in parallel, hash-checked, resumable from the
# doctor's cache (a dry run or an earlier --apply leaves them there), with a byte count


WHEEL_CACHE = "wheels"
PARALLEL = 4
CHUNK = 1 << 20
Progress = Callable[[int, int, str], None]  # (bytes done, bytes total, file name)


def cached_path(sha256: str, filename: str) -> Path:
    from doctor.shell.host.cache import _dir

    return _dir(WHEEL_CACHE) / sha256[:2] / sha256 / filename


def _sha256_file(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _place(src: Path, dest: Path) -> None:
    import os
    import shutil

    if dest.exists():
        dest.unlink()
    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)


def _auth_for(url: str, index_urls: Sequence[str]):
    """Credentials of the index a file lies on (user:password@ in the index URL; uv and pip
    drop them from the file URLs they report)."""
    from urllib.parse import urlparse

    host = urlparse(url).hostname
    for i in index_urls:
        u = urlparse(i)
        if u.hostname == host and u.username:
            from urllib.parse import unquote

            return (unquote(u.username), unquote(u.password or ""))
    return None


def fetch_resolved(files: Sequence, dest: Path, *, cert: Optional[str] = None, proxy: Optional[str] = None,
                   index_urls: Sequence[str] = (), deadline: float = 3600.0,
                   progress: Optional[Progress] = None) -> Dict[str, Path]:
    """name -> the file in ``dest`` for every resolved file (parse.pipreport.Resolved), each one's
    sha256 checked. Taken from the doctor's cache when it is there, else copied (file://) or
    downloaded (4 at a time, one total ``deadline``) into the cache first. Raises DoctorError
    (one line) for a file that cannot be had or does not match its hash: nothing is changed."""
    import concurrent.futures
    import os
    import threading
    import time
    from urllib.parse import unquote, urlparse

    dest.mkdir(parents=True, exist_ok=True)
    total = sum(r.size or 0 for r in files)
    done = [0]
    lock = threading.Lock()
    stop = threading.Event()  # set when the phase ends: no thread goes on reading
    end = time.monotonic() + deadline

    def advance(n: int, name: str) -> None:
        with lock:
            done[0] += n
            if progress is not None:
                progress(done[0], total, name)

    todo = []
    out: Dict[str, Path] = {}
    for r in files:
        digest = r.hashes.get("sha256")
        if not digest:
            raise DoctorError(T("shell.download.no_sha256", file=r.filename))
        cached = cached_path(digest, r.filename)
        if cached.is_file() and _sha256_file(cached) == digest:
            _place(cached, dest / r.filename)
            out[r.name] = dest / r.filename
            advance(r.size or cached.stat().st_size, r.filename)
        else:
            todo.append(r)
    session = None
    if any(urlparse(r.url).scheme in ("http", "https") for r in todo):
        import requests

        from doctor.shell.runtime.net import watched

        session = watched(requests.Session())  # its connections join the watch below
        session.headers["User-Agent"] = "ascend-doctor (fix --apply)"
        if cert:
            session.verify = cert
        if proxy:
            session.proxies = {"http": proxy, "https": proxy}

    def one(r) -> Path:
        digest = r.hashes["sha256"]
        cached = cached_path(digest, r.filename)
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f".{r.filename}.{os.getpid()}.{threading.get_ident()}.part")
        u = urlparse(r.url)
        import hashlib

        h = hashlib.sha256()
        try:
            if u.scheme == "file" or not u.scheme:
                src = unquote(u.path) if u.scheme else r.url
                with open(src, "rb") as fin, open(tmp, "wb") as fout:
                    for block in iter(lambda: fin.read(CHUNK), b""):
                        h.update(block)
                        fout.write(block)
                        advance(len(block), r.filename)
            else:
                assert session is not None
                left = end - time.monotonic()
                if left <= 0:
                    raise DoctorError(T("shell.download.deadline", file=r.filename, seconds=f"{deadline:g}"))
                import requests

                from doctor.shell.runtime.net import cut_off, watch

                try:
                    # the watch ends a server that sends its headers a line at a time (each line
                    # within the read timeout) at the deadline
                    with watch(end):
                        resp = session.get(r.url, stream=True, timeout=(min(30.0, left), min(60.0, left)),
                                           auth=_auth_for(r.url, index_urls))
                except requests.RequestException:
                    if time.monotonic() > end:
                        raise DoctorError(T("shell.download.deadline", file=r.filename, seconds=f"{deadline:g}")) from None
                    raise

                # a read without end (an endless chunked trailer) is ended at the deadline: else this
                # thread outlived the phase and the doctor's exit waited for it forever
                cancel = cut_off(resp, end)
                try:
                    if resp.status_code != 200:
                        raise DoctorError(T("shell.download.http", file=r.filename, host=u.hostname, status=resp.status_code))
                    with open(tmp, "wb") as fout:
                        for block in resp.iter_content(CHUNK):
                            h.update(block)
                            fout.write(block)
                            advance(len(block), r.filename)
                            if stop.is_set():
                                raise DoctorError(T("shell.download.stopped", file=r.filename))
                            if time.monotonic() > end:
                                raise DoctorError(T("shell.download.deadline", file=r.filename, seconds=f"{deadline:g}"))
                    if time.monotonic() > end:  # the body was cut off at the deadline
                        raise DoctorError(T("shell.download.deadline", file=r.filename, seconds=f"{deadline:g}"))
                except Exception as e:
                    if not isinstance(e, DoctorError) and time.monotonic() > end:  # a read broken by the cut-off
                        raise DoctorError(T("shell.download.deadline", file=r.filename, seconds=f"{deadline:g}")) from None
                    raise
                finally:
                    cancel()
                    resp.close()
            if h.hexdigest() != digest:
                raise DoctorError(T("shell.download.sha256", file=r.filename, got=h.hexdigest(), want=digest))
            os.replace(tmp, cached)
        finally:
            if tmp.exists():
                tmp.unlink()
        _place(cached, dest / r.filename)
        return dest / r.filename

    if todo:
        import requests

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL)
        try:
            futures = {pool.submit(one, r): r for r in sorted(todo, key=lambda r: -(r.size or 0))}
            for f in concurrent.futures.as_completed(futures, timeout=max(1.0, end - time.monotonic())):
                r = futures[f]
                try:
                    out[r.name] = f.result()
                except requests.RequestException as e:
                    raise DoctorError(T("shell.download.failed", file=r.filename, host=urlparse(r.url).hostname,
                                        why=str(e).splitlines()[0][:200] if str(e) else type(e).__name__))
                except OSError as e:
                    raise DoctorError(T("shell.download.os_error", file=r.filename, why=e.strerror or str(e)))
        except concurrent.futures.TimeoutError:
            raise DoctorError(T("shell.download.timeout", seconds=f"{deadline:g}"))
        finally:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
    return out
