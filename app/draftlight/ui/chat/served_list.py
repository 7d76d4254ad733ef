"""View ▸ Served requests: what File ▸ Serve on localhost answers, as it arrives.

A dock beside the chat lists the latest requests (served_log.MAX_KEPT), newest first: who sent
it (the request's `user`, else its User-Agent), its tokens, its speed and how much of it was
drafted. Opening one shows it read-only (served_chat.ServedChat), its reply streaming with the
flash and its origins; "All requests" goes back to the list.

The records are written on the server's and the engine's threads (served_log.py); this reads
them on a timer, a few times a second while the dock is shown, and redraws only when a
record's version changed, so a busy client never costs the window one repaint a token.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QDockWidget, QHBoxLayout, QListWidget, QListWidgetItem,
                               QMainWindow, QPushButton, QStackedWidget, QVBoxLayout, QWidget)

from draftlight.ui.chat.served_chat import ServedChat
from draftlight.ui.engine.served_log import RUNNING, ServedLog, ServedRequest
from draftlight.ui.widgets.elided_label import ElidedLabel

REFRESH_MS = 150  # how often the list and an opened reply are redrawn, at most
FLOATING_SIZE = (560, 520)  # the dock's first size, where the window has room for it


def row_line(served: ServedRequest, now: float | None = None) -> str:
    """One row: "#3 my-agent · 42 tokens · 18.5 tok/s · 60% drafted · done"."""
    now = time.monotonic() if now is None else now
    stats = served.finished.stats if served.finished is not None else None
    tokens = stats.new_tokens if stats is not None else served.tokens
    if stats is not None and stats.seconds > 0:
        rate = stats.new_tokens / stats.seconds
    else:
        started = served.first_piece_at
        # a reply under way is measured up to now; one that ended, up to its last piece
        end = now if served.state == RUNNING else served.last_piece_at or now
        span = end - started if started is not None else 0.0
        rate = served.tokens / span if span > 0.05 else 0.0
    parts = [f"#{served.number} {served.client or 'a client'}", f"{tokens:,} tokens"]
    if rate:
        parts.append(f"{rate:.1f} tok/s")
    if served.tokens:
        parts.append(f"{100 * served.drafted // served.tokens}% drafted")
    parts.append(served.state)
    return " · ".join(parts)


class ServedList(QWidget):
    """The list page and the opened request's page, in one stack."""

    def __init__(self, log: ServedLog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("served-list")
        self.log = log
        self._seen = -1  # the log's version last drawn
        self.rows = QListWidget()
        self.rows.setObjectName("served-rows")
        self.rows.setStyleSheet("QListWidget#served-rows::item { padding: 5px 6px; }")
        self.rows.setAlternatingRowColors(True)  # rows of the same width read apart
        self.rows.setToolTip("Requests to File ▸ Serve on localhost, newest first; "
                             "open one to watch its reply")
        self.rows.itemActivated.connect(self._open_item)
        self.rows.itemDoubleClicked.connect(self._open_item)
        self.chat = ServedChat()
        self.back = QPushButton("‹ All requests")
        self.back.setFlat(True)
        self.back.clicked.connect(self.show_list)
        self.heading = ElidedLabel(elide=Qt.ElideRight)
        opened = QWidget()
        opened_layout = QVBoxLayout(opened)
        opened_layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(self.back)
        top.addWidget(self.heading, 1)
        opened_layout.addLayout(top)
        opened_layout.addWidget(self.chat, 1)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.rows)
        self.pages.addWidget(opened)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)

    def refresh(self) -> None:
        """Timer tick: redraw the rows and the opened reply if anything changed."""
        if self.log.version == self._seen:
            return
        self._seen = self.log.version
        latest = self.log.latest()[::-1]
        chosen = self.rows.currentItem()
        chosen_number = chosen.data(Qt.UserRole) if chosen is not None else None
        while self.rows.count() > len(latest):
            self.rows.takeItem(self.rows.count() - 1)
        for index, served in enumerate(latest):
            item = self.rows.item(index)
            if item is None:
                item = QListWidgetItem()
                self.rows.addItem(item)
            item.setText(row_line(served))
            item.setData(Qt.UserRole, served.number)
            if served.number == chosen_number:
                self.rows.setCurrentItem(item)
        self.chat.catch_up()
        if self.chat.served is not None:
            self.heading.setText(row_line(self.chat.served))

    def open_request(self, number: int) -> None:
        served = next((s for s in self.log.latest() if s.number == number), None)
        if served is None:
            return
        self.chat.show_request(served)
        self.heading.setText(row_line(served))
        self.pages.setCurrentIndex(1)

    def show_list(self) -> None:
        self.pages.setCurrentIndex(0)

    def _open_item(self, item: QListWidgetItem) -> None:
        self.open_request(item.data(Qt.UserRole))


def add_served_dock(window: QMainWindow, log: ServedLog) -> QDockWidget:
    """The dock, hidden; View ▸ Served requests shows it. It first opens floating over the
    window's right half: docked beside the chat of an 800x600 window it would leave the user's
    own conversation a column too narrow to read. It can be docked on either side. Its timer
    runs only while it is shown."""
    dock = QDockWidget("Served requests", window)
    dock.setObjectName("served-dock")
    served = ServedList(log, dock)
    dock.setWidget(served)
    window.addDockWidget(Qt.RightDockWidgetArea, dock)
    dock.hide()
    dock.setFloating(True)
    placed = []

    def shown(visible: bool) -> None:
        if visible and not placed and dock.isFloating():
            placed.append(True)
            frame = window.geometry()
            width, height = min(FLOATING_SIZE[0], frame.width() * 2 // 3), min(
                FLOATING_SIZE[1], frame.height() - 80)
            dock.setGeometry(frame.right() - width - 16, frame.top() + 60, width, height)
        if visible:
            served.refresh()
            served.timer.start()
        else:
            served.timer.stop()
    dock.visibilityChanged.connect(shown)
    toggle = dock.toggleViewAction()
    toggle.setToolTip("The requests File ▸ Serve on localhost answers, live")
    # the View menu is built by menus.py before this; found by its title to keep that file as is
    for action in window.menuBar().actions():
        if action.menu() is not None and action.text() == "&View":
            action.menu().addAction(toggle)
    return dock
