"""A GGUF's chat template, rendered in a process of its own (template_child.py) where its time
and memory are bounded from outside (bounded_process.py), inside the sandbox
(template_sandbox.py). A template is code from a model file: one call inside it can run for
minutes or take gigabytes, and only a child process can be stopped in the middle of one.

A template is tried once on a sample conversation when the model loads, so one that reaches
for something unsafe, or past its time or memory, is refused before the user types anything
(UnsafeTemplateError).
"""

from __future__ import annotations

import atexit
import functools
from dataclasses import dataclass

from draftlight.bounded_process import BoundedChild, ChildFailed
from draftlight.engine.core.errors import ChatTemplateError, UnsafeTemplateError

# Used when a GGUF carries no template; the user is told (ChatTemplate.is_fallback).
FALLBACK_TEMPLATE = (
    "{% for message in messages %}"
    "{{ message['role'] | capitalize }}: {{ message['content'] }}\n\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}Assistant:{% endif %}"
)
FALLBACK_NOTICE = ("{name} has no chat template: a plain 'User: … Assistant:' format is used, "
                   "so replies may be poorer than the model can give")
SAMPLE_CONVERSATION = [{"role": "system", "content": "You are helpful."},
                       {"role": "user", "content": "Hello"},
                       {"role": "assistant", "content": "Hi! How can I help?"},
                       {"role": "user", "content": "Tell me a joke."}]
RENDER_SECONDS = 5.0  # the child's own budget is 3 s (template_sandbox.py); this one holds in C
RENDER_MEMORY = 768 << 20  # what the child may grow by: the sandbox's 512 MB, and the request


@functools.cache
def renderer() -> BoundedChild:
    """The one template process of this app, shared by every model and thread."""
    child = BoundedChild("draftlight.engine.text.template_child", seconds=RENDER_SECONDS,
                         memory=RENDER_MEMORY)
    atexit.register(child.close)
    return child


@dataclass
class ChatTemplate:
    source: str | None  # the GGUF's tokenizer.chat_template, None if it has none
    bos_token: str = ""
    eos_token: str = ""

    def __post_init__(self) -> None:
        self.is_fallback = not self.source
        self._check_sample()

    def _check_sample(self) -> None:
        """Refuse a template that does something unsafe on an ordinary conversation.

        Other failures (a template that insists on a role order, say) wait for a real
        conversation: they may not happen with it, and they are reported then; a template
        that is not valid Jinja is refused now."""
        answer = self._answer(SAMPLE_CONVERSATION, True)
        if answer.get("invalid"):
            raise ChatTemplateError(answer["error"])
        if answer.get("unsafe") or answer.get("failed"):
            self._text(answer)  # raises UnsafeTemplateError

    def render(self, messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
        """The prompt for `messages` (a reply goes on from a last assistant message).

        Raises:
            UnsafeTemplateError: the template reached for something unsafe, or ran past its
                time or memory, and was stopped.
            ChatTemplateError: it refused the conversation or failed."""
        return self._text(self._answer(messages, add_generation_prompt))

    def _answer(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> dict:
        request = {"source": self.source or FALLBACK_TEMPLATE, "bos": self.bos_token,
                   "eos": self.eos_token, "messages": messages,
                   "add_generation_prompt": add_generation_prompt}
        try:
            answer = renderer().ask(request)
        except ChildFailed as exc:
            if exc.reason == "start":
                raise ChatTemplateError(f"the chat template cannot be rendered: {exc}") from None
            raise UnsafeTemplateError("the model's chat template tried something unsafe and "
                                      f"was stopped ({exc})") from None
        return answer

    @staticmethod
    def _text(answer: dict) -> str:
        if "text" in answer:
            return answer["text"]
        if answer.get("failed") == "memory":
            raise UnsafeTemplateError("the model's chat template tried something unsafe and was "
                                      f"stopped (it took more than {RENDER_MEMORY >> 20} MB)")
        error = UnsafeTemplateError if answer.get("unsafe") else ChatTemplateError
        raise error(answer["error"])
