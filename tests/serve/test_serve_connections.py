"""What a client may hold of serve's connections (issue 76, hole 4): a request's headers and
body must arrive in time (slowloris), at most so many connections are open (one more closes
the one that has waited longest for its request, or gets 503), a process out of descriptors
sheds connections instead of retrying in a storm, and none of it writes a line per connection.
Real sockets on 127.0.0.1 (tests/support/serve_loopback.py); the descriptor limit in a server
process of its own."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

from draftlight.serve.connections import ConnectionLimits
from draftlight.serve.log_limits import LineBudget
from tests.support.serve_loopback import (ScriptedServeEngine, chat_body, request,
                                          send_without_reading, serving, wait_for, worker_over)
from tests.support.waiting import slowness

ROOT = Path(__file__).resolve().parents[2]
HALF_HEADERS = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def connect(server, first: bytes = b"") -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.listener.getsockname()[1]),
                                      timeout=10 * slowness())
    if first:
        client.sendall(first)
    return client


def until_closed(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (then closed here too)."""
    received = b""
    with client:
        while chunk := client.recv(65536):
            received += chunk
    return received


def answer_of(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_headers_that_do_not_arrive_in_time_are_answered_408_and_closed():
    # Before: uvicorn waited for headers for as long as the client took.
    with serving(limits=ConnectionLimits(header_seconds=0.5)) as server:
        slow = connect(server, HALF_HEADERS)
        started = time.monotonic()
        status, answer = answer_of(until_closed(slow))
        took = time.monotonic() - started
    assert status == 408 and answer["error"]["code"] == "request_timeout"
    assert "headers did not arrive within 0.5 s" in answer["error"]["message"]
    assert took < 0.5 + 2 * slowness()


def test_a_body_that_does_not_arrive_in_time_is_answered_408_and_closed():
    with serving(body_timeout=0.5) as server:
        port = server.listener.getsockname()[1]
        slow = connect(server, b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                               b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
                               b'{"model": ' % port)
        started = time.monotonic()
        status, answer = answer_of(until_closed(slow))
        took = time.monotonic() - started
    assert status == 408 and answer["error"]["code"] == "request_timeout"
    assert "body did not all arrive within 0.5 s" in answer["error"]["message"]
    assert took < 0.5 + 2 * slowness()


def test_at_the_cap_a_new_client_closes_the_connection_waiting_longest():
    with serving(limits=ConnectionLimits(most=8)) as server:
        slow = [connect(server, HALF_HEADERS) for _ in range(8)]
        time.sleep(0.2)  # all eight are open, waiting for their headers
        status, _, _ = request(server, "GET", "/v1/models", timeout=5)
        first = until_closed(slow[0])  # the oldest made room
        for client in slow:
            client.close()
    assert status == 200
    assert first == b""  # closed without an answer: its request never came


def test_at_the_cap_with_every_connection_busy_a_new_one_gets_503():
    engine = ScriptedServeEngine(held=True)
    worker = worker_over(engine, queue_size=4)
    with serving(worker, limits=ConnectionLimits(most=2)) as server:
        busy = [send_without_reading(server, chat_body()) for _ in range(2)]
        assert engine.started.wait(10)
        wait_for(lambda: worker.waiting() == 1, "the second request to be queued")
        status, answer = answer_of(until_closed(connect(server)))
        engine.release()
        for client in busy:
            client.close()
    worker.stop()
    assert status == 503 and answer["error"]["code"] == "too_many_connections"


SERVER_UNDER_A_DESCRIPTOR_LIMIT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
from tests.support.serve_loopback import serving
with serving() as server:
    print(server.listener.getsockname()[1], flush=True)
    sys.stdin.read()
"""


class ServerAt:
    """What request() and connect() need of a server in another process: its port."""

    def __init__(self, port: int) -> None:
        self.listener, self.port = self, port

    def getsockname(self) -> tuple[str, int]:
        return "127.0.0.1", self.port


def test_300_half_open_connections_under_256_descriptors_shut_no_one_out():
    # Before: every new client timed out for over a minute, and serve wrote 496 MB of
    # tracebacks in 75 s (asyncio's retries of accept under EMFILE).
    with subprocess.Popen([sys.executable, "-c", SERVER_UNDER_A_DESCRIPTOR_LIMIT], cwd=ROOT,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as server:
        try:
            elsewhere = ServerAt(int(server.stdout.readline()))
            attackers = [connect(elsewhere, HALF_HEADERS) for _ in range(300)]
            started = time.monotonic()
            answers = [request(elsewhere, "GET", "/v1/models", timeout=10)[0] for _ in range(5)]
            took = time.monotonic() - started
            for attacker in attackers:
                attacker.close()
            server.stdin.close()
            log = server.stderr.read()
            server.wait(30)
        finally:
            if server.poll() is None:
                server.kill()
    assert answers == [200] * 5 and took < 2 * slowness(), (answers, took)
    assert b"Traceback" not in log and len(log) < 4096, log[-2000:]
    assert b"similar log lines left out" in log or log.count(b"\n") <= 10


LISTENER_OUT_OF_DESCRIPTORS = """
import errno, os, resource, socket
from draftlight.serve.listener import SheddingListener
listener = SheddingListener(socket.create_server(("127.0.0.1", 0)))
client = socket.create_connection(listener.getsockname())
held, soft = [], len(os.listdir("/dev/fd")) + 8
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
while True:
    try:
        held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        break
try:
    listener.accept()
except BlockingIOError:
    print("nothing to accept")
client.settimeout(5)
print("client saw", client.recv(10))
"""


def test_out_of_descriptors_the_listener_closes_the_waiting_connection_at_once():
    done = subprocess.run([sys.executable, "-c", LISTENER_OUT_OF_DESCRIPTORS], cwd=ROOT,
                          capture_output=True, timeout=60)
    assert done.stdout.decode().split("\n")[:2] == ["nothing to accept", "client saw b''"], \
        done.stdout + done.stderr


def test_a_logger_writes_a_burst_and_then_says_how_many_lines_it_left_out():
    budget = LineBudget(burst=3, refill_seconds=0.2)
    record = lambda: logging.LogRecord("asyncio", logging.ERROR, "", 0, "accept failed", (), None)
    passed = [budget.filter(record()) for _ in range(50)]
    assert passed == [True] * 3 + [False] * 47
    time.sleep(0.25)
    later = record()
    assert budget.filter(later) and later.getMessage() == \
        "(47 similar log lines left out) accept failed"
