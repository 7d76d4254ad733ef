"""The process a GGUF's chat template renders in (bounded_process.py: its time and memory are
limited from outside), and the render itself, in the sandbox (template_sandbox.py).

    python -P -m draftlight.engine.text.template_child   (started by chat_template.py)

Each request is {"source", "bos", "eos", "messages", "add_generation_prompt"}; each answer is
{"text": …}, or {"error": one line, "unsafe": …, "invalid": …} (unsafe: stopped by the
sandbox; invalid: not Jinja at all). Compiled templates are kept by
source, so each turn of a conversation compiles nothing. Tools a conversation offers the model
ride on one of its messages (tool_format.py) and reach the template as its `tools` variable.

A conversation that ends with the assistant's words is one whose reply goes on from them
(Continue, and a client's prefill, as llama-server does): the prompt is the conversation
rendered without a generation prompt, cut just after those words, so the reply's end-of-turn
never follows them.
"""

from __future__ import annotations

import datetime
import sys

import jinja2

from draftlight.engine.core.errors import ChatTemplateError, UnsafeTemplateError
from draftlight.engine.text.template_sandbox import MAX_TEXT, TemplateSandbox, render_budget
from draftlight.engine.text.tool_format import without_tools

MAX_RENDERED_CHARS = MAX_TEXT  # longest prompt a template may produce
MAX_RANGE_STEPS = 1_000_000  # range() items per render, all calls together
_KEPT_TEMPLATES = 8


class NotJinja(ChatTemplateError):
    """The template cannot even be compiled."""


def _raise_exception(message: str) -> None:
    raise ChatTemplateError(f"the model's chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


def _budgeted_range(budget: list[int]):
    def range_(*args):
        steps = range(*args)
        budget[0] -= len(steps)
        if budget[0] < 0:
            raise jinja2.exceptions.SecurityError("range() was asked for too many items")
        return steps
    return range_


def _environment() -> TemplateSandbox:
    env = TemplateSandbox(trim_blocks=True, lstrip_blocks=True,
                          extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


_compiled: dict[str, jinja2.Template] = {}


def _template(source: str) -> jinja2.Template:
    template = _compiled.get(source)
    if template is None:
        try:
            template = _environment().from_string(source)
        except jinja2.TemplateError as exc:
            raise NotJinja(f"the model's chat template is not valid Jinja: {exc}") from exc
        if len(_compiled) >= _KEPT_TEMPLATES:
            _compiled.clear()
        _compiled[source] = template
    return template


def _cut_after(text: str, words: str) -> str:
    """`text` up to the end of its last copy of `words` (the reply written so far); a template
    that trims a message is cut after the trimmed words."""
    for shown in (words, words.rstrip()):
        at = text.rfind(shown)
        if at >= 0 and shown:
            return text[:at + len(shown)]
    raise ChatTemplateError("the model's chat template does not show the reply as it was "
                            "written, so it cannot be continued")


def render(source: str, bos: str, eos: str, messages: list[dict[str, str]],
           add_generation_prompt: bool = True) -> str:
    """The prompt `source` makes of `messages`, in the sandbox and within its budget.

    Raises:
        UnsafeTemplateError: it reached for something unsafe or ran past its budget.
        ChatTemplateError: it is not valid Jinja, refused the conversation, or failed."""
    messages, tools = without_tools(messages)
    partial = (add_generation_prompt and bool(messages)
               and messages[-1].get("role") == "assistant" and messages[-1].get("content"))
    try:
        template = _template(source)
        with render_budget():
            if partial:
                return _cut_after(_render(template, bos, eos, messages, False, tools),
                                  messages[-1]["content"])
            return _render(template, bos, eos, messages, add_generation_prompt, tools)
    except jinja2.exceptions.SecurityError as exc:
        raise UnsafeTemplateError(
            f"the model's chat template tried something unsafe and was stopped ({exc})"
        ) from exc
    except (ChatTemplateError, MemoryError):
        raise
    except Exception as exc:  # any bug in an untrusted template becomes one clear message
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ChatTemplateError(f"the model's chat template failed: {text}") from exc


def _render(template: jinja2.Template, bos: str, eos: str, messages: list[dict[str, str]],
            add_generation_prompt: bool, tools: list[dict] | None = None) -> str:
    chunks = []
    size = 0
    # `tools` only when there are some: templates test `{% if tools %}` or `tools is defined`
    offered = {"tools": tools} if tools else {}
    for chunk in template.generate(messages=messages, add_generation_prompt=add_generation_prompt,
                                   bos_token=bos, eos_token=eos,
                                   range=_budgeted_range([MAX_RANGE_STEPS]), **offered):
        size += len(chunk)
        if size > MAX_RENDERED_CHARS:
            raise UnsafeTemplateError(
                "the model's chat template produced too much text and was stopped")
        chunks.append(chunk)
    return "".join(chunks)


def answer(request: dict) -> dict:
    try:
        return {"text": render(request["source"], request["bos"], request["eos"],
                               request["messages"], request["add_generation_prompt"])}
    except UnsafeTemplateError as exc:
        return {"error": str(exc), "unsafe": True}
    except ChatTemplateError as exc:
        return {"error": str(exc).splitlines()[0], "unsafe": False,
                "invalid": isinstance(exc, NotJinja)}


def main() -> int:
    from draftlight.bounded_process import serve
    return serve(answer)


if __name__ == "__main__":
    sys.exit(main())
