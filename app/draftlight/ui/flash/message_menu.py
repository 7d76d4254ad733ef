"""A message's right-click menu: Copy message, then Regenerate and Continue on the latest reply,
the diff against the file a reply edits, then Qt's own (Copy, Select All)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu


def popup_menu(view, point) -> QMenu:
    """The menu of `view` (a MessageView) at `point` of its text, shown; it deletes itself when
    closed."""
    menu = view.body.createStandardContextMenu(point)
    first = menu.actions()[0] if menu.actions() else None
    copy_all = QAction("Copy message", menu)
    copy_all.triggered.connect(view.copy_text)
    menu.insertAction(first, copy_all)
    reply = view.role == "assistant" and not view.streaming
    if reply and view.is_latest():
        regenerate = QAction("Regenerate", menu)
        regenerate.triggered.connect(view.regenerate_requested)
        menu.insertAction(first, regenerate)
        if view.continue_button.isVisibleTo(view):
            more = QAction("Continue", menu)
            more.triggered.connect(view.continue_requested)
            menu.insertAction(first, more)
    edited = view.edited_file()
    if reply and edited:
        diff = QAction(f"Show as a diff against {edited}…", menu)
        diff.triggered.connect(view.diff_requested)
        menu.insertAction(first, diff)
    menu.insertSeparator(first)
    menu.setAttribute(Qt.WA_DeleteOnClose)
    menu.popup(view.body.viewport().mapToGlobal(point))
    return menu
