"""Outside text (a conversation's title, a file's or a model's name, a server's message) where Qt
guesses whether text is HTML: tooltips, message boxes, and labels left at Qt's AutoText.

Qt reads text as HTML when its first '<' before a newline opens a tag it knows
(Qt::mightBeRichText), and its HTML renderer opens the file an <img> names: one naming a FIFO
hung the window for ever (issue 76). A label can be told its text is plain (plain_label); a
tooltip or a message box cannot, so their text goes through plain_tip."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt  # QtGui's Qt namespace holds mightBeRichText
from PySide6.QtWidgets import QLabel


def plain_tip(text: str) -> str:
    """`text` as Qt will show it, character for character, and never read as HTML: unchanged
    when Qt would take it as plain text, else escaped into a paragraph of its own."""
    if not GuiQt.mightBeRichText(text):
        return text
    # pre-wrap, not convertFromPlainText: that collapses runs of spaces, or (its Pre mode)
    # turns them into no-break spaces that stop a long tip from wrapping
    escaped = html.escape(text, quote=False).replace("\n", "<br>")
    return f"<p style='white-space:pre-wrap'>{escaped}</p>"


def plain_label(text: str = "", **properties) -> QLabel:
    """A QLabel (Qt's keyword properties: wordWrap=True, …) that shows its text as typed, for
    labels that can hold outside text."""
    label = QLabel(text, **properties)
    label.setTextFormat(Qt.PlainText)
    return label
