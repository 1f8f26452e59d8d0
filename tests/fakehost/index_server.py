"""The wheelhouse served as package indexes on loopback, so that a printed pip command runs with
the index options it carries.

Each place of the wheelhouse (``pypi``, ``pytorch-cpu``, ``ascend``) is a PEP 503 simple index
at ``http://127.0.0.1:<port>/<place>/simple/``. :meth:`WheelIndex.localise` swaps the public index
URLs a command names (the PyTorch CPU index, the Ascend pip mirror) for the loopback index of
the same place; the default index (what pip uses without options) is the ``pypi`` place. A
command that lacks an index option it needs then fails here as it fails for the user.
"""
from __future__ import annotations

import html
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, List, Mapping, Sequence

from .wheelhouse import ASCEND, CPU, PYPI

PUBLIC = {  # the public index URL a command names -> the wheelhouse place that stands in for it
    "https://mirrors.huaweicloud.com/ascend/repos/pypi": ASCEND,
    "https://download.pytorch.org/whl/cpu": CPU,
    "https://pypi.org/simple": PYPI,
}


def _project(filename: str) -> str:
    return re.sub(r"[-_.]+", "-", filename.split("-", 1)[0]).lower()


class WheelIndex:
    def __init__(self, dirs: Mapping[str, Path]):
        self.dirs = {k: Path(v) for k, v in dirs.items()}
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                parts = [p for p in self.path.split("?", 1)[0].split("/") if p]
                if len(parts) == 3 and parts[1] == "simple" and parts[0] in index.dirs:
                    place, project = parts[0], parts[2].lower()
                    links = [f'<a href="/{place}/files/{html.escape(f.name)}">{html.escape(f.name)}</a><br/>'
                             for f in sorted(index.dirs[place].glob("*.whl")) if _project(f.name) == project]
                    if not links:
                        return self._send(404, b"not found", "text/plain")
                    body = "<!DOCTYPE html><html><body>" + "".join(links) + "</body></html>"
                    return self._send(200, body.encode(), "text/html")
                if len(parts) == 3 and parts[1] == "files" and parts[0] in index.dirs:
                    f = index.dirs[parts[0]] / parts[2]
                    if f.is_file() and f.parent == index.dirs[parts[0]]:
                        return self._send(200, f.read_bytes(), "application/octet-stream")
                return self._send(404, b"not found", "text/plain")

            def _send(self, code: int, body: bytes, ctype: str):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, place: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{place}/simple/"

    def localise(self, argv: Sequence[str]) -> List[str]:
        """The command with every public index URL it names pointed at the loopback stand-in."""
        out = []
        for word in argv:
            key = word.rstrip("/")
            out.append(self.url(PUBLIC[key]) if key in PUBLIC else word)
        return out

    def pip_env(self, base: Mapping[str, str]) -> Dict[str, str]:
        """pip reads no configuration and uses the ``pypi`` place as its default index."""
        env = {k: v for k, v in base.items() if not k.startswith(("PIP_", "UV_"))}
        env.update({"PIP_CONFIG_FILE": "/dev/null", "PIP_INDEX_URL": self.url(PYPI),
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1", "PIP_RETRIES": "0"})
        return env

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def endless_trailer_server(content_type: str = "application/json") -> ThreadingHTTPServer:
    """A server (started, on loopback) whose every answer is chunked and whose last chunk is
    followed by trailer lines without end: http.client reads them inside one read, where no
    deadline check of the caller runs."""

    class EndlessTrailer(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Content-Type", content_type)
            self.end_headers()
            try:
                self.wfile.write(b"2\r\n{}\r\n0\r\n")
                while True:
                    self.wfile.write(b"X-Trailer: " + b"y" * 1000 + b"\r\n")
            except OSError:
                self.close_connection = True

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), EndlessTrailer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def dripping_headers_server(every: float = 0.5, lines: int = 1000) -> ThreadingHTTPServer:
    """A server (started, on loopback) that answers every request with its status line and then
    one header line every ``every`` seconds (``lines`` of them, about forever for a test): each
    line comes well within any per-read timeout, the headers never end."""
    import time

    class DrippingHeaders(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _drip(self):
            try:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                self.wfile.flush()
                for i in range(lines):
                    time.sleep(every)
                    self.wfile.write(b"X-Drip-%d: 1\r\n" % i)
                    self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True

        do_GET = do_POST = do_HEAD = _drip

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), DrippingHeaders)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
