"""mooncake_master checks against real servers on loopback: the recorded /health, /metrics and
/metrics/summary answers of an old (v0.3.7.post2) and a new (v0.3.11.post1) master, a closed
port, and a port that accepts connections but never answers."""
from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fakehost import finding
from fakehost.scenarios import ascend_host

from doctor.shell.mooncake import master

DATA = Path(__file__).resolve().parents[2] / "data" / "mooncake" / "master"


def recorded(version: str) -> dict:
    out = {}
    for ep, path in (("health", "/health"), ("metrics", "/metrics"), ("summary", "/metrics/summary")):
        d = DATA / version
        out[path] = ((d / f"{ep}.content-type").read_text().strip(), (d / f"{ep}.txt").read_bytes())
    return out


class Master:
    """A real HTTP server answering like mooncake_master's metrics port, plus an RPC listener."""

    def __init__(self, routes: dict):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path not in routes:
                    self.send_response(404)
                    self.end_headers()
                    return
                ctype, body = routes[self.path]
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()
        self.rpc = socket.socket()
        self.rpc.bind(("127.0.0.1", 0))
        self.rpc.listen(8)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.rpc.getsockname()[1]}:{self.http.server_address[1]}"

    def close(self):
        self.http.shutdown()
        self.http.server_close()
        self.rpc.close()


@pytest.fixture
def serve():
    servers = []

    def start(routes):
        m = Master(routes)
        servers.append(m)
        return m

    yield start
    for m in servers:
        m.close()


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there any more: connections are refused
    return port


@pytest.fixture
def silent():
    """Accepts TCP connections (kernel backlog) but never reads or answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


# -- probe and parsing --------------------------------------------------------------------------


def test_old_master_plain_ok_health(serve):
    m = serve(recorded("v0.3.7.post2"))
    facts = master.probe(m.address, "--mooncake-master", timeout=2)
    assert facts.tcp_ok and facts.health.status == 200
    h = master.parse_health(facts.health)
    assert (h.format, h.ok, h.ready) == ("plain", True, True)
    st = master.storage(master.parse_metrics(facts.metrics.body), facts.summary.body)
    assert st.capacity == 105474836480 and st.allocated == 0 and st.keys == 0 and st.clients == 1
    assert st.summary.startswith("Mem Storage: 0 B / 98.23 GB (0.0%)")


def test_new_master_json_health(serve):
    m = serve(recorded("v0.3.11.post1"))
    facts = master.probe(m.address, "--mooncake-master", timeout=2)
    h = master.parse_health(facts.health)
    assert (h.format, h.ok, h.ready, h.role, h.ha_state) == ("json", True, True, "leader", "serving")
    assert facts.health.content_type.startswith("application/json")
    st = master.storage(master.parse_metrics(facts.metrics.body), facts.summary.body)
    assert (st.capacity, st.allocated, st.keys, st.clients) == (105474836480, 13421772800, 2048, 1)


def test_summary_alone_gives_the_storage_figures():
    # Older masters log "Storage: used / cap" without "Mem" (seed 001's first master log).
    st = master.storage({}, "Storage: 0 B / 0 B | Keys: 0 (soft-pinned: 0) | Requests (Success/Total): PutStart=0/0")
    assert (st.capacity, st.allocated, st.keys) == (0, 0, 0)
    st = master.storage({}, (DATA / "v0.3.11.post1" / "summary.txt").read_text())
    assert round(st.capacity / 1024 ** 3, 2) == 98.23 and st.keys == 2048 and st.clients == 1


def test_closed_port_is_refused_fast():
    port = closed_port()
    start = time.monotonic()
    facts = master.probe(f"127.0.0.1:{port}:{port}", "--mooncake-master", timeout=2)
    assert not facts.tcp_ok and not facts.tcp_timed_out and "refused" in facts.tcp_error.lower()
    assert facts.health.status is None and facts.metrics is None  # nothing else tried
    assert time.monotonic() - start < 1.5


def test_port_that_never_answers_ends_within_the_timeout(silent):
    start = time.monotonic()
    facts = master.probe(f"127.0.0.1:{silent}:{silent}", "--mooncake-master", timeout=0.5)
    elapsed = time.monotonic() - start
    assert facts.tcp_ok  # the kernel accepts the connection ...
    assert facts.health.timed_out and facts.metrics is None  # ... but no HTTP answer comes
    assert elapsed < 0.5 * 3 + 0.5, elapsed


@pytest.mark.parametrize("text,expected", [
    ("10.0.0.1:50088", ("10.0.0.1", 50088, "http://10.0.0.1:9003")),
    ("master-0:50088:50089", ("master-0", 50088, "http://master-0:50089")),
    ("http://10.0.0.1:9004", ("10.0.0.1", 0, "http://10.0.0.1:9004")),
    ("[::1]:50051", ("::1", 50051, "http://[::1]:9003")),
])
def test_parse_address(text, expected):
    a = master.parse_address(text)
    assert a.error is None and (a.host, a.port, a.metrics_url) == expected


@pytest.mark.parametrize("text", ["", "10.0.0.1", "10.0.0.1:99999", "xx:yy"])
def test_parse_address_errors(text):
    assert master.parse_address(text).error


def test_health_other_answers():
    from doctor.facts import HttpFact

    assert master.parse_health(HttpFact(url="u", status=404)).format == "other"
    assert master.parse_health(HttpFact(url="u", status=200, body="healthy")).format == "other"
    h = master.parse_health(HttpFact(url="u", status=200, body='{"status":"ok","role":"standby","ha_state":"standby","service_ready":false}'))
    assert (h.format, h.ready) == ("json", False)
    assert not master.parse_health(HttpFact(url="u", error="refused")).reachable


# -- through check ------------------------------------------------------------------------------


def test_check_reports_old_master_format_and_storage(fake, serve):
    m = serve(recorded("v0.3.7.post2"))
    ascend_host(fake, "0.11.0rc3")
    doc = fake.judge(mooncake_master=m.address)
    masters = [f for f in doc["findings"] if f["id"] == "mooncake.master"]
    assert masters[0]["status"] == "ok" and 'plain "OK"' in masters[0]["title"] and "<= v0.3.10" in masters[0]["title"]
    storage = masters[-1]
    assert storage["status"] == "info" and "0 B / 98.23 GB" in storage["title"] and "0 keys" in storage["title"]


def test_check_reports_new_master_format(fake, serve):
    m = serve(recorded("v0.3.11.post1"))
    ascend_host(fake, "0.23.0")
    doc = fake.judge(mooncake_master=m.address)
    masters = [f for f in doc["findings"] if f["id"] == "mooncake.master"]
    assert "JSON role=leader ha_state=serving service_ready=True" in masters[0]["title"]
    assert "12.50 GB / 98.23 GB" in masters[-1]["title"] and "2048 keys, 1 clients" in masters[-1]["title"]


def test_check_standby_master_is_a_warning(fake, serve):
    routes = recorded("v0.3.11.post1")
    routes["/health"] = ("application/json; charset=utf-8",
                         b'{"status":"ok","role":"standby","ha_state":"standby","service_ready":false}')
    m = serve(routes)
    ascend_host(fake, "0.23.0")
    doc = fake.judge(mooncake_master=m.address)
    f = finding(doc, "mooncake.master")
    assert f["status"] == "warn" and "not serving" in f["title"] and "/ha_status" in f["hint"]


def test_check_closed_master_port_fails(fake):
    port = closed_port()
    ascend_host(fake, "0.23.0")
    doc = fake.judge(mooncake_master=f"127.0.0.1:{port}")
    f = finding(doc, "mooncake.master")
    assert f["status"] == "fail" and "refuses connections" in f["title"]
    assert f"mooncake_master --port {port}" in f["hint"]


def test_check_silent_master_finishes_within_its_timeout(fake, silent):
    ascend_host(fake, "0.23.0")
    start = time.monotonic()
    doc = fake.judge(mooncake_master=f"127.0.0.1:{silent}:{silent}", mooncake_timeout=0.5)
    assert time.monotonic() - start < 5
    f = finding(doc, "mooncake.master")
    assert f["status"] == "warn" and "does not" in f["title"]  # RPC port open, HTTP endpoint silent


def test_master_from_the_config_file_is_probed(fake, serve):
    m = serve(recorded("v0.3.11.post1"))
    rpc, http = m.address.rsplit(":", 2)[1:]
    ascend_host(fake, "0.23.0")
    fake.write("/etc/mooncake.json", '{"metadata_server": "P2PHANDSHAKE", "protocol": "ascend", '
                                     f'"master_server_address": "127.0.0.1:{rpc}", "global_segment_size": "1GB"}}')
    fake.env["MOONCAKE_CONFIG_PATH"] = "/etc/mooncake.json"
    doc = fake.judge()
    f = finding(doc, "mooncake.master")
    # The config names the RPC port only; metrics are looked for on the default 9003 (not served here).
    assert "from MOONCAKE_CONFIG_PATH" in f["title"] and f"TCP 127.0.0.1:{rpc}: connected" in f["evidence"][0]


def test_no_master_named_means_no_network(fake):
    ascend_host(fake, "0.23.0")
    doc = fake.judge()
    assert not [f for f in doc["findings"] if f["id"] == "mooncake.master"]
