"""A read-only window onto a text: an attached file as it was sent, opened from its chip, or at
the span a reply copied from it, which is marked and scrolled into view."""

from __future__ import annotations

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QPlainTextEdit, QTextEdit, QVBoxLayout,
                               QWidget)

from draftlight.ui.widgets.screen_fit import fit_to_screen


class TextViewer(QDialog):
    def __init__(self, title: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.text = QPlainTextEdit(text)
        self.text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        fit_to_screen(self, 720, 560)

    def mark(self, start: int, end: int, colour: QColor) -> None:
        """Mark characters [start, end) in `colour` and scroll to them."""
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(max(0, start))
        cursor.setPosition(min(end, len(self.text.toPlainText())), QTextCursor.KeepAnchor)
        selection = QTextEdit.ExtraSelection()
        selection.cursor = cursor
        fmt = QTextCharFormat()
        fmt.setBackground(colour)
        selection.format = fmt
        self.text.setExtraSelections([selection])
        moved = QTextCursor(cursor)
        moved.clearSelection()
        self.text.setTextCursor(moved)
        self.text.centerCursor()

    def marked(self) -> str:
        """The marked text ("" when nothing is)."""
        selections = self.text.extraSelections()
        return selections[0].cursor.selectedText() if selections else ""
