"""A Docker engine for the tests: a real HTTP server on a unix socket answering the Engine API
calls the doctor makes through the docker SDK (GET /version, GET /images/{name}/json,
POST /images/create, GET /images/{name}/get), from image archives built by tests/imagekit.py.
The answers follow the Engine API reference (https://docs.docker.com/reference/api/engine/)."""
from __future__ import annotations

import json
import os
import socketserver
import tempfile
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Dict, List, Optional
from urllib.parse import parse_qs, unquote, urlparse


class Engine:
    def __init__(self, api_version: str = "1.43", sendfile: bool = False):
        self.api_version = api_version
        self.sendfile = sendfile  # exports with Content-Length through sendfile(2): the bench measures the client
        self.images: Dict[str, dict] = {}  # ref -> {"tar": Path, "inspect": dict}
        self.pullable: Dict[str, str] = {}  # ref that a pull makes available -> ref to copy
        self.requests: List[dict] = []
        self.drop_after: Optional[int] = None  # bytes of an export before the engine "dies"
        self.dir = tempfile.mkdtemp(prefix="engine-", dir="/tmp")  # short: unix socket paths are limited
        self.socket = os.path.join(self.dir, "docker.sock")
        self.server: Optional[socketserver.ThreadingUnixStreamServer] = None

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    def add(self, ref: str, tar: Path, repo_digest: Optional[str] = None) -> None:
        """An image in the store: its inspect answer is made from the archive's own config."""
        import tarfile

        with tarfile.open(tar) as tf:
            manifest = json.loads(tf.extractfile("manifest.json").read())[0]
            config_name = manifest["Config"]
            config = json.loads(tf.extractfile(config_name).read())
        digest = "sha256:" + config_name.rsplit("/", 1)[-1].replace(".json", "")
        inspect = {
            "Id": digest, "RepoTags": [ref],
            "RepoDigests": [f"{ref.rsplit(':', 1)[0]}@{repo_digest}"] if repo_digest else [],
            "Architecture": config["architecture"], "Os": config["os"], "Size": tar.stat().st_size,
            "Config": config["config"], "RootFS": {"Type": "layers", "Layers": config["rootfs"]["diff_ids"]},
        }
        if config.get("variant"):
            inspect["Variant"] = config["variant"]
        self.images[ref] = {"tar": tar, "inspect": inspect}

    def start(self) -> "Engine":
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet, and unix sockets have no client address
                pass

            def address_string(self):
                return "unix"

            def do_GET(self):
                engine.dispatch(self, "GET")

            def do_POST(self):
                engine.dispatch(self, "POST")

            def do_HEAD(self):
                engine.dispatch(self, "HEAD")

        self.server = socketserver.ThreadingUnixStreamServer(self.socket, Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        os.rmdir(self.dir)

    # -- the API ---------------------------------------------------------------------------------
    def dispatch(self, h: BaseHTTPRequestHandler, method: str) -> None:
        url = urlparse(h.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        path = unquote(url.path)
        if method == "POST" and int(h.headers.get("Content-Length") or 0):
            h.rfile.read(int(h.headers["Content-Length"]))
        self.requests.append({"method": method, "path": path, "query": query})
        parts = path.split("/", 2)
        if len(parts) == 3 and parts[1].startswith("v") and parts[1][1:2].isdigit():
            path = "/" + parts[2]
        if path in ("/version", "/_ping"):
            if path == "/_ping":
                return self._send(h, 200, b"OK", "text/plain")
            return self._json(h, 200, {"Version": "24.0.7", "ApiVersion": self.api_version, "MinAPIVersion": "1.12",
                                       "Os": "linux", "Arch": "arm64", "KernelVersion": "5.15.0"})
        if method == "POST" and path == "/images/create":
            return self._pull(h, query)
        if path.startswith("/images/"):
            name, _, action = path[len("/images/"):].rpartition("/")
            image = self.images.get(name)
            if image is None:
                return self._json(h, 404, {"message": f"No such image: {name}"})
            if action == "json":
                return self._json(h, 200, image["inspect"])
            if action == "get":
                return self._export(h, image["tar"])
        return self._json(h, 404, {"message": "page not found"})

    def _pull(self, h, query) -> None:
        ref = query.get("fromImage", "") + (":" + query["tag"] if query.get("tag") else "")
        source = self.pullable.get(ref)
        if source is None:
            return self._json(h, 404, {"message": f"pull access denied for {query.get('fromImage')}, repository does "
                                                  "not exist or may require 'docker login'"})
        self.images[ref] = dict(self.images[source])
        self.images[ref]["inspect"] = dict(self.images[source]["inspect"], RepoTags=[ref])
        lines = [{"status": f"Pulling from {query.get('fromImage')}", "id": query.get("tag")},
                 {"status": "Digest: sha256:" + "ab" * 32}, {"status": f"Status: Downloaded newer image for {ref}"}]
        self._chunked(h, 200, (json.dumps(x).encode() + b"\r\n" for x in lines), "application/json")

    def _export(self, h, tar: Path) -> None:
        if self.sendfile and self.drop_after is None:
            h.send_response(200)
            h.send_header("Content-Type", "application/x-tar")
            h.send_header("Content-Length", str(tar.stat().st_size))
            h.end_headers()
            h.wfile.flush()
            with open(tar, "rb") as fh:
                h.connection.sendfile(fh)
            return

        def chunks():
            sent = 0
            with open(tar, "rb") as fh:
                while True:
                    data = fh.read(64 * 1024)
                    if not data:
                        return
                    if self.drop_after is not None and sent + len(data) > self.drop_after:
                        yield data[: self.drop_after - sent]
                        raise ConnectionAbortedError
                    sent += len(data)
                    yield data

        self._chunked(h, 200, chunks(), "application/x-tar")

    def _chunked(self, h, status: int, chunks, content_type: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            for c in chunks:
                if c:
                    h.wfile.write(b"%x\r\n%s\r\n" % (len(c), c))
            h.wfile.write(b"0\r\n\r\n")
        except ConnectionAbortedError:
            h.close_connection = True
            h.wfile.flush()
            h.connection.shutdown(2)

    def _json(self, h, status: int, doc) -> None:
        self._send(h, status, json.dumps(doc).encode(), "application/json")

    def _send(self, h, status: int, body: bytes, content_type: str) -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
