"""A right-click on a message (issue 36, item 9): Copy message above Qt's own Copy and Select All,
and Regenerate on the latest reply."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait
from draftlight.modes import NGRAM, OFF


def texts(menu) -> list[str]:
    return [a.text().replace("&", "").split("\t")[0] for a in menu.actions() if a.text()]


def test_the_latest_reply_offers_copy_message_and_regenerate(qtbot, open_window):
    window = open_window(ScriptedFactory())
    reply = send_and_wait(qtbot, window, "hello")
    question = window.chat.messages[0]
    reply.body.customContextMenuRequested.emit(QPoint(5, 5))
    offered = texts(reply.menu)
    assert offered[:2] == ["Copy message", "Regenerate"]
    assert "Select All" in offered
    reply.menu.actions()[0].trigger()
    assert QGuiApplication.clipboard().text() == reply.text
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        next(a for a in reply.menu.actions() if a.text() == "Regenerate").trigger()
    assert window.chat.messages[-1] is not reply and len(window.chat.messages) == 2

    question.body.customContextMenuRequested.emit(QPoint(5, 5))
    assert "Regenerate" not in texts(question.menu) and "Copy message" in texts(question.menu)
    question.menu.close()


def test_an_earlier_reply_offers_no_regenerate(qtbot, open_window):
    window = open_window(ScriptedFactory())
    first = send_and_wait(qtbot, window, "one")
    send_and_wait(qtbot, window, "two")
    first.body.customContextMenuRequested.emit(QPoint(5, 5))
    assert "Regenerate" not in texts(first.menu)
    first.menu.close()


def test_a_comparison_stays_with_the_reply_it_compared(qtbot, open_window):
    # issue 36, item 3: Compare keeps its result in the conversation (the footer and the
    # history), not only in a dialog that closes
    from draftlight.engine.reply.compare import Comparison
    from draftlight.engine.reply.events import Stats
    window = open_window(ScriptedFactory())
    reply = send_and_wait(qtbot, window, "hello")
    stats = Stats(new_tokens=10, target_passes=10, seconds=1.0)
    result = Comparison(NGRAM, stats, stats, reply.text, reply.text, True, None,
                        plain_runs=(1.0, 1.2, 1.1), speculative_runs=(0.5, 0.8, 0.5))
    window.session.remember_plain_speed(result)
    line = reply.footer.text().splitlines()[-1]
    assert line.startswith("Compared with speculation off: 2.00x decoding speed")
    assert "rounds 1.50-2.20x, median of 3" in line and "identical text" in line
    window.session.writes.flush()
    conversation = window.session.conversation_id
    window.new_conversation()
    window.session.open_conversation(conversation)
    again = window.chat.messages[-1]
    assert again.footer.text().splitlines()[-1] == line


def test_regenerate_sends_the_replaced_answer_as_the_prediction(qtbot, open_window):
    # issue 40, part 2: the earlier answer drafts the new one; with speculation off it does not
    factory = ScriptedFactory()
    window = open_window(factory)
    window.set_mode(NGRAM)
    reply = send_and_wait(qtbot, window, "hello")
    assert factory.predictions == [None]
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        window.regenerate()
    assert factory.predictions[-1] == reply.text
    window.set_mode(OFF)
    with qtbot.waitSignal(window.session.reply_finished, timeout=10_000):
        window.regenerate()
    assert factory.predictions[-1] is None
