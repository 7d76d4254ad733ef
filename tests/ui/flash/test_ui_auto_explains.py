"""Under a reply where auto drafted nothing, one line says why in measured terms, with N-gram a
click away; the strip's cell of each undrafted pass says why that pass drafted nothing (issue 54,
part 3). The engine is the real one, on a scripted chat model whose passes cost as a busy CPU's
do."""

from __future__ import annotations

from PySide6.QtCore import Qt

from draftlight.engine.reply.generator import Engine
from draftlight.ui.flash.passes import describe
from tests.support.fake_backend import FakeChatModel, busy_costs
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait
from draftlight.modes import AUTO, NGRAM, OFF

ANSWER = b"The quick brown fox jumps over the lazy dog."


class BusyMachineFactory(ScriptedFactory):
    """The window's engines: the real Engine on a scripted model, timed as a busy machine."""

    def __init__(self) -> None:
        super().__init__(modes=(OFF, NGRAM, AUTO))

    def load_engine(self, spec, **_):
        self.loads.append(spec)
        return Engine(FakeChatModel(lambda conversation: ANSWER), cost_source=busy_costs)


def test_a_reply_auto_drafted_nothing_in_says_why_and_offers_ngram(qtbot, open_window):
    window = open_window(BusyMachineFactory())
    window.set_mode(AUTO)
    first = send_and_wait(qtbot, window, "Say the motto.")
    assert first.figures.stats.drafted == 0  # nothing to copy yet: no note (issue 74)
    assert not first.why_row.isVisibleTo(window)
    reply = send_and_wait(qtbot, window, "Say it again.")  # now the motto is there to copy
    assert reply.figures.stats.drafted == 0
    assert reply.why_row.isVisibleTo(window)
    assert reply.why_row.label.text().startswith(
        "Auto drafted nothing: it found text to copy, but checking it costs more than it saves "
        "on this machine (checking 8 tokens costs 10.4x one)")
    cells = reply.strip.passes
    # (a pass that made only the end token has a cell of its own, with no text to say why for)
    assert cells and any(p.why == "costly" for p in cells if p.start < p.end)
    assert describe(next(p for p in cells if p.why == "costly"), reply.text).endswith(
        "nothing drafted: checking costs too much right now")
    qtbot.mouseClick(reply.why_row.try_ngram, Qt.LeftButton)
    assert window.current_mode() == NGRAM
    again = send_and_wait(qtbot, window, "Say the motto again.")
    assert again.figures.stats.mode == NGRAM and not again.why_row.isVisibleTo(window)
    # reopened from the history, the reply still says why
    window.session.writes.flush()
    saved = window.history.messages(window.session.conversation_id)[3]
    assert saved.stats["auto_note"] == reply.why_row.label.text()
