"""A right-click on a message (issue 36, item 9): Copy message above Qt's own Copy and Select All,
and Regenerate on the latest reply."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication

from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait


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
