"""The window at 800x600 and 1366x768, light and dark, empty and after the README's demo, on
the real bundled model: `xvfb-run -a -s "-screen 0 1400x800x24" .venv/bin/python -m
tests.support.window_screenshots assets/` (QT_QPA_PLATFORM=xcb: a real X server). Run it on a
quiet machine: auto drafts only as much as this machine's cost curve says pays."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from PySide6.QtWidgets import QApplication

DEMO = "Repeat after me: the United States of America declared independence in 1776."
SIZES = ((800, 600), (1366, 768))


def shoot(app, folder: Path, width: int, height: int, dark: bool) -> None:
    from draftlight.settings import load_settings
    from draftlight.store.history import History
    from draftlight.ui.chat.main_window import MainWindow
    from draftlight.ui.desktop import dark_palette
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    settings = load_settings()[0]
    settings.window_geometry, settings.last_conversation = "", 0
    history = History(":memory:")
    window = MainWindow(settings, history, persist_settings=False)
    window.resize(width, height)
    window.show()
    name = f"window-{width}x{height}" + ("-dark" if dark else "")
    try:
        pump(app, 120, lambda: window.ready)
        pump(app, 0.5)
        window.grab().save(str(folder / f"{name}-empty.png"))
        done = []
        window.session.reply_finished.connect(lambda *_: done.append(1))
        window.send(DEMO)
        pump(app, 120, lambda: bool(done))
        pump(app, 1.5)  # the flash fades to its tint
        window.grab().save(str(folder / f"{name}.png"))
    finally:
        window.shutdown()
        history.close()


def pump(app, seconds: float, until=lambda: False) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not until():
        app.processEvents()
        time.sleep(0.02)


def main(folder: str) -> None:
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")  # draws with the palette everywhere, light and dark alike
    for width, height in SIZES:
        for dark in (False, True):
            shoot(app, Path(folder), width, height, dark)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "assets")
