"""OpenAI's `response_format` (structured output) as the GBNF grammar that constrains the reply:
`{"type": "json_object"}` is llama.cpp's JSON grammar, `{"type": "json_schema", "json_schema":
{"name", "schema", "strict"}}` the grammar llama.cpp's converter makes from the schema (what it
refuses is a 400 naming it). The engine applies it losslessly in every mode (core/grammar.py)."""

from __future__ import annotations

import json
import re

from draftlight.serve.api_error import ApiError

PARAM = "response_format"
NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # OpenAI's rule for json_schema.name
# The converter writes a bounded repetition out rule by rule: `"maxLength": 1000000000` held
# it for over a minute, so counts are bounded (10,000: 80 KB of grammar, under a millisecond)
COUNTS = {"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"}
MAX_COUNT = 10_000
MAX_GRAMMAR_CHARS = 2**20


def response_grammar(value) -> str | None:
    """The grammar `response_format` asks for (GBNF, root rule "root"), None for text or
    absent; ApiError (400) for anything else."""
    if value is None or value == {"type": "text"}:
        return None
    if not isinstance(value, dict) or value.get("type") not in ("json_object", "json_schema"):
        raise ApiError(400, f"'{PARAM}' must be {{\"type\": \"text\"}}, {{\"type\": "
                            f"\"json_object\"}} or {{\"type\": \"json_schema\", \"json_schema\": "
                            f"{{\"name\": …, \"schema\": …}}}}", param=PARAM)
    # llama_cpp's grammar module is pure Python, but importing it loads llama.cpp's library:
    # only a request that asks for structured output pays that (the window's server too)
    from llama_cpp.llama_grammar import JSON_GBNF, json_schema_to_gbnf
    if value["type"] == "json_object":
        return JSON_GBNF
    spec = value.get("json_schema")
    where = f"{PARAM}.json_schema"
    if not isinstance(spec, dict):
        raise ApiError(400, f"'{where}' must be an object with 'name' and 'schema'", param=where)
    if not isinstance(spec.get("name"), str) or not NAME.fullmatch(spec["name"]):
        raise ApiError(400, f"'{where}.name' must be 1 to 64 letters, digits, '_' or '-'",
                       param=f"{where}.name")
    if spec.get("strict") not in (None, True, False):
        raise ApiError(400, f"'{where}.strict' must be true or false", param=f"{where}.strict")
    schema = spec.get("schema", {})  # OpenAI: absent means any JSON object the model writes
    if not isinstance(schema, (dict, bool)):
        raise ApiError(400, f"'{where}.schema' must be a JSON Schema object",
                       param=f"{where}.schema")
    too_many = _count_over(schema, MAX_COUNT)
    if too_many:
        raise ApiError(400, f"'{where}.schema' has {too_many} over {MAX_COUNT:,}, more than "
                            f"this server constrains", param=f"{where}.schema",
                       code="unsupported_parameter")
    try:
        grammar = json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:  # noqa: BLE001 - a third party's converter on the client's input
        raise ApiError(400, f"'{where}.schema' uses what this server cannot enforce: "
                            f"{type(exc).__name__}: {exc}"[:1000],
                       param=f"{where}.schema", code="unsupported_parameter") from None
    if len(grammar) > MAX_GRAMMAR_CHARS:
        raise ApiError(400, f"'{where}.schema' makes a grammar over {MAX_GRAMMAR_CHARS:,} "
                            "characters", param=f"{where}.schema", code="unsupported_parameter")
    return grammar


def _count_over(value, bound: int) -> str:
    """The first count keyword (COUNTS) in `value`, at any depth, whose number is over
    `bound`; "" if none. A loop, not recursion: the body's JSON may nest deeply."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if key in COUNTS and isinstance(child, (int, float)) and child > bound:
                    return f"'{key}'"
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)
    return ""
