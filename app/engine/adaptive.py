"""Auto mode: draft only as much as pays, with whichever drafter pays most, learnt online."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.engine.costs import BatchCosts
from app.engine.drafters import Draft, Drafter, ModelDrafter

EMA = 0.15  # weight of each new accept/reject outcome in the acceptance estimate
PRIOR = 0.6  # acceptance assumed before anything is observed
PROBE_EVERY = 32  # a costly drafter left idle this many steps drafts one token to re-learn


@dataclass
class Candidate:
    """One drafter and what auto mode has learnt about it."""

    drafter: Drafter
    cost_per_token: float  # c: one drafted token's cost, in one-token target passes
    max_tokens: int
    # Acceptance comes in runs (copying a passage), so it is tracked separately for a step that
    # follows a fully accepted step and for one that follows a rejection or a plain step.
    acceptance: dict[bool, float] = field(default_factory=lambda: {True: PRIOR, False: PRIOR})
    idle_steps: int = 0

    @property
    def free(self) -> bool:
        return self.cost_per_token == 0.0


def expected_tokens(a: float, gamma: int) -> float:
    """E(γ) = Σ_{i=0..γ} a^i: the bonus/correction token plus the expected accepted prefix."""
    return float(gamma + 1) if a >= 1.0 else (1.0 - a ** (gamma + 1)) / (1.0 - a)


class AdaptiveDrafter:
    """Chooses, before every step, the drafter and draft length γ that maximise expected tokens
    per unit of time, using the measured batch-cost curve v(k):

        a       per-token acceptance, learnt online (exponential average of outcomes)
        E(γ)  = (1 − a^(γ+1)) / (1 − a)          expected tokens from one target pass
        T(γ)  = v(γ + 1) + c·γ                   its time, in one-token target passes
        γ*    = argmax_{0≤γ≤γmax} E(γ) / T(γ)    γ = 0 is plain decoding, with rate 1

    A draft model also stops early: its (i+1)-th token is kept only while the draft's own
    probability that the whole draft is accepted, Π_{j≤i+1} q_j(d_j), is at least
    R · (v(i+2) − v(i+1) + c), R = E(γ*)/T(γ*): the extra token must pay for its marginal cost
    at the rate the step is expected to run at.

    N-gram lookup is free, so it is consulted every step: when it proposes nothing, nothing is
    drafted; when auto chooses γ = 0 its first guess is still compared with the target's token
    (a free observation), so auto notices when copying starts.
    """

    def __init__(self, costs: BatchCosts, candidates: list[Candidate]) -> None:
        self.costs = costs
        # A drafter that cannot pay even if every guess were right is never used (e.g. a draft
        # model as slow as the target on a CPU, where v(k) grows fast).
        self.candidates = [c for c in candidates if self.ceiling(c) > 1.0]
        self.previous_full = False
        self._chosen: Candidate | None = None
        self._shadow: tuple[Candidate, int] | None = None

    def ceiling(self, candidate: Candidate) -> float:
        """Best E/T if every drafted token were accepted (a = 1)."""
        return max((g + 1) / (self.costs(g + 1) + candidate.cost_per_token * g)
                   for g in range(1, candidate.max_tokens + 1))

    def rate(self, candidate: Candidate, limit: int) -> tuple[float, int]:
        """(E/T, γ) at the best γ ≤ limit for this candidate."""
        a = candidate.acceptance[self.previous_full]
        best = (1.0, 0)
        for gamma in range(1, limit + 1):
            t = self.costs(gamma + 1) + candidate.cost_per_token * gamma
            r = expected_tokens(a, gamma) / t
            if r > best[0]:
                best = (r, gamma)
        return best

    def propose(self, context, max_tokens, params, rng) -> Draft:
        self._chosen, self._shadow = None, None
        best: tuple[float, int, Candidate | None, Draft | None] = (1.0, 0, None, None)
        for candidate in self.candidates:
            limit = min(max_tokens, candidate.max_tokens)
            guess = None
            if candidate.free:
                guess = candidate.drafter.propose(context, limit, params, rng)
                if not guess.tokens:
                    continue
                limit = len(guess.tokens)
                self._shadow = self._shadow or (candidate, guess.tokens[0])
            r, gamma = self.rate(candidate, limit)
            if r > best[0]:
                best = (r, gamma, candidate, guess)
        rate, gamma, chosen, guess = best
        if chosen is None:
            return self._probe(context, max_tokens, params, rng)
        self._chosen = chosen
        chosen.idle_steps = 0
        if guess is not None:
            return Draft(guess.tokens[:gamma], None, (guess.confidence or [])[:gamma])
        return self._draft_with_break_even(chosen, context, gamma, rate, params, rng)

    def _draft_with_break_even(self, chosen, context, gamma, rate, params, rng) -> Draft:
        drafter = chosen.drafter
        if isinstance(drafter, ModelDrafter):
            c, v = chosen.cost_per_token, self.costs

            def keep(i: int, cumulative: float) -> bool:  # i = tokens already kept
                return cumulative >= rate * (v(i + 2) - v(i + 1) + c)

            drafter.keep_going = keep
        try:
            return drafter.propose(context, gamma, params, rng)
        finally:
            if isinstance(drafter, ModelDrafter):
                drafter.keep_going = None

    def _probe(self, context, max_tokens, params, rng) -> Draft:
        """Plain step; a costly drafter idle for too long drafts one token to refresh `a`."""
        for candidate in self.candidates:
            if candidate.free:
                continue
            candidate.idle_steps += 1
            if candidate.idle_steps >= PROBE_EVERY and max_tokens >= 1:
                candidate.idle_steps = 0
                self._chosen = candidate
                return candidate.drafter.propose(context, 1, params, rng)
        return Draft([])

    def observe(self, drafted: int, accepted: int, token: int) -> None:
        """Learn from the step that just ran (accepted of drafted, then the target's token)."""
        if self._chosen is not None and drafted:
            outcomes = [1.0] * accepted + ([0.0] if accepted < drafted else [])
            self._learn(self._chosen, outcomes)
            self.previous_full = accepted == drafted
            return
        if self._shadow is not None:
            candidate, guess = self._shadow
            self._learn(candidate, [1.0 if guess == token else 0.0])
        self.previous_full = False

    def _learn(self, candidate: Candidate, outcomes: list[float]) -> None:
        a = candidate.acceptance[self.previous_full]
        for x in outcomes:
            a += EMA * (x - a)
        candidate.acceptance[self.previous_full] = a
