"""profile --collect against a real HTTP server on loopback that speaks vllm's API (the OpenAI
streaming server of the smoke tests) plus /start_profile and /stop_profile as vllm registers them
when profiling is on: on stop it writes one *_ascend_pt per rank, as torch_npu's trace handler does."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import profilegen as pg
from fakehost import REPO
from smoke_fixtures.openai_server import Server, make_handler
import doctor_fork


class ProfilingServer(Server):
    def __init__(self, out: Path, enabled: bool = True, ranks: int = 2, raw: bool = False, endless: bool = False):
        super().__init__(first=0.01, gap=0.002)
        base = make_handler(self.script)
        state = {"on": False, "during": 0, "calls": []}
        self.state = state

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self):
                if self.path in ("/start_profile", "/stop_profile"):
                    state["calls"].append(self.path)
                    if not enabled:
                        self._json(404, {"detail": "Not Found"})
                        return
                    if self.path == "/start_profile":
                        state["on"] = True
                    else:
                        state["on"] = False
                        if raw:
                            pg.write_raw(out)
                        for r in range(ranks):
                            pg.write_ascend_pt(out, replace(pg.HOST_BOUND, rank=r, steps=12))
                    self.send_response(200)
                    if endless:  # a body that never ends: 64 KiB chunks until the client hangs up
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        try:
                            while True:
                                self.wfile.write(b"10000\r\n" + b"x" * 0x10000 + b"\r\n")
                        except OSError:
                            self.close_connection = True
                        return
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if state["on"]:
                    state["during"] += 1
                super().do_POST()

        self.httpd.RequestHandlerClass = Handler


def cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return doctor_fork.run([sys.executable, "-m", "doctor", "profile", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_collect_captures_a_bounded_profile_and_analyses_it(tmp_path):
    out = tmp_path / "vllm_profile"
    # an older capture in the same directory is not this one
    pg.write_ascend_pt(out, replace(pg.DEVICE_BOUND, steps=6), name="old_ascend_pt")
    with ProfilingServer(out) as server:
        proc = cli("--collect", "--endpoint", server.url, "--profile-dir", str(out), "--requests", "5", "--json")
        assert proc.returncode == 0, proc.stderr
        assert server.state["calls"] == ["/start_profile", "/stop_profile"]
        assert server.state["during"] == 5  # exactly the bounded number of requests, all inside the capture
    doc = json.loads(proc.stdout)
    assert doc["summary"]["ranks"] == 2 and doc["summary"]["bound"] == "host"
    assert all("old_ascend_pt" not in r["files"]["trace"] for r in doc["ranks"])


def test_collect_on_a_server_without_profiling_says_how_to_start_it(tmp_path):
    out = tmp_path / "vllm_profile"
    with ProfilingServer(out, enabled=False) as server:
        proc = cli("--collect", "--endpoint", server.url, "--profile-dir", str(out))
    assert proc.returncode == 2
    err = proc.stderr
    assert "404" in err and "--profiler-config" in err and "VLLM_TORCH_PROFILER_DIR" in err
    assert json.dumps(str(out))[1:-1] in err
    assert "Traceback" not in err


def test_collect_of_an_unanalysed_capture_prints_the_analysis_command(tmp_path):
    out = tmp_path / "vllm_profile"
    with ProfilingServer(out, ranks=0, raw=True) as server:
        proc = cli("--collect", "--endpoint", server.url, "--profile-dir", str(out), "--requests", "2")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("python3 -c 'from torch_npu.profiler.profiler import analyse")


def test_collect_needs_a_reachable_server(tmp_path):
    proc = cli("--collect", "--endpoint", "http://127.0.0.1:9", "--profile-dir", str(tmp_path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_collect_reads_only_the_status_of_start_and_stop(tmp_path):
    """/start_profile and /stop_profile are judged by their status: a body that never ends was
    read whole (4 GB of memory in a minute, and no end)."""
    out = tmp_path / "vllm_profile"
    with ProfilingServer(out, endless=True) as server:
        proc = cli("--collect", "--endpoint", server.url, "--profile-dir", str(out), "--requests", "2", "--json",
                   timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert server.state["calls"] == ["/start_profile", "/stop_profile"]
    assert json.loads(proc.stdout)["summary"]["ranks"] == 2
