"""Render a GGUF's chat template safely.

Chat templates come from model files downloaded from the internet: untrusted code
(CVE-2024-34359 was remote code execution through exactly this). We render them in Jinja's
ImmutableSandboxedEnvironment, which refuses underscore attributes (`__class__`, `__globals__`,
`__subclasses__`, …) and mutation of Python objects, and we remove the helper globals that exist
only to be abused or that a chat template never needs (`cycler`, `joiner`, `lipsum`).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.engine.errors import ChatTemplateError

# Used when a GGUF carries no template; the user is told (ChatTemplate.is_fallback).
FALLBACK_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}: {{ message['content'] }}\n\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
# Longest output a template may produce; a template that loops to blow up memory is stopped.
MAX_RENDERED_CHARS = 4_000_000


def _raise_exception(message: str) -> None:
    raise ChatTemplateError(f"the model's chat template refused the conversation: {message}")


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    for name in ("cycler", "joiner", "lipsum"):
        env.globals.pop(name, None)
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

    def render(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        try:
            chunks = []
            size = 0
            for chunk in self._template.generate(
                    messages=messages, add_generation_prompt=add_generation_prompt,
                    bos_token=self.bos_token, eos_token=self.eos_token):
                size += len(chunk)
                if size > MAX_RENDERED_CHARS:
                    raise ChatTemplateError("the model's chat template produced too much text")
                chunks.append(chunk)
            return "".join(chunks)
        except jinja2.exceptions.SecurityError as exc:
            raise ChatTemplateError(
                f"the model's chat template tried something unsafe and was stopped ({exc})"
            ) from exc
        except ChatTemplateError:
            raise
        except Exception as exc:  # any bug in an untrusted template becomes one clear message
            raise ChatTemplateError(f"the model's chat template failed: {exc}") from exc
