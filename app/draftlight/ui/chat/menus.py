"""The window's menu bar (File, View, Help) and its window-wide shortcuts. The actions that also sit in
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
    about: QAction  # Help ▸ About Draftlight
    machine: QAction  # View ▸ This machine…: what checking drafts costs here
    export: QAction  # File ▸ Export conversation…
    import_: QAction  # File ▸ Import conversation…


def build_menus(window: QMainWindow, toolbar, serve_action: QAction) -> Menus:
    models = QAction("Models…", window)
    models.setVisible(importlib.util.find_spec("draftlight.ui.picker.dialog") is not None)
    quit_ = QAction("Quit", window, shortcut=QKeySequence.Quit)
    file_menu = window.menuBar().addMenu("&File")
    for action in (toolbar.new_action, toolbar.settings_action, models, serve_action):
        file_menu.addAction(action)
    file_menu.addSeparator()
    attach = QAction("Attach files…", window)
    attach.setToolTip("Text, code, PDF, Word or HTML files to ask about, sent with your next "
                      "message")
    attach.triggered.connect(lambda: window.attachments.ask())
    file_menu.addAction(attach)
    export = QAction("Export conversation…", window)
    export.setToolTip("The conversation shown, as Markdown or as JSON to import again")
    export.triggered.connect(lambda: _exports().export_conversation(window))
    import_ = QAction("Import conversation…", window)
    import_.triggered.connect(lambda: _exports().import_conversation_file(window))
    file_menu.addAction(export)
    file_menu.addAction(import_)
    file_menu.addSeparator()
    file_menu.addAction(quit_)

    view = window.menuBar().addMenu("&View")
    view.addAction(toolbar.highlight_action)
    server_log = QAction("Server log", window)
    server_log.setToolTip("What llama-server printed (the llama.cpp server engine)")
    view.addAction(server_log)
    machine = QAction("This machine…", window)
    machine.setToolTip("What checking drafted tokens costs on this machine, and where "
                       "speculation pays here")
    machine.triggered.connect(lambda: show_machine(window))
    view.addAction(machine)

    stop = QAction("Stop", window, shortcut=QKeySequence(Qt.Key_Escape))
    window.addAction(stop)

    help_menu = window.menuBar().addMenu("&Help")
    about = QAction("About Draftlight", window)
    about.triggered.connect(lambda: show_about(window))
    help_menu.addAction(about)
    return Menus(models=models, quit=quit_, server_log=server_log, stop=stop, about=about,
                 machine=machine, export=export, import_=import_)


def show_machine(window: QMainWindow) -> None:
    """View ▸ This machine, on the curve of the newest reply shown that carries one."""
    from draftlight.ui.chat.machine_dialog import MachineDialog, latest_pass_costs
    MachineDialog(latest_pass_costs(window.chat.messages), window).exec()


def _exports():
    from draftlight.ui.chat import export_actions  # loaded when first used
    return export_actions


ABOUT = """<h3>Draftlight {version}</h3>
<p>A chat app for watching speculative decoding: a draft guesses a few tokens, the target model
checks them in one pass, and the ones it keeps flash in colour. The reply is the target's own:
greedy text is identical to plain decoding, and sampling keeps its distribution.</p>
<p>Colours: a run of drafted tokens the target accepted; the longer the run, the stronger the
colour. Hover a run to see where it was copied from; click to go there.</p>
<p>Runs on llama.cpp (llama-cpp-python), Qt (PySide6) and huggingface_hub.</p>"""


def show_about(window: QMainWindow) -> None:
    from importlib.metadata import PackageNotFoundError, version
    from PySide6.QtWidgets import QMessageBox
    try:
        number = version("draftlight")
    except PackageNotFoundError:
        number = ""
    QMessageBox.about(window, "About Draftlight", ABOUT.format(version=number))
