"""A scripted engine whose draft pieces carry origins (tests of where runs came from), and
whether a message view is on screen."""

from __future__ import annotations

from PySide6.QtCore import QPoint

from draftlight.engine.reply.events import Done, Stats, TextPiece
from draftlight.engine.step.origins import Origin
from tests.support.scripted_engine import ScriptedEngine, ScriptedFactory


class OriginEngine(ScriptedEngine):
    def generate(self, messages, params, mode, prediction=None):
        self.factory.calls.append((messages, mode))
        pieces = self.factory.script(messages)
        stats = Stats(mode=mode, new_tokens=len(pieces), target_passes=pieces[-1][2] + 1)
        for text, source, step, origin in pieces:
            stats.accepted += source == "draft"
            stats.drafted += source == "draft"
            yield TextPiece(text, source, step, origin=Origin.from_record(origin))
        stats.seconds = 0.5
        yield Done("".join(p[0] for p in pieces), stats)


class OriginFactory(ScriptedFactory):
    def __init__(self, script_of) -> None:
        super().__init__(script=script_of)

    def load_engine(self, spec, **_):
        self.loads.append(spec)
        return OriginEngine(self)


def visible(chat, view) -> bool:
    top = view.mapTo(chat.widget(), QPoint(0, 0)).y() - chat.verticalScrollBar().value()
    return top + view.height() > 0 and top < chat.viewport().height()
