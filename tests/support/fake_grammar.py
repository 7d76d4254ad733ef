"""A scripted grammar for exact tests of constrained speculation (no llama.cpp): after n
accepted tokens it forbids the tokens of one scripted set per position."""

from __future__ import annotations

from typing import Callable

import numpy as np

Forbidden = Callable[[int], frozenset[int]]  # tokens accepted so far -> tokens forbidden next


def every_third(n_vocab: int) -> Forbidden:
    """Forbids t where (t + n) % 3 == 0 after n tokens: a different set at each position."""
    return lambda n: frozenset(t for t in range(n_vocab) if (t + n) % 3 == 0)


class FakeGrammar:
    def __init__(self, forbidden: Forbidden, accepted: tuple[int, ...] = ()) -> None:
        self.forbidden = forbidden
        self.accepted = list(accepted)
        self.closed = False

    def allows(self, token: int) -> bool:
        return token not in self.forbidden(len(self.accepted))

    def masked(self, logits: np.ndarray) -> np.ndarray:
        out = np.array(logits, dtype=np.float32, copy=True)
        out[list(self.forbidden(len(self.accepted)))] = -np.inf
        return out

    def accept(self, token: int) -> None:
        assert self.allows(token), f"token {token} accepted where the grammar forbids it"
        self.accepted.append(token)

    def copy(self) -> "FakeGrammar":
        return FakeGrammar(self.forbidden, tuple(self.accepted))

    def close(self) -> None:
        self.closed = True
