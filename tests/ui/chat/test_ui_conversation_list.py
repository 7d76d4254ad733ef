"""The conversation list (issue 36, item 9): each conversation says when it was last written to,
a right-click offers Open, Rename and Delete, and the delete prompt cuts a long title at a word."""

from __future__ import annotations

import time

from PySide6.QtCore import QDateTime, QTime, Qt
from PySide6.QtWidgets import QMessageBox

from draftlight.store.history import History
from draftlight.ui.chat.conversation_list import ConversationList, short_title, when


def at(days_ago: int, hour: int = 14) -> float:
    day = QDateTime.currentDateTime().addDays(-days_ago)
    day.setTime(QTime(hour, 2))
    return day.toSecsSinceEpoch()


def test_dates_read_as_a_chat_list_says_them():
    now = at(0, 18)
    assert ":" in when(at(0), now) and len(when(at(0), now)) <= 8  # today: the time of day
    assert when(at(1), now) == "Yesterday"
    weekday = when(at(3), now)
    assert weekday.endswith("day")  # Monday ... Sunday
    older = when(at(40), now)
    assert older[0].isdigit() and not older.endswith("day")
    assert when(at(400), now).split()[-1].isdigit() and len(when(at(400), now).split()) == 3
    assert when(at(1), now, long=True).startswith("Yesterday ")


def test_a_long_title_is_cut_at_a_word():
    title = "Summarise the attached meeting notes about the quarterly budget and the hiring plan"
    short = short_title(title)
    assert short.endswith("…") and len(short) <= 61
    assert title.startswith(short[:-1]) and title[len(short) - 1] == " "  # a whole word
    assert short_title("Short one") == "Short one"


def test_each_row_has_its_date_and_the_right_click_menu_renames_and_deletes(qtbot, monkeypatch):
    history = History(":memory:")
    try:
        first = history.create_conversation("first chat")
        history.create_conversation("Summarise the attached meeting notes about the quarterly "
                                 "budget and the hiring plan for next year")
        panel = ConversationList(history)
        qtbot.addWidget(panel)
        panel.resize(240, 400)
        panel.show()
        from draftlight.ui.chat.conversation_list import WHEN_ROLE
        rows = [panel.list.item(i) for i in range(panel.list.count())]
        assert [r.text()[:5] for r in rows] == ["Summa", "first"]
        assert all(r.data(WHEN_ROLE) == when(time.time()) for r in rows)  # both written now
        assert panel.list.visualItemRect(rows[0]).height() > 1.6 * panel.fontMetrics().height()
        assert panel.list.horizontalScrollBarPolicy() == Qt.ScrollBarAlwaysOff

        asked = []
        monkeypatch.setattr(QMessageBox, "question",
                            lambda parent, title, text: asked.append(text) or QMessageBox.Yes)
        rect = panel.list.visualItemRect(panel.list.item(0))
        panel.list.customContextMenuRequested.emit(rect.center())
        actions = [a.text() for a in panel.menu.actions()]
        assert actions == ["Open", "Rename…", "Delete…"]
        deleted = []
        panel.deleted.connect(deleted.append)
        panel.menu.actions()[2].trigger()
        assert asked and "…”?" in asked[0] and "next year" not in asked[0]
        assert len(deleted) == 1 and deleted[0] != first
        assert panel.list.count() == 1
    finally:
        history.close()


def test_a_long_list_shows_a_page_and_the_next_as_it_is_scrolled(qtbot, tmp_path):
    """A year of conversations: the first screen is built from the newest PAGE rows, scrolling
    near the end adds the next, and the conversation on screen is shown wherever it lies."""
    from draftlight.ui.chat.conversation_list import PAGE

    history = History(tmp_path / "history.sqlite3")
    ids = [history.create_conversation(f"conversation {n}") for n in range(PAGE * 2 + 30)]
    widget = ConversationList(history)
    qtbot.addWidget(widget)
    widget.resize(300, 500)
    widget.show()
    assert widget.list.count() == PAGE
    assert widget.list.item(0).text() == f"conversation {len(ids) - 1}"  # newest first
    bar = widget.list.verticalScrollBar()

    def scroll_to_the_end():
        qtbot.waitUntil(lambda: bar.maximum() > bar.value())  # the rows laid out
        bar.setValue(bar.maximum())

    scroll_to_the_end()
    assert widget.list.count() == 2 * PAGE
    scroll_to_the_end()
    assert widget.list.count() == len(ids)
    widget.set_current(ids[5])  # far down the list: the pages up to it are added
    assert widget.list.currentItem().data(Qt.UserRole) == ids[5]
    assert widget.list.count() == len(ids)
    widget.set_current(ids[-1])
    assert widget.list.count() == PAGE
    history.close()


def test_a_rows_tip_says_when_it_was_last_written_to(qtbot, tmp_path):
    """Worked out on hover (a list of thousands does not make a tip per row up front)."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QStyleOptionViewItem, QToolTip

    history = History(tmp_path / "history.sqlite3")
    history.create_conversation("Quarterly budget")
    widget = ConversationList(history)
    qtbot.addWidget(widget)
    widget.show()
    index = widget.list.model().index(0, 0)
    rect = widget.list.visualRect(index)
    event = QHelpEvent(QEvent.ToolTip, rect.center(), widget.list.viewport().mapToGlobal(
        rect.center()))
    assert widget.list.itemDelegate().helpEvent(event, widget.list, QStyleOptionViewItem(),
                                                index)
    qtbot.waitUntil(lambda: QToolTip.isVisible())
    assert QToolTip.text().startswith("Quarterly budget\nlast message today ")
    QToolTip.hideText()
    history.close()
