"""Auto mode: draft only as much as pays, with whichever drafter pays most, learnt online."""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, field

from draftlight.engine.auto.acceptance import (  # noqa: F401 (what auto's users import from here)
    BUCKET_EDGES, CAUTION, PRIOR, PRIOR_WEIGHT, AcceptanceModel, Calibration, bucket,
    evidence_key)
from draftlight.engine.auto.costs import BatchCosts, OnlineCosts
from draftlight.engine.step.drafters import Draft, Drafter, ModelDrafter

# Why a step drafted nothing: nothing to copy (no guess, or one whose match is shorter than
# COPY_MATCH tokens: a common word pair, not a copy); a copy whose expected gain did not cover
# its pass; or passes so dear now that even a copy sure to be right would not pay.
WHY_NOT = {"no-match": "nothing to copy", "too-short": "copy not sure enough to pay",
           "costly": "checking costs too much right now"}
# A guess whose match runs back this many tokens is a copy a reader would expect drafted: the
# notes under a reply count only those (shorter ones match on any text: "of the", "is a")
COPY_MATCH = 4
PROBE_EVERY = 32  # a costly drafter left idle this many steps drafts one token to re-learn
# ... and only once the time since its last probe is this many times what that probe cost
# (its drafting and its pass's extra token): a probe also catches the draft up with everything
# said since (a batch over those tokens), so a draft that never pays costs at most
# 1/PROBE_PATIENCE of the time (here 0.5%). Before any probe its price is taken to be two
# drafted tokens and the extra token, so the first waits too; it also reads the whole prompt and
# costs more (0.2-0.4 s for SmolLM2 drafting for Qwen-1.5B on a 2-core CPU), which the next
# probe then waits for. N-gram lookup needs no probe: its first guess is checked for free at
# every step (the shadow guess).
PROBE_PATIENCE = 200
# A costly drafter's cost per drafted token is the median of its latest this many steps, the
# load-time figure counting twice at first: one step that caught up with a long prompt (on a GPU
# too) must not rule the drafter out for the rest of the session.
COST_WINDOW = 9
# The most any guess after the first is taken to be right, bounding a draft's worth before it
# is worked out (AdaptiveDrafter._may_pay): above every estimate AcceptanceModel can give (its
# priors end at 0.98, and its cautious estimate stays below its mean)
CERTAIN_AT = 0.999


@dataclass
class Candidate:
    """One drafter and what auto mode has learnt about it."""

    drafter: Drafter
    cost_per_token: float  # c: one drafted token's cost, in one-token target passes
    max_tokens: int
    model: AcceptanceModel = field(default_factory=AcceptanceModel)
    idle_steps: int = 0
    idle_seconds: float = 0.0  # target time since this drafter last drafted or probed
    probe_seconds: float = 0.0  # what its latest probe cost (drafting + the pass's extra token)
    evidence: int = 0  # match length of the latest n-gram guess
    where: str = ""  # the place of that match and what its n-gram went on with (acceptance.KEYS)
    measured_costs: deque = field(default_factory=lambda: deque(maxlen=COST_WINDOW))
    # A draft model: how often a token it drafted with its own probability q is accepted
    calibration: Calibration = field(default_factory=Calibration)

    @property
    def free(self) -> bool:
        return self.cost_per_token == 0.0


class AdaptiveDrafter:
    """Chooses, before every step, the drafter and draft length γ that maximise expected tokens
    per unit of time, using the batch-cost curve v(k) (timed at load, then corrected by the passes
    that really run: costs.OnlineCosts):

        a_i   = P(guess i is right | the guesses before it were), from AcceptanceModel (learnt
                online, conditioned on the drafter's current streak of right guesses)
        S_i   = Π_{j≤i} a_j  (S_0 = 1)          P(the first i guesses are right)
        E(γ)  = 1 + Σ_{i=1..γ} S_i              expected tokens from one target pass
        T(γ)  = v(γ + 1) + c·γ + R(γ)           its time, in one-token target passes
        γ*    = argmax_{0≤γ≤γmax} E(γ) / T(γ)    γ = 0 is plain decoding, with rate 1

    R(γ) is 0 for a KV cache, which cuts a rejected draft off for free. A recurrent target that
    rolls back from a copy of its state (costs.BatchCosts.replays) pays for the copy before
    every verify pass, and after i right guesses and a wrong one (probability S_i − S_{i+1})
    for restoring it and evaluating the i + 1 kept tokens again:
        R(γ)  = ckpt + Σ_{i=0..γ−1} (S_i − S_{i+1}) · (restore + v(i + 1))

    (With a constant a, E(γ) = (1 − a^(γ+1)) / (1 − a), as in Leviathan et al. 2023.)

    A draft model also stops early: its (i+1)-th token is drawn only while the draft's own
    estimate that the whole draft will be right,
        Π_{j≤i} κ(q_j(d_j)) · κ(E_{x~q_{i+1}}[q_{i+1}(x)]),
    is at least R · (v(i+2) − v(i+1) + c), R = E(γ*)/T(γ*): the extra token must pay for its
    marginal cost at the rate the step is expected to run at. κ(q) is how often a token the
    draft drafted with belief q was accepted, learnt online per bucket of q, starting from q
    itself (acceptance.Calibration): a draft sure and often wrong stops sooner, one unsure and
    mostly right goes on. The estimate is taken before d_{i+1} is drawn, never from its value,
    or sampling would stop being lossless (drafters.ModelDrafter).

    N-gram lookup is free, so it is consulted every step: when it proposes nothing, nothing is
    drafted; when auto chooses γ = 0 its first guess is still compared with the target's token
    (a free observation), so auto notices when copying starts.
    """

    why_nothing = ""  # the latest step's, if it drafted nothing: a key of WHY_NOT

    def __init__(self, costs: BatchCosts, candidates: list[Candidate]) -> None:
        self.costs = OnlineCosts(costs)  # v(k), corrected by the passes that really run
        self._timed: dict[int, list[int]] = {}  # lengths(limit), by limit
        # A drafter that cannot pay even if every guess were right is never used (e.g. a draft
        # model as slow as the target on a CPU, where v(k) grows fast).
        self.candidates = [c for c in candidates if self.ceiling(c) > 1.0]
        # Free drafters left out so (every step is too dear to draft): still asked for a guess,
        # so that a step with something to copy says "costly" and one without says "no-match"
        self._priced_out = [c.drafter for c in candidates if c.free and c not in self.candidates]
        self._chosen: Candidate | None = None
        self._probing = False  # the latest step is a costly drafter's probe
        self._shadow: tuple[Candidate, int] | None = None
        self._beliefs: tuple[float, ...] = ()  # a draft model's q of each token it drafted
        # What the latest step's probe cost: its drafting, and what its pass spent on the probed
        # token beyond a one-token pass (0 when the step was no probe). Exploring's price.
        self.probe_seconds = 0.0

    def with_candidate(self, candidate: Candidate) -> "AdaptiveDrafter":
        """This drafter with one more candidate, consulted first (a Predicted Output for one
        reply): the others and the cost curve are shared, so what it learns stays learnt."""
        combined = AdaptiveDrafter(self.costs.measured, [candidate])
        combined.costs, combined._timed = self.costs, self._timed
        combined.candidates += self.candidates
        combined._priced_out = self._priced_out
        return combined

    def new_reply(self) -> None:
        """A reply begins (AcceptanceModel.new_reply)."""
        for candidate in self.candidates:
            candidate.model.new_reply()

    def chose(self, drafter: Drafter) -> bool:
        """Whether the step that just ran drafted with `drafter`."""
        return self._chosen is not None and self._chosen.drafter is drafter

    def lengths(self, limit: int) -> list[int]:
        """Draft lengths γ ≤ limit whose pass (γ + 1 tokens) was timed at load. Between timed
        points a pass's cost is not linear (llama.cpp's CPU kernels take the batch in blocks:
        on a 1.5B K-quant target 4 tokens cost 2.6 passes, 5 tokens 3.4, and 17 tokens cost 10.5
        where extrapolating the timed 16 said 8.8), so auto drafts only lengths it has timed."""
        timed = self._timed.get(limit)
        if timed is None:  # worked out once per limit: auto asks at every step
            timed = self._timed[limit] = [k - 1 for k in sorted(self.costs.measured.v)
                                          if 2 <= k <= limit + 1]
        return timed

    def ceiling(self, candidate: Candidate) -> float:
        """Best E/T if every drafted token were accepted."""
        return max([(g + 1) / (self.costs(g + 1) + candidate.cost_per_token * g
                               + self.costs.measured.checkpoint)
                    for g in self.lengths(candidate.max_tokens)], default=0.0)

    def rollback_cost(self, expected: list[float], gamma: int) -> float:
        """R(γ): what rejections cost a target that replays (see the class docstring), from
        E(0..γ), whose steps are the survival probabilities S_i = E(i) − E(i − 1)."""
        measured = self.costs.measured
        if gamma == 0 or not measured.replays:
            return 0.0
        survive = [1.0] + [expected[i] - expected[i - 1] for i in range(1, gamma + 1)]
        rejected = sum((survive[i] - survive[i + 1]) * (measured.restore + self.costs(i + 1))
                       for i in range(gamma))
        return measured.checkpoint + rejected

    def rate(self, candidate: Candidate, limit: int) -> tuple[float, int]:
        """(E/T, γ) at the best γ ≤ limit for this candidate; (1.0, 0) is plain decoding."""
        if candidate.free and not self._may_pay(candidate, limit):
            return 1.0, 0
        expected = candidate.model.expected_tokens(limit, candidate.evidence, candidate.where)
        best = (1.0, 0)
        for gamma in self.lengths(limit):
            r = expected[gamma] / (self.costs(gamma + 1) + candidate.cost_per_token * gamma
                                   + self.rollback_cost(expected, gamma))
            if r > best[0]:
                best = (r, gamma)
        return best

    def _may_pay(self, candidate: Candidate, limit: int) -> bool:
        """Whether any draft of this free candidate's guess could beat plain decoding, bounded
        cheaply before rate() works out E(γ) (most steps that draft nothing end here: auto's
        own work at each is a few tens of microseconds, docs/this-machine.md). With a_1 the estimate
        that the first guess is right and every later one taken as CERTAIN_AT most:
            E(γ) ≤ 1 + a_1 · Σ_{i<γ} CERTAIN_AT^i,   T(γ) ≥ v(γ + 1) (no rollback: R ≥ 0)."""
        model = candidate.model
        start = max(model.streak, candidate.evidence)
        first = model.places[candidate.where].p(bucket(start))
        for gamma in self.lengths(limit):
            bound = 1.0 + first * (1.0 - CERTAIN_AT ** gamma) / (1.0 - CERTAIN_AT)
            if bound > self.costs(gamma + 1):
                return True
        return False

    def propose(self, context, max_tokens, params, rng) -> Draft:
        self._chosen, self._shadow, self._probing = None, None, False
        self._beliefs = ()
        # why a step drafts nothing (WHY_NOT), told under a reply and on its strip's cells
        self.why_nothing = "no-match"
        if any(d.propose(context, 1, params, rng).match_length >= COPY_MATCH
               for d in self._priced_out):
            self.why_nothing = "costly"
        best: tuple[float, int, Candidate | None, Draft | None] = (1.0, 0, None, None)
        for candidate in self.candidates:
            limit = min(max_tokens, candidate.max_tokens)
            guess = None
            if candidate.free:
                guess = candidate.drafter.propose(context, max(limit, 1), params, rng)
                if not guess.tokens:
                    candidate.model.streak = 0  # no guess: nothing to learn, nothing to extend
                    continue
                candidate.evidence = guess.match_length
                candidate.where = evidence_key(guess.where, guess.continuations)
                self._shadow = self._shadow or (candidate, guess.tokens[0])
                limit = min(limit, len(guess.tokens))
            r, gamma = self.rate(candidate, limit)
            if r > best[0]:
                best = (r, gamma, candidate, guess)
            elif self.why_nothing != "costly" and (guess is None
                                                   or guess.match_length >= COPY_MATCH):
                # a copy (or a draft model's guess) left undrafted: even a sure one would not
                # pay (the costs), or this one was not sure enough
                self.why_nothing = "costly" if self.ceiling(candidate) <= 1.0 else "too-short"
        rate, gamma, chosen, guess = best
        if chosen is None:
            return self._probe(context, max_tokens, params, rng)
        self.why_nothing = ""
        self._chosen = chosen
        chosen.idle_steps, chosen.idle_seconds = 0, 0.0
        if guess is not None:
            return Draft(guess.tokens[:gamma], origin=guess.origin)
        return self._keep_beliefs(
            self._draft_with_break_even(chosen, context, gamma, rate, params, rng))

    def _keep_beliefs(self, draft: Draft) -> Draft:
        origin = draft.origin
        if origin is not None and origin.kind == "model" and len(origin.p) == len(draft.tokens):
            self._beliefs = origin.p
        return draft

    def _draft_with_break_even(self, chosen, context, gamma, rate, params, rng) -> Draft:
        drafter = chosen.drafter
        if not isinstance(drafter, ModelDrafter):
            return drafter.propose(context, gamma, params, rng)
        c, v = chosen.cost_per_token, self.costs

        def keep(i: int, cumulative: float) -> bool:  # i = tokens already kept
            return cumulative >= rate * (v(i + 2) - v(i + 1) + c)

        drafter.keep_going, drafter.calibrate = keep, chosen.calibration.p
        try:
            return drafter.propose(context, gamma, params, rng)
        finally:
            drafter.keep_going = drafter.calibrate = None

    def _probe(self, context, max_tokens, params, rng) -> Draft:
        """Plain step; a costly drafter idle for too long drafts one token to refresh its model."""
        for candidate in self.candidates:
            if candidate.free:
                continue
            candidate.idle_steps += 1
            if candidate.idle_steps < PROBE_EVERY or max_tokens < 1:
                continue
            price = candidate.probe_seconds or self.costs.token_seconds * (
                2 * candidate.cost_per_token + self.costs(2) - 1.0)  # none seen yet
            if candidate.idle_seconds >= PROBE_PATIENCE * price:
                candidate.idle_steps, candidate.idle_seconds = 0, 0.0
                self._chosen, self._probing = candidate, True
                return self._keep_beliefs(candidate.drafter.propose(context, 1, params, rng))
        return Draft([])

    def observe(self, drafted: int, accepted: int, token: int,
                verify_seconds: float | None = None, draft_seconds: float | None = None) -> None:
        """Learn from the step that just ran (accepted of drafted, then the target's token,
        from a target pass that took verify_seconds, after drafting for draft_seconds)."""
        self.probe_seconds = 0.0
        if verify_seconds is not None:
            self.costs.observe(drafted + 1, verify_seconds)
            self._charge(drafted, verify_seconds, draft_seconds)
        if self._chosen is not None and drafted:
            chosen = self._chosen
            chosen.model.record(accepted, accepted < drafted, chosen.evidence, chosen.where)
            for i, belief in enumerate(self._beliefs[:min(drafted, accepted + 1)]):
                chosen.calibration.add(belief, i < accepted)
        elif self._shadow is not None:
            candidate, guess = self._shadow
            right = guess == token
            candidate.model.record(int(right), not right, candidate.evidence, candidate.where)

    def _charge(self, drafted: int, verify_seconds: float, draft_seconds: float | None) -> None:
        """What costly drafters really cost: the measured c of the one that drafted (its
        catch-up with the context included, which the load-time timing of single passes does
        not see), the price of a probe, and the idle time that the next probe waits for."""
        chosen = self._chosen
        if chosen is not None and not chosen.free and draft_seconds is not None:
            if self._probing:  # its drafting and what the pass spent on the probed token
                self.probe_seconds = draft_seconds + max(
                    0.0, verify_seconds - self.costs.token_seconds)
                chosen.probe_seconds = self.probe_seconds  # the next waits PROBE_PATIENCE x that
            elif drafted and self.costs.token_seconds > 0:
                costs = chosen.measured_costs
                if not costs:
                    costs.extend([chosen.cost_per_token] * 2)
                costs.append(draft_seconds / drafted / self.costs.token_seconds)
                chosen.cost_per_token = statistics.median(costs)
        for candidate in self.candidates:
            if candidate is not chosen and not candidate.free:
                candidate.idle_seconds += verify_seconds + (draft_seconds or 0.0)

