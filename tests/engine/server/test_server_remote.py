"""The remote engine against a loopback OpenAI-style server (tests/support/openai_stub.py):
text with "unknown" provenance said in the footer, and one clear line for each way a server
fails."""

from __future__ import annotations

import pytest

from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.server.client import Endpoint, ServerError
from draftlight.engine.server.server_engine import ServerEngine
from draftlight.engine.server.reply_labels import UNKNOWN_NOTE
from draftlight.engine.server.process import free_port
from tests.support.openai_stub import WORDS
from draftlight.modes import REMOTE
from tests.support.replies import reply as run_reply

MESSAGES = [{"role": "user", "content": "Hi"}]


def run(engine, params=SamplingParams(max_tokens=20)):
    answer = run_reply(engine, MESSAGES, params, REMOTE)
    return answer.pieces, answer.done


def test_a_plain_openai_stream_is_text_of_unknown_provenance(stub):
    server = stub("ok")
    pieces, done = run(ServerEngine.remote(Endpoint(server.url)))
    assert isinstance(done, Done) and done.text == "".join(WORDS)
    assert {p.source for p in pieces} == {"unknown"}
    assert done.stats.engine_note == UNKNOWN_NOTE and UNKNOWN_NOTE in done.stats.summary()
    assert done.stats.mode == REMOTE and done.stats.stop_reason == "eos"
    assert server.bodies[0]["stream"] is True and server.bodies[0]["timings_per_token"] is True


def test_a_server_that_refuses_llama_fields_is_asked_again_without_them(stub):
    server = stub("strict")
    engine = ServerEngine.remote(Endpoint(server.url))
    assert run(engine)[1].text == "".join(WORDS)
    assert "timings_per_token" not in server.bodies[-1] and "min_p" not in server.bodies[-1]
    run(engine)  # remembered: no refused request the second time
    assert len(server.bodies) == 3


@pytest.mark.parametrize("behaviour, words", [
    ("401", "refused the API key (HTTP 401): Invalid API Key"),
    ("404", "no such model or endpoint (HTTP 404): The model `nope` does not exist"),
    ("500", "the server failed (HTTP 500): out of memory"),
    ("cut", "closed the stream before the reply ended"),
])
def test_each_failure_is_one_clear_line(stub, behaviour, words):
    server = stub(behaviour)
    with pytest.raises(ServerError) as caught:
        run(ServerEngine.remote(Endpoint(server.url, api_key="wrong")))
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_server_that_stalls_mid_reply_ends_it_after_the_wait_the_line_names(stub):
    server = stub("stall")
    engine = ServerEngine.remote(Endpoint(server.url, timeout=0.5))
    events = engine.generate(MESSAGES, SamplingParams(max_tokens=20), REMOTE)
    assert next(e for e in events if isinstance(e, TextPiece)).text == WORDS[0]
    with pytest.raises(ServerError) as caught:
        list(events)
    assert str(caught.value).endswith("sent nothing for 0.5 s; the reply stopped")


def test_the_right_key_is_sent_as_a_bearer_token(stub):
    server = stub("401")
    assert run(ServerEngine.remote(Endpoint(server.url, api_key="right")))[1].text


def test_unreachable_and_malformed_addresses():
    with pytest.raises(ServerError, match="cannot reach the server at 127.0.0.1:"):
        run(ServerEngine.remote(Endpoint(f"http://127.0.0.1:{free_port()}")))
    with pytest.raises(ServerError, match="is not a server address"):
        run(ServerEngine.remote(Endpoint("localhost:8080")))
