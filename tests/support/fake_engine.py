"""Engine.generate over the scripted chat models of tests/support/fake_backend.py: a reply's
pieces and its Done."""

from __future__ import annotations

from draftlight.engine.core.sampling import SamplingParams
from draftlight.modes import NGRAM
from tests.support.replies import reply

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)


def run(engine, messages, params=GREEDY, mode=NGRAM):
    answer = reply(engine, messages, params, mode)
    return answer.pieces, answer.done
