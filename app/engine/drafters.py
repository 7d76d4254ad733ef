"""Drafters guess the next few tokens; the target then checks them in one pass.

They share one small Protocol. A drafter may keep state (a draft model's KV cache) but must
accept any context: after a rejection the context it sees next is not an extension of its guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

import numpy as np

from app.engine.backend import Backend, sync_cache
from app.engine.sampling import SamplingParams, sample, softmax, to_probs


@dataclass
class Draft:
    tokens: list[int]
    # q: the drafter's distribution for each drafted token, shape (len(tokens), n_vocab), under
    # the same transform as the target's. None means one-hot at each drafted token (n-gram
    # lookup, and a draft model under greedy decoding).
    probs: np.ndarray | None = None
    # N-gram lookup: how many tokens before the guess match the earlier occurrence it copies.
    match_length: int = 0


class Drafter(Protocol):
    def propose(self, context: Sequence[int], max_tokens: int, params: SamplingParams,
                rng: np.random.Generator) -> Draft:
        """Guess up to `max_tokens` tokens that follow `context`."""
        ...


class NgramDrafter:
    """Prompt lookup: find the latest earlier occurrence of the context's last n tokens
    (n = max_ngram down to min_ngram) and propose what followed it. Costs no model pass."""

    MAX_MATCH = 64  # how far back a match's length is measured

    def __init__(self, max_ngram: int = 3, min_ngram: int = 2) -> None:
        self.max_ngram = max_ngram
        self.min_ngram = min_ngram

    def propose(self, context, max_tokens, params=None, rng=None) -> Draft:
        tokens = np.asarray(context, dtype=np.int64)
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if max_tokens <= 0 or len(tokens) <= n:
                continue
            # Windows that start before the suffix itself and have at least one token after them.
            windows = np.lib.stride_tricks.sliding_window_view(tokens[:-1], n)
            hits = np.flatnonzero((windows == tokens[-n:]).all(axis=1))
            if hits.size:
                start = int(hits[-1]) + n
                guess = tokens[start:start + max_tokens].tolist()
                return Draft(guess, None, _match_length(tokens, start))
        return Draft([])


def _match_length(tokens: np.ndarray, start: int) -> int:
    """Length of the common suffix of tokens[:start] and tokens (a long one means copying)."""
    span = min(start, NgramDrafter.MAX_MATCH)
    earlier = tokens[start - span:start][::-1]
    recent = tokens[len(tokens) - span:][::-1]
    differ = np.flatnonzero(earlier != recent)
    return int(differ[0]) if differ.size else span


class ModelDrafter:
    """A smaller model with the same vocabulary drafts autoregressively, one token per pass.

    Its cache is synced to the context before each proposal, so after a rejection only the
    tokens that differ are evaluated again. `keep_going(i, p)`, when set (by auto mode), is asked
    before keeping token i+1, with p = the draft's own probability that all i+1 tokens are right.
    """

    def __init__(self, backend: Backend, target_vocab: int) -> None:
        self.backend = backend
        self.target_vocab = target_vocab
        self.keep_going: Callable[[int, float], bool] | None = None

    def _fit_vocab(self, logits: np.ndarray) -> np.ndarray:
        """Align the draft's logits with the target's vocabulary (sizes may differ slightly)."""
        n = self.target_vocab
        if logits.shape[-1] == n:
            return logits
        out = np.full(n, -np.inf, dtype=np.float32)
        m = min(n, logits.shape[-1])
        out[:m] = logits[:m]
        return out

    def propose(self, context, max_tokens, params, rng) -> Draft:
        if max_tokens <= 0 or not context:
            return Draft([])
        sync_cache(self.backend, context[:-1])
        token = context[-1]
        tokens: list[int] = []
        rows: list[np.ndarray] = []
        cumulative = 1.0
        for _ in range(max_tokens):
            logits = self._fit_vocab(self.backend.eval([token], n_logits=1)[0])
            if params.greedy:
                token = int(np.argmax(logits))
                own_p = float(softmax(logits)[token]) if self.keep_going else 1.0
                row = None
            else:
                row = to_probs(logits, params)[0]
                token = sample(row, rng)
                own_p = float(row[token])
            cumulative *= own_p
            if tokens and self.keep_going is not None and not self.keep_going(len(tokens),
                                                                                cumulative):
                break
            tokens.append(token)
            if row is not None:
                rows.append(row)
        probs = np.stack(rows) if rows else None
        return Draft(tokens, probs)
