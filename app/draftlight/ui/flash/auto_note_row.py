"""Under a reply where auto drafted little or nothing: why, in measured terms (Stats.auto_note),
and N-gram a click away."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from draftlight.engine.reply.events import Stats
from draftlight.ui.widgets.plain_text import plain_label


class AutoNoteRow(QWidget):
    mode_requested = Signal(str)  # "Try N-gram": switch the mode box to it

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.label = plain_label()  # a note names models
        self.label.setWordWrap(True)
        self.label.setStyleSheet("font-size: small;")
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.label, 1)
        self.try_ngram = QToolButton(text="Try N-gram")
        self.try_ngram.setToolTip("Draft every match from the conversation from now on "
                                  "(the mode box: N-gram)")
        self.try_ngram.clicked.connect(lambda: self.mode_requested.emit("ngram"))
        layout.addWidget(self.try_ngram, 0, Qt.AlignTop)
        self.setVisible(False)

    def show_note(self, stats: Stats | None, shown: bool) -> None:
        """The note of a finished reply's figures (Stats.auto_note), where `shown`."""
        note = stats.auto_note if stats is not None else ""
        self.label.setText(note)
        self.setVisible(bool(note) and shown)
