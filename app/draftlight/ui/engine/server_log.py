"""View ▸ Server log: what llama-server printed, its latest lines, following new ones.

ServerLog keeps the lines whether or not the dialog is open (the worker's `server_log` signal
feeds it from the start), so a server that failed to start can be read about afterwards.
"""

from __future__ import annotations

import collections

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from draftlight.ui.widgets.screen_fit import fit_to_screen

MAX_LINES = 2000  # as many as llama-server's own log tail (draftlight.engine.server.process.LOG_LINES)
EMPTY = "Nothing yet: llama-server writes here when the llama.cpp server engine runs."


class ServerLog(QObject):
    line_added = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.lines: collections.deque[str] = collections.deque(maxlen=MAX_LINES)

    def append(self, line: str) -> None:
        self.lines.append(line)
        self.line_added.emit(line)


class ServerLogDialog(QDialog):
    """Read-only; it opens at the end, and at the end it stays there as lines arrive, while
    scrolled up (reading) it stays put."""

    def __init__(self, log: ServerLog, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Server log")
        fit_to_screen(self, 820, 480)
        layout = QVBoxLayout(self)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.text.setMaximumBlockCount(MAX_LINES)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.text.setPlaceholderText(EMPTY)
        self.text.setPlainText("\n".join(log.lines))
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        log.line_added.connect(self._add)

    def _add(self, line: str) -> None:
        bar = self.text.verticalScrollBar()
        following = bar.value() == bar.maximum()
        self.text.appendPlainText(line)
        if following:
            bar.setValue(bar.maximum())

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.text.verticalScrollBar().setValue(self.text.verticalScrollBar().maximum())


def open_server_log(window) -> None:
    """View ▸ Server log on a MainWindow: one dialog, raised when asked again."""
    if window.server_log_dialog is None:
        window.server_log_dialog = ServerLogDialog(window.server_log, window)
    window.server_log_dialog.show()
    window.server_log_dialog.raise_()
