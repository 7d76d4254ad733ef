"""Sampled speculation keeps the target's distribution exactly, through auto mode itself.

Every emitted token, at every position, must be distributed as the target's transformed
distribution (temperature, top-k, top-p, min-p), whatever auto mode decides to draft. The
decisions may depend on everything drafted so far but never on the value of the token about to
be verified; each test has a negative control that breaks exactly that (or the one-hot residual
for n-gram drafts) and must be caught by the same chi-square check.
"""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import ModelDrafter, NgramDrafter
from draftlight.engine.core.sampling import sample, to_probs
from draftlight.engine.step.speculative import speculative_step
from tests.support.fake_backend import FakeBackend, constant_logits
from tests.support.lossless import (EXPECTED, NGRAM_PROMPT, P, PARAMS, POSITIONS, emitted,
                                    worst_position)

# The target's next-token distribution is P (tests/support/lossless.py) after every prefix; the
# draft believes something close but different.
Q = np.array([0.06, 0.08, 0.50, 0.16, 0.09, 0.06, 0.03, 0.02])
# A GPU-like cost curve (a pass over k tokens costs about one) and a draft at a fifth of the
# target's cost: auto drafts several tokens and its break-even rule decides where to stop.
FLAT_COSTS = BatchCosts({1: 1.0, 2: 1.02, 3: 1.04, 4: 1.06, 5: 1.08, 6: 1.1, 8: 1.15, 16: 1.4},
                       0.01)


def test_the_filters_all_matter_here():
    """Each filter removes something from the target's distribution (else the test would not
    cover it), and to_probs agrees with the hand computation."""
    support = np.count_nonzero(EXPECTED)
    assert support == 5  # top-k drops one token, top-p one more, min-p a third
    assert np.allclose(to_probs(np.log(P), PARAMS)[0], EXPECTED)


# --- auto with a draft model ----------------------------------------------------------------

class OldRuleModelDrafter(ModelDrafter):
    """The rule before the fix: draw d_{i+1}, multiply ITS probability in, then maybe drop it."""

    def propose(self, context, max_tokens, params, rng):
        from draftlight.engine.core.backend import sync_cache
        from draftlight.engine.step.drafters import Draft
        sync_cache(self.backend, context[:-1])
        token, tokens, rows, cumulative = context[-1], [], [], 1.0
        for _ in range(max_tokens):
            row = to_probs(self.backend.eval([token], n_logits=1)[0], params)[0]
            token = sample(row, rng)
            cumulative *= float(row[token])
            if tokens and self.keep_going is not None and not self.keep_going(len(tokens),
                                                                                cumulative):
                break
            tokens.append(token)
            rows.append(row)
        return Draft(tokens, np.stack(rows))


def draft_model_auto(drafter_class):
    def make():
        drafter = drafter_class(FakeBackend(len(Q), constant_logits(Q)), len(P))
        candidate = Candidate(drafter, cost_per_token=0.2, max_tokens=6)
        candidate.model.record(12, rejected=False)  # it has been right lately: auto drafts
        return AdaptiveDrafter(FLAT_COSTS, [candidate])
    return make


def draft_lengths(make_auto, prompt, steps=300, seed=5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    target = FakeBackend(len(P), constant_logits(P))
    target.eval(prompt[:-1], n_logits=0)
    auto, last, lengths = make_auto(), prompt[-1], []
    for _ in range(steps):
        step = speculative_step(target, auto, last, 8, PARAMS, rng)
        auto.observe(step.drafted, len(step.accepted), step.token)
        lengths.append(step.drafted)
        last = step.token
    return np.array(lengths)


def test_auto_with_a_draft_model_drafts_several_lengths_here():
    """The setting exercises the break-even stop: drafts of different lengths, not all one."""
    lengths = draft_lengths(draft_model_auto(ModelDrafter), [0, 1])
    assert lengths.max() >= 3 and len(set(lengths.tolist())) >= 3


def test_auto_with_a_draft_model_keeps_the_target_distribution():
    tokens = emitted(draft_model_auto(ModelDrafter), [0, 1])
    assert worst_position(tokens) < 1.0


def test_the_check_catches_a_stop_rule_that_looks_at_the_drawn_token():
    tokens = emitted(draft_model_auto(OldRuleModelDrafter), [0, 1])
    assert worst_position(tokens) > 1.0


# --- auto with n-gram lookup ------------------------------------------------------------------

def ngram_auto():
    return AdaptiveDrafter(FLAT_COSTS, [Candidate(NgramDrafter(3, 2), 0.0, 8)])


def test_auto_with_ngram_drafts_here():
    lengths = draft_lengths(ngram_auto, NGRAM_PROMPT, steps=4)
    assert lengths[0] >= 3  # the long match at the start of the reply is drafted


def test_auto_with_ngram_keeps_the_target_distribution():
    tokens = emitted(ngram_auto, NGRAM_PROMPT)
    assert worst_position(tokens) < 1.0


def test_the_check_catches_an_ngram_residual_that_keeps_the_rejected_token():
    """One-hot q: after rejecting x the correction must come from p without x. Drawing it from
    p itself (x included) is the one-hot form of a missing residual."""

    def step_without_residual(target, drafter, last, gamma, params, rng):
        step = speculative_step(target, drafter, last, gamma, params, rng)
        if len(step.accepted) < step.drafted:
            step.token = sample(EXPECTED, rng)
        return step

    tokens = emitted(ngram_auto, NGRAM_PROMPT, step_fn=step_without_residual)
    assert worst_position(tokens) > 1.0


@pytest.mark.parametrize("position", range(POSITIONS))
def test_each_position_is_checked(position):
    """Drafted tokens reach every checked position in the n-gram runs (else a position's
    check would only ever see the target's own tokens)."""
    rng = np.random.default_rng(1)
    target = FakeBackend(len(P), constant_logits(P))
    sources = []
    for _ in range(200):
        auto = ngram_auto()
        target.truncate(0)
        target.eval(NGRAM_PROMPT[:-1], n_logits=0)
        step = speculative_step(target, auto, NGRAM_PROMPT[-1], 8, PARAMS, rng)
        sources.append(len(step.accepted) > position)
    assert any(sources)
