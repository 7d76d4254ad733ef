"""The acceptance strip under a reply, measured in pixels: one cell per target pass, wide as
its tokens; hover tells what the pass drafted; a click selects the run. Scripted engine."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from draftlight.engine.reply.events import Done, Progress, Stats, TextPiece
from draftlight.settings import Settings
from tests.support.pixels import cells
from tests.support.scripted_engine import SCRIPT, ScriptedEngine, ScriptedFactory
from tests.support.window import send_and_wait


class DraftingEngine(ScriptedEngine):
    """Like the engine: a pass's pieces, then its Progress. A pass that accepted k draft tokens
    had drafted k + 1 (its last one was rejected)."""

    def generate(self, messages, params, mode, prediction=None):
        stats = Stats(mode=mode)
        script = self.factory.script
        for index, (piece_text, source, step) in enumerate(script):
            stats.target_passes = step + 1
            stats.new_tokens += 1
            stats.accepted += source == "draft"
            yield TextPiece(piece_text, source, step)
            if index + 1 == len(script) or script[index + 1][2] != step:
                accepted = sum(1 for _, s, p in script if p == step and s == "draft")
                drafted = accepted + 1 if accepted else 0
                stats.drafted += drafted
                yield Progress(Stats(**vars(stats)), pass_drafted=drafted)
        stats.seconds = 0.5
        yield Done("".join(p[0] for p in script), stats)


class DraftingFactory(ScriptedFactory):
    def load_engine(self, spec, **_):
        self.loads.append(spec)
        return DraftingEngine(self)


def test_one_cell_per_pass_width_by_tokens_now_and_after_reopening(qtbot, open_window):
    window = open_window()
    view = send_and_wait(qtbot, window)
    found = cells(view.strip)
    assert len(found) == 3  # SCRIPT has three target passes
    widths = [right - left for left, right in found]
    # "Hello" 1 token, " wor"+"ld"+"!" 3 tokens, " Bye"+"." and the end token 3 (the end
    # token counts in its pass, as in the footer's tokens/pass: passes.py)
    assert abs(widths[1] - widths[2]) <= 1 and widths[2] > 2.5 * widths[0]
    # Accepted runs are coloured, the plain pass is not: different colours.
    image = view.strip.grab().toImage()
    y = image.height() // 2
    colours = {image.pixel((left + right) // 2, y) for left, right in found}
    assert len(colours) == 3
    # An older reply (no pass table in its stats) gets a strip from its runs alone.
    window.session.open_conversation(window.session.conversation_id)
    reopened = window.chat.messages[-1]
    reopened.figures = replace(reopened.figures, passes=None)
    reopened.render()
    assert len(cells(reopened.strip)) == 3


def test_a_longer_reply_has_as_many_cells_as_passes(qtbot, open_window):
    script = [(f" w{i}", "draft" if i % 3 else "target", i // 3) for i in range(30)]
    window = open_window(ScriptedFactory(script))
    window.resize(1400, 700)
    view = send_and_wait(qtbot, window)
    assert len(cells(view.strip)) == 10


def test_hover_tells_drafted_and_accepted_and_a_click_selects_the_run(qtbot, open_window):
    window = open_window(DraftingFactory(SCRIPT))
    view = send_and_wait(qtbot, window)
    left, right = cells(view.strip)[1]
    middle = QPoint((left + right) // 2, view.strip.height() // 2)
    # the event Qt sends a widget when the pointer rests on it (sent directly: the offscreen
    # platform delivers synthetic hover moves unreliably)
    QApplication.sendEvent(view.strip, QHelpEvent(QEvent.ToolTip, middle,
                                                  view.strip.mapToGlobal(middle)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    assert "2 of 2 drafted" not in QToolTip.text()
    assert "2 of 3 drafted accepted" in QToolTip.text() and "world!" in QToolTip.text()
    assert "3 tokens in one pass" in QToolTip.text()
    qtbot.mouseClick(view.strip, Qt.LeftButton, pos=middle)
    assert view.body.textCursor().selectedText() == " world"


def test_a_cell_counts_in_words_a_person_reads():
    from draftlight.ui.flash.passes import Pass, describe
    text = "Hello world"
    assert describe(Pass(0, 5, 1, 0, 0), text) == "“Hello”\n1 token in one pass · nothing drafted"
    assert describe(Pass(5, 11, 3, 2, 3), text).endswith("3 tokens in one pass · 2 of 3 drafted "
                                                         "accepted")
    assert describe(Pass(0, 5, 1, 0, None), text).endswith("drafted: not recorded")


def test_the_strip_grows_while_the_reply_streams(qtbot, open_window):
    script = [(f" w{i}", "draft" if i % 2 else "target", i // 2) for i in range(80)]
    window = open_window(ScriptedFactory(script, delay=0.01), settings=Settings())
    window.send("go")
    view = window.chat.messages[-1]
    qtbot.waitUntil(lambda: len(view.text) > 40, timeout=5000)
    assert view.streaming and 0 < len(view.strip.passes) < 40
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        pass
    assert len(view.strip.passes) == 40


def test_the_cells_count_the_end_token_as_the_footer_does():
    """Issue 54, item 6: the footer's tokens/pass (2.50) and the strip's cells (2.33) disagreed
    on a reply that ended: the last pass made the end token too, and both now count it."""
    from draftlight.engine.reply.events import Stats
    from draftlight.ui.flash.passes import describe, passes_of
    text = "Hello world, again."
    from draftlight.ui.flash.reply_figures import ReplyFigures
    stored = {"passes": [[5, 1, 0, 0], [12, 3, 2, 3], [19, 2, 1, 1]], "stop_reason": "eos",
              "target_passes": 3}
    cells = passes_of(text, [], ReplyFigures.from_record(stored))
    stats = Stats(new_tokens=6, target_passes=3, stop_reason="eos")
    assert sum(c.tokens for c in cells) / len(cells) == stats.mean_accepted_length == 7 / 3
    assert cells[-1].ends and describe(cells[-1], text).startswith(
        "“again.”\n3 tokens (the last one ends the reply) in one pass")
    cut = passes_of(text, [], ReplyFigures.from_record(dict(stored, stop_reason="max_tokens")))
    assert not cut[-1].ends and sum(c.tokens for c in cut) == 6
    # an end token made by a pass that wrote nothing else: a cell of its own
    alone = passes_of(text, [], ReplyFigures.from_record(dict(stored, target_passes=4)))
    assert len(alone) == 4 and alone[-1].ends and not alone[-2].ends
    assert sum(c.tokens for c in alone) / 4 == Stats(
        new_tokens=6, target_passes=4, stop_reason="eos").mean_accepted_length
    assert describe(alone[-1], text).startswith("“(the end of the reply)”\n1 token (the last")
