"""Every network call has a total deadline: a server that drips one byte at a time is cut off
like one that never answers (issue 9, item 6). Real sockets on loopback."""
import socket
import threading
import time

import pytest

from doctor.shell.mooncake import master
from doctor.shell.runtime import net


class Server:
    """A loopback TCP server answering every connection with ``reply(conn)``."""

    def __init__(self, reply):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.stop = threading.Event()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        with conn:
            try:
                conn.recv(4096)
                self.reply(conn, self.stop)
            except OSError:
                pass

    def close(self):
        self.stop.set()
        self.sock.close()


@pytest.fixture
def drip():
    def reply(conn, stop):
        for b in b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + b"x" * 10_000:
            if stop.is_set():
                return
            conn.sendall(bytes([b]))
            time.sleep(0.1)
    server = Server(reply)
    yield server
    server.close()


def test_a_dripping_server_is_cut_off_at_the_deadline(drip):
    start = time.monotonic()
    fact = master.http_get(f"http://127.0.0.1:{drip.port}/health", timeout=0.8)
    took = time.monotonic() - start
    assert fact.timed_out and fact.error == "no answer within 0.8s"
    assert took < 1.5, took  # the per-read timeout alone would run for ~17 minutes here


def test_check_with_a_dripping_master_ends_in_bounded_time(fake, drip):
    fake.ascend_host()
    start = time.monotonic()
    doc = fake.judge(mooncake_master=f"127.0.0.1:{drip.port}:{drip.port}", mooncake_timeout=0.5)
    assert time.monotonic() - start < 5
    assert any(f["id"].startswith("mooncake.master") for f in doc["findings"])


def test_chunked_and_sized_bodies_are_read_whole():
    def chunked(conn, stop):
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n")

    def sized(conn, stop):
        conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!")
        time.sleep(5)  # keeps the connection open: Content-Length ends the read, not EOF

    for reply, want in ((chunked, (200, b"Wikipedia")), (sized, (404, b"nope!"))):
        server = Server(reply)
        try:
            start = time.monotonic()
            resp = net.http_get(f"http://127.0.0.1:{server.port}/", 3, 1024)
            assert (resp.status, resp.body) == want and time.monotonic() - start < 1
        finally:
            server.close()


def test_not_http_and_refused():
    server = Server(lambda conn, stop: conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n"))
    try:
        fact = master.http_get(f"http://127.0.0.1:{server.port}/health", 2)
        assert fact.status is None and "not an HTTP response" in fact.error
    finally:
        server.close()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ok, error, timed_out, _ = master.tcp_connect("127.0.0.1", port, 2)
    assert not ok and not timed_out and "refused" in error.lower()


def test_name_resolution_counts_against_the_deadline(monkeypatch):
    def slow(*args, **kwargs):
        time.sleep(3)
        raise OSError("late")

    monkeypatch.setattr(socket, "getaddrinfo", slow)
    start = time.monotonic()
    ok, error, timed_out, _ = master.tcp_connect("master.example", 50051, 0.5)
    assert timed_out and not ok and time.monotonic() - start < 1.5
