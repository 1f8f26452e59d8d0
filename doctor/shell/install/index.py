"""Read package metadata from the package index the user's pip is configured for.

The index comes from pip's own configuration (config files and PIP_* variables, in pip's order);
the only built-in address is pip's default, https://pypi.org/simple/, used when nothing is
configured. The simple-repository protocols (PEP 503 HTML, PEP 691 JSON, PEP 658/714 metadata
files, PEP 592 yanking, PEP 700 upload times) are spoken by pypi-simple. Ours is only what it
lacks:

- METADATA read out of a wheel with HTTP range requests when an index serves no ``.metadata``
  file. PyPI serves none for torch-npu's wheels, and mirrors in China often serve none at all
  (https://github.com/tuna/issues/issues/1775); reading three small ranges beats downloading a
  300 MB wheel. An sdist's PKG-INFO is streamed and reading stops there.
- ``file://`` indexes (pip accepts them: a page, or a plain directory of distributions), served
  to pypi-simple by a small requests adapter.
- One TOTAL deadline for everything a client reads (not only a per-read timeout), and a cap on
  every body it reads.

pypi-simple is imported when a client is made: ``check`` never loads it. Every failure is an
:class:`IndexFetchError` with a one-line message.
"""
from __future__ import annotations

import configparser
import functools
import html
import io
import json
import os
import re
import struct
import sys
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from doctor.errors import UsageError
from doctor.i18n import T
from doctor.versions import pep440, valid_pep440
from doctor.parse.indexfiles import glibc_of, pick_file, release_glibc, upload_date, wheel_tags  # noqa: F401 (re-exported)
from doctor.shell.runtime.deadline import Deadline

if TYPE_CHECKING:  # pragma: no cover
    from pypi_simple import DistributionPackage

PIP_DEFAULT_INDEX = "https://pypi.org/simple/"
TIMEOUT = (5.0, 30.0)  # connect, read: one socket operation never waits longer
DEADLINE = 300.0  # seconds for everything one client reads (a `matrix verify` of ~50 releases)
MAX_PAGE = 64 * 1024 * 1024  # a project page or a .metadata file
MAX_DOWNLOAD = 512 * 1024 * 1024  # a whole-file fallback never reads more than this


class IndexFetchError(UsageError):
    """The index could not be read (network, HTTP status, malformed page or file)."""


class ProjectNotFound(IndexFetchError, LookupError):
    """No configured index has the project (the LookupError ``matrix.verify.PackageIndex`` names)."""


# ---------------------------------------------------------------------------------------------
# pip configuration


@dataclass
class IndexConfig:
    index_url: Optional[str]
    extra_index_urls: List[str] = field(default_factory=list)
    origin: List[str] = field(default_factory=list)  # where each setting came from, for messages
    # Read for `fix` (pip/uv command lines), not used to fetch metadata here.
    find_links: List[str] = field(default_factory=list)
    trusted_hosts: List[str] = field(default_factory=list)
    no_index: bool = False
    cert: Optional[str] = None  # pip's `cert`: the CA bundle pip trusts for HTTPS
    # what else of pip's configuration decides what is resolved (carried over to uv)
    constraints: List[str] = field(default_factory=list)  # constraint files
    proxy: Optional[str] = None
    client_cert: Optional[str] = None
    timeout: Optional[str] = None  # seconds, as written
    retries: Optional[str] = None
    pre: bool = False
    only_binary: List[str] = field(default_factory=list)
    no_binary: List[str] = field(default_factory=list)
    keyring_provider: Optional[str] = None  # subprocess | disabled (what uv also speaks)
    # options that change what pip resolves and that uv has no equivalent for: (option, where)
    uv_cannot: List[Tuple[str, str]] = field(default_factory=list)
    files: List[str] = field(default_factory=list)  # the configuration files read, in pip's order

    @property
    def urls(self) -> List[str]:
        out = [self.index_url] if self.index_url else []
        return out + [u for u in self.extra_index_urls if u not in out]

    def fingerprint(self) -> List[object]:
        """What decides a resolution, for cache keys (the constraint files' contents included)."""
        cons = []
        for c in self.constraints:
            try:
                from doctor.shell.host.files import open_regular

                cons.append([c, open_regular(c, 4 * 1024 * 1024).decode("utf-8", "replace")])
            except OSError as e:
                cons.append([c, f"unreadable: {e.strerror or e}"])
        return [self.index_url, self.extra_index_urls, self.find_links, self.trusted_hosts, self.no_index, self.cert,
                cons, self.proxy, self.client_cert, self.pre, self.only_binary, self.no_binary]


MAX_LOCAL_ENTRIES = 20_000  # files listed per local folder for a cache key (a wheelhouse has hundreds)


def local_folders_state(links: Sequence[str]) -> List[object]:
    """What is in the local folders a resolution reads (find-links, file:// indexes), for cache
    keys: a wheel rebuilt there under the same name is another file with another hash, so a kept
    resolution naming the old hash must not be reused. Each folder's entries by name, size and
    mtime (a file:// index's project folders by their own mtime); URLs of other schemes add
    nothing."""
    import stat as stat_

    out: List[object] = []
    for link in links:
        parsed = urlparse(link)
        if parsed.scheme not in ("", "file"):
            continue
        path = unquote(parsed.path) if parsed.scheme == "file" else link
        try:
            st = os.stat(path)
        except OSError as e:
            out.append([link, f"unreadable: {e.strerror or e}"])
            continue
        if not stat_.S_ISDIR(st.st_mode):
            out.append([link, st.st_size, st.st_mtime_ns])
            continue
        entries: List[Tuple[str, int, int]] = []
        try:
            with os.scandir(path) as it:
                for entry in it:
                    if len(entries) >= MAX_LOCAL_ENTRIES:
                        break
                    try:
                        est = entry.stat()
                    except OSError:
                        continue
                    entries.append((entry.name, est.st_size if stat_.S_ISREG(est.st_mode) else -1, est.st_mtime_ns))
        except OSError as e:
            out.append([link, f"unreadable: {e.strerror or e}"])
            continue
        out.append([link, sorted(entries)])
    return out


def pip_config_files(env: Mapping[str, str], prefix: Optional[str] = None) -> List[Path]:
    """Config files in pip's load order (later files win): global, user, site, PIP_CONFIG_FILE.

    Like pip, PIP_CONFIG_FILE=/dev/null disables all files, and an existing PIP_CONFIG_FILE
    suppresses the user files.
    """
    env_file = env.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    xdg_dirs = env.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs.split(os.pathsep) if d]
    files.append(Path("/etc/pip.conf"))
    if not (env_file and Path(env_file).exists()):
        from doctor import xdg

        files.append(xdg.home(env) / ".pip" / "pip.conf")
        files.append(xdg.config_home(env) / "pip" / "pip.conf")
    site = prefix or env.get("VIRTUAL_ENV")
    if site:
        files.append(Path(site) / "pip.conf")
    if env_file:
        files.append(Path(env_file))
    return files


def _split_urls(value: str) -> List[str]:
    return [u for u in re.split(r"\s+", value.strip()) if u]


def _true(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on", "y")


# pip options that change what is resolved and that uv cannot be told (fix resolves with pip then)
_UV_CANNOT = frozenset({"use-feature", "use-deprecated", "platform", "abi", "implementation", "python-version",
                        "prefer-binary"})


def read_pip_options(env: Mapping[str, str], prefix: Optional[str] = None,
                     files: Optional[Sequence[Path]] = None) -> Tuple[Dict[str, Tuple[str, str]], List[str]]:
    """pip install's options from its configuration, as pip reads them: the files in pip's order
    ([global], then [install] on top), then the PIP_* variables; later wins. Returns option ->
    (value, where it came from) and the files read. A file that exists but cannot be read or
    parsed is a one-line IndexFetchError (exit 2): pip would stop on it too, or silently read
    something else than the user thinks."""
    from doctor.shell.host.files import open_regular

    options: Dict[str, Tuple[str, str]] = {}
    read: List[str] = []
    for path in (pip_config_files(env, prefix) if files is None else files):
        try:
            os.stat(path)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise IndexFetchError(T("index.error.pip_config", path=path, error=e.strerror or str(e)))
        parser = configparser.RawConfigParser()
        try:
            raw = open_regular(str(path), 1024 * 1024)
            parser.read_string(raw.decode("utf-8"), source=str(path))
        except (configparser.Error, OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or str(e).splitlines()[0] if str(e) else type(e).__name__
            raise IndexFetchError(T("index.error.pip_config", path=path, error=why))
        read.append(str(path))
        for section in ("global", "install"):
            if not parser.has_section(section):
                continue
            for key, value in parser.items(section):
                options[key.replace("_", "-").lower()] = (value, str(path))
    for var, value in env.items():
        if var.startswith("PIP_") and var != "PIP_CONFIG_FILE" and value is not None:
            options[var[4:].lower().replace("_", "-")] = (value, var)
    return options, read


def pip_index_config(
    env: Optional[Mapping[str, str]] = None,
    prefix: Optional[str] = None,
    files: Optional[Sequence[Path]] = None,
) -> IndexConfig:
    """The index URLs (and the rest of what decides a resolution) ``pip install`` would use,
    read the way pip reads them."""
    env = os.environ if env is None else env
    options, read = read_pip_options(env, prefix, files)

    def get(name: str) -> Optional[str]:
        v = options.get(name)
        return v[0].strip() if v is not None else None

    def where(name: str) -> str:
        return options[name][1]

    origin: List[str] = []
    index_url = get("index-url") or None
    if index_url:
        origin.append(f"index-url from {where('index-url')}")
    extra = _split_urls(get("extra-index-url") or "")
    if extra:
        origin.append(f"extra-index-url from {where('extra-index-url')}")
    no_index = _true(get("no-index") or "")
    find_links = _split_urls(get("find-links") or "")
    trusted = _split_urls(get("trusted-host") or "")
    cert = get("cert") or None
    constraints = _split_urls(get("constraint") or "")
    for name, urls in (("index-url", [index_url] if index_url else []), ("extra-index-url", extra)):
        for u in urls:
            _check_url(u, name, where(name))
    uv_cannot = [(k, src) for k, (_, src) in sorted(options.items()) if k in _UV_CANNOT]
    keyring = get("keyring-provider")
    if keyring and keyring not in ("subprocess", "disabled"):
        uv_cannot.append((f"keyring-provider = {keyring}", where("keyring-provider")))
    cfg = IndexConfig(index_url, extra, origin, find_links, trusted, no_index, cert, constraints=constraints,
                      proxy=get("proxy") or None, client_cert=get("client-cert") or None,
                      timeout=get("timeout") or get("default-timeout") or None, retries=get("retries") or None,
                      pre=_true(get("pre") or ""), only_binary=_split_list(get("only-binary")),
                      no_binary=_split_list(get("no-binary")), uv_cannot=uv_cannot, files=read,
                      keyring_provider=keyring if keyring in ("subprocess", "disabled") else None)
    if no_index:
        cfg.index_url, cfg.extra_index_urls = None, []
        cfg.origin.append("no-index is set")
        return cfg
    if index_url is None:
        cfg.index_url = PIP_DEFAULT_INDEX
        cfg.origin.append("pip's default index (nothing configured)")
    return cfg


def _check_url(url: str, name: str, origin: str) -> None:
    """An index URL every later reader can parse (an unbalanced '[' or a port that is no number
    made urllib raise ValueError deep inside fix: an internal error instead of one line)."""
    from doctor.i18n import T
    from doctor.textsafe import clean

    try:
        _ = urlparse(url).port  # the port is parsed only when asked for
    except ValueError as e:
        raise IndexFetchError(T("fix.error.bad_index_url", name=name, url=clean(repr(url)), origin=origin, why=str(e)))


def _split_list(value: Optional[str]) -> List[str]:
    return [x for x in re.split(r"[\s,]+", value or "") if x]


# ---------------------------------------------------------------------------------------------
# transport: a total deadline, capped bodies, file:// URLs


def _exceeded(d: Deadline, url: str) -> IndexFetchError:
    where = f" (reading {url})" if url else ""
    return IndexFetchError(f"index deadline of {d.seconds:g} s exceeded{where}")


def index_deadline(seconds: float) -> Deadline:
    """The shell's one Deadline, spent as an IndexFetchError naming the URL being read."""
    return Deadline(seconds, _exceeded)


def deadline_session(deadline: Deadline, timeout: Tuple[float, float] = TIMEOUT, cap: int = MAX_PAGE):
    """A requests.Session whose every request honours ``deadline``: each socket operation waits
    at most min(timeout, what is left), and a body is read in chunks, checking the deadline and
    a size cap between them (a server that drips bytes cannot hold a request open forever).
    requests is imported here, not when this module is."""
    import requests

    from doctor.shell.runtime.net import watch, watched

    class DeadlineSession(requests.Session):
        def send(self, request, **kwargs):
            left = deadline.left(request.url)
            kwargs["timeout"] = (min(timeout[0], left), min(timeout[1], left))
            stream = kwargs.get("stream", False)
            kwargs["stream"] = True
            # the per-read timeout does not end a server that sends its headers a line at a
            # time: the watch shuts the socket down at the deadline, connect and headers included
            try:
                with watch(deadline.end):
                    resp = super().send(request, **kwargs)
            except requests.exceptions.RequestException:
                deadline.left(request.url)  # broken by the watch: the deadline's error
                raise
            if not stream:
                body = read_body(resp, request.url, cap, deadline)
                # what Response.content would have read: set it the way requests itself does
                resp._content, resp._content_consumed = body, True
            return resp

    session = watched(DeadlineSession())
    session.headers["User-Agent"] = "ascend-doctor (matrix sync/verify)"
    session.mount("file://", _file_adapter())
    return session


def read_body(resp, url: str, cap: int, deadline: Optional[Deadline] = None) -> bytes:
    from doctor.shell.runtime.net import cut_off

    buf = io.BytesIO()
    cancel = cut_off(resp, deadline.end) if deadline is not None else (lambda: None)  # a read without end
    try:
        for chunk in _as_received(resp):
            buf.write(chunk)
            if buf.tell() > cap:
                raise IndexFetchError(T("index.error.too_large", url=url, mib=cap // (1 << 20)))
            if deadline is not None:
                deadline.left(url)
    except IndexFetchError:
        raise
    except Exception:  # noqa: BLE001 - a read broken by the cut-off is the deadline's
        if deadline is not None:
            deadline.left(url)
        raise
    finally:
        cancel()
        resp.close()
    if deadline is not None:
        deadline.left(url)  # a body cut off at the deadline is no body
    return buf.getvalue()


def _as_received(resp) -> Iterator[bytes]:
    """The body in the pieces the network delivers. ``iter_content(n)`` waits until n bytes
    have come, so a server dripping a few bytes a second would be checked against the deadline
    only at the end; urllib3 2's ``read1`` returns after each receive."""
    raw = resp.raw
    if type(raw).__module__.startswith("urllib3") and hasattr(raw, "read1"):
        while True:
            data = raw.read1(1 << 16, decode_content=True)
            if not data:
                return
            yield data
    else:  # urllib3 1.x, or a file:// body read whole
        yield from resp.iter_content(1 << 10)


def _file_adapter():
    """``file://`` for requests, the way pip reads a local index: a file (with Range support),
    a directory's index.json / index.html, or else a generated PEP 503 page of the directory's
    distributions."""
    from requests.adapters import BaseAdapter

    class FileAdapter(BaseAdapter):
        def send(self, request, **kwargs):  # type: ignore[override]
            return _file_response(request)

        def close(self) -> None:
            pass

    return FileAdapter()


def _file_response(request):
    """The Response for a file:// request. A file is read whole: local wheelhouses are small, and
    a Range header is honoured so the ranged METADATA reader is tested the same way."""
    from requests import Response

    path = Path(unquote(urlparse(request.url).path))
    resp = Response()
    resp.url, resp.request = request.url, request
    body: bytes = b""
    ctype = "application/octet-stream"
    status = 200
    try:
        if path.is_dir():
            for name, kind in (("index.json", "application/vnd.pypi.simple.v1+json"),
                               ("index.html", "text/html")):
                if (path / name).is_file():
                    body, ctype = (path / name).read_bytes(), kind
                    resp.url = (path / name).as_uri()
                    break
            else:
                body, ctype = _directory_page(path), "text/html"
                resp.url = path.as_uri() + "/"
        elif path.is_file():
            body = path.read_bytes()
            m = re.match(r"bytes=(\d*)-(\d*)$", request.headers.get("Range") or "")
            if m:
                size = len(body)
                a, b = m.groups()
                start, end = (size - int(b), size - 1) if a == "" else (int(a), min(int(b or size - 1), size - 1))
                start = max(start, 0)
                body, status = body[start:end + 1], 206
                resp.headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        else:
            status, body = 404, b"not found"
    except OSError as e:
        raise IndexFetchError(T("index.error.cannot_read", path=path, error=e.strerror or str(e)))
    resp.status_code = status
    resp.headers["Content-Type"] = ctype
    resp.headers["Content-Length"] = str(len(body))
    resp.raw = io.BytesIO(body)
    return resp


def _directory_page(path: Path) -> bytes:
    links = []
    for p in sorted(path.iterdir()):
        if not p.is_file() or not p.name.endswith((".whl", ".tar.gz", ".zip")):
            continue
        attrs = f'href="{html.escape(p.name)}"'
        meta = Path(str(p) + ".metadata")
        if meta.is_file():
            import hashlib

            attrs += f' data-core-metadata="sha256={hashlib.sha256(meta.read_bytes()).hexdigest()}"'
        links.append(f"<a {attrs}>{html.escape(p.name)}</a>")
    return ("<!DOCTYPE html><html><body>" + "\n".join(links) + "</body></html>").encode()


# ---------------------------------------------------------------------------------------------
# the client


class IndexClient:
    """Project pages and metadata from a list of index URLs (http(s) or file://), within one
    total ``deadline`` (seconds) for everything it reads."""

    def __init__(self, urls: Sequence[str], session=None, timeout: Tuple[float, float] = TIMEOUT,
                 deadline: float = DEADLINE):
        if not urls:
            raise IndexFetchError(T("index.error.no_index"))
        self.urls = list(urls)
        self.deadline = index_deadline(deadline)
        self.session = session if session is not None else deadline_session(self.deadline, timeout)

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Run a pypi-simple call; every failure becomes one IndexFetchError line."""
        import requests
        import pypi_simple

        try:
            return fn()
        except IndexFetchError:
            raise
        except requests.exceptions.Timeout:
            raise IndexFetchError(T("index.error.timed_out", url=what))
        except requests.exceptions.HTTPError as e:
            code = e.response.status_code if e.response is not None else "?"
            raise IndexFetchError(T("index.error.http", url=what, code=code))
        except requests.exceptions.RequestException as e:
            raise IndexFetchError(T("index.error.unreachable", url=what, error=_short(e)))
        except pypi_simple.DigestMismatchError as e:
            raise IndexFetchError(T("index.error.checksum", url=what, error=_short(e)))
        except (pypi_simple.UnsupportedContentTypeError, pypi_simple.UnsupportedRepoVersionError,
                ValueError) as e:
            raise IndexFetchError(f"{what}: {_short(e)}")

    # -- project pages ---------------------------------------------------------------------------

    def project_files(self, project: str) -> List["DistributionPackage"]:
        """All files of ``project`` across the configured indexes (first index wins per name)."""
        import pypi_simple

        seen: Dict[str, "DistributionPackage"] = {}
        found_any = False
        for base in self.urls:
            client = pypi_simple.PyPISimple(endpoint=base, session=self.session)
            url = client.get_project_url(project)
            try:
                page = self._call(url, functools.partial(client.get_project_page, project))
            except pypi_simple.NoSuchProjectError:
                continue
            found_any = True
            for f in page.packages:
                if f.version is not None:
                    seen.setdefault(f.filename, f)
        if not found_any:
            raise ProjectNotFound(T("index.error.not_found", project=project, urls=", ".join(self.urls)))
        return list(seen.values())

    def versions(self, project: str, include_yanked: bool = False) -> List[str]:
        vs = {f.version for f in self.project_files(project)
              if f.version and pep440(f.version) and (include_yanked or not f.is_yanked)}
        return sorted(vs, key=valid_pep440)

    # -- metadata --------------------------------------------------------------------------------

    def metadata(self, f: "DistributionPackage") -> Dict[str, object]:
        """Name, version, Requires-Python and Requires-Dist of one file, in the
        index-metadata.json shape, plus ``metadata_from`` (how it was read)."""
        import pypi_simple

        raw: Optional[bytes] = None
        how = ""
        if f.has_metadata:
            client = pypi_simple.PyPISimple(session=self.session)
            try:
                raw = self._call(f.metadata_url, lambda: client.get_package_metadata_bytes(
                    f, verify=bool(f.metadata_digests)))
                how = "PEP 658 .metadata"
            except pypi_simple.NoMetadataError:  # announced but absent: read the file itself
                raw = None
        if raw is None and f.package_type == "wheel":
            raw, how = self._wheel_metadata(f.url), "METADATA inside the wheel"
        elif raw is None and f.filename.endswith(".tar.gz"):
            raw, how = self._sdist_metadata(f.url), "PKG-INFO inside the sdist"
        elif raw is None:
            raise IndexFetchError(T("index.error.no_metadata", filename=f.filename))
        return metadata_entry(raw, f.filename, how)

    def _get(self, url: str, headers: Optional[Dict[str, str]] = None):
        import requests

        try:
            return self.session.get(url, headers=headers or {}, stream=True)
        except IndexFetchError:
            raise
        except requests.exceptions.Timeout:
            raise IndexFetchError(T("index.error.timed_out", url=url))
        except requests.exceptions.RequestException as e:
            raise IndexFetchError(T("index.error.unreachable", url=url, error=_short(e)))

    def _range(self, url: str, start: Optional[int], end: int) -> Tuple[bytes, Optional[int]]:
        """Bytes ``start..end`` (or the last ``end`` bytes when start is None) and the file's
        total size; the size is None when the server ignored the range and sent everything."""
        spec = f"bytes=-{end}" if start is None else f"bytes={start}-{end}"
        resp = self._get(url, {"Range": spec})
        if resp.status_code == 206:
            m = re.search(r"/(\d+)\s*$", resp.headers.get("Content-Range", ""))
            if not m:
                resp.close()
                raise IndexFetchError(T("index.error.no_content_range", url=url))
            want = (end if start is None else end - start + 1)
            return read_body(resp, url, want + 1024, self.deadline), int(m.group(1))
        if resp.status_code == 200:
            return read_body(resp, url, MAX_DOWNLOAD, self.deadline), None
        resp.close()
        raise IndexFetchError(T("index.error.http", url=url, code=resp.status_code))

    def _wheel_metadata(self, url: str) -> bytes:
        """METADATA out of a remote wheel with a few range requests: the end of central
        directory, the central directory, then the one member (wheels are zip files)."""
        tail, size = self._range(url, None, 65536)
        if size is None:
            return _metadata_from_zip(tail, url)
        cd_offset, cd_size = _central_directory(tail, url)
        if 0xFFFFFFFF in (cd_offset, cd_size):  # ZIP64 (a wheel over 4 GiB): read it whole
            whole, _ = self._range(url, 0, size - 1)
            return _metadata_from_zip(whole, url)
        tail_start = size - len(tail)
        if cd_offset >= tail_start:
            cd = tail[cd_offset - tail_start: cd_offset - tail_start + cd_size]
        else:
            cd, _ = self._range(url, cd_offset, cd_offset + cd_size - 1)
        offset, csize, method = _find_metadata_entry(cd, url)
        head, _ = self._range(url, offset, offset + 30 + 1024 + csize)
        if head[:4] != b"PK\x03\x04":
            raise IndexFetchError(T("index.error.zip_offset", url=url))
        n, m = struct.unpack("<HH", head[26:30])
        data = head[30 + n + m: 30 + n + m + csize]
        if len(data) < csize:  # unusually long name/extra field: read exactly the data
            data, _ = self._range(url, offset + 30 + n + m, offset + 30 + n + m + csize - 1)
        return _inflate(data, method, url)

    def _sdist_metadata(self, url: str) -> bytes:
        """PKG-INFO of an sdist, streamed: reading stops at PKG-INFO, which setuptools writes
        early in the archive (a 20 MB sdist costs a few hundred kB)."""
        resp = self._get(url)
        try:
            if resp.status_code != 200:
                raise IndexFetchError(T("index.error.http", url=url, code=resp.status_code))
            return _pkg_info(_Limited(resp.raw, MAX_DOWNLOAD, url, self.deadline), url)
        finally:
            resp.close()


class _Limited:
    """A read()-only stream that refuses to go past ``limit`` bytes or the deadline."""

    def __init__(self, raw, limit: int, url: str, deadline: Deadline):
        self.raw, self.limit, self.url, self.deadline, self.count = raw, limit, url, deadline, 0

    def read(self, n: int = -1) -> bytes:
        want = n if n and n > 0 else 1 << 16
        # read1: what one receive brought (read(n) would wait out a dripping server for n bytes)
        data = self.raw.read1(want) if hasattr(self.raw, "read1") else self.raw.read(want)
        self.count += len(data)
        if self.count > self.limit:
            raise IndexFetchError(T("index.error.too_large", url=self.url, mib=self.limit // (1 << 20)))
        self.deadline.left(self.url)
        return data


def _pkg_info(fileobj, url: str) -> bytes:
    try:
        with tarfile.open(fileobj=fileobj, mode="r|gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if len(parts) == 2 and parts[1] == "PKG-INFO" and member.isfile():
                    fh = tar.extractfile(member)
                    if fh is not None:
                        return fh.read()
    except (tarfile.TarError, OSError, EOFError, zlib.error) as e:
        raise IndexFetchError(T("index.error.sdist_unreadable", url=url, error=_short(e)))
    raise IndexFetchError(T("index.error.sdist_no_pkg_info", url=url))


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:200]


def _central_directory(tail: bytes, url: str) -> Tuple[int, int]:
    """(offset, size) of the zip central directory, from the end-of-central-directory record."""
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or len(tail) - pos < 22:
        raise IndexFetchError(T("index.error.zip_no_eocd", url=url))
    cd_size, cd_offset = struct.unpack("<II", tail[pos + 12: pos + 20])
    return cd_offset, cd_size


def _find_metadata_entry(cd: bytes, url: str) -> Tuple[int, int, int]:
    """(local header offset, compressed size, method) of ``*.dist-info/METADATA``."""
    i = 0
    while i + 46 <= len(cd) and cd[i:i + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", cd[i + 10: i + 12])
        csize, = struct.unpack("<I", cd[i + 20: i + 24])
        n, m, k = struct.unpack("<HHH", cd[i + 28: i + 34])
        offset, = struct.unpack("<I", cd[i + 42: i + 46])
        name = cd[i + 46: i + 46 + n].decode("utf-8", "replace")
        if re.match(r"^[^/]+\.dist-info/METADATA$", name):
            return offset, csize, method
        i += 46 + n + m + k
    raise IndexFetchError(T("index.error.wheel_no_metadata", url=url))


def _inflate(data: bytes, method: int, url: str) -> bytes:
    if method == 0:
        return data
    if method == 8:
        try:
            return zlib.decompress(data, -15)
        except zlib.error as e:
            raise IndexFetchError(T("index.error.metadata_corrupt", url=url, error=str(e)))
    raise IndexFetchError(T("index.error.metadata_compression", url=url, method=method))


def _metadata_from_zip(raw: bytes, url: str) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            for name in z.namelist():
                if re.match(r"^[^/]+\.dist-info/METADATA$", name):
                    return z.read(name)
    except zipfile.BadZipFile as e:
        raise IndexFetchError(T("index.error.not_wheel", url=url, error=str(e)))
    raise IndexFetchError(T("index.error.wheel_no_metadata", url=url))


def metadata_entry(raw: bytes, filename: str, how: str) -> Dict[str, object]:
    """Core metadata -> the index-metadata.json entry shape (doctor.parse.metadata reads it)."""
    from doctor.parse.metadata import parse_core_metadata

    meta = parse_core_metadata(raw)
    if not meta.name or not meta.version:
        raise IndexFetchError(T("index.error.no_name_version", filename=filename))
    if meta.problem:
        raise IndexFetchError(f"{filename}: {meta.problem}")
    return {"name": meta.canonical_name, "version": meta.version, "requires_python": meta.requires_python,
            "requires_dist": list(meta.requires_dist), "file": filename, "metadata_from": how}


# ---------------------------------------------------------------------------------------------
# choosing a file per version


def client_from_pip(env: Optional[Mapping[str, str]] = None, session=None,
                    deadline: float = DEADLINE) -> Tuple[IndexClient, IndexConfig]:
    """A client for the indexes ``pip install`` would use, trusting the CA bundle pip trusts."""
    cfg = pip_index_config(env)
    client = IndexClient(cfg.urls, session=session, deadline=deadline)
    if cfg.cert and session is None:
        if not Path(cfg.cert).exists():
            raise IndexFetchError(T("index.error.no_cert", cert=cfg.cert))
        client.session.verify = cfg.cert
    return client, cfg


if __name__ == "__main__":  # pragma: no cover - manual look-ups: python -m doctor.shell.install.index NAME VERSION...
    client, cfg = client_from_pip()
    project = sys.argv[1]
    files = client.project_files(project)
    for v in sys.argv[2:]:
        f = pick_file(files, v)
        if f is None:
            print(json.dumps({"version": v, "error": "not on the index"}))
            continue
        meta = client.metadata(f)
        meta["glibc"] = release_glibc(files, v)
        print(json.dumps(meta))
