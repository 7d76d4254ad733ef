"""Predicted Outputs: the client sends its guess at the reply (the file being edited), and it
becomes the first draft source.

The guess is tokenised once and indexed by n-grams. Each step looks up the tail of the reply
generated so far in it and proposes what follows the best match, as n-gram lookup does over the
prompt; before anything is generated it proposes the guess's beginning. Where the reply leaves the
guess (the edit itself) nothing matches, and the mode's own drafter drafts instead, until the
reply's tail is found in the guess again, or its last token is the one the guess has where the
reply left it (or one further): then one token is drafted (match_at_anchor). A draft is as long as the match behind it (up to the
engine's length), so it grows while the reply copies and starts short after an edit; in auto mode
it is one more candidate instead, and auto chooses the length (generator.py). The target
verifies every token as usual (speculative.py), so the reply is plain decoding's (greedy) or
drawn from its distribution (sampled) whatever the guess says.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from draftlight.engine.step.drafters import Draft, Drafter, DraftOrigin
from draftlight.engine.step.ngram_index import NgramIndex
from draftlight.engine.core.sampling import SamplingParams


class PredictionDrafter:
    """Drafts from a predicted reply; falls back to `fallback` (the mode's drafter, which may be
    None) on steps where the reply's tail is not found in the prediction.

    `start` is the context length when the reply began: context[start:] is the reply so far.
    `drafted` / `accepted` count the prediction's own proposals (the fallback's are not counted),
    as told by observe() after each step, or by record() where auto mode chose the prediction.
    """

    def __init__(self, prediction: Sequence[int], start: int, *, draft_tokens: int = 8,
                 fallback: Drafter | None = None, fallback_tokens: int = 0, max_ngram: int = 4,
                 min_ngram: int = 2, scale_by_match: bool = True) -> None:
        self.prediction = list(prediction)
        # Whether a draft is only as long as the match behind it; False where auto mode chooses
        # the length itself, from the match length and what it learnt (adaptive.py).
        self.scale_by_match = scale_by_match
        self.start = start
        self.draft_tokens = draft_tokens  # the longest draft taken from the prediction
        self.fallback = fallback
        self.fallback_tokens = fallback_tokens  # the mode's own draft length
        self.max_ngram, self.min_ngram = max_ngram, min_ngram
        self._index = NgramIndex(min_ngram, max_ngram, self.prediction)
        self.from_prediction = False  # whether the latest proposal came from the prediction
        self._cursor = 0  # just past where the latest match continued
        # (position in the prediction, length of the reply) of the latest proposal from it:
        # where the reply was expected to go on (match_at_anchor)
        self._anchor = (0, 0)
        self.drafted = 0
        self.accepted = 0

    def match(self, reply: Sequence[int]) -> tuple[int, int]:
        """(position in the prediction that continues `reply`, tokens of the match), or (-1, 0).
        An empty reply continues at the prediction's start."""
        if not reply:
            return (0, 0) if self.prediction else (-1, 0)
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if len(reply) < n:
                continue
            positions = self._index.positions(reply[-n:])
            if not positions:
                continue
            # Of several occurrences, the one whose preceding tokens agree with the reply
            # longest; among equals the first after the previous match (a reply follows
            # its guess in order, so a repeated line continues where the last match was).
            def rank(p: int) -> tuple[int, bool, int]:
                return self._index.match_length(p, reply), p >= self._cursor, -p
            best = max(positions[:NgramIndex.MAX_CANDIDATES], key=rank)
            return best, self._index.match_length(best, reply)
        return self.match_at_anchor(reply)

    def match_at_anchor(self, reply: Sequence[int]) -> tuple[int, int]:
        """A match shorter than an n-gram, where the reply is expected to go on: the tokens of
        the reply since the latest proposal from the prediction either all followed it (a match
        of that many tokens), or left it at some point, and the reply's last token is the one
        the prediction has there or one further (the reply went back to it after an inserted
        line, or skipped one token). At the reply's start this is its first token equal to the
        prediction's (after a preamble such as a code fence). One token where the guess says
        it should be is evidence enough for a one-token draft (propose)."""
        position, length = self._anchor
        followed = reply[length:]
        same = 0
        while (same < len(followed) and position + same < len(self.prediction)
               and self.prediction[position + same] == followed[same]):
            same += 1
        if followed and same == len(followed):
            return position + same, same
        for q in (position + same, position + same + 1):
            if len(followed) > same and q < len(self.prediction) and self.prediction[q] == reply[-1]:
                return q + 1, 1
        return -1, 0

    def propose(self, context: Sequence[int], max_tokens: int, params: SamplingParams,
                rng: np.random.Generator) -> Draft:
        self.from_prediction = False
        if max_tokens <= 0:
            return Draft([])
        reply = context[self.start:]
        position, length = self.match(reply)
        if position >= 0:
            self.from_prediction, self._cursor = True, position + 1
            self._anchor = (position, len(reply))
            # As long as the evidence: a match of m tokens drafts m (min_ngram before the reply
            # has begun), so after an edit drafts start short and double while the reply keeps
            # copying; a long draft that fails costs v(γ+1) passes for one token on a CPU.
            gamma = min(max_tokens, self.draft_tokens)
            if self.scale_by_match:
                gamma = min(gamma, length or self.min_ngram)
            return Draft(self.prediction[position:position + gamma], None, length,
                         DraftOrigin("prediction", position), where="prediction")
        if self.fallback is not None and self.fallback_tokens > 0:
            return self.fallback.propose(context, min(max_tokens, self.fallback_tokens), params,
                                         rng)
        return Draft([])

    def record(self, drafted: int, accepted: int) -> None:
        """Count a step that drafted from the prediction: from observe(), or from the engine when
        auto mode chose the prediction (auto's own observe() learns, and calls no other)."""
        self.drafted += drafted
        self.accepted += accepted

    def observe(self, drafted: int, accepted: int, token: int,
                verify_seconds: float | None = None, draft_seconds: float | None = None) -> None:
        """Count the step that just ran; a fallback that learns (auto mode) learns from its own
        steps only, since it did not choose the others."""
        if self.from_prediction:
            self.record(drafted, accepted)
        elif self.fallback is not None and hasattr(self.fallback, "observe"):
            self.fallback.observe(drafted, accepted, token, verify_seconds, draft_seconds)
