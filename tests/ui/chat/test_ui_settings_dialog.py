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


def _wheel(widget, steps: int) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, -120 * steps), Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase,
                        False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_page_over_a_spin_box_until_it_is_clicked(qtbot):
    """Scrolling Settings with the pointer over Top-p took it from 1.00 to 0.01 (issue 54)."""
    dialog = SettingsDialog(Settings(top_p=1.0), gpu_offload=False)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    bar = dialog.scroll.verticalScrollBar()
    before = bar.value()
    _wheel(dialog.top_p, 5)
    assert dialog.top_p.value() == 1.0 and bar.value() > before  # the page moved, not the value
    dialog.top_p.setFocus()
    qtbot.waitUntil(dialog.top_p.hasFocus)
    _wheel(dialog.top_p, 2)
    assert dialog.top_p.value() < 1.0  # clicked into: the wheel is the box's
