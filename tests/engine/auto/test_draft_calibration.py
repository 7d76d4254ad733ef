"""A draft model's own probability of each token it drafts is evidence auto learns to read
(issue 35): how often a token drafted with belief q is accepted, per bucket of q
(acceptance.Calibration), weighs each further token in auto's early stop instead of q itself.
A scripted draft that is always right but unsure (q about 0.15) drafts longer once auto has
seen it right: 4.6 answer tokens per unit of cost on the flat curve against 1.8 when the early
stop takes q at its word. (A draft sure and often wrong needs no calibration to be cut short:
its streak counts fall, and with them the draft length auto chooses.)"""

from __future__ import annotations

import numpy as np

from draftlight.engine.auto.acceptance import AcceptanceModel, Calibration
from draftlight.engine.auto.adaptive import AdaptiveDrafter, Candidate
from draftlight.engine.auto.costs import BatchCosts
from draftlight.engine.step.drafters import ModelDrafter
from draftlight.engine.core.sampling import SamplingParams

from tests.support.fake_backend import FakeBackend

VOCAB = 64
PROMPT = [1, 2, 3]
ANSWER = [(7 * i + 5) % VOCAB for i in range(600)]
GREEDY = SamplingParams(temperature=0.0, max_tokens=600)
# GPU-like: a pass over 8 tokens costs 1.2 single ones, so a draft model's tokens are what
# a draft costs, and the early stop decides its length
FLAT = BatchCosts({1: 1.0, 2: 1.05, 4: 1.1, 8: 1.2, 16: 1.5}, 0.01)


def draft_model(confidence: float) -> ModelDrafter:
    """A draft whose logits put `confidence` on the answer's next token."""
    def logits(prefix):
        position = len(prefix) - len(PROMPT)
        guess = ANSWER[position] if 0 <= position < len(ANSWER) else 0
        row = np.zeros(VOCAB)
        row[guess] = confidence
        return row
    return ModelDrafter(FakeBackend(VOCAB, logits), VOCAB)


def drafted_per_step(drafter: ModelDrafter, tokens: int = 400) -> list[int]:
    """Auto over the answer with this draft as its only candidate, on the flat curve, the
    draft costing 0.05 of a target pass per token and trusted from the start (its streak
    counts say 95% right): each step's draft is checked against the answer, as the target
    would under greedy decoding."""
    trusted = AcceptanceModel(hits=[95.0] * 10, trials=[100.0] * 10)
    auto = AdaptiveDrafter(FLAT, [Candidate(drafter, 0.05, 8, trusted)])
    rng = np.random.default_rng(0)
    context, position, out = list(PROMPT), 0, []
    while position < tokens:
        draft = auto.propose(context, 8, GREEDY, rng).tokens
        right = 0
        while right < len(draft) and draft[right] == ANSWER[position + right]:
            right += 1
        auto.observe(len(draft), right, ANSWER[position + right])
        context += ANSWER[position:position + right + 1]
        position += right + 1
        out.append(len(draft))
    return out


def test_an_unsure_draft_that_is_always_right_drafts_longer_once_seen_right():
    steps = drafted_per_step(draft_model(confidence=np.log(0.15 * 63 / 0.85)))  # q = 0.15
    # By its own word (0.15 per token) a second token never pays; seen right, it drafts long.
    assert max(steps[:3]) <= 2, steps[:10]
    assert sum(steps[-20:]) / 20 >= 6, steps[-20:]


def test_calibration_starts_from_the_drafts_word_and_follows_what_it_sees():
    calibration = Calibration()
    assert abs(calibration.p(0.15) - 0.15) < 0.01 and abs(calibration.p(0.99) - 0.975) < 0.01
    for _ in range(100):
        calibration.add(0.15, True)
        calibration.add(0.99, False)
    assert calibration.p(0.12) > 0.9 and calibration.p(0.97) < 0.1
    assert abs(calibration.p(0.55) - 0.55) < 0.01  # each bucket its own
