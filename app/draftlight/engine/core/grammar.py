"""A grammar that constrains a reply (structured output): which tokens it allows next.

The constrained target's distribution at a position is the target's logits with every token
the grammar forbids after the tokens before it set to −inf (then the usual transform,
sampling.to_probs). The speculative step masks each row of its verify pass with a copy of the
grammar advanced along the draft, so speculation stays lossless under the constraint
(speculative.py). llama.cpp's implementation: engine/llama/grammar_sampler.py; the tests' own:
tests/support/fake_grammar.py.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Grammar(Protocol):
    """A grammar's state after the reply's tokens so far; one thread uses it."""

    def allows(self, token: int) -> bool:
        """Whether `token` may come next."""
        ...

    def masked(self, logits: np.ndarray) -> np.ndarray:
        """One row of logits with every token that may not come next at −inf (a copy)."""
        ...

    def accept(self, token: int) -> None:
        """Advance over `token`, which allows() must allow."""
        ...

    def copy(self) -> "Grammar":
        """An independent state, equal to this one now (to advance along a draft)."""
        ...

    def close(self) -> None: ...


def masked_rows(grammar: Grammar, logits: np.ndarray, tokens: list[int]) -> np.ndarray:
    """Row i of `logits` masked by `grammar` advanced over tokens[:i] (the grammar is not
    changed): len(tokens) + 1 rows."""
    rows = np.empty_like(logits[:len(tokens) + 1])
    walker = grammar.copy()
    try:
        for i in range(len(tokens) + 1):
            rows[i] = walker.masked(logits[i])
            if i < len(tokens):
                walker.accept(tokens[i])
    finally:
        walker.close()
    return rows


def allowed_prefix(grammar: Grammar, tokens: list[int]) -> int:
    """How many of `tokens`, in order from `grammar`'s state, the grammar allows (it stops at
    the first it forbids); the grammar is not changed."""
    walker = grammar.copy()
    try:
        for i, token in enumerate(tokens):
            if not walker.allows(token):
                return i
            walker.accept(token)
        return len(tokens)
    finally:
        walker.close()
