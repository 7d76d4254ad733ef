"""The window comes back as it was left (issue 36, item 7): its size, position and the
conversation it showed, kept in Settings when it closes."""

from __future__ import annotations

from draftlight.settings import load_settings
from draftlight.store.history import History
from draftlight.ui.chat.main_window import MainWindow
from tests.support.scripted_engine import ScriptedFactory
from tests.support.waiting import wait_until, window_state
from tests.support.window import send_and_wait


def open_again(qtbot, history):
    window = MainWindow(load_settings()[0], history, factory=ScriptedFactory())
    qtbot.addWidget(window)
    window.show()
    wait_until(qtbot, lambda: window.ready, "the models to load", 10_000,
               lambda: window_state(window))
    return window


def test_size_and_conversation_are_restored(qtbot, tmp_path):
    history = History(tmp_path / "history.sqlite3")
    try:
        window = open_again(qtbot, history)
        send_and_wait(qtbot, window, "first conversation")
        window.new_conversation()
        send_and_wait(qtbot, window, "second conversation")
        window.session.open_conversation(history.conversations()[-1].id)  # the first one
        shown = window.session.conversation_id
        window.resize(733, 544)
        qtbot.wait(20)
        window.close()

        again = open_again(qtbot, history)
        assert again.session.conversation_id == shown
        assert [v.text for v in again.chat.messages][0] == "first conversation"
        assert (again.width(), again.height()) == (733, 544)
        again.close()
    finally:
        history.close()


def test_a_conversation_deleted_since_is_not_opened(qtbot, tmp_path):
    history = History(tmp_path / "history.sqlite3")
    try:
        window = open_again(qtbot, history)
        send_and_wait(qtbot, window, "soon gone")
        gone = window.session.conversation_id
        window.close()
        history.delete(gone)
        again = open_again(qtbot, history)
        assert again.session.conversation_id is None and not again.chat.messages
        again.close()
    finally:
        history.close()
