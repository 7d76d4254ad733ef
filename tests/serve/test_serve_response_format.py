"""Structured output through serve: `response_format` json_object and json_schema become a
grammar (serve/response_format.py) that the engine applies in every mode; what the schema
converter refuses is a 400 naming it. On the bundled SmolLM2 over loopback, a greedy reply in
n-gram mode is the reply of mode off, and keeps to the schema."""

from __future__ import annotations

import json

import pytest
from llama_cpp.llama_grammar import JSON_GBNF

from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.reply.generator import Engine
from draftlight.modes import NGRAM, OFF
from draftlight.serve.api_error import ApiError
from draftlight.serve.response_format import response_grammar
from draftlight.serve.schema import parse_chat_request
from tests.support.serve_loopback import MODEL, chat_body, request, serving, worker_over

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"},
                                           "age": {"type": "integer"}},
          "required": ["name", "age"], "additionalProperties": False}
AS_SCHEMA = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA,
                                                    "strict": True}}


def test_text_or_nothing_is_no_grammar_and_json_object_is_llama_cpps_json():
    assert response_grammar(None) is None and response_grammar({"type": "text"}) is None
    assert response_grammar({"type": "json_object"}) == JSON_GBNF
    assert "root ::=" in response_grammar(AS_SCHEMA)


@pytest.mark.parametrize("value, param, words", [
    ({"type": "xml"}, "response_format", "json_schema"),
    ("json", "response_format", "json_object"),
    ({"type": "json_schema"}, "response_format.json_schema", "'name' and 'schema'"),
    ({"type": "json_schema", "json_schema": {"name": "a b", "schema": {}}},
     "response_format.json_schema.name", "letters"),
    ({"type": "json_schema", "json_schema": {"name": "n", "schema": {}, "strict": "yes"}},
     "response_format.json_schema.strict", "true or false"),
    ({"type": "json_schema", "json_schema": {"name": "n", "schema": {"not": {"type": "string"}}}},
     "response_format.json_schema.schema", "'not'"),
    ({"type": "json_schema", "json_schema": {"name": "n", "schema": {"$ref": "https://x/y"}}},
     "response_format.json_schema.schema", "remote"),
    # the converter writes a bounded repetition out: a billion held it for over a minute
    ({"type": "json_schema", "json_schema": {"name": "n", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "maxLength": 10**9}}}}},
     "response_format.json_schema.schema", "'maxLength' over 10,000"),
])
def test_what_cannot_be_enforced_is_a_400_naming_it(value, param, words):
    with pytest.raises(ApiError) as caught:
        response_grammar(value)
    assert caught.value.status == 400 and caught.value.param == param
    assert words in caught.value.message


def test_a_request_carries_its_grammar():
    body = json.dumps(chat_body(response_format=AS_SCHEMA)).encode()
    assert "root ::=" in parse_chat_request(body, model_id=MODEL, n_ctx=512).grammar
    plain = json.dumps(chat_body(response_format={"type": "text"})).encode()
    assert parse_chat_request(plain, model_id=MODEL, n_ctx=512).grammar is None


def test_a_grammar_and_tools_together_are_refused():
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    body = json.dumps(chat_body(response_format={"type": "json_object"}, tools=tools)).encode()
    with pytest.raises(ApiError) as caught:
        parse_chat_request(body, model_id=MODEL, n_ctx=512)
    assert caught.value.param == "response_format"


@pytest.fixture(scope="module")
def smol_server(bundled_model, module_home):
    worker = worker_over(Engine.load(bundled_model, options=LoadOptions(n_ctx=1024)))
    try:
        with serving(worker) as server:
            yield worker, server
    finally:
        worker.stop()


def answer(server, **fields) -> dict:
    status, _, body = request(server, "POST", "/v1/chat/completions", chat_body(
        messages=[{"role": "user", "content": 'Ann is 31. Answer as {"name": …, "age": …}.'}],
        max_tokens=40, **fields), timeout=120)
    assert status == 200, body
    return json.loads(body)


@pytest.mark.parametrize("response_format", [{"type": "json_object"}, AS_SCHEMA],
                         ids=["json_object", "json_schema"])
def test_served_structured_output_is_the_same_in_every_mode(smol_server, response_format):
    worker, server = smol_server
    worker.mode = OFF
    plain = answer(server, response_format=response_format)["choices"][0]["message"]["content"]
    worker.mode = NGRAM
    speculated = answer(server, response_format=response_format)
    assert speculated["choices"][0]["message"]["content"] == plain
    value = json.loads(plain)
    if response_format is AS_SCHEMA:
        assert set(value) == {"name", "age"} and isinstance(value["age"], int)
    else:
        assert isinstance(value, dict)
