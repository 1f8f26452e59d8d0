"""Network calls with a TOTAL deadline: name lookup, connect, request and the whole response
must fit in it. A per-read timeout is not enough: a server that sends one byte every 0.5 s never
trips a 2 s read timeout and would hold check for ever.

Plain HTTP/1.1 GET over a socket (the Mooncake master's metrics port speaks nothing else); the
remaining time is re-armed on the socket before every call, and name resolution, which has no
timeout of its own, runs in a daemon thread that is abandoned when the deadline passes.
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

from doctor.shell.runtime.deadline import Deadline

MAX_HEADERS = 64 * 1024


class Timeout(OSError):
    """The deadline passed."""


@dataclass
class Response:
    status: int
    headers: Dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    truncated: bool = False  # the body was longer than the cap


def _no_answer(d: Deadline, what: str) -> Timeout:
    return Timeout(f"no answer within {d.seconds:g}s")


def budget(seconds: float) -> Deadline:
    """The shell's one Deadline, spent as a Timeout (an OSError, as a socket's own is)."""
    return Deadline(seconds, _no_answer)


def resolve(host: str, port: int, deadline: Deadline) -> List[Tuple]:
    """getaddrinfo with a deadline (it has none: a dead DNS server blocks for ~20 s)."""
    result: Dict[str, object] = {}

    def lookup() -> None:
        try:
            result["ok"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as e:
            result["error"] = e

    t = threading.Thread(target=lookup, name="resolve", daemon=True)
    t.start()
    t.join(deadline.left())
    if t.is_alive():
        raise Timeout(f"no answer within {deadline.seconds:g}s (resolving {host})")
    if "error" in result:
        raise result["error"]  # type: ignore[misc]
    return result["ok"]  # type: ignore[return-value]


def connect(host: str, port: int, deadline: Deadline) -> socket.socket:
    last: Optional[OSError] = None
    for family, kind, proto, _, address in resolve(host, port, deadline):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(deadline.left())
            sock.connect(address)
            return sock
        except socket.timeout:
            sock.close()
            raise Timeout(f"no answer within {deadline.seconds:g}s")
        except OSError as e:
            sock.close()
            last = e
    raise last or OSError(f"cannot resolve {host}")


def tcp_probe(host: str, port: int, timeout: float) -> None:
    """Connect and close; raises Timeout or OSError."""
    connect(host, port, budget(timeout)).close()


def _recv(sock: socket.socket, deadline: Deadline, n: int = 65536) -> bytes:
    try:
        sock.settimeout(deadline.left())
        return sock.recv(n)
    except socket.timeout:
        raise Timeout(f"no answer within {deadline.seconds:g}s")


def http_get(url: str, timeout: float, max_body: int, headers: Optional[Dict[str, str]] = None) -> Response:
    """GET ``http://host:port/path`` within ``timeout`` seconds in total. Raises Timeout,
    OSError (refused, reset), or ValueError (not HTTP)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"{url}: only http:// URLs")
    deadline = budget(timeout)
    port = parts.port or 80
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = parts.netloc.rsplit("@", 1)[-1]
    lines = [f"GET {path} HTTP/1.1", f"Host: {host_header}", "Connection: close", "Accept: */*"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    sock = connect(parts.hostname, port, deadline)
    with sock:
        sock.settimeout(deadline.left())
        try:
            sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        except socket.timeout:
            raise Timeout(f"no answer within {deadline.seconds:g}s")
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_HEADERS:
                raise ValueError("response headers larger than 64 KB")
            chunk = _recv(sock, deadline)
            if not chunk:
                if not data:
                    raise ConnectionError("connection closed without a response")
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status, fields = _parse_head(head)
        body, truncated = _read_body(sock, deadline, fields, rest, max_body)
    return Response(status=status, headers=fields, body=body, truncated=truncated)


def _parse_head(head: bytes) -> Tuple[int, Dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    first = lines[0].split(" ", 2)
    if len(first) < 2 or not first[0].startswith("HTTP/") or not first[1].isdigit() or len(first[1]) != 3:
        raise ValueError(f"not an HTTP response: {lines[0][:80]!r}")
    fields: Dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip().lower()] = value.strip()
    return int(first[1]), fields


def _read_body(sock: socket.socket, deadline: Deadline, fields: Dict[str, str], rest: bytes,
               cap: int) -> Tuple[bytes, bool]:
    raw = rest
    chunked = "chunked" in fields.get("transfer-encoding", "").lower()
    length = fields.get("content-length", "")
    want = int(length) if length.isdigit() and len(length) < 16 and not chunked else None
    limit = cap + 64 * 1024 if chunked else cap  # room for the chunk framing
    while len(raw) < limit and (want is None or len(raw) < want):
        if chunked and raw.endswith(b"0\r\n\r\n"):
            break
        chunk = _recv(sock, deadline)
        if not chunk:
            break
        raw += chunk
    body = _dechunk(raw) if chunked else raw
    if want is not None:
        body = body[:want]
    return body[:cap], len(body) > cap


def _dechunk(raw: bytes) -> bytes:
    out = b""
    i = 0
    while i < len(raw):
        end = raw.find(b"\r\n", i)
        if end < 0:
            break
        size_text = raw[i:end].split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16) if len(size_text) <= 16 else -1
        except ValueError:
            break
        if size <= 0:
            break
        out += raw[end + 2:end + 2 + size]
        i = end + 2 + size + 2
    return out


def cut_off(resp: Any, deadline: float) -> Callable[[], None]:
    """Shut the response's socket down at ``deadline`` (monotonic); returns what cancels it.
    The deadline checks between reads cannot end a read that never returns: http.client reads
    the trailer lines after a chunked body's last chunk one by one, with no end while the server
    sends them (an endless trailer held smoke --endpoint, profile --collect and index reads forever)."""
    import time

    sock = getattr(getattr(getattr(resp, "raw", None), "_connection", None), "sock", None)
    if sock is None:
        return lambda: None

    def cut() -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    return timer.cancel


# ---------------------------------------------------------------------------------------------
# requests with a total deadline, headers included
#
# requests/urllib3 give a timeout per socket operation only: a server that sends its status line
# and then one header line every 2 s never trips it, and ``cut_off`` (above) needs the response,
# which exists only once the headers are in. A watch covers the whole call instead: every
# connection a watched session uses registers its socket with the thread's active watch, and the
# watch shuts those sockets down when its deadline passes. A response whose headers were cut off
# so is a read timeout (requests.exceptions.ReadTimeout), not a short answer.

_active = threading.local()


class Watch:
    """Shuts down every socket registered with it once ``end`` (monotonic) has passed."""

    def __init__(self, end: float) -> None:
        import time

        self.end = end
        self.fired = False
        self._socks: List[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, end - time.monotonic()), self._fire)
        self._timer.daemon = True

    def add(self, sock: Optional[socket.socket]) -> None:
        if sock is None:
            return
        with self._lock:
            if not self.fired:
                self._socks.append(sock)
                return
        _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            socks, self._socks = self._socks, []
        for s in socks:
            _shut(s)

    def __enter__(self) -> "Watch":
        self._outer = getattr(_active, "watch", None)
        _active.watch = self
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()
        _active.watch = self._outer


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def watch(end: float) -> Watch:
    """``with watch(end): session.get(...)``: the request (connect, headers and what of the body
    is read inside the block) ends by ``end``; the session must be a :func:`watched` one."""
    return Watch(end)


class _Watched:
    """Mixed into urllib3's connection classes: the socket joins the thread's active watch."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        w = getattr(_active, "watch", None)
        if w is not None:
            w.add(getattr(self, "sock", None))

    def getresponse(self, *args: Any, **kwargs: Any) -> Any:
        w = getattr(_active, "watch", None)
        if w is not None:
            w.add(getattr(self, "sock", None))  # a kept-alive connection, connected earlier
        try:
            resp = super().getresponse(*args, **kwargs)  # type: ignore[misc]
        except Exception as e:
            if w is not None and w.fired:
                raise socket.timeout("the deadline passed while the response headers came") from e
            raise
        if w is not None and w.fired:  # headers ended by the shut-down socket, not by the server
            resp.close()
            raise socket.timeout("the deadline passed while the response headers came")
        return resp


_watched_classes: Dict[type, type] = {}


def _watched_pool(pool: Any) -> Any:
    cls = getattr(pool, "ConnectionCls", None)
    if isinstance(cls, type) and not issubclass(cls, _Watched):
        sub = _watched_classes.get(cls)
        if sub is None:
            sub = _watched_classes[cls] = type(f"Watched{cls.__name__}", (_Watched, cls), {})
        pool.ConnectionCls = sub
    return pool


_adapter_class: List[type] = []


def _watched_adapter() -> Any:
    if not _adapter_class:
        from requests.adapters import HTTPAdapter

        class WatchedAdapter(HTTPAdapter):
            def get_connection_with_tls_context(self, *args: Any, **kwargs: Any) -> Any:
                return _watched_pool(super().get_connection_with_tls_context(*args, **kwargs))

            def get_connection(self, *args: Any, **kwargs: Any) -> Any:  # requests before 2.32.2
                return _watched_pool(super().get_connection(*args, **kwargs))

        _adapter_class.append(WatchedAdapter)
    return _adapter_class[0]()


def watched(session: Any = None) -> Any:
    """``session`` (a new requests.Session when None) with http:// and https:// served by an
    adapter whose connections join the active :func:`watch`. Idempotent; an object that is no
    requests.Session (a test's fake) is returned as it is."""
    if session is None:
        import requests

        session = requests.Session()
    adapters = getattr(session, "adapters", None)
    if not hasattr(session, "mount") or not isinstance(adapters, dict):
        return session
    for prefix in ("http://", "https://"):
        current = adapters.get(prefix)
        if not (_adapter_class and isinstance(current, _adapter_class[0])):
            session.mount(prefix, _watched_adapter())
    return session
