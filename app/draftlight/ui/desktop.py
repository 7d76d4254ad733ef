"""`draftlight` without a command: the desktop app, its window and its event loop. Runs without a
screen (--screenshot, --record) attach to the window from draftlight.capture; --dark gives the window
a dark palette, as a dark system theme would."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPalette
from PySide6.QtWidgets import QApplication

from draftlight import paths


def run_app(prompt: str | None = None, *, offscreen: bool = False, attach=None,
            dark: bool = False, factory=None) -> int:
    """Open the window and run until it closes; the exit status. `attach(window)`, given with
    `offscreen`, returns the run that drives the window (it has an `exit_code`)."""
    if offscreen:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # read when QApplication starts
    from draftlight.settings import load_settings
    from draftlight.store.history import History
    from draftlight.ui.chat.main_window import MainWindow

    _warn_about_broken_pyside()
    missing = missing_x11_libraries()
    if missing:
        print(f"draftlight: the window needs {', '.join(missing)} to open on X11; on "
              f"Debian/Ubuntu: sudo apt install {' '.join(missing)}", file=sys.stderr)
        return 1
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
    # An offscreen run leaves no trace: its chat lives in memory, its settings are not saved.
    history = History(":memory:" if offscreen else None, check_in_background=True)
    window = MainWindow(settings, history, factory=factory, settings_message=message,
                        persist_settings=not offscreen)
    run = attach(window) if attach is not None else None
    if prompt and not offscreen:
        window.model_ready.connect(lambda: window.send(prompt), Qt.SingleShotConnection)
    window.show()
    freeze_start_up_heap()
    try:
        code = app.exec()
    finally:
        window.shutdown()
        history.close()
    return run.exit_code if run is not None else code


def freeze_start_up_heap() -> None:
    """Move what start-up built (Qt's wrappers, llama_cpp, huggingface_hub: ~55,000 objects)
    out of the collector's sight. A full collection of it takes ~30 ms on the GUI thread, a
    visible hitch in a streaming reply; frozen, a collection looks only at what came after."""
    import gc
    gc.collect()
    gc.freeze()


# The libraries Qt's X11 platform plugin loads that a desktop may lack, by Debian package (Qt
# itself says only "could not load the Qt platform plugin xcb", or names one of them).
X11_LIBRARIES = {"libxcb-cursor0": "libxcb-cursor.so.0", "libxcb-icccm4": "libxcb-icccm.so.4",
                 "libxcb-keysyms1": "libxcb-keysyms.so.1", "libxkbcommon-x11-0":
                 "libxkbcommon-x11.so.0"}


def missing_x11_libraries() -> list[str]:
    """Debian packages whose libraries Qt's xcb plugin needs and cannot find, when the window
    would open on X11 (Linux, a DISPLAY, no other platform asked for); [] otherwise."""
    platform = os.environ.get("QT_QPA_PLATFORM", "")
    if (not sys.platform.startswith("linux") or not os.environ.get("DISPLAY")
            or (platform and not platform.startswith("xcb"))
            or (not platform and os.environ.get("WAYLAND_DISPLAY"))):
        return []
    import ctypes
    missing = []
    for package, library in X11_LIBRARIES.items():
        try:
            ctypes.CDLL(library)
        except OSError:
            missing.append(package)
    return missing


def _warn_about_broken_pyside() -> None:
    import PySide6
    # Seen here: on Python 3.11 (no immortal None/True/False) PySide6 6.12.0 drops a reference
    # to None on every call of a void method, and to True on every signal emit, until the
    # interpreter aborts ("deallocating None"). 6.11.3 is fine.
    if sys.version_info < (3, 12) and tuple(PySide6.__version_info__[:3]) == (6, 12, 0):
        print("draftlight: warning: PySide6 6.12.0 crashes on Python < 3.12; install "
              "'PySide6-Essentials<6.12'", file=sys.stderr)


def dark_palette() -> QPalette:
    """A dark window palette (what a dark system theme gives), for --dark."""
    palette = QPalette()
    for role, colour in ((QPalette.Window, "#2b2b2b"), (QPalette.WindowText, "#e6e6e6"),
                         (QPalette.Base, "#1e1e1e"), (QPalette.AlternateBase, "#333333"),
                         (QPalette.Text, "#e6e6e6"), (QPalette.Button, "#353535"),
                         (QPalette.ButtonText, "#e6e6e6"), (QPalette.ToolTipBase, "#333333"),
                         (QPalette.ToolTipText, "#e6e6e6"), (QPalette.PlaceholderText, "#8c8c8c"),
                         (QPalette.Mid, "#9a9a9a"), (QPalette.Midlight, "#3d3d3d"),
                         (QPalette.Link, "#6cb4ff"),
                         (QPalette.Highlight, "#2f65ca"), (QPalette.HighlightedText, "#ffffff")):
        palette.setColor(role, QColor(colour))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        palette.setColor(QPalette.Disabled, role, QColor("#7a7a7a"))
    return palette
