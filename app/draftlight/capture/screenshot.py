"""`draftlight --screenshot PNG --prompt TEXT`: the window without a screen, a prompt sent once the
model is loaded, a PNG of the window when the reply is in, then exit. OffscreenRun is what
--screenshot and --record (draftlight.capture.recording) share."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QToolBar

from draftlight.ui.engine.loaded import LoadFailed
from draftlight.ui.flash.driver import DURATION

SCREENSHOT_TIMEOUT_MS = 10 * 60 * 1000


class OffscreenRun(QObject):
    """Send the prompt once the model is loaded; act when the reply is in; exit with an error
    if the model does not load, the reply fails, or nothing comes for 10 minutes.

    A QObject on the GUI thread, so the worker's signals reach its methods queued."""

    def __init__(self, window, path: str, prompt: str | None) -> None:
        super().__init__(window)
        self.window, self.path, self.prompt = window, path, prompt or ""
        self.exit_code = 1
        self.finished = False  # the run has its result; what the closing window says after is not
        window.model_ready.connect(self._send, Qt.SingleShotConnection)
        window.session.reply_finished.connect(self._reply_done)
        window.engine.worker.load_event.connect(
            lambda event: self._failed(event.message) if isinstance(event, LoadFailed) else None)
        window.session.error.connect(self._failed)
        QTimer.singleShot(SCREENSHOT_TIMEOUT_MS, self._timeout)

    def _send(self) -> None:
        self.window.send(self.prompt)

    def _reply_done(self, _view) -> None:
        raise NotImplementedError

    def _failed(self, message: str) -> None:
        self._end(2, message)

    def _timeout(self) -> None:
        self._end(1, "no reply within 10 minutes")

    def _end(self, code: int, error: str = "") -> None:
        """Exit with `code` (and `error` on stderr) unless the run has ended already: a load
        cancelled by the closing window, say, is no failure of a run that had succeeded."""
        if self.finished:
            return
        self.finished, self.exit_code = True, code
        if error:
            print(f"draftlight: error: {error}", file=sys.stderr)
        QApplication.instance().exit(code)


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
            self._end(0)
        else:
            self._end(2, f"could not write {self.path}")
