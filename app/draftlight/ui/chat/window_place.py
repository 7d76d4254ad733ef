"""The window comes back as it was left: its size, position and the conversation it showed,
kept in Settings when it closes (a conversation deleted since is not opened)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray

from draftlight.store.history import HistoryError


def restore_place(window) -> None:
    """The size, position and conversation of the last session (a MainWindow's Settings)."""
    settings = window.settings
    if settings.window_geometry:
        window.restoreGeometry(QByteArray.fromBase64(settings.window_geometry.encode()))
    fit_screen(window)
    last = settings.last_conversation
    try:
        shown = bool(last) and window.history.conversation(last) is not None
    except HistoryError:  # the history says why where it is shown; the window opens empty
        shown = False
    if shown:
        window.session.open_conversation(last)


def fit_screen(window) -> None:
    """No larger than the screen it opens on (an 800x600 one, or a size kept from a larger
    screen), so that the message box and its buttons are never off the screen."""
    screen = window.screen()
    if screen is None:
        return
    room = screen.availableGeometry()
    width, height = min(window.width(), room.width()), min(window.height(), room.height())
    if (width, height) != (window.width(), window.height()):
        window.resize(width, height)
        window.move(max(room.left(), min(window.x(), room.right() - width)),
                    max(room.top(), min(window.y(), room.bottom() - height)))


def remember_place(window) -> None:
    window.settings.window_geometry = bytes(window.saveGeometry().toBase64()).decode()
    window.settings.last_conversation = window.session.conversation_id or 0
    window._save_settings()
