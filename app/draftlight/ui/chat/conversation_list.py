"""The list of saved conversations (each with when it was last written to): search, new,
rename, delete, from the buttons or a right-click. A search runs on a worker, on a connection of
its own (store/history_search.py): each conversation found shows the line that matched, the
match in bold, and opens at that message, in the branch that holds it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QInputDialog, QLineEdit, QListWidget,
                               QListWidgetItem, QMenu, QMessageBox, QPushButton, QVBoxLayout,
                               QWidget)

from draftlight.store.history import History, HistoryError
from draftlight.store.history_search import search
from draftlight.ui.chat.conversation_row import (  # noqa: F401 - the roles: tests read them here
    MATCH_ROLE, MESSAGE_ROLE, UPDATED_ROLE, WHEN_ROLE, ConversationRow)
from draftlight.ui.chat.conversation_time import when
from draftlight.ui.widgets.latest_request import LatestRequests
from draftlight.ui.widgets.plain_text import plain_tip

# Rows added to the list at a time, the next ones as it is scrolled near its end: a year of use
# (5,000 conversations) built its first screen in 380 ms with every row made at once, 11 ms so
# (`draftlight bench scale`, 2-core CPU)
PAGE = 100


class ConversationList(QWidget):
    opened = Signal(int)  # conversation id
    opened_at = Signal(int, int)  # conversation id, message id: a search hit
    new_requested = Signal()
    deleted = Signal(int)
    failed = Signal(str)
    searched = Signal(int)  # a search answered: how many conversations it found

    def __init__(self, history: History, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        self.search = QLineEdit(placeholderText="Search conversations")
        self.search.setObjectName("conversation-search")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.refresh)
        layout.addWidget(self.search)
        self.list = QListWidget()
        self.list.setObjectName("conversation-rows")
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.list.setItemDelegate(ConversationRow(self.list))
        self.list.setUniformItemSizes(True)  # every row is two lines: measured once, not per row
        self.list.setContextMenuPolicy(Qt.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self._rest: list = []  # conversations not yet in the list (newest first): PAGE at a time
        self.list.verticalScrollBar().valueChanged.connect(self._near_the_end)
        self.list.itemActivated.connect(self._open_item)
        self.list.itemClicked.connect(self._open_item)
        layout.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        self.new_button = QPushButton("New")
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        self.rename_button = QPushButton("Rename")
        self.rename_button.clicked.connect(self.rename_current)
        self.delete_button = QPushButton("Delete")
        self.delete_button.clicked.connect(self.delete_current)
        for button in (self.new_button, self.rename_button, self.delete_button):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.current_id: int | None = None
        self.writing_id: int | None = None  # where a reply is being written (set_writing)
        self._searches = LatestRequests(self, workers=1, thread_name_prefix="search")
        self.refresh()

    def refresh(self) -> None:
        text = self.search.text().strip()
        if text and self.history.path is not None:  # on a worker: the rows come when found
            path = self.history.path
            self._searches.run("search", lambda: search(path, text), self._show_hits,
                               lambda exc: self.failed.emit(str(exc)))
            return
        try:
            conversations = self.history.conversations(text)
        except HistoryError as exc:
            self.failed.emit(str(exc))
            return
        self.list.blockSignals(True)
        self._rest = []  # clearing moves the scroll bar: no page of the old list then
        self.list.clear()
        self._rest = conversations
        self._add_page(until=self.current_id)
        self.list.blockSignals(False)
        writable = not self.history.read_only
        self.rename_button.setEnabled(writable)
        self.delete_button.setEnabled(writable)

    def _add_page(self, until: int | None = None) -> None:
        """The next PAGE conversations of the list, and more until the one `until` is shown
        (the current one, wherever it lies)."""
        bar = self.list.verticalScrollBar()  # the rows move it: no page from within a page
        blocked = bar.blockSignals(True)
        try:
            self._add_pages(until)
        finally:
            bar.blockSignals(blocked)

    def _add_pages(self, until: int | None) -> None:
        while self._rest:
            page, self._rest = self._rest[:PAGE], self._rest[PAGE:]
            for conversation in page:
                writing = conversation.id == self.writing_id
                item = self._add_row(
                    conversation.id, conversation.title,
                    "writing a reply…" if writing else when(conversation.updated), "")
                item.setData(UPDATED_ROLE, conversation.updated)  # its tip, said on hover
                if conversation.id == self.current_id:
                    self.list.setCurrentItem(item)
                    until = None
            if until is None:
                return

    def _near_the_end(self, value: int) -> None:
        """Scrolled within a page of the list's end: the next page of conversations."""
        bar = self.list.verticalScrollBar()
        if self._rest and value >= bar.maximum() - bar.pageStep():
            blocked = self.list.blockSignals(True)
            self._add_page()
            self.list.blockSignals(blocked)

    def _add_row(self, conversation_id: int, title: str, second_line: str,
                 tip: str) -> QListWidgetItem:
        """A row: the title, and under it `second_line` (its time, or a search's match)."""
        title = title or "(untitled)"
        item = QListWidgetItem(title)
        item.setData(Qt.UserRole, conversation_id)
        item.setData(WHEN_ROLE, second_line)
        item.setToolTip(plain_tip(f"{title}\n{tip}" if tip else title))
        self.list.addItem(item)
        return item

    def _show_hits(self, hits) -> None:
        """A search's answer: each conversation found, with the line that matched."""
        self.list.blockSignals(True)
        self.list.clear()
        for hit in hits:
            item = self._add_row(hit.conversation_id, hit.title, hit.line or when(hit.updated),
                                 hit.line)
            item.setData(MATCH_ROLE, (hit.start, hit.end) if hit.line else None)
            item.setData(MESSAGE_ROLE, hit.message_id)
        self.list.blockSignals(False)
        self.searched.emit(len(hits))

    def close_searches(self) -> None:
        self._searches.shutdown()

    def set_writing(self, conversation_id: int | None) -> None:
        """Mark the conversation a reply is being written in (None: none is)."""
        if conversation_id != self.writing_id:
            self.writing_id = conversation_id
            self.refresh()

    def set_current(self, conversation_id: int | None) -> None:
        self.current_id = conversation_id
        self.refresh()

    def _open_item(self, item: QListWidgetItem) -> None:
        conversation_id, message_id = item.data(Qt.UserRole), item.data(MESSAGE_ROLE)
        if message_id is not None:  # a search hit: at the message that matched
            self.opened_at.emit(conversation_id, message_id)
        elif conversation_id != self.current_id:
            self.opened.emit(conversation_id)

    def _selected_id(self) -> int | None:
        item = self.list.currentItem()
        return item.data(Qt.UserRole) if item else None

    def rename_current(self) -> None:
        conversation_id, conversation = self._selected_conversation()
        if conversation is None:
            return
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:",
                                         text=conversation.title)
        if ok and title.strip():
            self._write(lambda: self.history.rename(conversation_id, title.strip()))

    def delete_current(self) -> None:
        conversation_id, conversation = self._selected_conversation()
        if conversation is None:
            return
        answer = QMessageBox.question(self, "Delete conversation", plain_tip(
            f"Delete “{short_title(conversation.title)}”? This cannot be undone."))
        if answer == QMessageBox.Yes:
            if self._write(lambda: self.history.delete(conversation_id)):
                self.deleted.emit(conversation_id)

    def _menu(self, point) -> None:
        item = self.list.itemAt(point)
        if item is None:
            return
        self.list.setCurrentItem(item)
        menu = QMenu(self)
        menu.addAction("Open", lambda: self._open_item(item))
        writable = not self.history.read_only
        menu.addAction("Rename…", self.rename_current).setEnabled(writable)
        menu.addAction("Delete…", self.delete_current).setEnabled(writable)
        menu.popup(self.list.viewport().mapToGlobal(point))
        self.menu = menu  # kept for tests; replaced by the next right-click

    def _selected_conversation(self):
        """(id, Conversation) of the selected row; (id, None) when there is none or the history
        cannot be read (said in one line through `failed`)."""
        conversation_id = self._selected_id()
        try:
            return conversation_id, (self.history.conversation(conversation_id)
                                     if conversation_id else None)
        except HistoryError as exc:
            self.failed.emit(str(exc))
            return conversation_id, None

    def _write(self, change) -> bool:
        try:
            change()
        except HistoryError as exc:
            self.failed.emit(str(exc))
            return False
        self.refresh()
        return True


def short_title(title: str, limit: int = 60) -> str:
    """`title` cut at a word boundary to about `limit` characters (a dialog's line)."""
    if len(title) <= limit:
        return title
    cut = title[:limit].rsplit(" ", 1)[0] if " " in title[:limit] else title[:limit]
    return cut.rstrip(" ,.;:") + "…"
