"""The core metadata (Requires-Dist, Requires-Python) of the files a resolver chose, without
downloading them: uv's lock names files, not what they require, and the plan needs both (the
closure without CUDA, pip check after the plan).

For each file, in order: the doctor's cache (keyed by the file's sha256: a file never changes),
the file itself when it is local (file:// indexes, find-links), the PEP 658 ``.metadata`` file
next to it (PyPI serves one for every wheel), else the METADATA read out of the remote wheel with
HTTP range requests (doctor.shell.install.index). Everything under one total deadline, 16 at a time.
"""
from __future__ import annotations

import concurrent.futures
import os
import time
import zipfile
from typing import Dict, List, Mapping, Optional, Sequence
from urllib.parse import unquote, urlparse

from doctor.errors import DoctorError
from doctor.i18n import T
from doctor.parse.metadata import parse_core_metadata
from doctor.parse.pipreport import Resolved
from doctor.shell.host import cache

MAX_METADATA = 8 * 1024 * 1024
WORKERS = 16
KIND = "wheel-metadata"


class MetadataError(Exception):
    """The metadata of a resolved file could not be read (one line)."""


def _from_local(path: str) -> bytes:
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if not names:
                raise MetadataError(f"{os.path.basename(path)} has no .dist-info/METADATA")
            with z.open(names[0]) as fh:
                return fh.read(MAX_METADATA)
    from doctor.shell.install.downloads import read_metadata  # an sdist's PKG-INFO
    from pathlib import Path

    meta = read_metadata(Path(path))
    lines = [f"Name: {meta.name}", f"Version: {meta.version}"]
    if meta.requires_python:
        lines.append(f"Requires-Python: {meta.requires_python}")
    lines += [f"Requires-Dist: {r}" for r in meta.requires_dist]
    return ("\n".join(lines) + "\n").encode()


def _remote(client, url: str) -> bytes:
    """PEP 658 first (one small GET), then the wheel's METADATA by range requests."""
    from doctor.shell.install.index import IndexFetchError, read_body

    resp = client._get(url + ".metadata")
    if resp.status_code == 200:
        body = read_body(resp, url + ".metadata", MAX_METADATA, client.deadline)
        if body.lstrip().startswith(b"Metadata-Version"):
            return body
    else:
        resp.close()
    if url.split("#", 1)[0].endswith(".whl"):
        return client._wheel_metadata(url)
    if url.split("#", 1)[0].endswith(".tar.gz"):
        return client._sdist_metadata(url)
    raise IndexFetchError(T("index.error.no_metadata_kind", url=url))


def fill_metadata(packages: Sequence[Resolved], env: Mapping[str, str], *, deadline: float = 60.0,
                  cert: Optional[str] = None, proxy: Optional[str] = None) -> List[str]:
    """Fill ``requires``/``requires_python`` of every package whose metadata is not known.
    Returns the problems, one line each (a package whose metadata could not be read)."""
    todo = [p for p in packages if not p.metadata_known]
    if not todo:
        return []
    problems: List[str] = []
    remote: List[Resolved] = []
    for p in todo:
        digest = p.hashes.get("sha256")
        hit = cache.read(KIND, digest) if digest else None
        if isinstance(hit, dict) and isinstance(hit.get("requires"), list):
            p.requires = [str(x) for x in hit["requires"]]
            p.requires_python = hit.get("requires_python")
            p.metadata_known = True
            continue
        u = urlparse(p.url)
        if u.scheme == "file" or (not u.scheme and p.url):
            try:
                _set(p, _from_local(unquote(u.path) if u.scheme else p.url))
            except (OSError, zipfile.BadZipFile, MetadataError, DoctorError, ValueError) as e:
                problems.append(f"{p.filename or p.name}: cannot read its metadata ({_short(e)})")
            continue
        remote.append(p)
    if remote:
        problems += _fetch_remote(remote, env, deadline, cert, proxy)
    return problems


def _set(p: Resolved, raw: bytes) -> None:
    meta = parse_core_metadata(raw)
    if meta.problem:
        raise MetadataError(meta.problem)
    p.requires = list(meta.requires_dist)
    p.requires_python = meta.requires_python
    p.metadata_known = True
    digest = p.hashes.get("sha256")
    if digest:
        cache.write(KIND, digest, {"requires": p.requires, "requires_python": p.requires_python})


def _fetch_remote(remote: Sequence[Resolved], env: Mapping[str, str], deadline: float, cert: Optional[str],
                  proxy: Optional[str]) -> List[str]:
    from doctor.shell.install.index import IndexClient, IndexFetchError

    client = IndexClient(["https://unused.invalid/"], deadline=deadline)
    if cert:
        client.session.verify = cert
    if proxy:
        client.session.proxies = {"http": proxy, "https": proxy}
    client.session.trust_env = True
    client.session.headers["User-Agent"] = "ascend-doctor (fix: wheel metadata)"
    problems: Dict[str, str] = {}
    end = time.monotonic() + deadline

    def one(p: Resolved) -> None:
        try:
            _set(p, _remote(client, p.url))
        except (IndexFetchError, MetadataError, ValueError) as e:
            problems[p.name] = f"{p.filename or p.name}: cannot read its metadata ({_short(e)})"

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS)
    try:
        futures = [pool.submit(one, p) for p in remote]
        done, pending = concurrent.futures.wait(futures, timeout=max(0.0, end - time.monotonic()))
        for p, f in zip(remote, futures):
            if f in pending:
                problems.setdefault(p.name, f"{p.filename or p.name}: its metadata did not come within {deadline:g} s")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return list(problems.values())


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:200]
