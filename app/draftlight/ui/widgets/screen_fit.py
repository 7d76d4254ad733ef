"""Dialogs open inside the screen they open on.

A dialog's size is what its content would like, or the screen's free room less its frame,
whichever is less: the picker opened at 1100x760 on an 800x600 screen, with Retry, Download
and the file table off it. A dialog's content shrinks with it (lists, text and splitters
scroll; long labels wrap), and its buttons sit below the content, so they stay in sight."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

# What a window manager's frame and title bar add around a dialog's own size, with a margin:
# the dialog's size leaves them out.
FRAME = QSize(40, 60)


def available_room(dialog: QWidget) -> QRect:
    """The free part (no panels or docks) of the screen `dialog` opens on: its parent
    window's screen (Qt opens it there, centred on the parent), else its own."""
    parent = dialog.parentWidget()
    screen = (parent.window().screen() if parent is not None else dialog.screen()) or (
        QGuiApplication.primaryScreen())
    return screen.availableGeometry()


def fit_to_screen(dialog: QWidget, width: int, height: int) -> None:
    """Size `dialog` at `width` x `height`, or less where its screen has less room."""
    room = available_room(dialog)
    dialog.resize(min(width, room.width() - FRAME.width()),
                  min(height, room.height() - FRAME.height()))
