"""A loopback OpenAI-style chat server with scripted behaviour, for the remote engine's tests:
a plain stream (no llama.cpp counters), refused keys, unknown models, failures, cut streams."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = ["Hello", " there", ",", " friend", "."]


class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, behaviour: str = "ok") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.behaviour = behaviour
        self.bodies: list[dict] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append(body)
        behaviour = self.server.behaviour
        if behaviour == "401" and self.headers.get("Authorization") != "Bearer right":
            return self._error(401, "Invalid API Key")
        if behaviour == "404":
            return self._error(404, "The model `nope` does not exist")
        if behaviour == "500":
            return self._error(500, "out of memory")
        if behaviour == "strict" and "timings_per_token" in body:
            return self._error(400, "Unrecognized request argument supplied: timings_per_token")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        words = WORDS[:2] if behaviour == "cut" else WORDS
        for word in words:
            self._data({"choices": [{"index": 0, "delta": {"content": word},
                                     "finish_reason": None}]})
        if behaviour != "cut":
            self._data({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _data(self, obj) -> None:
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()

    def _error(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message, "code": status}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
