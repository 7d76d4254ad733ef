"""Structured output: the speculative step under a grammar is the grammar-constrained target,
exactly: greedy replies equal constrained plain decoding whatever the draft holds (forbidden
tokens included), and sampled tokens follow the masked target distribution (chi-square, with
a negative control that cuts a forbidden draft token and then draws from p instead of the
residual it leaves)."""

from __future__ import annotations

import numpy as np

from draftlight.engine.core.sampling import SamplingParams, sample, to_probs
from draftlight.engine.step.drafters import Draft
from draftlight.engine.step.speculative import speculative_step
from tests.support.chi_square import chi_square_sf, pearson
from tests.support.fake_backend import FakeBackend, constant_logits, markov_logits
from tests.support.fake_grammar import FakeGrammar, every_third

VOCAB = 12
GREEDY = SamplingParams(temperature=0.0)
PROMPT = [1, 2, 3]


def decode(drafter, gamma: int, n_tokens: int, params=GREEDY, seed=0):
    target = FakeBackend(VOCAB, markov_logits(VOCAB, salt=5))
    target.eval(PROMPT[:-1], n_logits=0)
    grammar, rng, out, last = FakeGrammar(every_third(VOCAB)), np.random.default_rng(seed), [], PROMPT[-1]
    while len(out) < n_tokens:
        step = speculative_step(target, drafter, last, gamma, params, rng, grammar)
        out += [*step.accepted, step.token]
        last = step.token
    assert grammar.accepted == out  # the real grammar advanced over exactly the kept tokens
    return out[:n_tokens]


class UnconstrainedGreedy:
    """Drafts the target's own unmasked argmax continuation: often a token the grammar forbids."""

    def __init__(self) -> None:
        self.fn = markov_logits(VOCAB, salt=5)

    def propose(self, context, max_tokens, params, rng):
        prefix, tokens = tuple(context), []
        for _ in range(max_tokens):
            tokens.append(int(np.argmax(self.fn(prefix))))
            prefix += (tokens[-1],)
        return Draft(tokens)


class RandomTokens:
    def propose(self, context, max_tokens, params, rng):
        return Draft([int(t) for t in np.random.default_rng(len(context)).integers(0, VOCAB, max_tokens)])


def test_plain_constrained_decoding_keeps_to_the_grammar():
    out = decode(None, 0, 40)
    assert all((t + n) % 3 != 0 for n, t in enumerate(out))


def test_greedy_speculation_equals_constrained_plain_decoding():
    plain = decode(None, 0, 60)
    for drafter in (UnconstrainedGreedy(), RandomTokens()):
        for gamma in (1, 3, 6):
            assert decode(drafter, gamma, 60) == plain


def test_a_forbidden_draft_token_is_cut_before_the_pass():
    target = FakeBackend(VOCAB, constant_logits(np.full(VOCAB, 1 / VOCAB)))
    target.eval(PROMPT[:-1], n_logits=0)

    class Scripted:  # 4 is allowed first (4 % 3), 5 is not second ((5 + 1) % 3 == 0)
        def propose(self, context, max_tokens, params, rng):
            return Draft([4, 5, 7])

    grammar = FakeGrammar(every_third(VOCAB))
    step = speculative_step(target, Scripted(), PROMPT[-1], 3, GREEDY, np.random.default_rng(),
                            grammar)
    assert target.evaluated == len(PROMPT) + 1  # last token and d_1 only: d_2, d_3 never ran
    assert step.drafted == 3 and len(step.accepted) <= 1
    assert grammar.accepted == [*step.accepted, step.token]


# --- sampling --------------------------------------------------------------------------------

P = np.array([0.20, 0.17, 0.15, 0.13, 0.11, 0.09, 0.08, 0.07])
Q = np.array([0.02, 0.03, 0.05, 0.30, 0.05, 0.05, 0.45, 0.05])  # mass on what the grammar forbids
FORBIDDEN = {0: frozenset({3, 6}), 1: frozenset({0, 4})}
TRIALS = 6000


def masked_p(position: int) -> np.ndarray:
    p = P.copy()
    p[list(FORBIDDEN.get(position, ()))] = 0.0
    return p / p.sum()


class SampledDraft:
    """Draws its draft from Q at every position (as a draft model would), with its rows."""

    def __init__(self, cut_itself: bool = False) -> None:
        self.cut_itself = cut_itself  # the negative control: drops forbidden tokens itself

    def propose(self, context, max_tokens, params, rng):
        tokens = [sample(Q, rng) for _ in range(max_tokens)]
        if self.cut_itself:
            n = len(context) - len(PROMPT)
            for i, t in enumerate(tokens):
                if t in FORBIDDEN.get(n + i, ()):
                    tokens = tokens[:i]
                    break
        return Draft(tokens, np.tile(Q, (len(tokens), 1)) if tokens else None)


def first_two_tokens(drafter) -> np.ndarray:
    rng = np.random.default_rng(2026)
    params = SamplingParams(temperature=1.0)
    found = np.zeros((2, len(P)), dtype=int)
    for _ in range(TRIALS):
        target = FakeBackend(len(P), constant_logits(P))
        target.eval(PROMPT[:-1], n_logits=0)
        grammar = FakeGrammar(lambda n: FORBIDDEN.get(n, frozenset()))
        out, last = [], PROMPT[-1]
        while len(out) < 2:
            step = speculative_step(target, drafter, last, 2, params, rng, grammar)
            out += [*step.accepted, step.token]
            last = step.token
        found[0, out[0]] += 1
        found[1, out[1]] += 1
    return found


def worst_p_value(found: np.ndarray) -> float:
    return min(chi_square_sf(*pearson(found[i], masked_p(i))) for i in range(2))


def test_sampled_tokens_follow_the_masked_target_distribution():
    assert np.allclose(to_probs(np.log(P), SamplingParams(temperature=1.0))[0], P)
    assert worst_p_value(first_two_tokens(SampledDraft())) > 1e-3


def test_negative_control_cut_then_draw_from_p_is_caught():
    assert worst_p_value(first_two_tokens(SampledDraft(cut_itself=True))) < 1e-6
