"""Settings fits the screen (issue 36, item 5): its sections scroll inside the dialog, OK and
Cancel stay in sight, and the fields a remote server does not use are hidden for it."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from draftlight.settings import Settings
from draftlight.ui.chat.settings_dialog import SettingsDialog


def test_the_dialog_fits_the_screen_and_scrolls(qtbot):
    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.frameGeometry().height() <= screen.height()
    body = dialog.scroll.widget()
    assert body.sizeHint().height() > dialog.scroll.viewport().height()  # it scrolls here
    assert dialog.scroll.verticalScrollBar().isVisible()
    buttons = dialog.findChild(QDialogButtonBox)
    assert buttons.isVisible() and buttons.geometry().bottom() <= dialog.height()


def test_a_remote_server_hides_the_local_fields(qtbot):
    dialog = SettingsDialog(Settings(), gpu_offload=False)
    qtbot.addWidget(dialog)
    dialog.show()
    local = (dialog.n_threads, dialog.target_gpu, dialog.target, dialog.n_ctx)
    assert all(w.isVisible() for w in local)
    engine = dialog.engine_section.engine
    engine.setCurrentIndex(engine.findData("remote"))
    assert not any(w.isVisible() for w in local)
    engine.setCurrentIndex(engine.findData("local"))
    assert all(w.isVisible() for w in local)
