"""`draftlight` without a command: the window. With --screenshot it runs offscreen, sends the
prompt, waits for the whole reply, saves a PNG of the window and exits; with --record it saves
an animated GIF of the chat while the reply streams (app.ui.recorder). --dark gives the window
a dark palette, as a dark system theme would."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from app import paths
from app.ui.offscreen import ScreenshotRun, dark_palette


def run_app(screenshot: str | None = None, prompt: str | None = None, *,
            record: str | None = None, seconds: float = 15.0, dark: bool = False,
            factory=None) -> int:
    offscreen = bool(screenshot or record)
    if offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # read when QApplication starts
    from app.settings import load_settings
    from app.store.history import History
    from app.ui.main_window import MainWindow

    _warn_about_broken_pyside()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Draftlight")
    app.setDesktopFileName("io.github.draftlight.Draftlight")
    if dark:
        app.setStyle("Fusion")  # a style that draws with the palette everywhere
        app.setPalette(dark_palette())
    icon = paths.icon_file()
    if icon is not None:
        app.setWindowIcon(QIcon(str(icon)))
    settings, message = load_settings()
    if record and not settings.mode:
        # auto drafts only once it has learnt that drafting pays, which a fresh install has not:
        # a recording shows n-gram drafting, unless Settings choose a mode
        settings = replace(settings, mode="ngram")
    # An offscreen run leaves no trace: its chat lives in memory, its settings are not saved.
    history = History(":memory:" if offscreen else None)
    window = MainWindow(settings, history, factory=factory, settings_message=message,
                        persist_settings=not offscreen)
    run = None
    if record:
        from app.ui.recorder import RecordRun
        run = RecordRun(window, record, prompt, seconds)
    elif screenshot:
        run = ScreenshotRun(window, screenshot, prompt)
    if prompt and not offscreen:
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
