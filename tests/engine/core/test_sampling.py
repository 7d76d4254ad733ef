"""The vectorised logits → probabilities transform gives the same distribution as the plain
row-by-row implementation it replaced (kept here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.core.sampling import SamplingParams, sample, softmax, to_probs


def reference_to_probs(logits, params):
    """The implementation before vectorising: a Python loop over rows, a full stable argsort."""
    logits = np.atleast_2d(logits)
    if params.greedy:
        out = np.zeros(logits.shape, dtype=np.float64)
        out[np.arange(len(logits)), logits.argmax(axis=-1)] = 1.0
        return out
    probs = softmax(logits / params.temperature)
    for row in probs:
        if params.top_k and params.top_k < row.size:
            # Exactly k: a stable sort by descending probability puts tied tokens in id order.
            row[np.argsort(-row, kind="stable")[params.top_k:]] = 0.0
        if params.top_p < 1.0:
            order = np.argsort(-row, kind="stable")
            cumulative = np.cumsum(row[order])
            keep = np.searchsorted(cumulative, params.top_p * cumulative[-1] * (1 - 1e-9)) + 1
            row[order[keep:]] = 0.0
        if params.min_p > 0.0:
            row[row < params.min_p * row.max()] = 0.0
        row /= row.sum()
    return probs


def assert_same(logits, params):
    ours, reference = to_probs(logits, params), reference_to_probs(logits, params)
    assert ours.shape == reference.shape
    assert np.array_equal(ours > 0, reference > 0), params  # the same tokens survive
    assert np.allclose(ours, reference, rtol=1e-9, atol=1e-12), params


def random_params(rng, n_vocab):
    return SamplingParams(temperature=float(rng.choice([0.0, 0.3, 0.8, 1.0, 1.7])),
                          top_k=int(rng.choice([0, 1, 3, 40, n_vocab, n_vocab + 5])),
                          top_p=float(rng.choice([1.0, 0.5, 0.9, 0.99])),
                          min_p=float(rng.choice([0.0, 0.05, 0.3])))


def test_agrees_with_the_reference_on_random_rows():
    rng = np.random.default_rng(0)
    for trial in range(400):
        n_vocab = int(rng.choice([2, 5, 50, 3000]))
        logits = rng.standard_normal((int(rng.integers(1, 6)), n_vocab)) * rng.choice([0.3, 3, 8])
        logits = logits.astype(np.float32)
        if trial % 5 == 0:  # many exact ties, which top-k and top-p must break the same way
            logits = np.round(logits)
        assert_same(logits, random_params(rng, n_vocab))


@pytest.mark.parametrize("params", [
    SamplingParams(temperature=0.8, top_k=40, top_p=0.9, min_p=0.05),
    SamplingParams(temperature=0.8, top_p=0.9),
    SamplingParams(temperature=1.2, top_p=0.95, min_p=0.02),
    SamplingParams(temperature=0.7, min_p=0.1),
    SamplingParams(temperature=1.0),
])
def test_agrees_with_the_reference_on_a_large_vocabulary(params):
    """151,936 tokens (Qwen); peaked rows like a language model's, and one flat row that makes
    the top-p search look through most of the vocabulary."""
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((4, 151_936)).astype(np.float32)
    logits[:3] *= 2.5
    logits[:3, rng.integers(0, 151_936, 30)] += rng.uniform(6, 14, size=(3, 30)).astype(np.float32)
    assert_same(logits, params)


@pytest.mark.parametrize("top_p, min_p", [(1.0, 0.0), (0.99, 0.0), (1.0, 0.01)])
def test_top_k_keeps_exactly_k_tokens_and_breaks_ties_by_lowest_id(top_p, min_p):
    """Five tokens tie for second place: top-k = 3 keeps the best one and the two lowest ids of
    the tied five, not all six (as a `>= k-th value` cut would)."""
    logits = np.array([[0.0, 2.0, 5.0, 2.0, 2.0, -1.0, 2.0, 2.0]], dtype=np.float32)
    params = SamplingParams(temperature=1.0, top_k=3, top_p=top_p, min_p=min_p)
    probs = to_probs(logits, params)[0]
    assert np.flatnonzero(probs).tolist() == [1, 2, 3]
    assert probs[1] == probs[3] and np.isclose(probs.sum(), 1.0)
    # Every row of a batch keeps exactly k, whatever its ties; a flat row keeps ids 0..k-1.
    rng = np.random.default_rng(5)
    batch = np.round(rng.standard_normal((50, 30)) * 1.5).astype(np.float32)
    batch[0] = 0.0
    for k in (1, 4, 29):
        kept = to_probs(batch, SamplingParams(temperature=0.7, top_k=k)) > 0
        assert kept.sum(axis=1).tolist() == [k] * 50
        assert np.flatnonzero(kept[0]).tolist() == list(range(k))


def test_a_sampled_row_follows_its_probabilities():
    probs = to_probs(np.log(np.array([[0.5, 0.3, 0.15, 0.05]])), SamplingParams(temperature=1.0,
                                                                                  top_k=3))[0]
    rng = np.random.default_rng(4)
    counts = np.bincount([sample(probs, rng) for _ in range(20_000)], minlength=4) / 20_000
    assert counts[3] == 0 and np.allclose(counts[:3], probs[:3], atol=0.015)
