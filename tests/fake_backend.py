"""A scripted model for exact, fast tests of the speculative logic (no llama.cpp)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

LogitsFn = Callable[[tuple[int, ...]], np.ndarray]


class FakeBackend:
    """Logits are a pure function of the prefix; the 'KV cache' is the token list.

    `evaluated` counts every token evaluated, to check that nothing is recomputed.
    """

    def __init__(self, n_vocab: int, logits_fn: LogitsFn) -> None:
        self.n_vocab = n_vocab
        self.logits_fn = logits_fn
        self._tokens: list[int] = []
        self.evaluated = 0
        self.passes = 0

    @property
    def tokens(self) -> list[int]:
        return list(self._tokens)

    def eval(self, tokens: Sequence[int], n_logits: int = 1) -> np.ndarray:
        rows = []
        self.passes += 1
        for i, token in enumerate(tokens):
            self._tokens.append(int(token))
            self.evaluated += 1
            if i >= len(tokens) - n_logits:
                rows.append(np.asarray(self.logits_fn(tuple(self._tokens)), dtype=np.float32))
        return np.stack(rows) if rows else np.empty((0, self.n_vocab), np.float32)

    def truncate(self, n: int) -> None:
        del self._tokens[n:]


def hashed_logits(n_vocab: int, salt: int = 0) -> LogitsFn:
    """Deterministic pseudo-random logits for each prefix."""

    def fn(prefix: tuple[int, ...]) -> np.ndarray:
        seed = hash((salt,) + prefix[-6:] + (len(prefix),)) & 0xFFFFFFFF
        return np.random.default_rng(seed).normal(size=n_vocab) * 3

    return fn


def markov_logits(n_vocab: int, order: int = 2, salt: int = 0) -> LogitsFn:
    """Pseudo-random logits that depend only on the last `order` tokens: greedy decoding soon
    falls into a cycle, which n-gram lookup can then copy."""

    def fn(prefix: tuple[int, ...]) -> np.ndarray:
        seed = hash((salt, "markov") + prefix[-order:]) & 0xFFFFFFFF
        return np.random.default_rng(seed).normal(size=n_vocab) * 3

    return fn


def constant_logits(probs: Sequence[float]) -> LogitsFn:
    """The same next-token distribution after every prefix."""
    logits = np.log(np.asarray(probs, dtype=np.float64))
    return lambda prefix: logits
