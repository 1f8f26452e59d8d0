"""Read package metadata from the package index the user's pip is configured for.

The index comes from pip's own configuration (config files and PIP_* variables, in pip's order);
the only built-in address is pip's default, https://pypi.org/simple/, used when nothing is
configured. Project pages are read with the PEP 691 JSON API (HTML, PEP 503, as a fallback for
mirrors that only serve HTML), metadata from PEP 658 ``.metadata`` files, and only when an index
has none, from the wheel itself with HTTP range requests (or the sdist's PKG-INFO).

Every failure is an :class:`IndexFetchError` with a one-line message.
"""
from __future__ import annotations

import configparser
import email.parser
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
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import unquote, urljoin, urlparse

from doctor.errors import UsageError
from doctor.versions import pep440

PIP_DEFAULT_INDEX = "https://pypi.org/simple/"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ACCEPT = f"{JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
TIMEOUT = (5.0, 30.0)  # connect, read
MAX_DOWNLOAD = 512 * 1024 * 1024  # a whole-file fallback never reads more than this


class IndexFetchError(UsageError):
    """The index could not be read (network, HTTP status, malformed page or file)."""


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

    @property
    def urls(self) -> List[str]:
        out = [self.index_url] if self.index_url else []
        return out + [u for u in self.extra_index_urls if u not in out]


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
        home = Path(env.get("HOME") or os.path.expanduser("~"))
        files.append(home / ".pip" / "pip.conf")
        files.append(Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf")
    site = prefix or env.get("VIRTUAL_ENV")
    if site:
        files.append(Path(site) / "pip.conf")
    if env_file:
        files.append(Path(env_file))
    return files


def _split_urls(value: str) -> List[str]:
    return [u for u in re.split(r"\s+", value.strip()) if u]


def pip_index_config(
    env: Optional[Mapping[str, str]] = None,
    prefix: Optional[str] = None,
    files: Optional[Sequence[Path]] = None,
) -> IndexConfig:
    """The index URLs ``pip install`` would use, read the way pip reads them."""
    env = os.environ if env is None else env
    index_url: Optional[str] = None
    extra: List[str] = []
    origin: List[str] = []
    no_index = False
    find_links: List[str] = []
    trusted: List[str] = []
    cert: Optional[str] = None
    for path in (pip_config_files(env, prefix) if files is None else files):
        if not path.is_file():
            continue
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError) as e:
            raise IndexFetchError(f"cannot read pip configuration {path}: {str(e).splitlines()[0]}")
        # pip install reads [global], then [install] on top of it.
        for section in ("global", "install"):
            if not parser.has_section(section):
                continue
            for key, value in parser.items(section):
                key = key.replace("_", "-")
                if key == "index-url":
                    index_url = value.strip()
                    origin.append(f"index-url from {path}")
                elif key == "extra-index-url":
                    extra = _split_urls(value)
                    origin.append(f"extra-index-url from {path}")
                elif key == "no-index":
                    no_index = value.strip().lower() in ("1", "true", "yes", "on")
                elif key == "cert":
                    cert = value.strip()
                elif key == "find-links":
                    find_links = _split_urls(value)
                elif key == "trusted-host":
                    trusted = _split_urls(value)
    if env.get("PIP_INDEX_URL"):
        index_url = env["PIP_INDEX_URL"].strip()
        origin.append("index-url from PIP_INDEX_URL")
    if env.get("PIP_EXTRA_INDEX_URL"):
        extra = _split_urls(env["PIP_EXTRA_INDEX_URL"])
        origin.append("extra-index-url from PIP_EXTRA_INDEX_URL")
    if env.get("PIP_NO_INDEX", "").strip().lower() in ("1", "true", "yes", "on"):
        no_index = True
    if env.get("PIP_FIND_LINKS"):
        find_links = _split_urls(env["PIP_FIND_LINKS"])
    if env.get("PIP_TRUSTED_HOST"):
        trusted = _split_urls(env["PIP_TRUSTED_HOST"])
    cert = env.get("PIP_CERT") or cert
    if no_index:
        return IndexConfig(None, [], origin + ["no-index is set"], find_links, trusted, True, cert)
    if index_url is None:
        index_url = PIP_DEFAULT_INDEX
        origin.append("pip's default index (nothing configured)")
    return IndexConfig(index_url, extra, origin, find_links, trusted, False, cert)


# ---------------------------------------------------------------------------------------------
# project pages


@dataclass(frozen=True)
class IndexFile:
    filename: str
    url: str
    version: Optional[str]
    requires_python: Optional[str] = None
    yanked: bool = False
    metadata_url: Optional[str] = None  # PEP 658 / 714
    upload_time: Optional[str] = None  # PEP 700, JSON pages only

    @property
    def is_wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def is_sdist(self) -> bool:
        return self.filename.endswith((".tar.gz", ".zip"))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version_of(filename: str, project: str) -> Optional[str]:
    """Version from a wheel or sdist filename (``vllm_ascend-0.11.0rc3-cp311-...whl``)."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return parts[1] if len(parts) >= 5 else None
    for ext in (".tar.gz", ".zip"):
        if filename.endswith(ext):
            stem = filename[: -len(ext)]
            canon = normalize(project)
            # The name part may use - _ or . ; the version is what follows the name.
            for i in range(len(stem)):
                if stem[i] == "-" and normalize(stem[:i]) == canon:
                    return stem[i + 1:]
            return None
    return None


class _LinkParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: List[Dict[str, Optional[str]]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs))


def _files_from_json(data: dict, base: str, project: str) -> List[IndexFile]:
    out = []
    for f in data.get("files", []):
        name, url = f.get("filename"), f.get("url")
        if not name or not url:
            continue
        url = urljoin(base, url)
        meta = f.get("core-metadata", f.get("data-dist-info-metadata"))
        yanked = f.get("yanked", False)
        out.append(IndexFile(
            filename=name, url=url, version=version_of(name, project),
            requires_python=f.get("requires-python"),
            yanked=bool(yanked),
            metadata_url=_strip_fragment(url) + ".metadata" if meta else None,
            upload_time=f.get("upload-time"),
        ))
    return out


def _files_from_html(text: str, base: str, project: str) -> List[IndexFile]:
    parser = _LinkParser()
    parser.feed(text)
    out = []
    for a in parser.links:
        href = a.get("href")
        if not href:
            continue
        url = urljoin(base, href)
        name = unquote(urlparse(url).path.rsplit("/", 1)[-1])
        version = version_of(name, project)
        if version is None:
            continue
        meta = a.get("data-core-metadata", a.get("data-dist-info-metadata"))
        out.append(IndexFile(
            filename=name, url=url, version=version,
            requires_python=a.get("data-requires-python"),
            yanked="data-yanked" in a,
            metadata_url=_strip_fragment(url) + ".metadata" if meta not in (None, "false") else None,
        ))
    return out


def _strip_fragment(url: str) -> str:
    return url.split("#", 1)[0]


class IndexClient:
    """Reads project pages and metadata from a list of index URLs (http(s) or file://)."""

    def __init__(self, urls: Sequence[str], session=None, timeout=TIMEOUT):
        if not urls:
            raise IndexFetchError("no package index configured (pip has no-index set)")
        self.urls = list(urls)
        self.timeout = timeout
        if session is None:
            import requests

            session = requests.Session()
            session.headers["User-Agent"] = "ascend-doctor (matrix sync/verify)"
        self.session = session

    # -- transport -----------------------------------------------------------------------------

    def _get(self, url: str, headers: Optional[Dict[str, str]] = None, stream: bool = False):
        import requests

        try:
            resp = self.session.get(url, headers=headers or {}, timeout=self.timeout, stream=stream)
        except requests.exceptions.Timeout:
            raise IndexFetchError(f"timed out reading {url}")
        except requests.exceptions.RequestException as e:
            raise IndexFetchError(f"cannot reach {url}: {_short(e)}")
        return resp

    def _read_local(self, url: str) -> bytes:
        path = Path(unquote(urlparse(url).path))
        try:
            return path.read_bytes()
        except OSError as e:
            raise IndexFetchError(f"cannot read {path}: {e.strerror or e}")

    # -- project pages ---------------------------------------------------------------------------

    def project_files(self, project: str) -> List[IndexFile]:
        """All files of ``project`` across the configured indexes (first index wins per name)."""
        seen: Dict[str, IndexFile] = {}
        found_any = False
        for base in self.urls:
            files = self._project_page(base, project)
            if files is None:
                continue
            found_any = True
            for f in files:
                seen.setdefault(f.filename, f)
        if not found_any:
            raise IndexFetchError(f"{project} not found on {', '.join(self.urls)}")
        return list(seen.values())

    def _project_page(self, base: str, project: str) -> Optional[List[IndexFile]]:
        base = base if base.endswith("/") else base + "/"
        url = urljoin(base, normalize(project) + "/")
        if url.startswith("file:"):
            return self._local_page(url, project)
        resp = self._get(url, headers={"Accept": ACCEPT})
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise IndexFetchError(f"{url} answered HTTP {resp.status_code}")
        ctype = resp.headers.get("Content-Type", "").split(";")[0].strip()
        if ctype == JSON_TYPE or ctype.endswith("+json") or ctype == "application/json":
            try:
                return _files_from_json(resp.json(), resp.url or url, project)
            except ValueError:
                raise IndexFetchError(f"{url} sent malformed JSON")
        return _files_from_html(resp.text, resp.url or url, project)

    def _local_page(self, url: str, project: str) -> Optional[List[IndexFile]]:
        path = Path(unquote(urlparse(url).path))
        if not path.is_dir():
            return None
        for name in ("index.json", "index.html"):
            page = path / name
            if page.is_file():
                text = page.read_text(encoding="utf-8", errors="replace")
                base = page.as_uri()
                if name.endswith(".json"):
                    try:
                        return _files_from_json(json.loads(text), base, project)
                    except ValueError:
                        raise IndexFetchError(f"{page} is not valid JSON")
                return _files_from_html(text, base, project)
        # A plain directory of distributions (pip accepts this for file:// indexes).
        return [
            IndexFile(p.name, p.as_uri(), version_of(p.name, project),
                      metadata_url=p.as_uri() + ".metadata" if Path(str(p) + ".metadata").is_file() else None)
            for p in sorted(path.iterdir()) if version_of(p.name, project)
        ]

    def versions(self, project: str, include_yanked: bool = False) -> List[str]:
        vs = {f.version for f in self.project_files(project)
              if f.version and pep440(f.version) and (include_yanked or not f.yanked)}
        return sorted(vs, key=pep440)

    # -- metadata --------------------------------------------------------------------------------

    def metadata(self, f: IndexFile) -> Dict[str, object]:
        """Name, version, Requires-Python and Requires-Dist of one file, in the
        index-metadata.json shape, plus ``metadata_from`` (how it was read)."""
        if f.metadata_url:
            raw = self._fetch_bytes(f.metadata_url)
            how = "PEP 658 .metadata"
        elif f.is_wheel:
            raw = self._wheel_metadata(f.url)
            how = "METADATA inside the wheel"
        elif f.filename.endswith(".tar.gz"):
            raw = self._sdist_metadata(f.url)
            how = "PKG-INFO inside the sdist"
        else:
            raise IndexFetchError(f"cannot read metadata of {f.filename}")
        return parse_metadata(raw, f.filename, how)

    def _fetch_bytes(self, url: str, limit: int = MAX_DOWNLOAD) -> bytes:
        if url.startswith("file:"):
            return self._read_local(url)
        resp = self._get(url, stream=True)
        try:
            if resp.status_code != 200:
                raise IndexFetchError(f"{url} answered HTTP {resp.status_code}")
            return _read_limited(resp, url, limit)
        finally:
            resp.close()

    def _range(self, url: str, start: Optional[int], end: int) -> Tuple[bytes, Optional[int]]:
        """Bytes ``start..end`` (or the last ``end`` bytes when start is None) and the file's
        total size; the size is None when the server ignored the range and sent everything."""
        spec = f"bytes=-{end}" if start is None else f"bytes={start}-{end}"
        resp = self._get(url, headers={"Range": spec}, stream=True)
        try:
            if resp.status_code == 206:
                m = re.search(r"/(\d+)\s*$", resp.headers.get("Content-Range", ""))
                if not m:
                    raise IndexFetchError(f"{url}: partial answer without a Content-Range size")
                return resp.content, int(m.group(1))
            if resp.status_code == 200:
                return _read_limited(resp, url, MAX_DOWNLOAD), None
            raise IndexFetchError(f"{url} answered HTTP {resp.status_code}")
        finally:
            resp.close()

    def _wheel_metadata(self, url: str) -> bytes:
        """METADATA out of a remote wheel with a few range requests: the end of central
        directory, the central directory, then the one member (wheels are zip files)."""
        if url.startswith("file:"):
            return _metadata_from_zip(self._read_local(url), url)
        tail, size = self._range(url, None, 65536)
        if size is None:
            return _metadata_from_zip(tail, url)
        cd_offset, cd_size = _central_directory(tail, url)
        if 0xFFFFFFFF in (cd_offset, cd_size):  # ZIP64 (a wheel over 4 GiB): read it whole
            return _metadata_from_zip(self._fetch_bytes(url), url)
        tail_start = size - len(tail)
        if cd_offset >= tail_start:
            cd = tail[cd_offset - tail_start: cd_offset - tail_start + cd_size]
        else:
            cd, _ = self._range(url, cd_offset, cd_offset + cd_size - 1)
        offset, csize, method = _find_metadata_entry(cd, url)
        head, _ = self._range(url, offset, offset + 30 + 1024 + csize)
        if head[:4] != b"PK\x03\x04":
            raise IndexFetchError(f"{url}: not a zip file at the METADATA offset")
        n, m = struct.unpack("<HH", head[26:30])
        data = head[30 + n + m: 30 + n + m + csize]
        if len(data) < csize:  # unusually long name/extra field: read exactly the data
            data, _ = self._range(url, offset + 30 + n + m, offset + 30 + n + m + csize - 1)
        return _inflate(data, method, url)

    def _sdist_metadata(self, url: str) -> bytes:
        """PKG-INFO of an sdist. Over HTTP the tarball is streamed and reading stops at PKG-INFO,
        which setuptools writes early in the archive (a 20 MB sdist costs a few hundred kB)."""
        if url.startswith("file:"):
            return _pkg_info(io.BytesIO(self._read_local(url)), url)
        resp = self._get(url, stream=True)
        try:
            if resp.status_code != 200:
                raise IndexFetchError(f"{url} answered HTTP {resp.status_code}")
            return _pkg_info(_Limited(resp.raw, MAX_DOWNLOAD, url), url)
        finally:
            resp.close()


class _Limited:
    """A read()-only stream that refuses to go past ``limit`` bytes."""

    def __init__(self, raw, limit: int, url: str):
        self.raw, self.limit, self.url, self.count = raw, limit, url, 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n if n and n > 0 else 1 << 16)
        self.count += len(data)
        if self.count > self.limit:
            raise IndexFetchError(f"{self.url} is larger than {self.limit // (1 << 20)} MiB")
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
        raise IndexFetchError(f"{url}: cannot read the sdist: {_short(e)}")
    raise IndexFetchError(f"{url}: the sdist has no PKG-INFO")


def _read_limited(resp, url: str, limit: int) -> bytes:
    buf = io.BytesIO()
    for chunk in resp.iter_content(1 << 16):
        buf.write(chunk)
        if buf.tell() > limit:
            raise IndexFetchError(f"{url} is larger than {limit // (1 << 20)} MiB")
    return buf.getvalue()


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text[:200]


def _central_directory(tail: bytes, url: str) -> Tuple[int, int]:
    """(offset, size) of the zip central directory, from the end-of-central-directory record."""
    pos = tail.rfind(b"PK\x05\x06")
    if pos < 0 or len(tail) - pos < 22:
        raise IndexFetchError(f"{url}: not a zip file (no end of central directory)")
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
    raise IndexFetchError(f"{url}: the wheel has no .dist-info/METADATA")


def _inflate(data: bytes, method: int, url: str) -> bytes:
    if method == 0:
        return data
    if method == 8:
        try:
            return zlib.decompress(data, -15)
        except zlib.error as e:
            raise IndexFetchError(f"{url}: corrupt METADATA entry ({e})")
    raise IndexFetchError(f"{url}: METADATA uses unsupported compression {method}")


def _metadata_from_zip(raw: bytes, url: str) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            for name in z.namelist():
                if re.match(r"^[^/]+\.dist-info/METADATA$", name):
                    return z.read(name)
    except zipfile.BadZipFile as e:
        raise IndexFetchError(f"{url}: not a wheel ({e})")
    raise IndexFetchError(f"{url}: the wheel has no .dist-info/METADATA")


def parse_metadata(raw: bytes, filename: str, how: str) -> Dict[str, object]:
    """Core metadata (RFC 822 style) -> the index-metadata.json entry shape."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    msg = email.parser.HeaderParser().parsestr(text)
    name, version = msg.get("Name"), msg.get("Version")
    if not name or not version:
        raise IndexFetchError(f"{filename}: metadata has no Name/Version")
    return {
        "name": normalize(name),
        "version": version.strip(),
        "requires_python": (msg.get("Requires-Python") or "").strip() or None,
        "requires_dist": [r.strip() for r in msg.get_all("Requires-Dist") or []],
        "file": filename,
        "metadata_from": how,
    }


# ---------------------------------------------------------------------------------------------
# choosing a file per version


def wheel_tags(filename: str) -> Tuple[str, str, str]:
    """(python tag, abi tag, platform tag) of a wheel filename."""
    parts = filename[:-4].split("-")
    return parts[-3], parts[-2], parts[-1]


def glibc_of(filename: str) -> Dict[str, str]:
    """Minimum glibc per architecture from a wheel's manylinux tags (the lowest tag it claims)."""
    if not filename.endswith(".whl"):
        return {}
    out: Dict[str, str] = {}
    legacy = {"1": "2.5", "2010": "2.12", "2014": "2.17"}
    for plat in wheel_tags(filename)[2].split("."):
        m = re.match(r"^manylinux(?:(1|2010|2014)|_(\d+)_(\d+))_(x86_64|aarch64)$", plat)
        if not m:
            continue
        glibc = legacy[m.group(1)] if m.group(1) else f"{m.group(2)}.{m.group(3)}"
        arch = m.group(4)
        if arch not in out or pep440(glibc) < pep440(out[arch]):
            out[arch] = glibc
    return out


def pick_file(files: Iterable[IndexFile], version: str,
              prefer: Tuple[str, str] = ("cp311", "x86_64")) -> Optional[IndexFile]:
    """The file whose metadata stands for ``version``: a wheel for the preferred Python tag and
    architecture when there is one, any wheel otherwise, else the sdist."""
    want = pep440(version)
    cands = [f for f in files if f.version and pep440(f.version) == want]
    if not cands:
        return None

    def rank(f: IndexFile):
        if not f.is_wheel:
            return (3, f.filename)
        py, _, plat = wheel_tags(f.filename)
        linux_arch = "linux" in plat and prefer[1] in plat
        return (0 if (py == prefer[0] and linux_arch) else 1 if linux_arch else 2,
                0 if f.metadata_url else 1, f.filename)

    return sorted(cands, key=rank)[0]


def release_glibc(files: Iterable[IndexFile], version: str) -> Dict[str, str]:
    """Per-architecture glibc a release's wheels need (the highest over its wheels)."""
    want = pep440(version)
    out: Dict[str, str] = {}
    for f in files:
        if f.version and pep440(f.version) == want:
            for arch, g in glibc_of(f.filename).items():
                if arch not in out or pep440(g) > pep440(out[arch]):
                    out[arch] = g
    return out


def client_from_pip(env: Optional[Mapping[str, str]] = None, session=None) -> Tuple[IndexClient, IndexConfig]:
    """A client for the indexes ``pip install`` would use, trusting the CA bundle pip trusts."""
    cfg = pip_index_config(env)
    client = IndexClient(cfg.urls, session=session)
    if cfg.cert and session is None:
        if not Path(cfg.cert).exists():
            raise IndexFetchError(f"pip's cert {cfg.cert} does not exist")
        client.session.verify = cfg.cert
    return client, cfg


if __name__ == "__main__":  # pragma: no cover - manual look-ups: python -m doctor.shell.index NAME VERSION...
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
