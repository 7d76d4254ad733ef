"""The window's menu bar (File, View) and its window-wide shortcuts. The actions that also sit in
the toolbar are the toolbar's; the ones only the menus hold are made here and kept on `Menus`
for the window to connect."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow


@dataclass(frozen=True)
class Menus:
    models: QAction  # the picker (hidden when the picker's package is not installed)
    quit: QAction
    server_log: QAction
    stop: QAction  # Esc stops the reply


def build_menus(window: QMainWindow, toolbar, serve_action: QAction) -> Menus:
    models = QAction("Models…", window)
    models.setVisible(importlib.util.find_spec("draftlight.ui.picker.dialog") is not None)
    quit_ = QAction("Quit", window, shortcut=QKeySequence.Quit)
    file_menu = window.menuBar().addMenu("&File")
    for action in (toolbar.new_action, toolbar.settings_action, models, serve_action):
        file_menu.addAction(action)
    file_menu.addSeparator()
    file_menu.addAction(quit_)

    view = window.menuBar().addMenu("&View")
    view.addAction(toolbar.highlight_action)
    server_log = QAction("Server log", window)
    server_log.setToolTip("What llama-server printed (the llama.cpp server engine)")
    view.addAction(server_log)

    stop = QAction("Stop", window, shortcut=QKeySequence(Qt.Key_Escape))
    window.addAction(stop)
    return Menus(models=models, quit=quit_, server_log=server_log, stop=stop)
