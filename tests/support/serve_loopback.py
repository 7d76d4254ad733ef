"""`draftlight serve`'s routes on a real loopback socket, over the scripted chat model, for tests
that send raw HTTP (Host and Origin headers a browser would send, bodies no client would)."""

from __future__ import annotations

import http.client
import json
from contextlib import contextmanager

from draftlight.engine.generator import Engine
from draftlight.serve.background import BackgroundServer
from draftlight.serve.worker import ServeWorker
from tests.support.fake_backend import FakeChatModel, scripted_costs

MODEL = "smol"
N_CTX = 512
REPLY = b"Hello there, general Kenobi."


def scripted_worker(queue_size: int = 4, reply: bytes = REPLY) -> ServeWorker:
    worker = ServeWorker(lambda: Engine(FakeChatModel(lambda prompt: reply, n_ctx=N_CTX),
                                         cost_source=scripted_costs),
                          "off", queue_size, MODEL)
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
