"""The window when the history does not answer: another Draftlight holds its write lock (the
realistic case of "database is locked"; a full disk or an I/O error takes the same path). The
reply still ends, the buttons come back, one banner line says what happened, and what was not
saved is kept in memory and saved once the history answers again."""

from __future__ import annotations

import sqlite3

import pytest

from draftlight.store.history import COMPLETE, history_path
from tests.support.waiting import wait_until, window_state
from tests.support.window import send_and_wait


@pytest.fixture
def other_app():
    """A second connection to the window's history, as a second Draftlight would hold it;
    lock() takes the write lock until release()."""
    held = []

    class OtherApp:
        def lock(self):
            db = sqlite3.connect(history_path(), isolation_level=None)
            db.execute("BEGIN EXCLUSIVE")
            held.append(db)

        def release(self):
            while held:
                db = held.pop()
                db.execute("COMMIT")
                db.close()

    app = OtherApp()
    yield app
    app.release()


def _saved(window):
    """(title, [(role, text, status)]) of each saved conversation, newest first."""
    return [(c.title, [(m.role, m.text, m.status) for m in window.history.messages(c.id)])
            for c in window.history.conversations()]


def test_a_reply_while_the_history_is_locked_is_kept_and_saved_when_it_answers(
        qtbot, open_window, other_app):
    window = open_window()
    send_and_wait(qtbot, window, "first")
    other_app.lock()
    view = send_and_wait(qtbot, window, "second")
    assert view.text == "Hello world! Bye."
    assert window.send_button.isEnabled() and window.regenerate_button.isEnabled()
    assert window.banner.isVisible(), window_state(window)
    line = window.banner.label.text()
    assert "locked" in line and "\n" not in line, line
    assert _saved(window)[0][1] == [
        ("user", "first", COMPLETE), ("assistant", "Hello world! Bye.", COMPLETE)]

    other_app.release()
    wait_until(qtbot, lambda: len(_saved(window)[0][1]) == 4, "the kept messages to be saved",
               10_000, lambda: window_state(window))
    assert _saved(window) == [("first", [
        ("user", "first", COMPLETE), ("assistant", "Hello world! Bye.", COMPLETE),
        ("user", "second", COMPLETE), ("assistant", "Hello world! Bye.", COMPLETE)])]
    assert window.banner.isHidden()  # its line was taken back once everything was saved


def test_a_new_conversation_started_while_locked_appears_once_saved(
        qtbot, open_window, other_app):
    window = open_window()
    other_app.lock()
    send_and_wait(qtbot, window, "started while locked")
    assert window.send_button.isEnabled()
    assert "locked" in window.banner.label.text()
    send_and_wait(qtbot, window, "and went on")
    assert window.conversations.list.count() == 0

    other_app.release()
    wait_until(qtbot, lambda: window.conversations.list.count() == 1,
               "the conversation to be saved", 10_000, lambda: window_state(window))
    assert window.conversations.list.item(0).text() == "started while locked"
    [(_title, messages)] = _saved(window)
    assert [(role, text) for role, text, _ in messages] == [
        ("user", "started while locked"), ("assistant", "Hello world! Bye."),
        ("user", "and went on"), ("assistant", "Hello world! Bye.")]
    assert window.session.conversation_id is not None
    assert window.conversations.current_id == window.session.conversation_id


def test_a_history_that_cannot_be_read_gives_one_line_in_rename_delete_and_export(
        qtbot, open_window, monkeypatch):
    """Reads fail too (an I/O error, a file damaged while the app runs): Rename, Delete and
    Export say so in the banner, and nothing escapes the slot (issue 37, item 7)."""
    from draftlight.store.history import HistoryUnavailable
    from draftlight.ui.chat.export_actions import export_conversation
    window = open_window()
    send_and_wait(qtbot, window, "first")
    window.conversations.list.setCurrentRow(0)

    def unreadable(*_args):
        raise HistoryUnavailable("the history could not be read: disk I/O error")

    monkeypatch.setattr(window.history, "conversation", unreadable)
    for action in (window.conversations.rename_current, window.conversations.delete_current,
                   lambda: export_conversation(window)):
        window.banner.hide()
        action()  # before the fix: HistoryUnavailable escaped here
        assert window.banner.isVisible(), window_state(window)
        assert "disk I/O error" in window.banner.label.text()


def test_a_history_held_as_the_window_opens_is_busy_then_read_never_set_aside(qtbot):
    """Issue 76, hole 12: another program holding the whole file for a moment as the window
    opened left it read-only with an empty list after the lock was gone, and the banner's
    "Start a new history" renamed the healthy file .corrupt-…"""
    from draftlight.settings import load_settings
    from draftlight.store.history import History
    from tests.support.real_window import window_opener
    from tests.support.scripted_engine import ScriptedFactory
    kept = History()
    kept.add_message(kept.create_conversation("kept"), "user", "hello")
    kept.close()
    other = sqlite3.connect(history_path(), isolation_level=None)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")  # reads refused too, till it closes
    other.execute("BEGIN EXCLUSIVE")
    other.execute("UPDATE conversations SET title = title")
    with window_opener(qtbot) as opener:
        window = opener(load_settings()[0], History(check_in_background=True),
                        factory=ScriptedFactory())
        wait_until(qtbot, lambda: "History is busy" in window.banner.label.text(),
                   "the busy line", 5_000, lambda: window_state(window))
        assert window.conversations.list.count() == 0 and not window.history.read_only
        assert window.banner.action_button.isHidden()  # nothing to set aside
        other.execute("COMMIT")
        other.close()
        wait_until(qtbot, lambda: window.conversations.list.count() == 1, "the list read",
                   10_000, lambda: window_state(window))
        assert "History is busy" not in window.banner.label.text()
        assert window.history.problem is None and not window.history.read_only
        wait_until(qtbot, lambda: window.ready, "the models to load", 10_000)
        send_and_wait(qtbot, window, "written after")
        assert any(m.text == "written after" for c in window.history.conversations()
                   for m in window.history.messages(c.id))
    assert not list(history_path().parent.glob("*corrupt*"))
