"""Messages above the chat (errors, warnings), with an optional action button."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget


class Banner(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setStyleSheet("#banner { background: #fff3cd; border: 1px solid #e0c36a; "
                           "border-radius: 4px; } QLabel { color: #533f03; }")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel()
        # its lines quote file and model names and servers' messages: as text, never HTML
        self.label.setTextFormat(Qt.PlainText)
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.action_button = QPushButton()
        self.action_button.hide()
        layout.addWidget(self.action_button)
        close = QToolButton(text="✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(close)
        self._action: Callable[[], None] | None = None
        self._action_line = ""  # the line the button belongs to: it goes with that line
        self.action_button.clicked.connect(self._run_action)
        self.hide()

    def show_message(self, text: str, action_text: str | None = None,
                     action: Callable[[], None] | None = None) -> None:
        """Show `text`; a message already showing stays above it (and keeps its button
        unless this one brings its own), so a later notice never hides an earlier problem."""
        line = text
        if not self.isHidden() and self.label.text() and text not in self.label.text():
            text = f"{self.label.text()}\n{text}"
            if action is None:
                action, action_text, line = (self._action, self.action_button.text(),
                                             self._action_line)
        self.label.setText(text)
        self._action, self._action_line = action, line
        self.action_button.setText(action_text or "")
        self.action_button.setVisible(action is not None)
        self.show()

    def withdraw(self, text: str) -> None:
        """Take back the line `text` (it is no longer true); the banner hides when it was the
        only one."""
        lines = [line for line in self.label.text().split("\n") if line != text]
        if not self.isHidden() and len(lines) < len(self.label.text().split("\n")):
            self.label.setText("\n".join(lines))
            if text == self._action_line or text in self._action_line.split("\n"):
                self._action, self._action_line = None, ""  # its button goes with it
                self.action_button.hide()
            if not lines:
                self.hide()

    def _run_action(self) -> None:
        action, self._action = self._action, None
        self.hide()
        if action is not None:
            action()
