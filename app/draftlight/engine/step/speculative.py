"""One speculative step: draft γ tokens, verify them in one target pass, keep the accepted prefix.

Plain decoding is the same step with γ = 0 (one pass, one token), so every mode shares this code.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from draftlight.engine.core.backend import Backend
from draftlight.engine.core.grammar import Grammar, allowed_prefix, masked_rows
from draftlight.engine.step.drafters import Draft, DraftOrigin, Drafter
from draftlight.engine.core.sampling import SamplingParams, sample, to_probs


@dataclass
class StepResult:
    accepted: list[int]  # drafted tokens the target accepted, in order
    token: int  # the target's own token: the correction after a rejection, else the bonus
    drafted: int  # how many tokens the drafter proposed
    draft_seconds: float
    verify_seconds: float
    origin: DraftOrigin | None = None  # where the draft came from (accepted[i] is its i-th token)
    left_out: int = 0  # context tokens a draft model could not see (its window is full)


class StepContext(Sequence[int]):
    """A step's context read in place: the target's cached tokens and the newest token, not yet
    evaluated. Drafters read it during propose() and keep no reference (the cache changes with
    the pass that follows); a copy of 30,000 tokens each step was 0.1 ms, twice an n-gram
    lookup (`draftlight bench scale`). Slices are lists."""

    __slots__ = ("_cached", "_last")

    def __init__(self, cached: Sequence[int], last: int) -> None:
        self._cached, self._last = cached, last

    def __len__(self) -> int:
        return len(self._cached) + 1

    def __iter__(self) -> Iterator[int]:
        yield from self._cached
        yield self._last

    def __getitem__(self, index):
        size = len(self._cached)
        if isinstance(index, slice):
            start, stop, stride = index.indices(size + 1)
            if stride != 1:
                return list(self)[index]
            piece = list(self._cached[start:min(stop, size)])
            if start <= size < stop:
                piece.append(self._last)
            return piece
        if index < 0:
            index += size + 1
        if index == size:
            return self._last
        if not 0 <= index < size:
            raise IndexError("step context index out of range")
        return self._cached[index]


def speculative_step(target: Backend, drafter: Drafter | None, last_token: int, gamma: int,
                     params: SamplingParams, rng: np.random.Generator,
                     grammar: Grammar | None = None) -> StepResult:
    """`target.tokens` is the context minus `last_token`, the newest token not yet evaluated.
    `grammar` (structured output) constrains the reply and accepts the step's tokens."""
    context = StepContext(target.token_view, last_token)
    n_past = len(context) - 1
    t0 = time.perf_counter()
    if drafter is not None and gamma > 0:
        draft = drafter.propose(context, gamma, params, rng)
    else:
        draft = Draft([])
    guess = draft.tokens
    cut_q = None  # q of a drafted token the grammar forbids, cut before the pass
    if grammar is not None and guess:
        # The grammar forbids d_{n+1}: p_n(d_{n+1}) = 0, so the rule below would reject it for
        # sure, and nothing after it is looked at: cut it unevaluated, and at row n draw from
        # the residual it leaves, max(0, p_n − q_n) (p_n itself when q is one-hot).
        n_allowed = allowed_prefix(grammar, guess)
        if n_allowed < len(guess) and draft.probs is not None:
            cut_q = draft.probs[n_allowed]
        guess = guess[:n_allowed]
    t1 = time.perf_counter()
    if guess:  # a recurrent target copies its state now, to come back after a rejection
        target.checkpoint(len(guess) + 1)
    # One target pass over [last_token, d_1..d_γ]. Row i of the logits gives the target's
    # distribution p_i for the token after d_i (d_0 = last_token): p_i judges d_{i+1}, and p_γ
    # supplies the bonus token.
    logits = target.eval([last_token, *guess], n_logits=len(guess) + 1)
    if grammar is not None:  # p_i: the target's row i masked by the grammar after d_1..d_i
        logits = masked_rows(grammar, logits, guess)
    t2 = time.perf_counter()

    def result(n_accepted: int, token: int) -> StepResult:
        if n_accepted < len(guess):
            target.truncate(n_past + 1 + n_accepted)  # keep last_token, d_1..d_n; drop the rest
        if grammar is not None:
            for kept in (*guess[:n_accepted], token):
                grammar.accept(kept)
        return StepResult(guess[:n_accepted], token, len(draft.tokens), t1 - t0, t2 - t1,
                          draft.origin, draft.left_out)

    if params.greedy:
        # p_i is one-hot at argmax(logits_i): d_{i+1} is accepted iff it is that argmax, and
        # the residual after a rejection is the argmax itself. No randomness is used. This is
        # plain decoding's choice exactly when batched rows equal one-token ones (invariance.py).
        best = logits.argmax(axis=1)
        for i, x in enumerate(guess):
            if x != best[i]:
                return result(i, int(best[i]))
        return result(len(guess), int(best[len(guess)]))

    # p_i is computed row by row: the rows after the first rejection are never needed.
    for i, x in enumerate(guess):
        p = to_probs(logits[i], params)[0]
        # q(x): the drafter's probability of x; None = one-hot (n-gram lookup), q(x) = 1.
        q_row = None if draft.probs is None else draft.probs[i]
        q_x = 1.0 if q_row is None else float(q_row[x])
        # Accept x with probability min(1, p(x) / q(x)):  u ~ U[0,1),  accept iff u·q(x) < p(x).
        if rng.random() * q_x < p[x]:
            continue
        # Rejected: sample from the residual  r = max(0, p − q) / Σ max(0, p − q).  Together
        # with the acceptance above this draws exactly from p (Leviathan et al. 2023, Thm 1).
        # With one-hot q the residual is p with x removed.
        if q_row is None:
            residual = p.copy()
            residual[x] = 0.0
        else:
            residual = np.maximum(p - q_row, 0.0)
        if residual.sum() <= 0.0:  # only reachable through rounding: fall back to p
            residual = p
        return result(i, sample(residual, rng))
    # Every draft accepted: the bonus token comes from p_γ; the cache keeps all of them.
    p = to_probs(logits[len(guess)], params)[0]
    if cut_q is not None and np.maximum(p - cut_q, 0.0).sum() > 0.0:
        p = np.maximum(p - cut_q, 0.0)  # the residual the cut token leaves (above)
    return result(len(guess), sample(p, rng))
