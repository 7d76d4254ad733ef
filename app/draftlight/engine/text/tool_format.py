"""Tools in a conversation: how they reach a model's chat template, and which format of call
its template teaches the model to write.

An engine takes a conversation as its messages alone (through the host's pipe, fit_prompt, the
window's history), so the tools a model may call ride on the conversation's last message, under
TOOLS_KEY: fit_prompt always keeps that message, and the template process (template_child.py)
takes them off it and hands them to the template as its `tools` variable, as Hugging Face's
apply_chat_template and llama.cpp do.

The format is read from the template's own text: a template that shows the model how a call is
written (`<tool_call>`, `[TOOL_CALLS]`, `<|python_tag|>`) is the one the model was trained on.
"""

from __future__ import annotations

import enum
import re

TOOLS_KEY = "tools"

_NAMES_TOOLS = re.compile(r"\btools\b")  # a template variable named `tools`, used or tested


class ToolFormat(enum.Enum):
    """How a model writes a call, as its chat template shows it."""
    HERMES = "hermes"  # Qwen2.5, Qwen3, Hermes: <tool_call>{"name", "arguments"}</tool_call>
    LLAMA3 = "llama3"  # Llama 3.x: {"name", "parameters"}, or after <|python_tag|>
    MISTRAL = "mistral"  # Mistral: [TOOL_CALLS][{"name", "arguments"}, …]


def knows_tools(template: str | None) -> bool:
    """Whether `template` (a chat template's source) reads a `tools` variable at all."""
    return bool(template) and bool(_NAMES_TOOLS.search(template))


def tool_format_of(template: str | None) -> ToolFormat | None:
    """The format `template` teaches its model to call tools in; None where it names no
    format this app reads (or knows no tools)."""
    if not knows_tools(template):
        return None
    if "<tool_call>" in template:
        return ToolFormat.HERMES
    if "[TOOL_CALLS]" in template:
        return ToolFormat.MISTRAL
    if "<|python_tag|>" in template or "ipython" in template:
        return ToolFormat.LLAMA3
    return None


def with_tools(messages: list[dict], tools: list[dict]) -> list[dict]:
    """`messages` whose last carries `tools` (OpenAI's [{"type": "function", "function": …}])
    for the template."""
    if not messages or not tools:
        return messages
    return messages[:-1] + [{**messages[-1], TOOLS_KEY: tools}]


def without_tools(messages: list[dict]) -> tuple[list[dict], list[dict] | None]:
    """(`messages` as the template reads them, the tools one of them carried, or None)."""
    tools = None
    plain = []
    for message in messages:
        if isinstance(message, dict) and TOOLS_KEY in message:
            message = dict(message)
            tools = message.pop(TOOLS_KEY) or tools
        plain.append(message)
    return plain, tools
