"""Where the user types: Enter sends, Shift+Enter starts a new line."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QPlainTextEdit, QWidget


LONG_PASTE = 4000  # characters: a paste this long is offered to become an attachment


class Composer(QPlainTextEdit):
    submitted = Signal(str)
    files_dropped = Signal(list)  # paths of files dropped on the box: to attach
    empty_submitted = Signal()  # Enter or Send with nothing (or only spaces) typed
    held = Signal()  # Enter or Send while nothing can be sent (a reply runs, a model loads):
    # the text stays in the box and the window says why
    edit_last = Signal()  # Up in an empty box: edit the last message sent
    long_paste = Signal(int, int)  # where a paste of LONG_PASTE or more characters went: start,
    # end (the window offers to make it an attachment; it stays typed until the user says so)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText("Message Draftlight (Enter sends, Shift+Enter for a new line)")
        self.setTabChangesFocus(True)
        self.setObjectName("composer")
        self.setMaximumHeight(96)
        self.can_send = True  # False while a reply streams or no model is loaded

    def canInsertFromMimeData(self, source) -> bool:
        return source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source) -> None:
        """Files dropped (or pasted as files) are attached, not typed in as their paths."""
        files = [url.toLocalFile() for url in source.urls() if url.isLocalFile()]
        if files:
            self.files_dropped.emit(files)
            return
        start = self.textCursor().selectionStart()
        super().insertFromMimeData(source)
        end = self.textCursor().position()
        if end - start >= LONG_PASTE:
            self.long_paste.emit(start, end)

    def take_span(self, start: int, end: int) -> str:
        """Remove characters [start, end) and return them (a long paste made an attachment)."""
        cursor = self.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(min(end, len(self.toPlainText())), cursor.MoveMode.KeepAnchor)
        text = cursor.selectedText().replace("\u2029", "\n")  # Qt's paragraph separator
        cursor.removeSelectedText()
        return text

    def keyPressEvent(self, event) -> None:
        enter = event.key() in (Qt.Key_Return, Qt.Key_Enter)
        if enter and not event.modifiers() & Qt.ShiftModifier:
            self.submit()
            return
        if enter:  # Shift+Enter: a line break, not a paragraph separator
            self.insertPlainText("\n")
            return
        if event.key() == Qt.Key_Up and not self.toPlainText() and self.can_send:
            self.edit_last.emit()
            return
        super().keyPressEvent(event)

    def submit(self) -> None:
        text = self.toPlainText().strip()
        if not self.can_send:
            if text:
                self.held.emit()
            return
        if not text:
            self.empty_submitted.emit()
            return
        self.clear()
        self.submitted.emit(text)
