"""The managed llama-server's key: never on a command line every user of the machine can read
(/proc/PID/cmdline, ps), and a start waits for the server that holds the key, not for whatever
answers 200 on its port."""

from __future__ import annotations

import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from draftlight.engine.server import process
from draftlight.engine.server.client import Endpoint, ServerError, served_models
from draftlight.engine.server.process import ManagedServer, ServerOptions, ServerStartError


class _AnswersEverything(BaseHTTPRequestHandler):
    """200 and an empty JSON object to any request, key or none."""

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = _answer  # http.server's names

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def impostor():
    """Another program on a loopback port that answers 200 to everything."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AnswersEverything)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_program_answering_200_on_the_port_is_not_taken_for_the_server(
        tmp_path, monkeypatch, impostor):
    # a "server" that runs but never answers: whatever answers on its port is someone else
    silent = tmp_path / "llama-server"
    silent.write_text("#!/bin/sh\nexec sleep 60\n")
    silent.chmod(0o755)
    monkeypatch.setattr(process, "free_port", lambda: impostor)
    server = ManagedServer(silent, ServerOptions(target=tmp_path / "model.gguf"),
                           health_timeout=1.5)
    with pytest.raises(ServerStartError) as caught:
        server.start()
    assert f"another program answers on 127.0.0.1:{impostor}" in str(caught.value)
    assert server.process is None  # stopped, not left behind


@pytest.mark.slow
def test_a_taken_port_that_answers_200_is_retried_on_another(
        monkeypatch, impostor, llama_server_binary, bundled_model):
    ports = [impostor]
    real = process.free_port
    monkeypatch.setattr(process, "free_port", lambda: ports.pop() if ports else real())
    server = ManagedServer(llama_server_binary, ServerOptions(target=bundled_model, threads=1,
                                                              n_ctx=512))
    try:
        server.start()
        assert server.port != impostor
        assert served_models(Endpoint(server.url, api_key=server.api_key))
    finally:
        server.close()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/cmdline").is_file(), reason="needs Linux's /proc")
def test_the_key_is_in_the_childs_environment_not_on_its_command_line(
        llama_server_binary, bundled_model):
    server = ManagedServer(llama_server_binary, ServerOptions(target=bundled_model, threads=1,
                                                              n_ctx=512))
    server.start()
    try:
        arguments = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
        assert b"--api-key" not in arguments
        assert not any(server.api_key.encode() in a for a in arguments)
        # the server still wants the key, and only the child was given it
        assert served_models(Endpoint(server.url, api_key=server.api_key))
        with pytest.raises(ServerError, match="401"):
            served_models(Endpoint(server.url, api_key="not-the-key"))
        assert os.environ.get("LLAMA_API_KEY") != server.api_key
    finally:
        server.close()
