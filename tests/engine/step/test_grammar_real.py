"""Structured output on the bundled SmolLM2 with llama.cpp's own grammars: greedy replies in
n-gram mode, auto and with a Predicted Output equal constrained plain decoding, and keep to
the schema; a grammar that does not parse is an EngineError, not a crash."""

from __future__ import annotations

import json

import pytest
from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf

from draftlight.engine.core.errors import EngineError
from draftlight.engine.core.load_options import LoadOptions
from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.reply.events import Done
from draftlight.engine.reply.generator import Engine
from draftlight.modes import AUTO, NGRAM, OFF

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"},
                                           "age": {"type": "integer"}},
          "required": ["name", "age"]}
ASK = [{"role": "user", "content": 'Write JSON for Ann, 31, as {"name": "Ann", "age": 31}.'}]
GREEDY = SamplingParams(temperature=0.0, max_tokens=40)


@pytest.fixture(scope="module")
def engine(bundled_model, module_home):
    engine = Engine.load(bundled_model, options=LoadOptions(n_ctx=2048))  # caches: module_home
    yield engine
    engine.close()


def reply(engine, mode, grammar, prediction=None):
    events = list(engine.generate(ASK, GREEDY, mode, grammar=grammar, prediction=prediction))
    return events[-1].text if isinstance(events[-1], Done) else None


@pytest.mark.parametrize("grammar", [JSON_GBNF, json_schema_to_gbnf(json.dumps(SCHEMA))],
                         ids=["json_object", "json_schema"])
def test_speculation_under_a_grammar_is_constrained_plain_decoding(engine, grammar):
    plain = reply(engine, OFF, grammar)
    value = json.loads(plain)
    assert isinstance(value, dict)
    assert reply(engine, NGRAM, grammar) == plain
    assert reply(engine, AUTO, grammar) == plain
    assert reply(engine, OFF, grammar, prediction=plain) == plain
    assert reply(engine, NGRAM, grammar, prediction='{"name": "Bob", "age": "x"}') == plain


def test_a_schema_reply_keeps_to_the_schema(engine):
    value = json.loads(reply(engine, NGRAM, json_schema_to_gbnf(json.dumps(SCHEMA))))
    assert set(value) == {"name", "age"} and isinstance(value["age"], int)


def test_a_grammar_that_does_not_parse_is_an_engine_error(engine):
    with pytest.raises(EngineError):
        list(engine.generate(ASK, GREEDY, OFF, grammar="root ::= ("))
