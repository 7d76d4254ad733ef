"""Engine.generate over the scripted chat models of tests/support/fake_backend.py: a reply's
pieces and its Done."""

from __future__ import annotations

from draftlight.engine.reply.events import Done, TextPiece
from draftlight.engine.core.sampling import SamplingParams

GREEDY = SamplingParams(temperature=0.0, max_tokens=200)


def run(engine, messages, params=GREEDY, mode="ngram"):
    pieces, done = [], None
    for event in engine.generate(messages, params, mode):
        if isinstance(event, TextPiece):
            pieces.append(event)
        elif isinstance(event, Done):
            done = event
    return pieces, done
