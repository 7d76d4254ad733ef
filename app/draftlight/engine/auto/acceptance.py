"""How likely a drafter's next guess is right, learnt online from its evidence (for auto mode).

A guess comes with evidence: the drafter's streak of right guesses just before it, and for a
copying drafter (n-gram lookup, a Predicted Output) the length of the match it copies and where
that match lies. A continuation of the message being answered is right far more often than one
of the reply's own earlier words after a match of the same length (recorded greedy answers of
two models: 0.55 against 0.43 after a 2-token match, 0.79 against 0.62 after 3-4 tokens), so
each place keeps its own counts, starting from priors fitted on those recordings
(acceptance_priors.py, docs/replay.md says how); so do, within a place, guesses whose n-gram's
other occurrences all went on the same way, or split (KEYS).

    evidence e  = max(streak, match length) + i   for the i-th token of a draft
    P(right)    = Beta posterior of the (place, bucket(e)) counts, prior PRIORS[place][bucket]
                  weighted as PRIOR_WEIGHT observations

Counts decay toward the prior (SESSION_MEMORY trials per bucket), so an estimate that a run of
misses lowered rises again once guesses come right, and nothing stays stuck: n-gram lookup's
first guess is checked against the target's token at every step even when nothing is drafted
(adaptive.AdaptiveDrafter's shadow guess), which costs nothing and keeps every place's counts
current.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from draftlight.engine.auto.acceptance_priors import PRIORS

# Streak buckets: how many tokens in a row the drafter has guessed right just before this one
# (or how long the match it copies is, whichever says more).
BUCKET_EDGES = (0, 1, 2, 3, 5, 8, 12, 16, 24, 32)
# Where a copied guess comes from: the message being answered, earlier messages (and the system
# prompt), the reply so far, a Predicted Output; "" for a guess with no place (a draft model).
PLACES = ("", "message", "earlier", "reply", "prediction")
# What the other occurrences of the copied n-gram went on with (drafters.continuations): one
# occurrence, several that agree on the next token, several that split. Each place's guesses
# of the last two kinds keep their own counts ("reply/split"): after a 2-token match in the
# reply so far, 0.69 right when earlier occurrences agree against 0.24 when they split.
CONTINUATIONS = ("one", "agree", "split")
KEYS = PLACES + tuple(f"{place}/{kind}" for place in ("message", "earlier", "reply")
                      for kind in CONTINUATIONS[1:])
PRIOR = PRIORS[""]
PRIOR_WEIGHT = 8.0  # the prior counts as this many observations per bucket
# Decisions use a cautious acceptance estimate: the posterior mean less CAUTION standard
# deviations. A draft that fails costs up to v(γ+1) − 1 passes for nothing, and a bucket with
# few observations (long matches on a new kind of text) is the estimate most often wrong: on a
# 1.5B target the mean chose 15-token drafts from long n-gram matches in math answers that
# failed after 2 (auto 0.92x plain). As observations accumulate the estimate nears the mean.
CAUTION = 1.0
# Each bucket's session counts keep about this many trials (older ones decay): what the session
# learnt weighs against the prior, yet a change of text moves the estimate both ways.
SESSION_MEMORY = 200.0
# What the latest guesses of a bucket say about the text being written now: each bucket's
# recent counts decay by RECENT_DECAY per trial of that bucket (about its latest 20 trials), and
# count against the session estimate weighted as RECENT_WEIGHT observations. They can only
# lower the estimate: a model that copied documents all session and now writes arithmetic
# (where a 4-token match is right half as often) stops drafting after a few misses instead of
# after hundreds (docs/replay.md).
RECENT_DECAY = 0.95
REPLY_KEEP = 0.7
RECENT_WEIGHT = 4.0


SESSION_KEEP = 1.0 - 1.0 / SESSION_MEMORY  # what a trial's weight keeps at each later one


def count(hits: list[float], trials: list[float], b: int, hit: float, keep: float) -> None:
    """One more trial in bucket b, the older ones' weight multiplied by `keep`."""
    trials[b] = trials[b] * keep + 1.0
    hits[b] = hits[b] * keep + hit


# A draft model's own probability q of a token it drafts, in buckets (Calibration).
BELIEF_EDGES = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


class Calibration:
    """P(a token a draft model drafted is accepted | the draft's own probability q of it), per
    bucket of q, learnt online. A small draft is rarely calibrated to its target: sure and
    wrong where they were trained apart, unsure and right where text is predictable to both.
    Auto's early stop (adaptive.AdaptiveDrafter, drafters.ModelDrafter.keep_going) weighs each
    further token with the calibrated value instead of q.

        P(accepted | q in bucket b) = (hits_b + PRIOR_WEIGHT · mid_b) / (trials_b + PRIOR_WEIGHT)

    The prior is q itself (the bucket's middle): a draft is taken at its word until its tokens
    say otherwise. Counts keep about SESSION_MEMORY trials per bucket, as Counts do."""

    def __init__(self) -> None:
        ends = BELIEF_EDGES[1:] + (1.0,)
        self.prior = tuple((a + b) / 2 for a, b in zip(BELIEF_EDGES, ends))
        self.hits = [0.0] * len(BELIEF_EDGES)
        self.trials = [0.0] * len(BELIEF_EDGES)

    @staticmethod
    def bucket(q: float) -> int:
        return max(0, bisect_right(BELIEF_EDGES, q) - 1)

    def p(self, q: float) -> float:
        b = self.bucket(q)
        return (self.hits[b] + PRIOR_WEIGHT * self.prior[b]) / (self.trials[b] + PRIOR_WEIGHT)

    def add(self, q: float, hit: bool) -> None:
        count(self.hits, self.trials, self.bucket(q), float(hit), SESSION_KEEP)


def evidence_key(where: str, continuations: str = "") -> str:
    """The counts a guess from `where` with these `continuations` is learnt in (KEYS)."""
    key = f"{where}/{continuations}"
    return key if key in KEYS else where


def bucket(streak: int) -> int:
    for index in range(len(BUCKET_EDGES) - 1, -1, -1):
        if streak >= BUCKET_EDGES[index]:
            return index
    return 0


def _zeros() -> list[float]:
    return [0.0] * len(BUCKET_EDGES)


@dataclass
class Counts:
    """One place's counts per bucket, with its prior."""

    prior: tuple[float, ...]
    hits: list[float] = field(default_factory=_zeros)
    trials: list[float] = field(default_factory=_zeros)
    recent_hits: list[float] = field(default_factory=_zeros)
    recent_trials: list[float] = field(default_factory=_zeros)

    def session_mean(self, b: int) -> float:
        return (self.hits[b] + self.prior[b] * PRIOR_WEIGHT) / (self.trials[b] + PRIOR_WEIGHT)

    def mean(self, b: int) -> float:
        """The session's estimate, lowered towards the bucket's recent hit rate when worse."""
        session = self.session_mean(b)
        recent = ((self.recent_hits[b] + RECENT_WEIGHT * session)
                  / (self.recent_trials[b] + RECENT_WEIGHT))
        return min(session, recent)

    def p(self, b: int) -> float:
        """The cautious estimate decisions use: mean − CAUTION · sd of the Beta posterior."""
        mean, n = self.mean(b), self.trials[b] + PRIOR_WEIGHT
        return max(0.0, mean - CAUTION * (mean * (1.0 - mean) / (n + 1.0)) ** 0.5)

    def add(self, b: int, hit: float) -> None:
        count(self.hits, self.trials, b, hit, SESSION_KEEP)
        count(self.recent_hits, self.recent_trials, b, hit, RECENT_DECAY)


class AcceptanceModel:
    """P(the next guess is right | the evidence for it), per place, learnt online.

    Acceptance is far from independent: while a model copies a passage a drafter is right for
    dozens of tokens in a row, and on free text it is rarely right twice. Conditioning on the
    streak (or the match length) and the place captures that with a handful of counters.
    `hits`/`trials` are the counts of guesses with no place (draft models)."""

    def __init__(self, hits: list[float] | None = None, trials: list[float] | None = None,
                 streak: int = 0) -> None:
        self.places = {key: Counts(PRIORS.get(key) or PRIORS[key.split("/")[0]]) for key in KEYS}
        self.streak = streak
        if hits is not None and trials is not None:
            self.hits, self.trials = list(hits), list(trials)

    @property
    def hits(self) -> list[float]:
        return self.places[""].hits

    @hits.setter
    def hits(self, value: list[float]) -> None:
        self.places[""].hits = list(value)

    @property
    def trials(self) -> list[float]:
        return self.places[""].trials

    @trials.setter
    def trials(self, value: list[float]) -> None:
        self.places[""].trials = list(value)

    def session_mean(self, streak: int, where: str = "") -> float:
        return self.places[where].session_mean(bucket(streak))

    def mean(self, streak: int, where: str = "") -> float:
        return self.places[where].mean(bucket(streak))

    def p(self, streak: int, where: str = "") -> float:
        return self.places[where].p(bucket(streak))

    def expected_tokens(self, gamma: int, evidence: int | None = None,
                        where: str = "") -> list[float]:
        """E(g) for g = 0..γ: 1 (the target's own token) + Σ_{i≤g} P(first i guesses right).

        `evidence` replaces the streak when the drafter knows better (an n-gram match of that
        many tokens is as telling as that many right guesses); `where` is the match's place."""
        start = self.streak if evidence is None else max(self.streak, evidence)
        counts = self.places[where]
        out, survive, total = [1.0], 1.0, 1.0
        for i in range(gamma):
            survive *= counts.p(bucket(start + i))
            total += survive
            out.append(total)
        return out

    def record(self, accepted: int, rejected: bool, evidence: int = 0, where: str = "") -> None:
        """`accepted` guesses in a row were right, then (if `rejected`) one was wrong."""
        start, counts = max(self.streak, evidence), self.places[where]
        for i in range(accepted + int(rejected)):
            counts.add(bucket(start + i), 1.0 if i < accepted else 0.0)
        self.streak = 0 if rejected else self.streak + accepted

    def new_reply(self) -> None:
        """A reply begins: a new text. What the last replies taught counts for less (each place's
        counts keep REPLY_KEEP of their weight, the rest going back to the prior), and the recent
        counts start over, so a session of misses does not outweigh the next reply's evidence."""
        for counts in self.places.values():
            counts.hits = [h * REPLY_KEEP for h in counts.hits]
            counts.trials = [t * REPLY_KEEP for t in counts.trials]
            counts.recent_hits, counts.recent_trials = _zeros(), _zeros()
        self.streak = 0

    def copy(self) -> "AcceptanceModel":
        """The same counts, learning on its own from now on (a Predicted Output's candidate)."""
        other = AcceptanceModel()
        for place, counts in self.places.items():
            other.places[place] = Counts(counts.prior, list(counts.hits), list(counts.trials))
        return other

    def counts(self, memory: float = SESSION_MEMORY) -> dict[str, dict[str, list[float]]]:
        """What was learnt, to start the next session with: each place's bucket counts scaled
        down to at most `memory` trials, so that a new kind of text can still move them."""
        out = {}
        for place, counts in self.places.items():
            scale = [min(1.0, memory / t) if t else 1.0 for t in counts.trials]
            out[place] = {"hits": [h * f for h, f in zip(counts.hits, scale)],
                          "trials": [t * f for t, f in zip(counts.trials, scale)]}
        return out

    def restore(self, saved: dict) -> None:
        """Start from counts() of an earlier session (places that do not fit are ignored)."""
        size = len(BUCKET_EDGES)
        for place, counts in (saved.items() if isinstance(saved, dict) else ()):
            if place not in self.places or not isinstance(counts, dict):
                continue
            hits, trials = counts.get("hits"), counts.get("trials")
            if (isinstance(hits, list) and isinstance(trials, list)
                    and len(hits) == len(trials) == size
                    and all(isinstance(x, (int, float)) and 0 <= h <= t
                            for h, t in zip(hits, trials) for x in (h, t))):
                self.places[place].hits = [float(h) for h in hits]
                self.places[place].trials = [float(t) for t in trials]
