"""Tools through `draftlight serve`'s routes on a real loopback socket: the scripted chat model
behind the real Qwen2.5-Coder chat template (rendered in the template process) writes a
Hermes tool call; the JSON and streamed answers carry it as OpenAI's tool_calls, the tools
and earlier calls reach the prompt, and the `openai` client reads them."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from draftlight.engine.reply.generator import Engine
from draftlight.modes import NGRAM, OFF
from draftlight.serve.serve_worker import ServeWorker
from tests.support.fake_backend import FakeChatModel, scripted_costs
from tests.support.serve_loopback import MODEL, chat_body, request, serving

QWEN = (Path(__file__).parents[1] / "support" / "chat_templates"
        / "qwen2_5_coder.jinja").read_text()
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city now",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


class QwenWorker:
    """A started ServeWorker over the scripted model with Qwen's template, answering `reply`;
    `prompts` holds what the model was shown before each answer."""

    def __init__(self, reply: str, mode=OFF) -> None:
        self.prompts: list[str] = []

        def answer(prompt: bytes) -> bytes:
            self.prompts.append(prompt.decode())
            return reply.encode()

        self.worker = ServeWorker(
            lambda: Engine(FakeChatModel(answer, n_ctx=4096, template=QWEN,
                                         header=b"<|im_start|>assistant\n"),
                           cost_source=scripted_costs), mode, 4, MODEL)
        self.worker.start()
        self.worker.ready.wait()


def ask(server, **fields) -> tuple[int, dict]:
    status, _, answer = request(server, "POST", "/v1/chat/completions",
                                chat_body(**{"messages": ASK, "tools": [WEATHER],
                                             "max_tokens": 200, **fields}))
    return status, json.loads(answer) if not fields.get("stream") or status != 200 else answer


def events(answer: bytes) -> list:
    lines = [line[len("data: "):] for line in answer.decode().splitlines()
             if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


@pytest.fixture
def qwen():
    made: list[QwenWorker] = []

    def start(reply: str, mode=OFF) -> QwenWorker:
        made.append(QwenWorker(reply, mode))
        return made[-1]
    yield start
    for one in made:
        one.worker.stop()


@pytest.mark.parametrize("mode", [OFF, NGRAM])
def test_a_hermes_call_is_answered_as_tool_calls_with_the_tools_in_the_prompt(qwen, mode):
    model = qwen("I will look it up.\n" + CALL, mode)
    with serving(model.worker) as server:
        status, answer = ask(server)
    assert status == 200, answer
    choice = answer["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "I will look it up."
    [call] = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}
    assert "# Tools" in model.prompts[-1] and '"name": "get_weather"' in model.prompts[-1]


def test_a_streamed_call_is_content_then_tool_call_deltas(qwen):
    model = qwen("I will look it up.\n" + CALL)
    with serving(model.worker) as server:
        status, answer = ask(server, stream=True)
    chunks = events(answer)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content", "") for d in deltas) == "I will look it up."
    parts = [p for d in deltas for p in d.get("tool_calls", [])]
    assert parts[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert parts[0]["id"].startswith("call_") and parts[0]["index"] == 0
    assert json.loads("".join(p["function"]["arguments"] for p in parts)) == {"city": "Paris"}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    first_call = next(i for i, d in enumerate(deltas) if "tool_calls" in d)
    assert not any("content" in d and d["content"] for d in deltas[first_call:])


def test_earlier_calls_and_tool_answers_go_back_through_the_template(qwen):
    model = qwen("It is 21 degrees in Paris.")
    conversation = ASK + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_7", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_7", "content": '{"celsius": 21}'}]
    with serving(model.worker) as server:
        status, answer = ask(server, messages=conversation)
    assert status == 200, answer
    assert answer["choices"][0]["message"] == {"role": "assistant",
                                               "content": "It is 21 degrees in Paris."}
    assert answer["choices"][0]["finish_reason"] == "stop"
    prompt = model.prompts[-1]
    assert ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            '</tool_call>') in prompt
    assert "<tool_response>\n{\"celsius\": 21}\n</tool_response>" in prompt


@pytest.mark.parametrize("choice, shown", [
    ("required", '<tool_call>\n{"name": "'),
    ({"type": "function", "function": {"name": "get_weather"}},
     '<tool_call>\n{"name": "get_weather", "arguments": '),
])
def test_a_required_call_is_begun_for_the_model_and_read_whole(qwen, choice, shown):
    model = qwen(CALL)  # the scripted model writes the call from where it was begun
    with serving(model.worker) as server:
        status, answer = ask(server, tool_choice=choice)
        _, streamed = ask(server, tool_choice=choice, stream=True)
    assert status == 200, answer
    assert answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert answer["choices"][0]["message"]["content"] is None
    # the model was shown the call begun, and wrote only the rest of it (a token a byte)
    assert answer["usage"]["completion_tokens"] == len(CALL) - len(shown)
    deltas = [c["choices"][0]["delta"] for c in events(streamed) if c["choices"]]
    assert not any(d.get("content") for d in deltas)
    assert [p["function"].get("name") for d in deltas for p in d.get("tool_calls", [])
            if p.get("id")] == ["get_weather"]


def test_tool_choice_none_shows_no_tools_and_reads_no_calls(qwen):
    model = qwen(CALL)
    with serving(model.worker) as server:
        status, answer = ask(server, tool_choice="none")
    assert answer["choices"][0]["message"] == {"role": "assistant", "content": CALL}
    assert "# Tools" not in model.prompts[-1]


def test_arguments_that_are_not_json_are_the_content_with_a_reason(qwen):
    broken = '<tool_call>\n{"name": "get_weather", "arguments": {"city": Paris}}\n</tool_call>'
    model = qwen(broken)
    with serving(model.worker) as server:
        _, answer = ask(server)
        _, streamed = ask(server, stream=True)
    assert answer["choices"][0]["message"]["content"] == broken
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert "not valid JSON" in answer["draftlight"]["tool_call_error"]
    chunks = events(streamed)
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks
                   if c["choices"]) == broken
    assert "not valid JSON" in chunks[-1]["draftlight"]["tool_call_error"]


def test_parallel_tool_calls_false_ends_the_reply_at_its_first_call(qwen):
    model = qwen(CALL + "\n" + CALL.replace("Paris", "Oslo"))
    with serving(model.worker) as server:
        _, both = ask(server)
        _, first = ask(server, parallel_tool_calls=False)
    assert [json.loads(c["function"]["arguments"])["city"]
            for c in both["choices"][0]["message"]["tool_calls"]] == ["Paris", "Oslo"]
    assert len(first["choices"][0]["message"]["tool_calls"]) == 1
    assert first["usage"]["completion_tokens"] < both["usage"]["completion_tokens"]


def test_a_template_that_knows_no_tools_is_one_clear_400():
    with serving() as server:  # the scripted model's own template has no tools
        status, _, answer = request(server, "POST", "/v1/chat/completions",
                                    chat_body(tools=[WEATHER]))
    error = json.loads(answer)["error"]
    assert status == 400 and error["param"] == "tools"
    assert "chat template knows no tools" in error["message"]


def test_the_openai_client_calls_tools_json_and_streamed(qwen):
    model = qwen("Let me check.\n" + CALL)
    with serving(model.worker) as server:
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=60)
        reply = client.chat.completions.create(model=MODEL, messages=ASK, tools=[WEATHER],
                                               temperature=0, max_tokens=200)
        call = reply.choices[0].message.tool_calls[0]
        assert reply.choices[0].finish_reason == "tool_calls"
        assert call.function.name == "get_weather"
        assert json.loads(call.function.arguments) == {"city": "Paris"}
        followed = client.chat.completions.create(
            model=MODEL, temperature=0, max_tokens=200, tools=[WEATHER],
            messages=ASK + [reply.choices[0].message.model_dump(exclude_none=True),
                            {"role": "tool", "tool_call_id": call.id, "content": "21 C"}])
        assert followed.choices[0].finish_reason == "tool_calls"  # the script calls again
        assert "<tool_response>\n21 C\n</tool_response>" in model.prompts[-1]
        with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER],
                                            temperature=0, max_tokens=200) as stream:
            final = stream.get_final_completion()
        assert final.choices[0].message.content == "Let me check."
        assert final.choices[0].message.tool_calls[0].function.name == "get_weather"
