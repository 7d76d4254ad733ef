"""Tools without a model or a socket: a request's tools validated (tool_request.py), what the
model is shown for each tool_choice (tool_plan.py), and a reply's calls read, whole and as it
streams in arbitrary pieces (tool_calls.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.text.tool_format import ToolFormat
from draftlight.serve.api_error import ApiError
from draftlight.serve.schema import ChatRequest
from draftlight.serve.tool_calls import ToolCallReader, answered_with_calls
from draftlight.serve.tool_plan import ToolPlan, planned, template_source
from draftlight.serve.tool_request import message_tool_keys, tool_request

QWEN = (Path(__file__).parents[1] / "support" / "chat_templates"
        / "qwen2_5_coder.jinja").read_text()
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object",
                                          "properties": {"city": {"type": "string"}}}}}
TIME = {"type": "function", "function": {"name": "get_time"}}
HERMES = ToolPlan(ToolFormat.HERMES, ("get_weather", "get_time"))
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def read(plan: ToolPlan, text: str, piece: int = 0) -> tuple[list[dict], ToolCallReader]:
    """The deltas `text` is read into, fed whole or `piece` characters at a time."""
    reader = ToolCallReader(plan)
    sizes = range(0, len(text), piece) if piece else [0]
    deltas = [d for at in sizes for d in reader.feed(text[at:at + piece] if piece else text)]
    return deltas + reader.finish(), reader


def calls_of(deltas: list[dict]) -> list[tuple[str, dict]]:
    """(name, arguments) of each call the deltas make, joined as a client joins them."""
    calls: dict[int, list] = {}
    for delta in deltas:
        for part in delta.get("tool_calls", []):
            call = calls.setdefault(part["index"], ["", ""])
            call[0] += part["function"].get("name", "")
            call[1] += part["function"].get("arguments", "")
    return [(name, json.loads(arguments)) for name, arguments in calls.values()]


@pytest.mark.parametrize("piece", [0, 1, 3, 7])
def test_a_hermes_call_after_text_is_content_then_a_call_in_any_pieces(piece):
    deltas, reader = read(HERMES, "Let me look.\n" + CALL, piece)
    assert "".join(d.get("content", "") for d in deltas) == "Let me look."
    assert calls_of(deltas) == [("get_weather", {"city": "Paris"})]
    first = next(d for d in deltas if "tool_calls" in d)["tool_calls"][0]
    assert first["id"].startswith("call_") and first["type"] == "function"
    assert reader.error is None and len(reader.calls) == 1


@pytest.mark.parametrize("piece", [0, 2])
def test_parallel_calls_are_numbered_and_an_unclosed_last_one_is_read_at_the_end(piece):
    text = CALL + "\n" + '<tool_call>\n{"name": "get_time", "arguments": "{}"}'
    deltas, reader = read(HERMES, text, piece)
    assert calls_of(deltas) == [("get_weather", {"city": "Paris"}), ("get_time", {})]
    assert not any("content" in d for d in deltas)
    single, _ = read(ToolPlan(ToolFormat.HERMES, HERMES.names, parallel=False), text, piece)
    assert calls_of(single) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("text, why", [
    ('<tool_call>\n{"name": "get_weather", "arguments": {"city": </tool_call>', "not valid JSON"),
    ('<tool_call>\n{"name": "launch", "arguments": {}}\n</tool_call>', "not one of 'tools'"),
    ('<tool_call>\n{"name": "get_time", "arguments": [1]}\n</tool_call>', "not a JSON object"),
])
def test_a_call_that_cannot_be_read_is_kept_as_content_and_says_why(text, why):
    deltas, reader = read(HERMES, text, 4)
    assert "".join(d.get("content", "") for d in deltas) == text
    assert not reader.calls and why in reader.error
    body = answered_with_calls(_body(), HERMES, text)
    assert body["choices"][0]["message"]["content"] == text
    assert body["choices"][0]["finish_reason"] == "stop"
    assert why in body["draftlight"]["tool_call_error"]


def test_text_that_only_looks_like_a_call_is_content_unchanged():
    text = "Use <tool or <tool_cal to start.\n\nDone. "
    deltas, reader = read(HERMES, text, 1)
    assert "".join(d.get("content", "") for d in deltas) == text and not reader.calls


def test_the_json_answer_has_tool_calls_and_finish_reason_tool_calls():
    body = answered_with_calls(_body(), HERMES, CALL)
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    call = choice["message"]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert "draftlight" not in body
    prefilled = ToolPlan(ToolFormat.HERMES, HERMES.names, '<tool_call>\n{"name": "')
    assert answered_with_calls(_body(), prefilled, CALL[len(prefilled.prefill):]) \
        ["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_mistral_and_llama_calls_are_read():
    mistral = ToolPlan(ToolFormat.MISTRAL, HERMES.names)
    deltas, _ = read(mistral, 'Sure.[TOOL_CALLS][{"name": "get_time", "arguments": {}}, '
                              '{"name": "get_weather", "arguments": {"city": "Oslo"}}]', 5)
    assert calls_of(deltas) == [("get_time", {}), ("get_weather", {"city": "Oslo"})]
    llama = ToolPlan(ToolFormat.LLAMA3, HERMES.names)
    deltas, _ = read(llama, ' {"name": "get_weather", "parameters": {"city": "Rome"}}', 3)
    assert calls_of(deltas) == [("get_weather", {"city": "Rome"})]
    deltas, reader = read(llama, "Rome is sunny {mostly}.", 3)
    assert "".join(d["content"] for d in deltas) == "Rome is sunny {mostly}." and not reader.calls


def test_tools_and_tool_choice_are_validated():
    assert tool_request({}) is None and tool_request({"tools": [], "tool_choice": "none"}) is None
    offered = tool_request({"tools": [WEATHER, TIME], "parallel_tool_calls": False})
    assert (offered.choice, offered.function, offered.parallel) == ("auto", None, False)
    assert offered.names == ("get_weather", "get_time")
    named = tool_request({"tools": [WEATHER], "tool_choice": {
        "type": "function", "function": {"name": "get_weather"}}})
    assert (named.choice, named.function) == ("required", "get_weather")
    for body, param in [({"tools": "x"}, "tools"), ({"tools": [{"type": "code"}]}, "tools[0]"),
                        ({"tools": [{"type": "function", "function": {"name": ""}}]},
                         "tools[0].function.name"),
                        ({"tools": [WEATHER, WEATHER]}, "tools"),
                        ({"tools": [WEATHER], "tool_choice": "always"}, "tool_choice"),
                        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {
                            "name": "get_time"}}}, "tool_choice"),
                        ({"tool_choice": "required"}, "tool_choice"),
                        ({"tools": [WEATHER], "parallel_tool_calls": 1}, "parallel_tool_calls")]:
        with pytest.raises(ApiError) as caught:
            tool_request(body)
        assert caught.value.status == 400 and caught.value.param == param, body


def test_earlier_calls_reach_the_template_with_arguments_as_objects():
    keys = message_tool_keys("assistant", [{"id": "c1", "type": "function", "function": {
        "name": "get_weather", "arguments": '{"city": "Paris"}'}}], None, "messages[1]")
    assert keys["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert message_tool_keys("tool", None, "c1", "messages[2]") == {"tool_call_id": "c1"}
    for role, calls, ident, param in [
            ("tool", None, None, "messages[2].tool_call_id"),
            ("assistant", [{"function": {"name": "f", "arguments": "{x"}}], None,
             "messages[2].tool_calls[0].function.arguments"),
            ("user", [{"function": {"name": "f"}}], None, "messages[2].tool_calls")]:
        with pytest.raises(ApiError) as caught:
            message_tool_keys(role, calls, ident, "messages[2]")
        assert caught.value.param == param


def test_each_tool_choice_shows_the_model_what_it_should():
    request = ChatRequest([{"role": "user", "content": "Weather?"}], SamplingParams())
    auto, plan = planned(request, tool_request({"tools": [WEATHER]}), QWEN)
    assert auto.messages[-1]["tools"] == [WEATHER] and plan.format is ToolFormat.HERMES
    assert plan.prefill == "" and auto.stop == ()
    none, plan = planned(request, tool_request({"tools": [WEATHER], "tool_choice": "none"}), QWEN)
    assert none == request and plan is None
    required, plan = planned(request, tool_request({"tools": [WEATHER],
                                                    "tool_choice": "required"}), QWEN)
    assert required.messages[-1] == {"role": "assistant", "content": plan.prefill,
                                     "tools": [WEATHER]}
    assert plan.prefill == '<tool_call>\n{"name": "'
    _, plan = planned(request, tool_request({"tools": [WEATHER], "tool_choice": {
        "type": "function", "function": {"name": "get_weather"}}}), QWEN)
    assert plan.prefill == '<tool_call>\n{"name": "get_weather", "arguments": '
    single, _ = planned(request, tool_request({"tools": [WEATHER],
                                               "parallel_tool_calls": False}), QWEN)
    assert single.stop == ("</tool_call>",)


def test_a_template_without_tools_or_a_known_format_is_refused_in_one_line():
    request = ChatRequest([{"role": "user", "content": "Weather?"}], SamplingParams())
    offered = tool_request({"tools": [WEATHER]})
    for template, says in [(None, "knows no tools"), ("{{ messages }}", "knows no tools"),
                           ("{% if tools %}{{ tools }}{% endif %}", "format")]:
        with pytest.raises(ApiError) as caught:
            planned(request, offered, template)
        assert caught.value.status == 400 and says in caught.value.message
    llama = "{% if tools %}ipython{% endif %}"
    with pytest.raises(ApiError, match="Hermes-style"):
        planned(request, tool_request({"tools": [WEATHER], "tool_choice": "required"}), llama)


def _body() -> dict:
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""},
                         "finish_reason": "stop"}]}


def test_the_template_is_the_engines_own_or_its_model_files():
    from types import SimpleNamespace

    from draftlight.engine.reply.generator import Engine
    from draftlight.paths import bundled_model_path
    from tests.support.fake_backend import CHAT_TEMPLATE, FakeChatModel, scripted_costs
    engine = Engine(FakeChatModel(lambda prompt: b"", template=QWEN), cost_source=scripted_costs)
    try:
        assert template_source(engine) == QWEN
    finally:
        engine.close()
    path = bundled_model_path()
    if path is not None:  # the hosted engine: its spec names the model file
        source = template_source(SimpleNamespace(spec=SimpleNamespace(target=str(path))))
        assert "<|im_start|>" in source and source != CHAT_TEMPLATE
    with pytest.raises(ApiError, match="renders prompts itself"):
        template_source(SimpleNamespace(n_ctx=0))  # llama-server's engine
