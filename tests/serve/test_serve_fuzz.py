"""Thousands of malformed and edge-case requests against `draftlight serve`'s request schema and
its real HTTP routes: every answer is a 2xx, or a 4xx with OpenAI's JSON error; never a 500, a
hang or a crash, and a valid request right after still succeeds.

Hypothesis draws the requests from strategies over the request JSON: the fields the API knows,
each with values of the right shape and of every other JSON shape, plus unknown fields, and
bodies that are not JSON at all. Runs are derandomised (the same cases every run) and keep no
example database, so the suite writes nothing and gives the same verdict each time.

File parts have a corpus of their own (tests/serve/file_parts/, made by
tests/support/file_part_corpus.py): PDFs whose text multiplies as it is drawn, bombs, loops,
nesting, broken and mislabelled files, each sent alone, many at once, under hostile names and
mutated, all answered within their bounds without growing the server.
"""

from __future__ import annotations

import json
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draftlight.serve.file_reading import FileLimits
from draftlight.serve.schema import ApiError, ChatRequest, parse_chat_request
from tests.support import file_part_corpus
from tests.support.peak_memory import PeakMemory
from tests.support.serve_loopback import (MODEL, N_CTX, ScriptedServeEngine, asking_about,
                                          chat_body, file_part, request, serving, worker_over)
from tests.support.waiting import slowness

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


CORPUS = sorted(file_part_corpus.FOLDER.iterdir())
# Smaller than serve's own, so that the corpus runs in seconds: the same code stops a
# request's reading at 4 Mi characters or 60 s.
CORPUS_LIMITS = FileLimits(chars=200_000, seconds=10)
CASE_SECONDS = 15  # the most one request of the corpus may take, on a busy 2-core machine


def test_the_corpus_is_what_its_generator_makes():
    assert [p.name for p in CORPUS] == sorted(file_part_corpus.FILES)
    assert max(p.stat().st_size for p in CORPUS) < 32 << 10


def send_files(server, *parts: dict) -> tuple[int, dict, bytes]:
    started = time.monotonic()
    status, headers, body = request(server, "POST", "/v1/chat/completions",
                                    asking_about(*parts), timeout=60)
    assert time.monotonic() - started < CASE_SECONDS * slowness(), parts[0]["file"]["filename"]
    check_answer(status, headers, body)
    return status, headers, body


def corpus_server(engine=None):
    """serve over a scripted engine, which takes any prompt at once (the scripted chat
    model's tokenizer takes minutes over a megabyte)."""
    worker = worker_over(engine or ScriptedServeEngine())
    return worker, serving(worker, file_limits=CORPUS_LIMITS)


def test_every_hostile_file_part_is_answered_alone_and_many_at_once_within_bounds():
    worker, served = corpus_server()
    with served as server, PeakMemory() as memory:
        for path in CORPUS:
            part = file_part(path.name, path.read_bytes())
            send_files(server, part)
            send_files(server, *[part] * 12)  # the same file over and over: bounded together
        for name in file_part_corpus.NAMES:
            status, _, body = send_files(server, file_part(name, b"plain text"))
            assert status == 200, body[:300]
        status, _, _ = request(server, "POST", "/v1/chat/completions", chat_body())
    worker.stop()
    assert status == 200  # and the server still answers
    assert memory.growth_mb < 150, f"serve grew by {memory.growth_mb:.0f} MB"


def mutated(data: bytes, edits: list[tuple[str, float, int]]) -> bytes:
    """`data` with each edit made: (what, where as a fraction of its length, a byte)."""
    out = bytearray(data)
    for what, where, byte in edits:
        at = min(int(where * len(out)), max(len(out) - 1, 0))
        if what == "flip" and out:
            out[at] ^= byte or 1
        elif what == "insert":
            out[at:at] = bytes([byte]) * 64
        elif what == "delete":
            del out[at:at + 64]
        elif what == "cut":
            del out[at:]
    return bytes(out)


def test_mutated_hostile_file_parts_are_answered_within_bounds():
    edits = st.lists(st.tuples(st.sampled_from(["flip", "insert", "delete", "cut"]),
                               st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=4)
    worker, served = corpus_server()
    with served as server:
        @settings(FUZZ, max_examples=60)
        @given(st.sampled_from(CORPUS), edits)
        def mutated_part(path, changes):
            data = mutated(path.read_bytes(), changes)
            if data.strip():
                send_files(server, file_part(path.name, data))

        mutated_part()
        status, _, _ = request(server, "POST", "/v1/chat/completions", chat_body())
    worker.stop()
    assert status == 200
