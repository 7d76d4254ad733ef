"""What a line typed into `draftlight chat`'s interactive chat (commands/chat.py reads the
lines) does to the conversation: a question is answered and kept, and the slash commands
/mode, /reset, /continue, /retry and /edit switch speculation, start over, write more of the
last answer, or answer the last question again (as it was, or replaced), with the earlier
answer as its draft. An answer stopped with Ctrl-C, or refused by the engine, is said in one
line and not kept."""

from __future__ import annotations

import sys
from typing import Callable

from draftlight.modes import OFF, Mode
from draftlight.user_messages import say


class Conversation:
    """The messages so far, from `start`, and the mode they are answered in, one of
    `engine.modes`. `ask(messages, mode, prediction)` prints the answer to `messages` and
    returns its text; it may raise KeyboardInterrupt or EngineError."""

    def __init__(self, engine, ask: Callable[[list, Mode, str | None], str], mode: Mode,
                 start: list[dict[str, str]] | None = None) -> None:
        self.engine, self.ask, self.mode = engine, ask, mode
        self.start = start
        self.messages: list[dict[str, str]] = list(start or [])

    def take(self, line: str) -> None:
        """Do what `line` (stripped, not empty) says."""
        if line.startswith("/mode"):
            self._switch_mode(line)
        elif line == "/reset":
            self.messages = list(self.start or [])
        elif line == "/continue":
            self._continue()
        elif line == "/retry" or line.startswith("/edit"):
            self._answer_again(line)
        else:
            self._answer(line)

    def _switch_mode(self, line: str) -> None:
        wanted = line.split(maxsplit=1)[1] if " " in line else ""
        chosen = next((m for m in self.engine.modes if str(m) == wanted.strip()), None)
        if chosen is not None:
            self.mode = chosen
        else:
            say(f"draftlight: no mode {wanted!r} here; choose one of "
                f"{', '.join(map(str, self.engine.modes))}", file=sys.stderr)

    def _continue(self) -> None:
        """The conversation ends with the answer: it goes on from it."""
        messages = self.messages
        if not messages or messages[-1]["role"] != "assistant":
            say("draftlight: no answer to continue yet", file=sys.stderr)
            return
        more = self._asked(None)
        if more is not None:
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + more}

    def _answer_again(self, line: str) -> None:
        """/retry, or /edit TEXT: the last answer drafts the new one, never shown to it."""
        messages = self.messages
        if len(messages) < 2 or messages[-1]["role"] != "assistant":
            say("draftlight: nothing to answer again yet", file=sys.stderr)
            return
        earlier = messages.pop()["content"]
        question = messages.pop()["content"]
        line = line.removeprefix("/edit").strip() if line.startswith("/edit") else question
        if not line:
            messages += [{"role": "user", "content": question},
                         {"role": "assistant", "content": earlier}]
            say("draftlight: /edit needs the new question: /edit TEXT", file=sys.stderr)
            return
        self._answer(line, earlier)

    def _answer(self, question: str, earlier: str | None = None) -> None:
        self.messages.append({"role": "user", "content": question})
        reply = self._asked(earlier if self.mode != OFF else None)
        if reply is None:
            self.messages.pop()
        else:
            self.messages.append({"role": "assistant", "content": reply})

    def _asked(self, prediction: str | None) -> str | None:
        """The answer, or None when it was stopped or the engine refused it (e.g. a message
        longer than the context), which is said: the chat goes on."""
        from draftlight.engine.core.errors import EngineError
        try:
            return self.ask(self.messages, self.mode, prediction)
        except KeyboardInterrupt:
            print("\n(stopped)", file=sys.stderr)
        except EngineError as exc:
            say(f"draftlight: {exc}", file=sys.stderr)
        return None
