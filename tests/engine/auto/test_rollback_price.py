"""Auto mode prices a recurrent target's rollback (adaptive.AdaptiveDrafter.rollback_cost):
exact checks on scripted acceptance, no llama.cpp."""

from __future__ import annotations

import itertools

import pytest

from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import NgramDrafter

GPU_LIKE = {1: 1.0, 2: 1.05, 3: 1.1, 4: 1.15, 5: 1.2, 8: 1.3, 16: 1.6}


def auto_with(curve: BatchCosts, accepted_in_a_row: int, rejections: int) -> tuple:
    auto = AdaptiveDrafter(curve, [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    for _ in range(rejections):
        ngram.model.record(accepted_in_a_row, rejected=True)
    return auto, ngram


def brute_force_rollback(auto: AdaptiveDrafter, probabilities: list[float]) -> float:
    """R(γ) by enumerating every outcome of γ guesses, each right with its probability a_i:
    the copy before the pass, and after the first wrong guess at i (0-based), a restore and a
    pass over the i + 1 kept tokens."""
    measured, total = auto.costs.measured, 0.0
    for outcome in itertools.product((True, False), repeat=len(probabilities)):
        p = 1.0
        for right, a in zip(outcome, probabilities):
            p *= a if right else 1.0 - a
        wrong = [i for i, right in enumerate(outcome) if not right]
        if wrong:
            total += p * (measured.restore + auto.costs(wrong[0] + 1))
    return measured.checkpoint + total


@pytest.mark.parametrize("gamma", [1, 3, 6])
def test_the_rollback_price_is_the_expectation_over_where_the_first_guess_fails(gamma):
    curve = BatchCosts(dict(GPU_LIKE), 0.01, checkpoint=0.05, restore=0.3)
    auto, ngram = auto_with(curve, accepted_in_a_row=2, rejections=6)
    expected = ngram.model.expected_tokens(gamma)
    # a_i from the model's own conditional estimates, as expected_tokens uses them
    probabilities = [ngram.model.p(ngram.model.streak + i) for i in range(gamma)]
    assert auto.rollback_cost(expected, gamma) == pytest.approx(
        brute_force_rollback(auto, probabilities), rel=1e-9)


def test_a_kv_cache_pays_nothing_for_rollback():
    auto, ngram = auto_with(BatchCosts(dict(GPU_LIKE), 0.01), 2, 6)
    assert auto.rollback_cost(ngram.model.expected_tokens(8), 8) == 0.0


@pytest.mark.parametrize("streak, rejections", [(3, 6), (5, 12)])
def test_auto_drafts_less_when_every_rejection_costs_a_replay(streak, rejections):
    """The same acceptance on the same cost curve: with a KV cache auto drafts; when a
    rejection costs a restore and a pass over the kept tokens, it drafts shorter or not at
    all, and expects a lower rate."""
    free = BatchCosts(dict(GPU_LIKE), 0.01)
    replaying = BatchCosts(dict(GPU_LIKE), 0.01, checkpoint=0.1, restore=0.5)
    auto_free, ngram_free = auto_with(free, streak, rejections)
    auto_replay, ngram_replay = auto_with(replaying, streak, rejections)
    rate_free, gamma_free = auto_free.rate(ngram_free, 16)
    rate_replay, gamma_replay = auto_replay.rate(ngram_replay, 16)
    assert gamma_free >= 3
    assert gamma_replay < gamma_free
    assert rate_replay < rate_free


def test_long_sure_drafts_still_pay_on_a_replaying_target():
    replaying = BatchCosts(dict(GPU_LIKE), 0.01, checkpoint=0.1, restore=0.5)
    auto = AdaptiveDrafter(replaying, [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    ngram.model.record(40, rejected=False)  # copying a passage
    assert auto.rate(ngram, 16)[1] >= 7
