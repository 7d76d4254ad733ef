"""The check that sampled speculation keeps the target's distribution (see
tests/engine/step/test_lossless_sampling.py): a target whose next-token distribution is the same
after every prefix, the tokens a drafter's replies emit at each position, and a chi-square over
them."""

from __future__ import annotations

import numpy as np

from draftlight.engine.core.sampling import SamplingParams
from draftlight.engine.step.speculative import speculative_step
from tests.support.chi_square import CHI2_CRITICAL_P001
from tests.support.fake_backend import FakeBackend, constant_logits

# The target's next-token distribution is the same after every prefix, so the token emitted at
# any position must follow EXPECTED.
P = np.array([0.11, 0.14, 0.36, 0.13, 0.10, 0.07, 0.05, 0.04])
PARAMS = SamplingParams(temperature=0.9, top_k=7, top_p=0.93, min_p=0.18)
POSITIONS = 4  # emitted tokens checked per run: first, second, ... drafted or not
TRIALS = 4_000
# A prompt that repeats itself: n-gram lookup finds long matches and auto drafts from them.
NGRAM_PROMPT = [2, 2, 2, 3] * 4 + [2, 2]


def expected_distribution() -> np.ndarray:
    """PARAMS applied to P by hand (P is not sorted; the filters act on its ranking)."""
    tempered = P ** (1 / PARAMS.temperature)
    tempered /= tempered.sum()
    order = np.argsort(-tempered)
    keep = np.zeros(len(P), bool)
    keep[order[:PARAMS.top_k]] = True
    mass = tempered * keep / (tempered * keep).sum()
    cumulative = np.cumsum(mass[order])
    cut = int(np.searchsorted(cumulative, PARAMS.top_p)) + 1  # smallest prefix with ≥ top_p
    keep[order[cut:]] = False
    keep &= tempered >= PARAMS.min_p * tempered.max()
    out = tempered * keep
    return out / out.sum()


EXPECTED = expected_distribution()


def chi_square(tokens: np.ndarray) -> tuple[float, int]:
    """(statistic, degrees of freedom) of `tokens` against EXPECTED; a token outside the
    support counts as an infinite deviation."""
    counts = np.bincount(tokens, minlength=len(P))
    support = EXPECTED > 0
    if counts[~support].any():
        return float("inf"), int(support.sum()) - 1
    expected = EXPECTED[support] * len(tokens)
    return float(((counts[support] - expected) ** 2 / expected).sum()), int(support.sum()) - 1


def emitted(make_auto, prompt, trials=TRIALS, seed=2024, step_fn=speculative_step) -> np.ndarray:
    """Tokens at positions 0..POSITIONS-1 of `trials` independent replies (one per row), each
    generated the way Engine.generate does with auto mode."""
    rng = np.random.default_rng(seed)
    out = np.empty((trials, POSITIONS), dtype=int)
    target = FakeBackend(len(P), constant_logits(P))
    for trial in range(trials):
        auto = make_auto()
        target.truncate(0)
        target.eval(prompt[:-1], n_logits=0)
        last, tokens = prompt[-1], []
        while len(tokens) < POSITIONS:
            step = step_fn(target, auto, last, 8, PARAMS, rng)
            auto.observe(step.drafted, len(step.accepted), step.token)
            tokens += step.accepted + [step.token]
            last = step.token
        out[trial] = tokens[:POSITIONS]
    return out


def worst_position(tokens: np.ndarray) -> float:
    """The largest chi-square over the positions, scaled by its critical value (≥ 1: biased)."""
    worst = 0.0
    for position in range(POSITIONS):
        statistic, df = chi_square(tokens[:, position])
        worst = max(worst, statistic / CHI2_CRITICAL_P001[df])
    return worst
