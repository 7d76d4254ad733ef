"""The one way tests drive `generate` (issue 58): a reply's events collected, and what tests read
of them — its pieces, tokens, notices and the one Done it ends with.

    answer = reply(engine, messages, GREEDY, NGRAM)
    answer.tokens, answer.done.stats.accepted

Any ChatEngine (the in-process engine, the hosted one, a server engine) yields these events
(engine/reply/events.py)."""

from __future__ import annotations

from dataclasses import dataclass

from draftlight.engine.reply.events import Done, Event, Notice, TextPiece


@dataclass(frozen=True)
class Reply:
    events: tuple[Event, ...]

    @property
    def pieces(self) -> list[TextPiece]:
        return [e for e in self.events if isinstance(e, TextPiece)]

    @property
    def tokens(self) -> list[int]:
        """The reply's tokens (a server engine's pieces without one, token -1, left out)."""
        return [p.token for p in self.pieces if p.token >= 0]

    @property
    def sources(self) -> list[str]:
        return [p.source for p in self.pieces if p.token >= 0]

    @property
    def notices(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, Notice)]

    @property
    def done(self) -> Done:
        """The Done every reply ends with, once."""
        ends = [e for e in self.events if isinstance(e, Done)]
        assert len(ends) == 1 and self.events[-1] is ends[0], "a reply ends with one Done"
        return ends[0]


def reply(engine, messages: list[dict[str, str]], params, mode, **options) -> Reply:
    """Run `engine.generate` to its end (`options`: prediction=…, should_stop=…)."""
    return Reply(tuple(engine.generate(messages, params, mode, **options)))
