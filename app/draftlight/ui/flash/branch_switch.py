"""‹ 2/3 › on a message that has other versions (issue 40): an edited question, a regenerated
reply. The arrows ask the chat to show the previous or next version; the history remembers the
one shown (store/history.py's branches)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


class BranchSwitch(QWidget):
    step = Signal(int)  # -1: the previous version, +1: the next

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.back = QToolButton(text="‹")
        self.forward = QToolButton(text="›")
        self.label = QLabel()
        for button, step, tip in ((self.back, -1, "The previous version"),
                                  (self.forward, 1, "The next version")):
            button.setAutoRaise(True)
            button.setToolTip(tip)
            button.clicked.connect(lambda _=False, s=step: self.step.emit(s))
        row.addWidget(self.back)
        row.addWidget(self.label)
        row.addWidget(self.forward)
        self.index, self.count = 0, 1
        self.hide()

    def set_versions(self, index: int, count: int) -> None:
        """Version `index` (from 0) of `count` is shown; hidden when there is only one."""
        self.index, self.count = index, count
        self.label.setText(f"{index + 1}/{count}")
        self.back.setEnabled(index > 0)
        self.forward.setEnabled(index < count - 1)
        self.setVisible(count > 1)
