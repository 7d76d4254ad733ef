"""Thousands of malformed and edge-case requests against `draftlight serve`'s request schema and
its real HTTP routes: every answer is a 2xx, or a 4xx with OpenAI's JSON error; never a 500, a
hang or a crash, and a valid request right after still succeeds.

Hypothesis draws the requests from strategies over the request JSON: the fields the API knows,
each with values of the right shape and of every other JSON shape, plus unknown fields, and
bodies that are not JSON at all. Runs are derandomised (the same cases every run) and keep no
example database, so the suite writes nothing and gives the same verdict each time.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draftlight.serve.schema import ApiError, ChatRequest, parse_chat_request
from tests.support.serve_loopback import MODEL, N_CTX, chat_body, request, serving

FUZZ = settings(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

any_json = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)

text_parts = st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]),
                                             "text": st.text(max_size=30) | any_json}),
                      max_size=3)
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "developer", "user", "assistant", "tool", ""]) | any_json,
     "content": st.text(max_size=60) | text_parts | any_json},
    optional={"tool_calls": any_json, "name": st.text(max_size=8)})

# The fields of a chat completion request, each with values of its own shape and any other.
FIELDS = {
    "temperature": st.floats(-1, 3) | any_json,
    "top_p": st.floats(-0.5, 1.5) | any_json,
    "seed": st.integers(-5, 2**65) | any_json,
    "max_tokens": st.integers(-2, N_CTX + 2) | any_json,
    "max_completion_tokens": st.integers(-2, N_CTX + 2) | any_json,
    "stream": st.booleans() | any_json,
    "stream_options": st.fixed_dictionaries({"include_usage": any_json}) | any_json,
    "stop": st.text(max_size=3) | st.lists(st.text(max_size=3), max_size=6) | any_json,
    "prediction": st.fixed_dictionaries({"type": st.sampled_from(["content", "x"]),
                                         "content": st.text(max_size=40) | text_parts}) | any_json,
    "n": st.integers(0, 3) | any_json,
    "tools": any_json, "logprobs": any_json, "response_format": any_json,
    "user": any_json, "metadata": any_json,
}
chat_json = st.fixed_dictionaries(
    {"model": st.just(MODEL) | any_json,
     "messages": st.lists(message, max_size=4) | any_json},
    optional={**FIELDS, "unknown_field": any_json})
raw_bodies = st.binary(max_size=200) | st.text(max_size=200).map(str.encode) | \
    any_json.map(lambda value: json.dumps(value).encode())


def well_formed(error: ApiError) -> bool:
    body = error.body()["error"]
    return 400 <= error.status < 500 and bool(body["message"]) and bool(body["type"])


@settings(FUZZ, max_examples=2000)
@given(st.one_of(chat_json.map(lambda data: json.dumps(data).encode()), raw_bodies))
def test_the_schema_answers_every_body_with_a_request_or_a_4xx(body):
    try:
        chat = parse_chat_request(body, model_id=MODEL, n_ctx=N_CTX)
    except ApiError as error:
        assert well_formed(error), error.body()
    else:
        assert isinstance(chat, ChatRequest)
        assert 1 <= chat.params.max_tokens <= N_CTX and chat.messages


def check_answer(status: int, headers: dict, body: bytes) -> None:
    assert status < 500, body[:300]
    if status >= 400:
        error = json.loads(body)["error"]
        assert error["message"] and error["type"], body[:300]
    elif "text/event-stream" not in headers.get("content-type", ""):
        assert json.loads(body)["object"] in ("chat.completion", "list"), body[:300]
    else:
        assert body.rstrip().endswith(b"data: [DONE]"), body[-300:]


def test_the_routes_answer_thousands_of_odd_requests_and_then_a_valid_one():
    cases = st.tuples(
        st.one_of(chat_json.map(lambda data: json.dumps(data).encode()), raw_bodies),
        st.sampled_from(["application/json", "application/json; charset=utf-8", "text/plain",
                         "", "application/JSON"]),
        st.sampled_from(["POST", "POST", "POST", "GET", "PUT", "OPTIONS", "DELETE"]),
        st.sampled_from(["/v1/chat/completions", "/v1/chat/completions", "/v1/models",
                         "/v1/completions", "/", "/v1/chat/completions/../models"]),
        st.sampled_from([None, None, "http://localhost:3000", "null"]))
    with serving(allow_origins=("http://localhost:3000",)) as server:
        @settings(FUZZ, max_examples=1000)
        @given(cases)
        def odd_request(case):
            body, kind, method, path, origin = case
            headers = {"Content-Type": kind} if kind else {}
            if origin:
                headers["Origin"] = origin
            check_answer(*request(server, method, path, body if method != "GET" else None,
                                  headers=headers, timeout=20))

        odd_request()
        status, headers, body = request(server, "POST", "/v1/chat/completions", chat_body())
        assert status == 200
        check_answer(status, headers, body)
