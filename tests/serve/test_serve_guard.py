"""Web pages cannot use `draftlight serve` (or File ▸ Serve on localhost) behind the user's back:
DNS rebinding gets 421, cross-site form posts 403/415, CORS only for named origins; bounded
requests; a stream the client stops reading is cancelled. Real sockets on 127.0.0.1, the
scripted chat model."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from draftlight.cli import main
from draftlight.serve.guard import access_for, normal_origin
from draftlight.serve.schema import MAX_BODY_BYTES, MAX_MESSAGES, MAX_PREDICTION_CHARS
from draftlight.engine.reply.events import TextPiece
from draftlight.serve.serve_worker import Started
from draftlight.user_messages import UserError
from tests.support.serve_loopback import N_CTX, REPLY, chat_body, request, serving

TOOL = "http://localhost:3000"


@pytest.fixture(scope="module")
def server():
    with serving() as running:
        yield running


def port_of(server) -> int:
    return server.listener.getsockname()[1]


def error_of(body: bytes) -> dict:
    error = json.loads(body)["error"]
    assert error["message"] and error["type"]
    return error


def test_a_plain_client_is_answered(server):
    status, _, body = request(server, "POST", "/v1/chat/completions", chat_body())
    assert status == 200
    assert json.loads(body)["choices"][0]["message"]["content"] == REPLY.decode()


@pytest.mark.parametrize("name", ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
def test_the_loopback_names_with_the_port_are_answered(server, name):
    status, _, _ = request(server, "GET", "/v1/models",
                           headers={"Host": f"{name}:{port_of(server)}"})
    assert status == 200


@pytest.mark.parametrize("host", ["attacker.example:{port}", "attacker.example",
                                  "127.0.0.1:1", "localhost.attacker.example:{port}", ""])
def test_a_rebound_host_gets_421(server, host):
    # DNS rebinding: the page's own name, pointed at 127.0.0.1, arrives as the Host
    for method, path, body in (("GET", "/v1/models", None),
                               ("POST", "/v1/chat/completions", chat_body())):
        status, _, answer = request(server, method, path, body,
                                    headers={"Host": host.format(port=port_of(server))})
        assert status == 421
        assert error_of(answer)["code"] == "host_not_allowed"


def test_a_cross_site_form_post_gets_403_and_a_text_body_415(server):
    form = json.dumps(chat_body()).encode()
    status, _, answer = request(server, "POST", "/v1/chat/completions", form,
                                headers={"Content-Type": "text/plain",
                                         "Origin": "http://attacker.example"})
    assert status == 403 and error_of(answer)["code"] == "origin_not_allowed"
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None):
        headers = {"Content-Type": kind} if kind else {}
        status, _, answer = request(server, "POST", "/v1/chat/completions", form,
                                    headers=headers)
        assert status == 415 and error_of(answer)["code"] == "unsupported_media_type"
    status, _, _ = request(server, "POST", "/v1/chat/completions", form,
                           headers={"Content-Type": "application/json; charset=utf-8"})
    assert status == 200


def test_without_allowed_origins_there_is_no_cors(server):
    preflight = {"Origin": "http://attacker.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    status, headers, answer = request(server, "OPTIONS", "/v1/chat/completions",
                                      headers=preflight)
    assert status == 403 and "access-control-allow-origin" not in headers
    status, _, answer = request(server, "OPTIONS", "/v1/chat/completions")
    assert status == 405 and error_of(answer)["code"] == "method_not_allowed"
    for origin in (TOOL, "null"):
        status, headers, _ = request(server, "GET", "/v1/models", headers={"Origin": origin})
        assert status == 403 and "access-control-allow-origin" not in headers


def test_an_allowed_origin_gets_cors_with_its_preflight_and_others_do_not():
    with serving(allow_origins=(TOOL + "/",)) as server:
        status, headers, _ = request(server, "OPTIONS", "/v1/chat/completions", headers={
            "Origin": TOOL, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert status == 200
        assert headers["access-control-allow-origin"] == TOOL
        assert "POST" in headers["access-control-allow-methods"]
        assert "content-type" in headers["access-control-allow-headers"].lower()
        for method, path, body in (("GET", "/v1/models", None),
                                   ("POST", "/v1/chat/completions", chat_body()),
                                   ("POST", "/v1/chat/completions", chat_body(stream=True))):
            status, headers, answer = request(server, method, path, body,
                                              headers={"Origin": TOOL})
            assert status == 200 and headers["access-control-allow-origin"] == TOOL
        status, headers, _ = request(server, "GET", "/v1/models",
                                     headers={"Origin": "http://localhost:3001"})
        assert status == 403 and "access-control-allow-origin" not in headers


def test_an_allowed_host_name_is_answered():
    with serving(allow_hosts=("my-pc.local",)) as server:
        port = port_of(server)
        assert request(server, "GET", "/v1/models",
                       headers={"Host": f"my-pc.local:{port}"})[0] == 200
        assert request(server, "GET", "/v1/models",
                       headers={"Host": f"other.local:{port}"})[0] == 421


def test_allowed_origins_and_hosts_are_checked_and_normalised():
    assert normal_origin("HTTP://Tool.Example:8443/") == "http://tool.example:8443"
    for bad in ("*", "localhost:3000", "http://tool.example/app", "ftp://tool.example",
                "http://user@tool.example", "", "http://tool.example:99999"):
        with pytest.raises(UserError):
            normal_origin(bad)
    access = access_for("127.0.0.1", 9000, allow_hosts=["box.lan", "other.lan:81"])
    assert {"box.lan:9000", "other.lan:81", "localhost:9000", "[::1]:9000"} <= access.hosts
    assert "other.lan:9000" not in access.hosts
    with pytest.raises(UserError):
        access_for("127.0.0.1", 9000, allow_hosts=["bad host"])


def test_a_host_other_machines_reach_needs_a_key(capsys):
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "--api-key" in capsys.readouterr().err
    assert main(["serve", "--allow-origin", "*"]) == 2
    assert "every web page" in capsys.readouterr().err


# --- limits ------------------------------------------------------------------------------------

def test_oversized_requests_are_refused_with_413_or_400(server):
    huge = b'{"model": "smol", "messages": [], "x": "' + b"a" * MAX_BODY_BYTES + b'"}'
    status, _, answer = request(server, "POST", "/v1/chat/completions", huge,
                                headers={"Content-Type": "application/json"})
    assert status == 413 and error_of(answer)["code"] == "request_too_large"
    many = [{"role": "user", "content": "x"}] * (MAX_MESSAGES + 1)
    cases = [(chat_body(messages=many), "messages"),
             (chat_body(prediction={"type": "content", "content": "p" * (MAX_PREDICTION_CHARS + 1)}),
              "prediction"),
             (chat_body(max_tokens=N_CTX + 1), "max_tokens")]
    for body, param in cases:
        status, _, answer = request(server, "POST", "/v1/chat/completions", body)
        assert status == 400 and error_of(answer)["param"] == param
    assert request(server, "POST", "/v1/chat/completions", chat_body(max_tokens=N_CTX))[0] in (
        200, 400)  # the limit itself is allowed (the prompt may then not fit: a 400 that says so)


class FloodRunner:
    """A runner that answers every job with an endless stream of large pieces until cancelled."""

    model_id, n_ctx = "smol", N_CTX

    def __init__(self) -> None:
        self.jobs, self.done = [], threading.Event()

    def submit(self, job) -> None:
        self.jobs.append(job)
        threading.Thread(target=self._flood, args=(job,), daemon=True).start()

    def _flood(self, job) -> None:
        job.deliver(Started(3))
        while not job.cancelled.wait(0.001):
            job.deliver(TextPiece("x" * 65536, "target", 1))
        self.done.set()


def test_a_client_that_stops_reading_a_stream_is_cut_off_and_its_job_cancelled():
    runner = FloodRunner()
    with serving(runner, send_timeout=1.0) as server:
        client = socket.socket()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        client.connect(("127.0.0.1", port_of(server)))
        body = json.dumps(chat_body(stream=True)).encode()
        client.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                       b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                       % (port_of(server), len(body), body))
        started = time.monotonic()
        try:  # ... and never reads: the server's sends block, then time out
            assert runner.done.wait(15), "the stalled stream still holds its job"
        finally:
            client.close()
        assert runner.jobs and runner.jobs[0].cancelled.is_set()
        assert time.monotonic() - started < 15
