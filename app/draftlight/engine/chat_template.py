"""Render a GGUF's chat template safely (the sandbox and its budget: template_sandbox.py).

A template is tried once on a sample conversation when the model loads, so one that reaches
for something unsafe is refused before the user types anything (UnsafeTemplateError).

A conversation that ends with the assistant's words is one whose reply goes on from them
(Continue, and a client's prefill, as llama-server does): the prompt is the conversation
rendered without a generation prompt, cut just after those words, so the reply's end-of-turn
never follows them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import jinja2

from draftlight.engine.errors import ChatTemplateError, UnsafeTemplateError
from draftlight.engine.template_sandbox import MAX_TEXT, TemplateSandbox, render_budget

# Used when a GGUF carries no template; the user is told (ChatTemplate.is_fallback).
FALLBACK_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}: {{ message['content'] }}\n\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
FALLBACK_NOTICE = ("{name} has no chat template: a plain 'User: … Assistant:' format is used, "
                   "so replies may be poorer than the model can give")
MAX_RENDERED_CHARS = MAX_TEXT  # longest prompt a template may produce
MAX_RANGE_STEPS = 1_000_000  # range() items per render, all calls together
SAMPLE_CONVERSATION = [{"role": "system", "content": "You are helpful."},
                       {"role": "user", "content": "Hello"},
                       {"role": "assistant", "content": "Hi! How can I help?"},
                       {"role": "user", "content": "Tell me a joke."}]


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


def _cut_after(text: str, words: str) -> str:
    """`text` up to the end of its last copy of `words` (the reply written so far); a template
    that trims a message is cut after the trimmed words."""
    for shown in (words, words.rstrip()):
        at = text.rfind(shown)
        if at >= 0 and shown:
            return text[:at + len(shown)]
    raise ChatTemplateError("the model's chat template does not show the reply as it was "
                            "written, so it cannot be continued")


def _environment() -> TemplateSandbox:
    env = TemplateSandbox(trim_blocks=True, lstrip_blocks=True,
                          extensions=["jinja2.ext.loopcontrols"])
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@dataclass
class ChatTemplate:
    source: str | None  # the GGUF's tokenizer.chat_template, None if it has none
    bos_token: str = ""
    eos_token: str = ""

    def __post_init__(self) -> None:
        self.is_fallback = not self.source
        try:
            self._template = _environment().from_string(self.source or FALLBACK_TEMPLATE)
        except jinja2.TemplateError as exc:
            raise ChatTemplateError(f"the model's chat template is not valid Jinja: {exc}") from exc
        self._check_sample()

    def _check_sample(self) -> None:
        """Refuse a template that does something unsafe on an ordinary conversation.

        Other failures (a template that insists on a role order, say) wait for a real
        conversation: they may not happen with it, and they are reported then."""
        try:
            self.render(SAMPLE_CONVERSATION)
        except UnsafeTemplateError:
            raise
        except ChatTemplateError:
            pass

    def render(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        partial = (add_generation_prompt and bool(messages)
                   and messages[-1].get("role") == "assistant" and messages[-1].get("content"))
        try:
            with render_budget():
                if partial:
                    return _cut_after(self._render(messages, False), messages[-1]["content"])
                return self._render(messages, add_generation_prompt)
        except jinja2.exceptions.SecurityError as exc:
            raise UnsafeTemplateError(
                f"the model's chat template tried something unsafe and was stopped ({exc})"
            ) from exc
        except ChatTemplateError:
            raise
        except Exception as exc:  # any bug in an untrusted template becomes one clear message
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ChatTemplateError(f"the model's chat template failed: {text}") from exc

    def _render(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        chunks = []
        size = 0
        for chunk in self._template.generate(
                messages=messages, add_generation_prompt=add_generation_prompt,
                bos_token=self.bos_token, eos_token=self.eos_token,
                range=_budgeted_range([MAX_RANGE_STEPS])):
            size += len(chunk)
            if size > MAX_RENDERED_CHARS:
                raise UnsafeTemplateError(
                    "the model's chat template produced too much text and was stopped")
            chunks.append(chunk)
        return "".join(chunks)
