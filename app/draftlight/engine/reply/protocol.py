"""The one interface the window, `draftlight chat`, serve and bench drive an engine through.

Two kinds implement it: the in-process engine (generator.Engine: llama.cpp in this process,
Draftlight's own drafters) and a server engine (server/server_engine.ServerEngine: llama.cpp's
llama-server, started by Draftlight, or any OpenAI-compatible server). Both yield the same
events (events.py): TextPiece with its source and pass, Notice, Progress, then one Done.
"""

from __future__ import annotations

from typing import Iterator, Protocol

from draftlight.engine.reply.events import Event
from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import Mode


class ChatEngine(Protocol):
    @property
    def modes(self) -> tuple[Mode, ...]:
        """The modes generate() takes here (OFF, NGRAM, … or llama:ngram-mod, …)."""

    def generate(self, messages: list[dict[str, str]], params: SamplingParams, mode: Mode, *,
                 prediction: str | None = None) -> Iterator[Event]:
        """Reply to `messages` in `mode` (one of `modes`: every engine asks for it, no default);
        closing the iterator cancels the reply."""

    @property
    def n_ctx(self) -> int:
        """The context window in tokens (0: the server does not say)."""

    def tokenize_chat(self, messages: list[dict[str, str]]) -> list[int]:
        """The prompt `messages` make, as tokens (what `draftlight serve` checks the length of)."""

    def reserve(self, params: SamplingParams) -> int:
        """Tokens of context kept free for the reply."""

    @property
    def load_notices(self) -> tuple[str, ...]:
        """Sentences the user should see once the engine is open (how it was loaded)."""

    def close(self) -> None:
        """Free the models or stop the server. The engine is unusable afterwards."""
