"""POST /v1/completions on a real loopback socket over the scripted chat model (which answers
after an assistant header: the prompts here write it by hand, as a client writing its own
template would), raw HTTP and the `openai` client."""

from __future__ import annotations

import json

import openai
import pytest

from draftlight.engine.reply.generator import Engine
from draftlight.modes import NGRAM
from draftlight.serve.completion_schema import DEFAULT_COMPLETION_TOKENS
from draftlight.serve.serve_worker import ServeWorker
from tests.support.fake_backend import FakeChatModel, scripted_costs
from tests.support.serve_loopback import MODEL, N_CTX, REPLY, request, serving

PROMPT = "Say it<|assistant|>"


def body(**fields) -> dict:
    return {"model": MODEL, "prompt": PROMPT, "temperature": 0, "max_tokens": 64, **fields}


def complete(server, **fields) -> tuple[int, dict]:
    status, _, answer = request(server, "POST", "/v1/completions", body(**fields))
    return status, json.loads(answer)


def events(answer: bytes) -> list:
    """The data of each server-sent event, JSON decoded except [DONE]."""
    lines = [line[len("data: "):] for line in answer.decode().splitlines()
             if line.startswith("data: ")]
    return [line if line == "[DONE]" else json.loads(line) for line in lines]


def test_a_prompt_is_completed_as_given_in_openais_shape():
    with serving() as server:
        status, answer = complete(server)
        assert status == 200, answer
        assert answer["object"] == "text_completion" and answer["id"].startswith("cmpl-")
        choice = answer["choices"][0]
        assert choice["text"] == REPLY.decode() and choice["finish_reason"] == "stop"
        assert choice["logprobs"] is None
        assert answer["usage"]["prompt_tokens"] == len(PROMPT)  # no chat template around it
        status, listed = complete(server, prompt=[PROMPT], max_tokens=None)
        assert status == 200, listed  # a list of one prompt; OpenAI's 16 tokens by default
        assert listed["choices"][0]["text"] == REPLY.decode()[:DEFAULT_COMPLETION_TOKENS]
        assert listed["choices"][0]["finish_reason"] == "length"


def test_streamed_text_completion_chunks_end_with_done():
    with serving() as server:
        status, headers, answer = request(server, "POST", "/v1/completions",
                                          body(stream=True))
        assert status == 200 and headers["content-type"].startswith("text/event-stream")
        sent = events(answer)
        assert sent[-1] == "[DONE]"
        chunks = sent[:-1]
        assert all(c["object"] == "text_completion" for c in chunks)
        assert "".join(c["choices"][0]["text"] for c in chunks) == REPLY.decode()
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
        assert chunks[-1]["usage"]["completion_tokens"] == len(REPLY)
        assert any("draftlight" in c for c in chunks)  # provenance, as in chat chunks


def test_the_completion_ends_before_a_stop_sequence():
    with serving() as server:
        status, answer = complete(server, stop=[" general", "zzz"])
        assert answer["choices"][0]["text"] == "Hello there,"
        assert answer["choices"][0]["finish_reason"] == "stop"
        status, _, streamed = request(server, "POST", "/v1/completions",
                                      body(stop=" general", stream=True))
        assert "".join(c["choices"][0]["text"] for c in events(streamed)[:-1]) == "Hello there,"


def test_a_suffix_on_a_model_without_fim_tokens_is_a_400_saying_why():
    with serving() as server:
        status, answer = complete(server, suffix="\nreturn x")
        assert status == 400
        assert answer["error"]["param"] == "suffix"
        assert "no FIM tokens" in answer["error"]["message"]


@pytest.mark.parametrize("fields, param, words", [
    ({"echo": True}, "echo", "'echo' is not supported"),
    ({"logprobs": 2}, "logprobs", "'logprobs' is not supported yet"),
    ({"best_of": 3}, "best_of", "'best_of'"),
    ({"n": 2}, "n", "'n'"),
    ({"prompt": [1, 2, 3]}, "prompt", "token ids"),
    ({"prompt": ["a", "b"]}, "prompt", "one prompt"),
    ({"prompt": None}, "prompt", "'prompt' is required"),
    ({"suffix": 3}, "suffix", "'suffix' must be a string"),
    ({"max_tokens": N_CTX + 1}, "max_tokens", "at most"),
    ({"temperature": 3}, "temperature", "between 0 and 2"),
    ({"model": "other"}, "model", "does not exist"),
])
def test_what_is_not_done_is_refused_naming_the_parameter(fields, param, words):
    with serving() as server:
        status, answer = complete(server, **fields)
        assert status in (400, 404), answer
        assert answer["error"]["param"] == param and words in answer["error"]["message"]


def test_greedy_speculation_and_a_prediction_change_nothing():
    worker = ServeWorker(lambda: Engine(FakeChatModel(lambda prompt: REPLY + b" " + REPLY,
                                                      n_ctx=N_CTX), cost_source=scripted_costs),
                         NGRAM, 4, MODEL)
    worker.start()
    worker.ready.wait()
    try:
        with serving(worker) as server:
            status, answer = complete(server, prompt="Hello there, general Kenobi. "
                                                     "<|assistant|>",
                                      prediction={"type": "content", "content": REPLY.decode()})
    finally:
        worker.stop()
    assert status == 200, answer
    assert answer["choices"][0]["text"] == (REPLY + b" " + REPLY).decode()
    assert answer["usage"]["draftlight"]["accepted"] > 0
    assert answer["usage"]["completion_tokens_details"]["accepted_prediction_tokens"] > 0


def test_the_openai_client_completes_json_and_streamed():
    with serving() as server:
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=60)
        reply = client.completions.create(model=MODEL, prompt=PROMPT, temperature=0,
                                          max_tokens=64)
        assert reply.choices[0].text == REPLY.decode()
        assert reply.usage.completion_tokens == len(REPLY)
        stream = client.completions.create(model=MODEL, prompt=PROMPT, temperature=0,
                                           max_tokens=64, stream=True)
        assert "".join(c.choices[0].text for c in stream if c.choices) == REPLY.decode()
        with pytest.raises(openai.BadRequestError, match="FIM"):
            client.completions.create(model=MODEL, prompt=PROMPT, suffix="x", max_tokens=8)
