"""The little a speculative step needs from a model: a token cache it can extend and cut back."""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np


class Backend(Protocol):
    """A causal LM with a KV cache holding `tokens`, in order, from position 0."""

    n_vocab: int

    @property
    def tokens(self) -> list[int]:
        """The tokens whose keys and values are in the cache (a copy)."""
        ...

    @property
    def token_view(self) -> Sequence[int]:
        """The same tokens read in place, without a copy: valid until the next eval() or
        truncate(), and never changed by whoever reads it."""
        ...

    def eval(self, tokens: Sequence[int], n_logits: int = 1) -> np.ndarray:
        """Append `tokens` to the cache; return logits for the last `n_logits` of them,
        shape (n_logits, n_vocab), row j predicting the token after tokens[len - n_logits + j]."""
        ...

    def truncate(self, n: int) -> None:
        """Drop everything after the first `n` cached tokens (rollback)."""
        ...

    def checkpoint(self, span: int = 0) -> None:
        """Make a later truncate() back to the current length cheap: a KV cache can always cut,
        a recurrent state is copied now. `span` > 0 promises that the next eval is one pass of
        at most `span` tokens, of which the truncate keeps at least the first."""
        ...


class LanguageModel(Backend, Protocol):
    """A Backend with a tokenizer, a context window and metadata: what Engine needs of a model
    (llama_backend.LlamaBackend on llama.cpp; tests/support/fake_backend.FakeChatModel in tests)."""

    n_ctx: int  # context window, tokens

    def tokenize(self, text: str, *, add_bos: bool, special: bool = True) -> list[int]: ...

    def piece(self, token: int) -> bytes:
        """The bytes of one token as text (special tokens render as nothing)."""
        ...

    def token_text(self, token: int) -> str:
        """The token's own text, special tokens included (for templates and checks)."""
        ...

    def is_end_of_generation(self, token: int) -> bool: ...

    @property
    def bos(self) -> int: ...

    @property
    def eos(self) -> int: ...

    @property
    def add_bos(self) -> bool: ...

    @property
    def vocab_type(self) -> int: ...

    def metadata(self) -> dict[str, str]:
        """GGUF metadata; "tokenizer.chat_template" is the one Engine reads."""
        ...

    def close(self) -> None: ...


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def sync_cache(backend: Backend, context: Sequence[int]) -> int:
    """Make the cache hold exactly `context`, reusing the longest cached prefix.

    Returns how many tokens were reused (not evaluated again).
    """
    reused = common_prefix_length(backend.tokens, context)
    backend.truncate(reused)
    if reused < len(context):
        backend.eval(context[reused:], n_logits=0)
    return reused
