"""Sampled speculation keeps the target's distribution where that distribution changes with the
position and the previous token, so a verification that judges a drafted token with the wrong
row of the target's pass is caught.

With one constant logit row (the other distribution tests) every row is the same and any row
would do; here the target's next-token distribution after a prefix depends on its length and
its last token, and the draft believes something close but different. Each emitted token is
checked against the target's distribution after the very prefix it followed, and a negative
control that shifts the verify rows by one must fail the same check.
"""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.step.drafters import Draft, ModelDrafter
from draftlight.engine.core.sampling import SamplingParams, to_probs
from draftlight.engine.step.speculative import speculative_step
from tests.support.chi_square import chi_square_sf, pearson
from tests.support.fake_backend import FakeBackend

VOCAB = 6
PHASES = 3  # the distribution cycles with the prefix length
PROMPT = [0, 3, 1]
# No filter: every token stays possible, so the negative control must be caught by the shape of
# the distribution, not by a token that a filter forbids (the other tests cover the filters).
PARAMS = SamplingParams(temperature=0.9)
GAMMA = 3
POSITIONS = 4  # emitted tokens checked per reply
REPLIES = 3_000
# Fixed seeds: each test gives the same verdict every run. The threshold is how rarely a correct
# step would fail with another seed: 1 in 1,000 (Pearson's statistic over all cells, categories
# expected < 5 times pooled, so that it follows the chi-square law). The correct step gave
# p = 0.04 .. 0.96 over seeds 0..7; the shifted rows give a statistic of ~10^5 on ~60 degrees of
# freedom, p = 0 in double precision, so the control fails by a margin, not by luck.
ALPHA = 1e-3


def table(seed: int) -> np.ndarray:
    """logits[phase, previous token, next token]: each (phase, previous) row favours another
    next token, by 2.5 logits, over pseudo-random others."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(PHASES, VOCAB, VOCAB))
    for phase in range(PHASES):
        for previous in range(VOCAB):
            logits[phase, previous, (previous + 1 + phase) % VOCAB] += 2.5
    return logits


TARGET = table(11)
DRAFT = TARGET + np.random.default_rng(12).normal(size=TARGET.shape) * 0.8  # close, not equal


def scripted(logits: np.ndarray):
    return lambda prefix: logits[len(prefix) % PHASES, prefix[-1]]


def target_probs(prefix) -> np.ndarray:
    return to_probs(scripted(TARGET)(tuple(prefix)), PARAMS)[0]


class OneHotGuess:
    """An n-gram-like drafter (q one-hot): it guesses the token the target favours."""

    def propose(self, context, max_tokens, params=None, rng=None):
        tokens, prefix = [], list(context)
        for _ in range(max_tokens):
            tokens.append(int(np.argmax(TARGET[len(prefix) % PHASES, prefix[-1]])))
            prefix.append(tokens[-1])
        return Draft(tokens)


class ShiftedRows:
    """The negative control: a target whose verify pass hands row i + 1 where row i belongs,
    so d_{i+1} is judged by the distribution after d_{i+1} (the last row is repeated)."""

    def __init__(self, backend: FakeBackend) -> None:
        self.backend = backend

    @property
    def tokens(self):
        return self.backend.tokens

    @property
    def token_view(self):
        return self.backend.token_view

    def truncate(self, n):
        self.backend.truncate(n)

    def checkpoint(self, span=0):
        self.backend.checkpoint(span)

    def eval(self, tokens, n_logits=1):
        rows = self.backend.eval(tokens, n_logits)
        return np.vstack([rows[1:], rows[-1:]]) if len(rows) > 1 else rows


def make_drafter(kind: str):
    if kind == "model":
        return ModelDrafter(FakeBackend(VOCAB, scripted(DRAFT)), VOCAB)
    return OneHotGuess()


def replies(kind: str, wrap=lambda backend: backend, seed=2025) -> np.ndarray:
    """The first POSITIONS tokens of REPLIES independent replies, generated the way
    Engine.generate drives speculative_step."""
    rng = np.random.default_rng(seed)
    target, drafter = wrap(FakeBackend(VOCAB, scripted(TARGET))), make_drafter(kind)
    out = np.empty((REPLIES, POSITIONS), dtype=int)
    for reply in range(REPLIES):
        target.truncate(0)
        target.eval(PROMPT[:-1], n_logits=0)
        last, tokens = PROMPT[-1], []
        while len(tokens) < POSITIONS:
            step = speculative_step(target, drafter, last, GAMMA, PARAMS, rng)
            tokens += step.accepted + [step.token]
            last = step.token
        out[reply] = tokens[:POSITIONS]
    return out


def p_value(tokens: np.ndarray) -> float:
    """Pearson's test of every emitted token against the target's distribution after the prefix
    it followed. That distribution depends only on (position, previous token), so the tokens
    are counted in those cells and the statistics and degrees of freedom add up."""
    statistic, df = 0.0, 0
    for position in range(POSITIONS):
        previous = tokens[:, position - 1] if position else np.full(len(tokens), PROMPT[-1])
        for value in np.unique(previous):
            cell = tokens[previous == value, position]
            # The prefix has len(PROMPT) + position tokens and ends in `value`.
            probs = target_probs([0] * (len(PROMPT) + position - 1) + [int(value)])
            s, d = pearson(np.bincount(cell, minlength=VOCAB), probs)
            statistic, df = statistic + s, df + d
    return chi_square_sf(statistic, df)


def test_the_setting_makes_a_misaligned_row_wrong():
    """No two (phase, previous token) contexts share a distribution, so a row that judges
    another token's place judges it by another distribution (the negative control has
    something to catch), and the context's own row favours another token than the next's."""
    rows = np.array([target_probs([0] * n + [prev]) for n in range(PHASES)
                     for prev in range(VOCAB)])
    gaps = [np.abs(rows[i] - rows[j]).sum() for i in range(len(rows)) for j in range(i)]
    assert min(gaps) > 0.08  # L1 distance between any two rows; 0.10 is the closest pair
    for phase in range(PHASES):
        for previous in range(VOCAB):
            favoured = int(np.argmax(TARGET[phase, previous]))
            assert np.argmax(TARGET[(phase + 1) % PHASES, favoured]) != favoured


@pytest.mark.parametrize("kind", ["model", "one-hot"])
def test_drafts_are_accepted_and_rejected_at_every_position(kind):
    """Each checked position sees accepted drafts and corrections after a rejection."""
    rng = np.random.default_rng(3)
    target, drafter = FakeBackend(VOCAB, scripted(TARGET)), make_drafter(kind)
    accepted, rejected = set(), set()
    for _ in range(300):
        target.truncate(0)
        target.eval(PROMPT[:-1], n_logits=0)
        step = speculative_step(target, drafter, PROMPT[-1], GAMMA, PARAMS, rng)
        accepted.update(range(len(step.accepted)))
        if len(step.accepted) < step.drafted:
            rejected.add(len(step.accepted))
    assert accepted >= set(range(GAMMA)) and rejected >= set(range(GAMMA))


@pytest.mark.parametrize("kind", ["model", "one-hot"])
def test_speculative_sampling_keeps_the_target_distribution_at_every_position(kind):
    assert p_value(replies(kind)) > ALPHA


@pytest.mark.parametrize("kind", ["model", "one-hot"])
def test_the_check_catches_a_verify_row_shifted_by_one(kind):
    assert p_value(replies(kind, wrap=ShiftedRows)) < ALPHA
