"""Runs of the window without a screen (--screenshot, --record): send a prompt once the model is
loaded, act when the reply is in, exit. And --dark's palette."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QToolBar

from app.ui.flash import DURATION

SCREENSHOT_TIMEOUT_MS = 10 * 60 * 1000


def dark_palette() -> QPalette:
    """A dark window palette (what a dark system theme gives), for --dark."""
    palette = QPalette()
    for role, colour in ((QPalette.Window, "#2b2b2b"), (QPalette.WindowText, "#e6e6e6"),
                         (QPalette.Base, "#1e1e1e"), (QPalette.AlternateBase, "#333333"),
                         (QPalette.Text, "#e6e6e6"), (QPalette.Button, "#353535"),
                         (QPalette.ButtonText, "#e6e6e6"), (QPalette.ToolTipBase, "#333333"),
                         (QPalette.ToolTipText, "#e6e6e6"), (QPalette.PlaceholderText, "#8c8c8c"),
                         (QPalette.Mid, "#9a9a9a"), (QPalette.Link, "#6cb4ff"),
                         (QPalette.Highlight, "#2f65ca"), (QPalette.HighlightedText, "#ffffff")):
        palette.setColor(role, QColor(colour))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        palette.setColor(QPalette.Disabled, role, QColor("#7a7a7a"))
    return palette


class OffscreenRun(QObject):
    """Send the prompt once the model is loaded; act when the reply is in; exit with an error
    if the model does not load, the reply fails, or nothing comes for 10 minutes.

    A QObject on the GUI thread, so the worker's signals reach its methods queued."""

    def __init__(self, window, path: str, prompt: str | None) -> None:
        super().__init__(window)
        self.window, self.path, self.prompt = window, path, prompt or ""
        self.exit_code = 1
        window.model_ready.connect(self._send, Qt.SingleShotConnection)
        window.session.reply_finished.connect(self._reply_done)
        window.engine.worker.load_failed.connect(self._failed)
        window.session.error.connect(self._failed)
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self._timeout)

    def _send(self) -> None:
        self.window.send(self.prompt)

    def _reply_done(self, _view) -> None:
        raise NotImplementedError

    def _failed(self, message: str) -> None:
        print(f"draftlight: error: {message}", file=sys.stderr)
        self.exit_code = 2
        QApplication.instance().exit(2)

    def _timeout(self) -> None:
        print("draftlight: error: no reply within 10 minutes", file=sys.stderr)
        QApplication.instance().exit(1)


class ScreenshotRun(OffscreenRun):
    """--screenshot: a PNG of the whole window once the reply is in, the window wide enough
    for the whole toolbar (no overflow menu hiding the legend)."""

    def __init__(self, window, path: str, prompt: str | None) -> None:
        super().__init__(window, path, prompt)
        toolbar = window.findChild(QToolBar, "main-toolbar")
        if toolbar is not None:
            window.resize(max(window.width(), toolbar.sizeHint().width() + 16), window.height())

    def _reply_done(self, _view) -> None:
        # Let the final layout settle and the last runs' flashes fade to their tints.
        QTimer.singleShot(round((DURATION + 0.15) * 1000), self._save)

    def _save(self) -> None:
        if self.window.grab().save(self.path, "PNG"):
            self.exit_code = 0
        else:
            print(f"draftlight: error: could not write {self.path}", file=sys.stderr)
            self.exit_code = 2
        QApplication.instance().exit(self.exit_code)
