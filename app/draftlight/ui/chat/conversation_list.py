"""The list of saved conversations: search, new, rename, delete."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QHBoxLayout, QInputDialog, QLineEdit, QListWidget,
                               QListWidgetItem, QMessageBox, QPushButton, QVBoxLayout, QWidget)

from draftlight.store.history import History, HistoryError


class ConversationList(QWidget):
    opened = Signal(int)  # conversation id
    new_requested = Signal()
    deleted = Signal(int)
    failed = Signal(str)

    def __init__(self, history: History, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.history = history
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 0, 6)
        self.search = QLineEdit(placeholderText="Search conversations")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.refresh)
        layout.addWidget(self.search)
        self.list = QListWidget()
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
        self.refresh()

    def refresh(self) -> None:
        try:
            conversations = self.history.conversations(self.search.text().strip())
        except HistoryError as exc:
            self.failed.emit(str(exc))
            return
        self.list.blockSignals(True)
        self.list.clear()
        for conversation in conversations:
            item = QListWidgetItem(conversation.title or "(untitled)")
            item.setData(Qt.UserRole, conversation.id)
            item.setToolTip(conversation.title)
            self.list.addItem(item)
            if conversation.id == self.current_id:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        writable = not self.history.read_only
        self.rename_button.setEnabled(writable)
        self.delete_button.setEnabled(writable)

    def set_current(self, conversation_id: int | None) -> None:
        self.current_id = conversation_id
        self.refresh()

    def _open_item(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(Qt.UserRole)
        if conversation_id != self.current_id:
            self.opened.emit(conversation_id)

    def _selected_id(self) -> int | None:
        item = self.list.currentItem()
        return item.data(Qt.UserRole) if item else None

    def rename_current(self) -> None:
        conversation_id = self._selected_id()
        conversation = self.history.conversation(conversation_id) if conversation_id else None
        if conversation is None:
            return
        title, ok = QInputDialog.getText(self, "Rename conversation", "Title:",
                                         text=conversation.title)
        if ok and title.strip():
            self._write(lambda: self.history.rename(conversation_id, title.strip()))

    def delete_current(self) -> None:
        conversation_id = self._selected_id()
        conversation = self.history.conversation(conversation_id) if conversation_id else None
        if conversation is None:
            return
        answer = QMessageBox.question(self, "Delete conversation",
                                      f"Delete “{conversation.title}”? This cannot be undone.")
        if answer == QMessageBox.Yes:
            if self._write(lambda: self.history.delete(conversation_id)):
                self.deleted.emit(conversation_id)

    def _write(self, change) -> bool:
        try:
            change()
        except HistoryError as exc:
            self.failed.emit(str(exc))
            return False
        self.refresh()
        return True
