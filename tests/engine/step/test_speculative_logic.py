"""Exact tests of the speculative step on scripted logits (no model, fast)."""

from __future__ import annotations

import numpy as np
import pytest

from draftlight.engine.step.drafters import Draft, ModelDrafter, NgramDrafter
from draftlight.engine.core.sampling import SamplingParams, sample, to_probs
from draftlight.engine.step.speculative import speculative_step
from tests.support.fake_backend import FakeBackend, constant_logits, hashed_logits, markov_logits

VOCAB = 40
PROMPT = [1, 2, 3, 4, 5, 1, 2, 3]


def generate_tokens(target, drafter, gamma, params, n, seed=0, prompt=PROMPT):
    """Drive speculative_step the way Engine.generate does; return the emitted tokens."""
    rng = np.random.default_rng(seed)
    target.truncate(0)
    target.eval(prompt[:-1], n_logits=0)
    last, out = prompt[-1], []
    while len(out) < n:
        step = speculative_step(target, drafter, last, gamma, params, rng)
        out += step.accepted + [step.token]
        last = step.token
        # Rollback bookkeeping: the cache holds exactly the context minus the newest token.
        assert target.tokens == prompt + out[:-1]
    return out[:n]


class NoisyDraftLogits:
    """A draft that mostly agrees with the target: the target's logits plus noise."""

    def __init__(self, target_fn, scale):
        self.target_fn, self.scale = target_fn, scale

    def __call__(self, prefix):
        noise = np.random.default_rng(len(prefix) * 7919).normal(size=VOCAB) * self.scale
        return self.target_fn(prefix) + noise


@pytest.mark.parametrize("drafter_kind", ["model", "ngram"])
def test_greedy_speculation_is_token_identical_to_plain(drafter_kind):
    # Next-token logits depend on the last two tokens only: greedy output soon repeats itself,
    # so n-gram lookup has something to copy, and the draft model is a noisy copy of it.
    target_fn = markov_logits(VOCAB)
    target = FakeBackend(VOCAB, target_fn)
    params = SamplingParams(temperature=0.0)
    plain = generate_tokens(target, None, 0, params, 300)
    if drafter_kind == "model":
        drafter = ModelDrafter(FakeBackend(VOCAB, NoisyDraftLogits(target_fn, 2.0)), VOCAB)
    else:
        drafter = NgramDrafter(3, 1)
    target = FakeBackend(VOCAB, target_fn)
    speculative = generate_tokens(target, drafter, 4, params, 300)
    assert speculative == plain
    # And it really speculated: drafts were accepted, saving a good share of the passes.
    assert target.passes < 0.8 * 300


def test_self_draft_accepts_everything_and_saves_passes():
    target_fn = hashed_logits(VOCAB)
    target = FakeBackend(VOCAB, target_fn)
    drafter = ModelDrafter(FakeBackend(VOCAB, target_fn), VOCAB)
    rng = np.random.default_rng(0)
    target.eval(PROMPT[:-1], n_logits=0)
    step = speculative_step(target, drafter, PROMPT[-1], 5, SamplingParams(), rng)
    assert len(step.accepted) == 5 and step.drafted == 5
    assert len(target.tokens) == len(PROMPT) + 5  # last token + 5 drafts kept; bonus pending


def test_rollback_keeps_only_the_accepted_prefix_and_reuses_the_cache():
    target_fn = hashed_logits(VOCAB)
    target = FakeBackend(VOCAB, target_fn)
    draft_backend = FakeBackend(VOCAB, NoisyDraftLogits(target_fn, 4.0))
    drafter = ModelDrafter(draft_backend, VOCAB)
    params = SamplingParams()
    out = generate_tokens(target, drafter, 4, params, 200)
    # Each target pass evaluates at most gamma + 1 tokens; the context is never re-evaluated.
    assert target.evaluated <= len(PROMPT) - 1 + target.passes * 5
    # The draft's cache is always a prefix of the context plus its own last guesses, and it
    # never evaluated much more than one token per drafted token plus the corrections.
    context = PROMPT + out
    common = 0
    while common < len(draft_backend.tokens) and draft_backend.tokens[common] == context[common]:
        common += 1
    assert common >= len(context) - 6
    assert draft_backend.evaluated <= len(PROMPT) + 2 * target.passes * 5


def test_rejection_truncates_target_cache_to_accepted_prefix():
    # Target always prefers token 7; the drafter proposes 7, 7, 3, 7: the third is rejected.
    target = FakeBackend(VOCAB, lambda prefix: np.eye(VOCAB)[7] * 10)

    class Scripted:
        def propose(self, context, max_tokens, params, rng):
            return Draft([7, 7, 3, 7][:max_tokens])

    target.eval([1, 2], n_logits=0)
    step = speculative_step(target, Scripted(), 9, 4, SamplingParams(), np.random.default_rng())
    assert step.accepted == [7, 7] and step.token == 7 and step.drafted == 4
    assert target.tokens == [1, 2, 9, 7, 7]


# --- speculative sampling keeps the target's distribution ------------------------------------

P = np.array([0.30, 0.25, 0.20, 0.13, 0.08, 0.04])
Q = np.array([0.04, 0.08, 0.13, 0.20, 0.25, 0.30])  # the draft's belief: very different from P
CHI2_CRITICAL_DF5_P001 = 20.515  # chi-square, 5 degrees of freedom, 0.1% significance
DRAWS = 20_000


def chi_square(tokens, probs):
    counts = np.bincount(tokens, minlength=len(probs))
    expected = probs * len(tokens)
    return float(((counts - expected) ** 2 / expected).sum())


def sampled_tokens(step_fn, draws=DRAWS, gamma=2):
    """First and second token emitted by each of `draws` independent steps."""
    target = FakeBackend(len(P), constant_logits(P))
    drafter = ModelDrafter(FakeBackend(len(Q), constant_logits(Q)), len(P))
    params = SamplingParams(temperature=1.0)
    rng = np.random.default_rng(1234)
    first, second = [], []
    for _ in range(draws):
        target.truncate(0)
        target.eval([0], n_logits=0)
        step = step_fn(target, drafter, 1, gamma, params, rng)
        emitted = step.accepted + [step.token]
        first.append(emitted[0])
        if len(emitted) > 1:
            second.append(emitted[1])
    return np.array(first), np.array(second)


def test_speculative_sampling_reproduces_the_target_distribution():
    first, second = sampled_tokens(speculative_step)
    assert chi_square(first, P) < CHI2_CRITICAL_DF5_P001
    assert len(second) > 1000 and chi_square(second, P) < CHI2_CRITICAL_DF5_P001


def test_the_distribution_test_catches_a_missing_residual():
    """Resampling from p (instead of the residual) after a rejection biases the output; the
    chi-square check above must see it, or it would prove nothing."""

    def step_without_residual(target, drafter, last, gamma, params, rng):
        step = speculative_step(target, drafter, last, gamma, params, rng)
        if len(step.accepted) < step.drafted:  # a rejection: redraw the correction from p
            step.token = sample(P, rng)
        return step

    first, _ = sampled_tokens(step_without_residual)
    assert chi_square(first, P) > CHI2_CRITICAL_DF5_P001


def test_one_hot_drafts_keep_the_target_distribution():
    """n-gram drafts are one-hot q: accept with p(x), else sample p without x."""
    target = FakeBackend(len(P), constant_logits(P))

    class AlwaysZero:
        def propose(self, context, max_tokens, params, rng):
            return Draft([0] * max_tokens)

    rng = np.random.default_rng(99)
    first = []
    for _ in range(DRAWS):
        target.truncate(0)
        target.eval([0], n_logits=0)
        step = speculative_step(target, AlwaysZero(), 1, 1, SamplingParams(temperature=1.0), rng)
        first.append((step.accepted + [step.token])[0])
    assert chi_square(np.array(first), P) < CHI2_CRITICAL_DF5_P001


def test_a_seed_makes_sampled_speculation_reproducible():
    target_fn = hashed_logits(VOCAB)
    params = SamplingParams(temperature=0.8, top_p=0.95, seed=7)

    def run(seed):
        drafter = ModelDrafter(FakeBackend(VOCAB, NoisyDraftLogits(target_fn, 1.0)), VOCAB)
        return generate_tokens(FakeBackend(VOCAB, target_fn), drafter, 3, params, 100, seed)

    assert run(7) == run(7)
    assert run(7) != run(8)


# --- parts -----------------------------------------------------------------------------------

def test_ngram_drafter_proposes_what_followed_the_latest_match():
    drafter = NgramDrafter(max_ngram=3, min_ngram=2)
    context = [5, 6, 7, 8, 9, 1, 6, 7, 3, 4, 0, 6, 7]
    assert drafter.propose(context, 3).tokens == [3, 4, 0]  # latest "6 7" is followed by 3 4 0
    assert drafter.propose([1, 2, 3, 4], 3).tokens == []


def test_ngram_drafter_copies_the_occurrence_that_matches_longest():
    drafter = NgramDrafter(max_ngram=2, min_ngram=2)
    #          the passage being copied ...   a later, shorter match     the copy so far
    context = [8, 1, 2, 3, 4, 6, 7, 20, 21,   5, 6, 7, 30, 31,          1, 2, 3, 4, 6, 7]
    draft = drafter.propose(context, 2)
    assert draft.tokens == [20, 21]
    assert draft.match_length == 6  # "1 2 3 4 6 7" precedes both


def test_ngram_drafter_says_whether_the_occurrences_it_chose_from_agree():
    drafter = NgramDrafter(max_ngram=2, min_ngram=2)
    assert drafter.propose([6, 7, 1, 0, 6, 7], 1).continuations == "one"
    assert drafter.propose([6, 7, 1, 0, 6, 7, 1, 0, 6, 7], 1).continuations == "agree"
    split = drafter.propose([6, 7, 1, 0, 6, 7, 2, 0, 6, 7], 1)
    assert split.continuations == "split" and split.tokens == [2]  # the latest of equals


def reference_ngram(context, max_tokens, max_ngram, min_ngram):
    """Brute force: every earlier occurrence, longest preceding match, latest among equals."""
    for n in range(max_ngram, min_ngram - 1, -1):
        if len(context) <= n:
            continue
        suffix = context[-n:]
        starts = [p for p in range(n, len(context)) if context[p - n:p] == suffix]
        if not starts:
            continue
        def match(p):
            length = 0
            while (length < min(p, 64)
                   and context[p - 1 - length] == context[len(context) - 1 - length]):
                length += 1
            return length
        best = max(starts[-32:], key=lambda p: (match(p), p))
        return context[best:best + max_tokens], match(best)
    return [], 0


def test_incremental_ngram_index_agrees_with_brute_force():
    rng = np.random.default_rng(3)
    drafter = NgramDrafter(max_ngram=3, min_ngram=1)
    context: list[int] = []
    for step in range(400):
        if step % 97 == 96:  # a new conversation: the context is not an extension
            context = context[:len(context) // 2] + [int(rng.integers(6))]
        context += rng.integers(6, size=int(rng.integers(1, 4))).tolist()
        draft = drafter.propose(context, 5)
        assert (draft.tokens, draft.match_length) == reference_ngram(context, 5, 3, 1)


def test_a_new_reply_compares_its_whole_context_and_a_step_only_the_newest_tokens():
    """Within a reply a step's context is the last one and a few tokens: only the newest
    indexed tokens are compared (O(1) a step). A new reply (the engine sets `regions`) compares
    the whole context, so an earlier message edited in place (same length) is indexed anew."""
    drafter = NgramDrafter(max_ngram=3, min_ngram=2)
    old = [1, 2, 3, 4, 5, 6, 7, 8] + list(range(100, 200)) + [1, 2]
    assert drafter.propose(old, 3).tokens == [3, 4, 5]
    edited = [1, 2, 9, 9, 9, 6, 7, 8] + list(range(100, 200)) + [1, 2]  # same length
    drafter.regions = (0, len(edited))  # a reply begins
    assert drafter.propose(edited, 3).tokens == [9, 9, 9]
    grown = edited + [9]  # a step: the newest tokens agree, the index is extended
    assert drafter.propose(grown, 3).tokens == [9, 9, 6]
    not_an_extension = grown[:-3] + [5, 5, 5, 1, 2]  # the newest indexed tokens differ
    assert drafter.propose(not_an_extension, 3).tokens == [9, 9, 9]


def test_transform_filters():
    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    assert to_probs(logits, SamplingParams(temperature=0.0)).tolist() == [[1, 0, 0, 0]]
    top_k = to_probs(logits, SamplingParams(temperature=1.0, top_k=2))[0]
    assert np.allclose(top_k, [0.5 / 0.8, 0.3 / 0.8, 0, 0])
    top_p = to_probs(logits, SamplingParams(temperature=1.0, top_p=0.8))[0]
    assert np.allclose(top_p, [0.5 / 0.8, 0.3 / 0.8, 0, 0])
    min_p = to_probs(logits, SamplingParams(temperature=1.0, min_p=0.2))[0]
    assert np.allclose(min_p, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0])


# --- auto mode -------------------------------------------------------------------------------

def cpu_like_costs():
    from draftlight.engine.auto.costs import BatchCosts
    return BatchCosts({1: 1.0, 2: 1.6, 3: 2.1, 4: 2.7, 5: 3.2, 8: 4.3, 16: 8.6}, 0.015)


def test_auto_drafts_long_when_acceptance_is_high_and_not_at_all_when_low():
    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    auto = AdaptiveDrafter(cpu_like_costs(), [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    ngram.model.record(40, rejected=False)  # a long run of right guesses: copying
    assert auto.rate(ngram, 16)[1] >= 7
    for _ in range(30):  # then guesses keep failing at once
        ngram.model.record(0, rejected=True)
    assert auto.rate(ngram, 16) == (1.0, 0)  # plain decoding is best


def test_auto_never_uses_a_draft_model_that_cannot_pay():
    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    slow = Candidate(ModelDrafter(FakeBackend(VOCAB, hashed_logits(VOCAB)), VOCAB), 1.0, 8)
    auto = AdaptiveDrafter(cpu_like_costs(), [Candidate(NgramDrafter(), 0.0, 16), slow])
    assert slow not in auto.candidates


def test_auto_learns_from_free_ngram_observations_and_stays_lossless():
    """On a repetitive sequence auto starts drafting; the output equals plain decoding."""
    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    period = [3, 9, 4, 12, 7, 1, 30, 22, 5, 17]

    def cyclic(prefix):  # the target continues a fixed cycle: perfectly copyable
        logits = np.zeros(VOCAB)
        logits[period[(period.index(prefix[-1]) + 1) % len(period)]] = 5.0
        return logits

    plain = generate_tokens(FakeBackend(VOCAB, cyclic), None, 0, SamplingParams(), 200,
                            prompt=period * 2)
    auto = AdaptiveDrafter(cpu_like_costs(), [Candidate(NgramDrafter(), 0.0, 16)])
    target = FakeBackend(VOCAB, cyclic)
    rng = np.random.default_rng(0)
    target.eval((period * 2)[:-1], n_logits=0)
    last, out = period[-1], []
    while len(out) < 200:
        step = speculative_step(target, auto, last, 16, SamplingParams(), rng)
        auto.observe(step.drafted, len(step.accepted), step.token)
        out += step.accepted + [step.token]
        last = step.token
    assert out[:200] == plain
    assert target.passes < 60  # long drafts once it saw that guesses are right


def test_online_costs_follow_the_passes_that_really_ran():
    from draftlight.engine.auto.costs import BatchCosts, OnlineCosts
    online = OnlineCosts(BatchCosts({1: 1.0, 2: 1.5, 4: 2.5, 8: 4.0, 16: 8.0}, 0.010))
    assert online(2) == 1.5  # nothing seen yet: the curve measured at load
    # In use a 2-token pass costs two 1-token passes. Drafting happens at a long context where
    # every pass is slow, then plain decoding goes on at a short one: v(2) is 2 at both.
    for _ in range(12):
        online.observe(1, 0.030)
        online.observe(2, 0.060)
    for _ in range(40):
        online.observe(1, 0.010)
    assert online(2) == pytest.approx(2.0)
    assert online.token_seconds == pytest.approx(0.010)
    assert online(4) == pytest.approx(2.5 * 2.0 / 1.5)  # unseen k: the correction of k = 2
    assert online(20) == pytest.approx(8.0 * 2.0 / 1.5 + 2.0)  # beyond: the measured slope
    values = [online(k) for k in range(1, 25)]
    assert values == sorted(values)


def test_auto_stops_one_token_drafts_that_cost_more_than_measured():
    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    from draftlight.engine.auto.costs import BatchCosts
    optimistic = BatchCosts({1: 1.0, 2: 1.5, 4: 3.8, 16: 16.0}, 0.010)
    auto = AdaptiveDrafter(optimistic, [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    ngram.model.record(40, rejected=False)  # guesses are nearly always right
    assert auto.rate(ngram, 1)[1] == 1  # at v(2) = 1.5 a 1-token draft pays
    for _ in range(12):
        auto.observe(0, 0, token=1, verify_seconds=0.010)
        auto.observe(1, 1, token=1, verify_seconds=0.021)  # but it really costs 2.1 passes
    assert auto.rate(ngram, 1) == (1.0, 0)


def test_auto_drafts_only_lengths_whose_pass_it_has_timed():
    """A 17-token pass is not 'v(16) plus a bit' on a CPU that verifies in blocks of 4."""
    from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
    from draftlight.engine.auto.costs import BatchCosts
    blocky = BatchCosts({1: 1.0, 2: 1.76, 3: 2.38, 4: 2.61, 5: 3.44, 8: 5.2, 16: 8.64}, 0.05)
    auto = AdaptiveDrafter(blocky, [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    ngram.model.record(200, rejected=False)  # certain copying
    assert auto.lengths(16) == [1, 2, 3, 4, 7, 15]
    assert auto.rate(ngram, 16)[1] == 15  # not 16: a 17-token pass was never timed
    assert auto.rate(ngram, 6)[1] == 3  # 4 tokens cost 2.61 passes, 5 cost 3.44


def test_auto_is_cautious_where_it_has_seen_little():
    """Two drafters right 9 times in 10 in every situation, one seen 10 times per situation and
    one 1000 times: the first gets a lower (cautious) acceptance estimate and drafts less."""
    from draftlight.engine.auto.adaptive import BUCKET_EDGES, AcceptanceModel, AdaptiveDrafter, Candidate
    auto = AdaptiveDrafter(cpu_like_costs(), [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    few, many = AcceptanceModel(), AcceptanceModel()
    for model, n in ((few, 10), (many, 1000)):
        model.hits, model.trials = [0.9 * n] * len(BUCKET_EDGES), [float(n)] * len(BUCKET_EDGES)
    for streak in (0, 3, 10, 40):
        assert few.mean(streak) - few.p(streak) > 2 * (many.mean(streak) - many.p(streak)) > 0
    ngram.model = few
    cautious = auto.rate(ngram, 16)
    ngram.model = many
    confident = auto.rate(ngram, 16)
    assert confident[1] > cautious[1] and confident[0] > cautious[0]


def test_a_costly_drafter_is_charged_what_it_really_costs_and_probed_within_budget():
    """A cross-vocabulary draft re-reads the context it missed before each probe: that, not the
    single pass timed at load, is what it costs. Auto learns it, and where the draft never pays
    its probes after the first take at most 1/PROBE_PATIENCE of the time, the extra token each
    probe's pass verifies counted (once left out: a quick draft's probes took 1.4 times the budget),
    and the first waits for a guess of the price (it came after 32 steps whatever it cost).
    """
    from draftlight.engine.auto.adaptive import PROBE_PATIENCE, AdaptiveDrafter, Candidate
    from draftlight.engine.step.drafters import Draft

    class Slow:  # proposes one wrong token; costs are reported by the test as observe() would
        def propose(self, context, max_tokens, params=None, rng=None):
            return Draft([999][:max_tokens])

    costs = cpu_like_costs()

    first_at = []  # the run's time when its first probe came

    def run(catch_up_seconds: float, steps: int) -> tuple[list[float], float, float]:
        """(each probe's price, the run's time, the price auto.probe_seconds reported)."""
        auto = AdaptiveDrafter(costs, [Candidate(Slow(), 0.1, 8)])
        probes, run_seconds, reported = [], 0.0, 0.0
        for _ in range(steps):
            drafted = len(auto.propose([1, 2, 3], 8, SamplingParams(), None).tokens)
            seconds = catch_up_seconds if drafted else 0.0
            verify = costs.token_seconds * (costs(2) if drafted else 1.0)
            if drafted:  # its drafting, and its pass's extra token
                first_at.extend([] if probes else [run_seconds])
                probes.append(seconds + verify - costs.token_seconds)
            run_seconds += verify + seconds
            auto.observe(drafted, 0, token=1, verify_seconds=verify, draft_seconds=seconds)
            reported += auto.probe_seconds  # what the reply's Stats.probe_seconds adds up
        return probes, run_seconds, reported

    # a probe that catches up over 13 target passes' worth of context, and one that drafts
    # quickly, where the pass's extra token is a third of the price (counted too)
    for catch_up, steps in ((0.2, 3000), (0.02, 20000)):
        probes, total, reported = run(catch_up, steps)
        # after the first probe (which finds out what a probe costs), within the budget
        assert probes[0] > catch_up and sum(probes[1:]) <= total / PROBE_PATIENCE
        # and the price the bench reports is the probes' drafting and their passes' extra token
        assert reported == pytest.approx(sum(probes))
        # the first waits too, for a probe's price as guessed before any: two drafted tokens
        # (0.1 passes each) and the pass's extra token (v(2) - 1)
        guess = costs.token_seconds * (2 * 0.1 + costs(2) - 1.0)
        assert first_at[-1] >= PROBE_PATIENCE * guess
    # One step that caught up with a long prompt does not rule the draft out...
    fresh = Candidate(Slow(), 0.1, 8)
    auto = AdaptiveDrafter(costs, [fresh])
    auto._chosen, auto._probing = fresh, False
    auto.observe(4, 3, token=1, verify_seconds=0.04, draft_seconds=0.6)  # 10 passes a token
    assert fresh.cost_per_token == pytest.approx(0.1)
    # ... but drafting that keeps costing 0.5 target passes a token is charged 0.5
    for _ in range(20):
        auto.observe(4, 3, token=1, verify_seconds=0.04, draft_seconds=0.03)
    assert fresh.cost_per_token == pytest.approx(0.5)


def test_a_change_of_text_lowers_the_estimate_at_once_and_luck_never_raises_it():
    """A session of copying taught auto that a 4-token match is right 80% of the time; the text
    then turns to arithmetic, where such matches fail. A handful of misses stops the drafts
    (the session's counts alone would need hundreds), and a run of lucky hits in a bucket does
    not lift the estimate above the session's."""
    from draftlight.engine.auto.adaptive import BUCKET_EDGES, AcceptanceModel, AdaptiveDrafter, Candidate
    auto = AdaptiveDrafter(cpu_like_costs(), [Candidate(NgramDrafter(), 0.0, 16)])
    ngram = auto.candidates[0]
    ngram.model.hits = [0.8 * 500] * len(BUCKET_EDGES)
    ngram.model.trials = [500.0] * len(BUCKET_EDGES)
    ngram.evidence = 4
    assert auto.rate(ngram, 16)[1] >= 1  # copying: drafting pays
    for _ in range(6):  # arithmetic: every guess after a 4-token match is wrong
        ngram.model.record(0, rejected=True, evidence=4)
    assert ngram.model.session_mean(4) > 0.78  # the session's counts have hardly moved...
    assert ngram.model.mean(4) < 0.45  # ... the recent ones have
    assert auto.rate(ngram, 16) == (1.0, 0)
    lucky = AcceptanceModel([0.5 * 500] * len(BUCKET_EDGES), [500.0] * len(BUCKET_EDGES))
    for _ in range(20):
        lucky.record(3, rejected=False, evidence=4)  # right every time lately
        lucky.streak = 0
    assert lucky.mean(4) == lucky.session_mean(4) < 0.6


def test_step_context_reads_like_the_list_it_stands_for():
    """A step's context is read in place (no copy of the cache's tokens): every index, slice and
    iteration gives what the copied list with the newest token appended would."""
    from draftlight.engine.step.speculative import StepContext
    rng = np.random.default_rng(3)
    for size in (0, 1, 2, 7, 40):
        cached = [int(t) for t in rng.integers(0, 99, size)]
        view, copy = StepContext(cached, 123), cached + [123]
        assert len(view) == len(copy) and list(view) == copy
        for i in range(-len(copy), len(copy)):
            assert view[i] == copy[i]
        for i in (len(copy), -len(copy) - 1):
            with pytest.raises(IndexError):
                view[i]
        ends = list(range(-len(copy) - 2, len(copy) + 3)) + [None]
        for start in ends:
            for stop in ends:
                assert view[start:stop] == copy[start:stop], (size, start, stop)
        assert view[::2] == copy[::2] and view[::-1] == copy[::-1]
        assert cached == copy[:-1]  # the cache itself is left as it was
