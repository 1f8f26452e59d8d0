"""Index client, `matrix sync` and online `matrix verify` against a real HTTP server on loopback.

The server serves a PEP 691 (JSON) / PEP 503 (HTML) simple index built in a tmp dir, with PEP 658
.metadata files for some wheels, wheels without them (read with HTTP range requests), an sdist,
and a yanked release. No network beyond 127.0.0.1.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from doctor.errors import DoctorError
from doctor.shell.install.index import IndexClient, IndexFetchError, pip_config_files, pip_index_config
from doctor.parse.indexfiles import glibc_of, pick_file, release_glibc, upload_date
from doctor.matrix.load import load_matrix, parse_file
from doctor.matrix.sync import overlay_path, sync
from doctor.shell.host.matrix_overlay import write_validated
from shipped import matrix as shipped_matrix

DATA = Path(__file__).parent / "data"

BASE_DIST = ["torch==2.10.0", "torch-npu==2.10.0.post4", "torchvision==0.25.0", "torchaudio==2.10.0",
             "triton-ascend==3.2.2", "transformers==5.14.1", "numpy", "memfabric_hybrid==1.2.0"]


def metadata_text(version: str, requires=BASE_DIST, requires_python=">=3.10") -> str:
    lines = ["Metadata-Version: 2.1", "Name: vllm-ascend", f"Version: {version}", f"Requires-Python: {requires_python}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nlong description\n"


def make_wheel(version: str, meta: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        # a big stored member first, so METADATA is not where a naive reader would look
        z.writestr(zipfile.ZipInfo("vllm_ascend/_pad.bin"), os.urandom(150_000))
        z.writestr("vllm_ascend/__init__.py", "")
        z.writestr(f"vllm_ascend-{version}.dist-info/METADATA", meta, compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(f"vllm_ascend-{version}.dist-info/RECORD", "")
    return buf.getvalue()


def make_sdist(version: str, meta: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in ((f"vllm_ascend-{version}/PKG-INFO", meta.encode()),
                           (f"vllm_ascend-{version}/setup.py", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class Index:
    """A simple index for vllm-ascend in memory: path -> body, and the files' JSON entries."""

    def __init__(self):
        self.bodies = {}
        self.entries = []

    def add(self, filename: str, body: bytes, *, metadata: str = None, yanked=False, upload="2026-11-01T00:00:00Z"):
        path = f"/files/{filename}"
        self.bodies[path] = body
        entry = {"filename": filename, "url": f"../../files/{filename}",
                 "hashes": {"sha256": hashlib.sha256(body).hexdigest()},
                 "requires-python": ">=3.10", "yanked": yanked, "upload-time": upload}
        if metadata is not None:
            self.bodies[path + ".metadata"] = metadata.encode()
            entry["core-metadata"] = {"sha256": hashlib.sha256(metadata.encode()).hexdigest()}
        self.entries.append(entry)

    def json_page(self) -> bytes:
        return json.dumps({"meta": {"api-version": "1.1"}, "name": "vllm-ascend", "files": self.entries}).encode()

    def html_page(self) -> bytes:
        links = []
        for e in self.entries:
            attrs = f'href="{e["url"]}#sha256={e["hashes"]["sha256"]}" data-requires-python="&gt;=3.10"'
            if "core-metadata" in e:
                attrs += f' data-core-metadata="sha256={e["core-metadata"]["sha256"]}"'
            if e["yanked"]:
                attrs += ' data-yanked=""'
            links.append(f"<a {attrs}>{e['filename']}</a><br/>")
        return ("<!DOCTYPE html><html><body>" + "".join(links) + "</body></html>").encode()


def build_index() -> Index:
    ix = Index()
    newer = json.loads((DATA / "index-metadata-newer.json").read_text(encoding="utf-8"))["packages"]
    real = next(p for p in newer if p["version"] == "0.30.0rc2")
    ix.add("vllm_ascend-0.30.0rc2.tar.gz",
           make_sdist("0.30.0rc2", metadata_text("0.30.0rc2", real["requires_dist"], real["requires_python"])))
    m1 = metadata_text("0.31.0rc1")
    for tag in ("cp311-cp311-manylinux_2_34_x86_64", "cp311-cp311-manylinux_2_34_aarch64"):
        ix.add(f"vllm_ascend-0.31.0rc1-{tag}.whl", make_wheel("0.31.0rc1", m1), metadata=m1, upload="2026-11-10T01:02:03Z")
    m2 = metadata_text("0.31.0rc2", BASE_DIST[:-3] + ["transformers<6,>=5.14.1", "numpy<3"])
    ix.add("vllm_ascend-0.31.0rc2-cp312-cp312-manylinux_2_28_x86_64.whl", make_wheel("0.31.0rc2", m2))
    ix.add("vllm_ascend-0.31.0rc2-cp311-cp311-manylinux_2_28_x86_64.whl", make_wheel("0.31.0rc2", m2))
    ix.add("vllm_ascend-0.31.0rc2-cp311-cp311-manylinux_2_35_aarch64.whl", make_wheel("0.31.0rc2", m2))
    ix.add("vllm_ascend-0.32.0rc1.tar.gz", make_sdist("0.32.0rc1", metadata_text("0.32.0rc1")))
    ix.add("vllm_ascend-0.33.0.tar.gz", make_sdist("0.33.0", metadata_text("0.33.0")), yanked=True)
    return ix


class Server:
    """ThreadingHTTPServer on 127.0.0.1 serving an Index, with switches for how it behaves."""

    def __init__(self, index: Index, *, json_api=True, ranges=True, delay=0.0, status=None, drip=0.0):
        self.index, self.json_api, self.ranges, self.delay, self.status = index, json_api, ranges, delay, status
        self.drip = drip  # seconds between 64-byte pieces of every body: slow, never silent for long
        self.log = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.log.append((self.path, self.headers.get("Range"), self.headers.get("Accept")))
                if outer.delay:
                    time.sleep(outer.delay)
                if outer.status:
                    return self._send(outer.status, b"boom", "text/plain")
                if self.path in ("/simple/vllm-ascend/", "/simple/vllm-ascend"):
                    if outer.json_api and "application/vnd.pypi.simple.v1+json" in (self.headers.get("Accept") or ""):
                        return self._send(200, outer.index.json_page(), "application/vnd.pypi.simple.v1+json")
                    return self._send(200, outer.index.html_page(), "text/html")
                body = outer.index.bodies.get(self.path)
                if body is None:
                    return self._send(404, b"not found", "text/plain")
                rng = self.headers.get("Range")
                if rng and outer.ranges:
                    spec = rng.split("=", 1)[1]
                    a, b = spec.split("-")
                    start, end = (len(body) - int(b), len(body) - 1) if a == "" else (int(a), min(int(b), len(body) - 1))
                    start = max(start, 0)
                    part = body[start:end + 1]
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end}/{len(body)}")
                    self.send_header("Content-Length", str(len(part)))
                    self.end_headers()
                    self.wfile.write(part)
                    return
                self._send(200, body, "application/octet-stream")

            def _send(self, code, body, ctype):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not outer.drip:
                    self.wfile.write(body)
                    return
                for i in range(0, len(body), 64):
                    self.wfile.write(body[i:i + 64])
                    self.wfile.flush()
                    time.sleep(outer.drip)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.handle_error = lambda request, client_address: None  # clients that time out hang up
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/simple/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def index():
    return build_index()


@pytest.fixture
def server(index):
    with Server(index) as s:
        yield s


@pytest.fixture(scope="module")
def matrix():
    return shipped_matrix()


# ---------------------------------------------------------------------------------------------
# pip configuration


def conf(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_pip_config_default_is_pips_own(tmp_path):
    cfg = pip_index_config({"HOME": str(tmp_path)}, files=[])
    assert cfg.urls == ["https://pypi.org/simple/"]


def test_pip_config_files_env_and_sections(tmp_path):
    home = tmp_path / "home"
    env = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), "VIRTUAL_ENV": str(tmp_path / "venv")}
    files = pip_config_files(env)
    assert files[:2] == [tmp_path / "xdg" / "pip" / "pip.conf", Path("/etc/pip.conf")]
    assert files[2:] == [home / ".pip" / "pip.conf", home / ".config" / "pip" / "pip.conf", tmp_path / "venv" / "pip.conf"]
    user = conf(home / ".config" / "pip" / "pip.conf", "[global]\nindex-url = https://mirror.example/simple\n"
                                                          "extra-index-url = https://a.example/simple\n  https://b.example/simple\n")
    site = conf(tmp_path / "venv" / "pip.conf", "[install]\nextra_index_url = https://c.example/simple\n")
    cfg = pip_index_config(env, files=[user, site])
    assert cfg.urls == ["https://mirror.example/simple", "https://c.example/simple"]
    cfg = pip_index_config(env, files=[user])
    assert cfg.urls == ["https://mirror.example/simple", "https://a.example/simple", "https://b.example/simple"]
    # environment variables win over every file
    env2 = dict(env, PIP_INDEX_URL="http://127.0.0.1:1/simple/", PIP_EXTRA_INDEX_URL="http://x/ http://y/")
    assert pip_index_config(env2, files=[user, site]).urls == ["http://127.0.0.1:1/simple/", "http://x/", "http://y/"]


def test_pip_config_file_env_var(tmp_path):
    home = tmp_path / "home"
    conf(home / ".config" / "pip" / "pip.conf", "[global]\nindex-url = https://user.example/simple\n")
    only = conf(tmp_path / "only.conf", "[global]\nindex-url = https://only.example/simple\n")
    env = {"HOME": str(home), "XDG_CONFIG_DIRS": str(tmp_path / "none"), "PIP_CONFIG_FILE": str(only)}
    files = pip_config_files(env)
    assert only in files and home / ".config" / "pip" / "pip.conf" not in files  # like pip: user files skipped
    assert files[-1] == only
    assert pip_config_files(dict(env, PIP_CONFIG_FILE=os.devnull)) == []


def test_pip_no_index(tmp_path):
    cfg = pip_index_config({"PIP_NO_INDEX": "1"}, files=[])
    assert cfg.urls == []
    with pytest.raises(IndexFetchError, match="no package index"):
        IndexClient(cfg.urls)


def test_pip_cert_is_honoured(tmp_path):
    from doctor.shell.install.index import client_from_pip

    ca = conf(tmp_path / "ca.pem", "not really a certificate\n")
    cfg_file = conf(tmp_path / "pip.conf", f"[global]\ncert = {ca}\n")
    assert pip_index_config({}, files=[cfg_file]).cert == str(ca)
    assert pip_index_config({"PIP_CERT": "/other.pem"}, files=[cfg_file]).cert == "/other.pem"
    client, cfg = client_from_pip({"PIP_CONFIG_FILE": str(cfg_file), "HOME": str(tmp_path)})
    assert client.session.verify == str(ca)
    with pytest.raises(IndexFetchError, match="does not exist"):
        client_from_pip({"PIP_CERT": str(tmp_path / "missing.pem"), "PIP_CONFIG_FILE": os.devnull})


def test_pip_config_unreadable_is_one_line(tmp_path):
    bad = conf(tmp_path / "pip.conf", "no section header\n")
    with pytest.raises(IndexFetchError, match="cannot read pip configuration"):
        pip_index_config({}, files=[bad])


# ---------------------------------------------------------------------------------------------
# the index client


def test_json_page_and_pep658_metadata(server):
    client = IndexClient([server.url])
    files = client.project_files("vllm_ascend")  # the name is normalized
    assert server.log[0][0] == "/simple/vllm-ascend/" and "vnd.pypi.simple.v1+json" in server.log[0][2]
    assert client.versions("vllm-ascend") == ["0.30.0rc2", "0.31.0rc1", "0.31.0rc2", "0.32.0rc1"]
    f = pick_file(files, "0.31.0rc1")
    assert f.filename.endswith("manylinux_2_34_x86_64.whl") and f.has_metadata and upload_date(f) == "2026-11-10"
    server.log.clear()
    meta = client.metadata(f)
    assert meta["metadata_from"] == "PEP 658 .metadata"
    assert [p for p, _, _ in server.log] == [f"/files/{f.filename}.metadata"]
    assert meta["version"] == "0.31.0rc1" and "torch==2.10.0" in meta["requires_dist"]


def test_wheel_metadata_with_range_requests(server, index):
    client = IndexClient([server.url])
    f = pick_file(client.project_files("vllm-ascend"), "0.31.0rc2", prefer=("cp311", "x86_64"))
    assert f.filename == "vllm_ascend-0.31.0rc2-cp311-cp311-manylinux_2_28_x86_64.whl" and not f.has_metadata
    server.log.clear()
    meta = client.metadata(f)
    assert meta["metadata_from"] == "METADATA inside the wheel"
    assert "transformers<6,>=5.14.1" in meta["requires_dist"] and meta["requires_python"] == ">=3.10"
    wheel_gets = [(p, r) for p, r, _ in server.log if p.endswith(".whl")]
    assert wheel_gets and all(r for _, r in wheel_gets)  # never the whole 150 kB file
    assert len(wheel_gets) <= 3


def test_wheel_metadata_without_range_support(index):
    with Server(index, ranges=False) as s:
        client = IndexClient([s.url])
        f = pick_file(client.project_files("vllm-ascend"), "0.31.0rc2")
        assert client.metadata(f)["version"] == "0.31.0rc2"


def test_sdist_pkg_info(server):
    client = IndexClient([server.url])
    f = pick_file(client.project_files("vllm-ascend"), "0.32.0rc1")
    meta = client.metadata(f)
    assert meta["metadata_from"] == "PKG-INFO inside the sdist" and meta["file"] == "vllm_ascend-0.32.0rc1.tar.gz"


def test_html_only_index(index):
    with Server(index, json_api=False) as s:
        client = IndexClient([s.url])
        files = client.project_files("vllm-ascend")
        assert {f.version for f in files} >= {"0.31.0rc1", "0.32.0rc1", "0.33.0"}
        assert [f.is_yanked for f in files if f.version == "0.33.0"] == [True]
        f = pick_file(files, "0.31.0rc1")
        assert f.has_metadata and client.metadata(f)["metadata_from"] == "PEP 658 .metadata"


def test_second_index_fills_in(index):
    with Server(Index()) as a, Server(index) as b:
        # the first index does not have the project (404); pip goes on to the extra index
        client = IndexClient([a.url.replace("/simple/", "/nothing/"), b.url])
        assert "0.31.0rc1" in client.versions("vllm-ascend")
        assert a.log and a.log[0][0] == "/nothing/vllm-ascend/"


def test_file_index(tmp_path, index):
    project = tmp_path / "simple" / "vllm-ascend"
    project.mkdir(parents=True)
    body = make_wheel("0.31.0rc1", metadata_text("0.31.0rc1"))
    (project / "vllm_ascend-0.31.0rc1-cp311-cp311-manylinux_2_34_x86_64.whl").write_bytes(body)
    client = IndexClient([(tmp_path / "simple").as_uri()])
    (f,) = client.project_files("vllm-ascend")
    assert client.metadata(f)["version"] == "0.31.0rc1"


@pytest.mark.parametrize("kwargs,message", [
    ({"status": 500}, "answered HTTP 500"),
    ({"delay": 0.8}, "timed out"),
])
def test_index_failures_are_one_line_errors(index, kwargs, message):
    with Server(index, **kwargs) as s:
        client = IndexClient([s.url], timeout=(1.0, 0.3))
        with pytest.raises(IndexFetchError) as info:
            client.project_files("vllm-ascend")
        assert message in str(info.value) and "\n" not in str(info.value)


def test_a_dripping_index_is_cut_by_the_total_deadline(index):
    """Every piece arrives well within the per-read timeout; only the total deadline stops it."""
    import urllib.request

    drip = 0.6
    with Server(index) as s:
        ask = urllib.request.Request(f"{s.url}vllm-ascend/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        with urllib.request.urlopen(ask, timeout=10) as r:
            whole = len(r.read()) / 64 * drip  # seconds the dripped page would take to arrive
    assert whole > 20, whole
    with Server(index, drip=drip) as s:
        client = IndexClient([s.url], timeout=(1.0, 1.0), deadline=1.0)
        started = time.monotonic()
        with pytest.raises(IndexFetchError) as info:
            client.project_files("vllm-ascend")
        assert "deadline of 1 s exceeded" in str(info.value) and "\n" not in str(info.value)
        # the deadline, not the page's end, stopped it (7.9 s with 6 busy loops on 2 cores)
        assert time.monotonic() - started < whole / 2


def test_an_endless_trailer_is_cut_by_the_total_deadline():
    """A chunked page whose last chunk is followed by trailer lines without end: http.client
    reads them inside one read, where no deadline check runs; the socket is shut at the deadline."""
    from fakehost.index_server import endless_trailer_server

    httpd = endless_trailer_server("application/vnd.pypi.simple.v1+json")
    box = {}

    def ask():
        client = IndexClient([f"http://127.0.0.1:{httpd.server_port}/simple/"], timeout=(1.0, 1.0), deadline=1.0)
        try:
            client.project_files("vllm-ascend")
        except IndexFetchError as e:
            box["error"] = str(e)

    worker = threading.Thread(target=ask, daemon=True)
    try:
        worker.start()
        worker.join(30)
        assert not worker.is_alive(), "still reading the trailer"
    finally:
        httpd.shutdown()
    assert "deadline of 1 s exceeded" in box["error"]


def test_pep658_metadata_with_a_wrong_checksum_is_refused(index):
    bad = Index()
    good = index.entries[1]  # 0.31.0rc1, served with a .metadata file
    bad.bodies = dict(index.bodies)
    bad.entries = [dict(good, **{"core-metadata": {"sha256": "0" * 64}})]
    with Server(bad) as s:
        client = IndexClient([s.url])
        (f,) = client.project_files("vllm-ascend")
        with pytest.raises(IndexFetchError, match="checksum mismatch"):
            client.metadata(f)


def test_announced_metadata_that_is_missing_falls_back_to_the_wheel(index):
    """An index announcing .metadata (PEP 714 true, no digest) but answering 404 for it."""
    ix = Index()
    m = metadata_text("0.31.0rc3")
    ix.add("vllm_ascend-0.31.0rc3-cp311-cp311-manylinux_2_34_x86_64.whl", make_wheel("0.31.0rc3", m))
    ix.entries[0]["core-metadata"] = True
    with Server(ix) as s:
        client = IndexClient([s.url])
        (f,) = client.project_files("vllm-ascend")
        assert f.has_metadata
        got = client.metadata(f)
        assert got["metadata_from"] == "METADATA inside the wheel" and got["version"] == "0.31.0rc3"


def test_file_index_serves_ranges_and_pep658(tmp_path):
    project = tmp_path / "simple" / "vllm-ascend"
    project.mkdir(parents=True)
    m = metadata_text("0.31.0rc1")
    wheel = project / "vllm_ascend-0.31.0rc1-cp311-cp311-manylinux_2_34_x86_64.whl"
    wheel.write_bytes(make_wheel("0.31.0rc1", m))
    client = IndexClient([(tmp_path / "simple").as_uri()])
    (f,) = client.project_files("vllm-ascend")
    assert not f.has_metadata and client.metadata(f)["metadata_from"] == "METADATA inside the wheel"
    Path(str(wheel) + ".metadata").write_text(m, encoding="utf-8")
    (f,) = client.project_files("vllm-ascend")
    assert f.has_metadata and client.metadata(f)["metadata_from"] == "PEP 658 .metadata"


def test_index_metadata_reads_the_headers_only():
    from doctor.shell.install.index import metadata_entry

    meta = metadata_entry(metadata_text("0.31.0rc1").encode() + b"Requires-Dist: not-a-header\n", "f.whl", "x")
    assert (meta["name"], meta["version"], meta["requires_python"]) == ("vllm-ascend", "0.31.0rc1", ">=3.10")
    assert "not-a-header" not in " ".join(meta["requires_dist"]) and "torch==2.10.0" in meta["requires_dist"]
    assert metadata_entry("Name: Foo_Bar\nVersion: 1.0\n".encode("latin-1"), "f", "x")["name"] == "foo-bar"
    assert metadata_entry(b"Name: caf\xe9\nVersion: 1\n", "f", "x")["name"] == "caf\u00e9"  # Latin-1, old tools
    with pytest.raises(IndexFetchError, match="no Name/Version"):
        metadata_entry(b"Summary: no name\n", "f", "x")
    with pytest.raises(IndexFetchError, match="not a version"):
        metadata_entry(b"Name: x\nVersion: " + b"1" * 5000 + b"\n", "f", "x")


def test_check_never_loads_the_index_client():
    import subprocess
    import sys

    code = ("import sys, doctor.cli.main, doctor.usecases.check, doctor.shell.install.index, doctor.matrix.sync; "
            "print(sorted(m for m in ('pypi_simple', 'requests', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_unreachable_index_and_missing_project(server):
    with pytest.raises(IndexFetchError, match="cannot reach"):
        IndexClient(["http://127.0.0.1:9/simple/"], timeout=(0.5, 0.5)).project_files("vllm-ascend")
    with pytest.raises(IndexFetchError, match="not found"):
        IndexClient([server.url]).project_files("no-such-project")


def test_glibc_from_wheel_tags():
    assert glibc_of("x-1.0-cp311-cp311-manylinux1_x86_64.whl") == {"x86_64": "2.5"}
    assert glibc_of("x-1.0-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl") == {"x86_64": "2.17"}
    assert glibc_of("x-1.0-cp311-cp311-manylinux_2_24_aarch64.whl") == {"aarch64": "2.24"}
    assert glibc_of("x-1.0.tar.gz") == {}
    assert glibc_of("x-1.0-cp311-cp311-macosx_11_0_arm64.whl") == {}


# ---------------------------------------------------------------------------------------------
# sync


@pytest.mark.slow  # ~0.5 s of CPU or more: a real HTTP index on loopback
def test_sync_writes_a_validated_uncurated_overlay(server, matrix, tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    path = overlay_path(env)
    assert path == tmp_path / "cfg" / "ascend-doctor" / "matrix-overlay.toml"
    result = sync(matrix, IndexClient([server.url]), env=env, today="2026-11-29", write=write_validated)
    assert result.written and result.newest_curated == matrix.releases[-1].vllm_ascend == "0.30.0rc2"
    assert result.added == ["0.31.0rc1", "0.31.0rc2", "0.32.0rc1"]  # the yanked 0.33.0 is left out
    rows = {r.vllm_ascend: r for r in parse_file(path)["release"]}
    r1, r2, r3 = rows["0.31.0rc1"], rows["0.31.0rc2"], rows["0.32.0rc1"]
    for r in rows.values():
        assert not r.curated and not r.official_row
        assert "from index metadata, not curated" in r.notes
        assert "inferred" in r.source_of("cann") and r.cann == matrix.releases[-1].cann
        assert r.hardware == matrix.releases[-1].hardware
    assert (r1.vllm, r1.torch, r1.torch_npu, r1.triton_ascend, r1.transformers) == ("0.31.0", "2.10.0", "2.10.0.post4", "3.2.2", "==5.14.1")
    assert r1.numpy is None and r1.torchvision == "==0.25.0" and r1.requires_python == ">=3.10"
    assert r1.glibc_min == "2.34" and r1.glibc_by_arch == {} and r1.released == "2026-11-10"
    assert r1.extra_index_urls == matrix.releases[-1].extra_index_urls
    assert r2.glibc_min == "2.35" and r2.glibc_by_arch == {"x86_64": "2.28", "aarch64": "2.35"}
    assert r2.transformers == "<6,>=5.14.1" and r2.numpy == "<3" and r2.torchaudio == "==2.10.0"
    assert r3.distribution == "sdist" and "no wheel" in r3.source_of("glibc_min")
    # the loader picks the overlay up from the user directory; curated rows stay as they were
    m = load_matrix(env=env)
    assert [r.vllm_ascend for r in m.releases][-3:] == ["0.31.0rc1", "0.31.0rc2", "0.32.0rc1"]
    assert str(path) in m.files
    # what the tuning rows were not checked against: open-ended windows only, for every new release
    assert result.tuning_checked_through == "0.30.0rc2" and set(result.unchecked) == set(result.added)
    items = result.unchecked["0.31.0rc1"]
    assert "tuning_fact cpu_binding_default_on" in items and "tuning_var VLLM_ASCEND_ENABLE_FLASHCOMM1" in items
    assert "tuning_advice TASK_QUEUE_ENABLE.tuning_guide" in items and "tuning_quant W8A8" in items
    closed = ("launch_blocking_graph_rejected", "VLLM_USE_V1", "VLLM_ASCEND_ENABLE_NZ", "vllm_nofile_target",
              "checked_through", "310p_eager_only")
    assert not [i for i in items if i.split()[1] in closed], items  # ended windows and facts for every release
    text = path.read_text(encoding="utf-8")
    assert "# 0.31.0rc1: tuning rows checked through 0.30.0rc2 only" in text and "cpu_binding_default_on" in text


def test_unchecked_tuning_is_empty_up_to_the_release_read(matrix):
    from doctor.matrix.query import unchecked_tuning

    assert unchecked_tuning(matrix, "0.30.0rc2") == [] and unchecked_tuning(matrix, "0.13.0") == []
    assert unchecked_tuning(matrix, "not a version") == []
    assert "tuning_fact block_size_forced_chunked" in unchecked_tuning(matrix, "0.31.0")


def test_sync_dry_run_and_rerun(server, matrix, tmp_path):
    env = {"XDG_CONFIG_HOME": str(tmp_path)}
    path = overlay_path(env)
    dry = sync(matrix, IndexClient([server.url]), env=env, dry_run=True, today="2026-11-29")
    assert not dry.written and not path.exists() and "[[release]]" in dry.text
    path.parent.mkdir(parents=True)
    path.write_text("# old overlay\nschema_version = 1\n", encoding="utf-8")
    sync(matrix, IndexClient([server.url]), env=env, today="2026-11-29", write=write_validated)
    assert path.read_text(encoding="utf-8") == dry.text
    assert [p.name for p in path.parent.iterdir()] == ["matrix-overlay.toml"]  # no temp file left


def test_invalid_overlay_never_replaces_the_old_one(tmp_path):
    path = tmp_path / "ascend-doctor" / "matrix-overlay.toml"
    path.parent.mkdir(parents=True)
    path.write_text("# previous good overlay\nschema_version = 1\n", encoding="utf-8")
    with pytest.raises(DoctorError, match="does not validate"):
        write_validated(path, '[[release]]\nvllm_ascend = "0.31.0"\n')
    assert path.read_text(encoding="utf-8").startswith("# previous good overlay")
    assert [p.name for p in path.parent.iterdir()] == ["matrix-overlay.toml"]


def test_release_glibc_takes_the_highest_tag(index, server):
    files = IndexClient([server.url]).project_files("vllm-ascend")
    assert release_glibc(files, "0.31.0rc2") == {"x86_64": "2.28", "aarch64": "2.35"}
    assert release_glibc(files, "0.32.0rc1") == {}


# ---------------------------------------------------------------------------------------------
# the commands, online against the loopback index


def run(args, capsys):
    from doctor.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["matrix"] + args)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture
def pip_env(server, tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", server.url)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_NO_INDEX", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return tmp_path / "cfg" / "ascend-doctor" / "matrix-overlay.toml"


def test_cli_online_verify_then_sync_then_verify(pip_env, capsys):
    code, out, err = run(["verify"], capsys)
    assert code == 3
    assert "0.31.0rc1: row: on the package index but the matrix has no row" in out.splitlines()
    assert not any(line.startswith("0.30.0rc2:") for line in out.splitlines())  # the curated row agrees
    code, out, err = run(["sync", "--dry-run"], capsys)
    assert code == 0 and "[[release]]" in out and not pip_env.exists()
    code, out, err = run(["sync"], capsys)
    assert code == 0 and pip_env.exists() and "0.31.0rc1, 0.31.0rc2, 0.32.0rc1" in out
    assert "0.32.0rc1: " in out and "tuning rows were checked through 0.30.0rc2 only" in out
    code, out, err = run(["verify", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["disagreements"] == [] and doc["checked"] == 4
    code, out, err = run(["show", "--json"], capsys)
    rel = json.loads(out)["releases"]
    assert rel[-1]["vllm_ascend"] == "0.32.0rc1" and rel[-1]["curated"] is False


def test_cli_online_errors_are_one_line(pip_env, monkeypatch, capsys):
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple/")
    code, out, err = run(["sync"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "cannot reach" in err
