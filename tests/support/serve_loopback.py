"""`draftlight serve`'s routes on a real loopback socket, over the scripted chat model or a
scripted engine, for tests that send raw HTTP (Host and Origin headers a browser would send,
bodies no client would, clients that leave)."""

from __future__ import annotations

import base64
import gc
import http.client
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import replace

from draftlight.engine.reply.events import Done, Progress, Stats, TextPiece
from draftlight.engine.reply.generator import Engine
from draftlight.serve.background import BackgroundServer
from draftlight.serve.serve_worker import ServeWorker
from tests.support.fake_backend import FakeChatModel, scripted_costs
from tests.support.waiting import slowness
from draftlight.modes import OFF

MODEL = "smol"
N_CTX = 512
REPLY = b"Hello there, general Kenobi."


def scripted_worker(queue_size: int = 4, reply: bytes = REPLY) -> ServeWorker:
    worker = ServeWorker(lambda: Engine(FakeChatModel(lambda prompt: reply, n_ctx=N_CTX),
                                         cost_source=scripted_costs),
                          OFF, queue_size, MODEL)
    worker.start()
    worker.ready.wait()
    return worker


@contextmanager
def serving(runner=None, **options):
    """A BackgroundServer on a free port (`options` as for it); yields it, stops it after."""
    worker = runner or scripted_worker()
    server = BackgroundServer(worker, port=0, **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        if runner is None:
            worker.stop()


def request(server, method: str, path: str, body: bytes | dict | None = None, *,
            headers: dict[str, str] | None = None, timeout: float = 30):
    """(status, headers as a dict with lower-case names, body bytes). Host defaults to the
    server's own; a dict body is sent as JSON."""
    port = server.listener.getsockname()[1]
    sent = {"Host": f"127.0.0.1:{port}", **(headers or {})}
    if isinstance(body, dict):
        body = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=sent)
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def chat_body(**fields) -> dict:
    return {"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
            "temperature": 0, "max_tokens": 64, **fields}


def file_part(name: str, data: bytes) -> dict:
    """OpenAI's file content part: `data` sent as a file named `name`."""
    return {"type": "file", "file": {"filename": name,
                                     "file_data": base64.b64encode(data).decode()}}


def asking_about(*parts: dict, text: str = "Summarise.") -> dict:
    """A chat body whose one user message holds `parts` (file parts) and then `text`."""
    return chat_body(messages=[{"role": "user", "content": [*parts, {"type": "text",
                                                                      "text": text}]}])


class ScriptedServeEngine:
    """What run_job (app/draftlight/serve/worker.py) needs of an engine, scripted: every reply is
    `pieces` pieces of "x" (None: without end), one a pass, each pass `delay` seconds. A `held`
    engine waits in its first generate until `release()` (at most 30 s): a busy engine."""

    load_notices: tuple[str, ...] = ()

    def __init__(self, *, pieces: int | None = 3, delay: float = 0.0, held: bool = False,
                 n_ctx: int = N_CTX) -> None:
        self.pieces, self.delay, self.n_ctx = pieces, delay, n_ctx
        self.gate, self.started = threading.Event(), threading.Event()
        if not held:
            self.gate.set()

    def tokenize_chat(self, messages) -> list[int]:
        return [0] * len(messages)  # one token a message: any body fits the context

    def reserve(self, params) -> int:
        return 1

    def generate(self, messages, params, mode, *, prediction=None):
        self.started.set()
        self.gate.wait(30)
        stats = Stats(mode=mode)
        for step in itertools.count() if self.pieces is None else range(self.pieces):
            if self.delay:
                time.sleep(self.delay)
            stats.new_tokens += 1
            stats.target_passes += 1
            yield TextPiece("x", "target", step)
            yield Progress(replace(stats))  # after every pass, as the real engines do
        stats.stop_reason = "eos"
        yield Done("x" * stats.new_tokens, stats)

    def release(self) -> None:
        self.gate.set()

    def close(self) -> None:
        pass


def worker_over(engine, queue_size: int = 4, **options) -> ServeWorker:
    """A started ServeWorker that answers with `engine` (`options` as for ServeWorker)."""
    worker = ServeWorker(lambda: engine, OFF, queue_size, MODEL, **options)
    worker.start()
    worker.ready.wait()
    return worker


def send_without_reading(server, body: dict):
    """A raw socket that has sent `body` as a chat completion request and reads nothing: close
    it to disconnect the client."""
    port = server.listener.getsockname()[1]
    raw = json.dumps(body).encode()
    client = socket.create_connection(("127.0.0.1", port))
    client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                   % (port, len(raw)) + raw)
    return client


def wait_for(condition, what: str, seconds: float = 10.0) -> None:
    """Poll `condition` until it holds; after `seconds` (times this machine's slowness) fail
    naming `what` was awaited."""
    deadline = time.monotonic() + seconds * slowness()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def all_released(bodies: list) -> Callable[[], bool]:
    """A wait condition: every weakly referenced request body has been let go."""
    def released() -> bool:
        gc.collect()
        return all(body() is None for body in bodies)
    return released
