"""`draftlight` without a command: the window. With --screenshot it runs offscreen, sends the
prompt, waits for the whole reply, saves a PNG of the window and exits."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from app import paths

SCREENSHOT_TIMEOUT_MS = 10 * 60 * 1000


def run_app(screenshot: str | None = None, prompt: str | None = None, *,
            factory=None) -> int:
    if screenshot:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # read when QApplication starts
    from app.settings import load_settings
    from app.store.history import History
    from app.ui.main_window import MainWindow

    _warn_about_broken_pyside()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Draftlight")
    app.setDesktopFileName("io.github.draftlight.Draftlight")
    icon = paths.icon_file()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    settings, message = load_settings()
    # A screenshot run leaves no trace: its chat lives in memory, its settings are not saved.
    history = History(":memory:" if screenshot else None)
    window = MainWindow(settings, history, factory=factory, settings_message=message,
                        persist_settings=not screenshot)
    run = ScreenshotRun(window, screenshot, prompt) if screenshot else None
    if prompt and not screenshot:
        window.model_ready.connect(lambda: window.send(prompt), Qt.SingleShotConnection)
    window.show()
    try:
        code = app.exec()
    finally:
        window.shutdown()
        history.close()
    return run.exit_code if run is not None else code


def _warn_about_broken_pyside() -> None:
    import PySide6
    # Seen here: on Python 3.11 (no immortal None/True/False) PySide6 6.12.0 drops a reference
    # to None on every call of a void method, and to True on every signal emit, until the
    # interpreter aborts ("deallocating None"). 6.11.3 is fine.
    if sys.version_info < (3, 12) and tuple(PySide6.__version_info__[:3]) == (6, 12, 0):
        print("draftlight: warning: PySide6 6.12.0 crashes on Python < 3.12; install "
              "'PySide6-Essentials<6.12'", file=sys.stderr)


class ScreenshotRun(QObject):
    """Send the prompt once the model is loaded; save the window when the reply is in.

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
        QTimer.singleShot(150, self._save)  # let the final layout settle

    def _save(self) -> None:
        if self.window.grab().save(self.path, "PNG"):
            self.exit_code = 0
        else:
            print(f"draftlight: error: could not write {self.path}", file=sys.stderr)
            self.exit_code = 2
        QApplication.instance().exit(self.exit_code)

    def _failed(self, message: str) -> None:
        print(f"draftlight: error: {message}", file=sys.stderr)
        self.exit_code = 2
        QApplication.instance().exit(2)

    def _timeout(self) -> None:
        print("draftlight: error: no reply within 10 minutes", file=sys.stderr)
        QApplication.instance().exit(1)
