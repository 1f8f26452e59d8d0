"""A real HTTP server on loopback that speaks the OpenAI streaming protocol (SSE over chunked
HTTP/1.1) on a script: the first token after ``first`` seconds, then one token every ``gap``
seconds, ``per_chunk`` tokens to a chunk, the usage report last (stream_options.include_usage),
then ``data: [DONE]``. Modes make it misbehave: stall (stops sending after 3 chunks),
malformed (a chunk that is not JSON), error500, never (reads the request, never answers),
never_models (even /v1/models never answers), no_usage (no usage chunk).

Times are scheduled from the moment the request was read (absolute deadlines, not sleeps in
a row), so the script's figures are what a perfect client would measure.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    def __init__(self, mode="normal", first=0.2, gap=0.02, per_chunk=1):
        self.mode, self.first, self.gap, self.per_chunk = mode, first, gap, per_chunk
        self.stop = threading.Event()
        self.prompts = []
        self.timings = []  # per request: monotonic times read, first chunk sent, last chunk sent, tokens


def make_handler(script: Script):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _json(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if script.mode == "never_models":
                script.stop.wait(60)
                return
            if self.path == "/debug/timings":
                self._json(200, script.timings)
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": "tiny-llama", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def _chunk(self, data: bytes):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _event(self, obj):
            self._chunk(b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            req = json.loads(self.rfile.read(length))
            t0 = time.monotonic()
            script.prompts.append(req.get("prompt") or req.get("messages"))
            if script.mode in ("never", "never_models"):
                script.stop.wait(60)
                return
            if script.mode == "error500":
                self._json(500, {"error": {"message": "engine core died", "type": "InternalServerError"}})
                return
            n = int(req.get("max_tokens") or req.get("max_completion_tokens") or 16)
            chat = "messages" in req
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            # token k (0-based) is due at first + k*gap; chunks carry per_chunk tokens after the first
            k, chunks, first_sent = 0, 0, None
            while k < n:
                take = 1 if k == 0 else min(script.per_chunk, n - k)
                due = t0 + script.first + (k + take - 1) * script.gap
                if script.stop.wait(max(0.0, due - time.monotonic())):
                    return
                if script.mode == "stall" and chunks == 3:
                    script.stop.wait(60)
                    return
                if script.mode == "malformed" and chunks == 2:
                    self._event(b"{\"choices\": [{\"text\": \"oops\"")
                    chunks += 1
                    k += take
                    continue
                text = "".join(f" t{k + i}" for i in range(take))
                if chat:
                    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
                    self._event({"object": "chat.completion.chunk", "choices": [choice]})
                else:
                    self._event({"object": "text_completion", "choices": [{"index": 0, "text": text,
                                                                           "finish_reason": None}]})
                if first_sent is None:
                    first_sent = time.monotonic()
                chunks += 1
                k += take
            script.timings.append({"read": t0, "first": first_sent, "last": time.monotonic(), "tokens": n})
            if script.mode != "no_usage":
                self._event({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": n,
                                                      "total_tokens": 100 + n}})
            self._event(b"[DONE]")
            self._chunk(b"")

    return Handler


class Server:
    def __init__(self, **kw):
        self.script = Script(**kw)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.script))
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # clients that hang up are part of the tests
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.script.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class ProcessServer:
    """The same server in a process of its own, so that its timing does not share the GIL with
    the client under test (the figures are then what a client on another machine would see)."""

    def __init__(self, **kw):
        import subprocess
        import sys
        from pathlib import Path

        args = [f"--{k.replace('_', '-')}={v}" for k, v in kw.items()]
        self.proc = subprocess.Popen([sys.executable, "-m", "smoke_fixtures.openai_server", *args],
                                     cwd=str(Path(__file__).resolve().parents[1]), stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait(10)


if __name__ == "__main__":
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--mode", default="normal")
    p.add_argument("--first", type=float, default=0.2)
    p.add_argument("--gap", type=float, default=0.02)
    p.add_argument("--per-chunk", type=int, default=1)
    a = p.parse_args()
    server = Server(mode=a.mode, first=a.first, gap=a.gap, per_chunk=a.per_chunk)
    print(server.url, flush=True)
    server.httpd.serve_forever()
