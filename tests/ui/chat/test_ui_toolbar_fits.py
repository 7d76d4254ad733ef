"""Every control in sight (issue 36, item 4): at the default size and at 800×600 no toolbar
action or widget hides in the toolbar's "»" overflow menu, and Help ▸ About is there."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox, QToolBar


def hidden_controls(toolbar: QToolBar) -> list[str]:
    out = []
    for action in toolbar.actions():
        if action.isSeparator() or not action.isVisible():
            continue
        widget = toolbar.widgetForAction(action)
        inside = widget is not None and widget.isVisible() and (
            widget.geometry().right() <= toolbar.contentsRect().right())
        if not inside:
            out.append(action.text() or (widget.objectName() if widget else "?")
                       or type(widget).__name__)
    return out


@pytest.mark.parametrize("size", [(1100, 760), (800, 600)])
def test_no_control_overflows_the_toolbars(qtbot, open_window, size):
    window = open_window()
    window.toolbar.speed_meter.show_rates(123.4, 56.7)  # the meter at its widest: a reply streams
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(50)
    for toolbar in (window.model_toolbar, window.toolbar):
        assert hidden_controls(toolbar) == [], (toolbar.objectName(), size)
    assert window.toolbar.mode_box.isVisible() and window.toolbar.legend.isVisible()
    box = window.toolbar.mode_box  # the chosen mode's name is shown whole
    assert box.width() >= box.fontMetrics().horizontalAdvance(box.currentText()) + 20


def test_help_about_names_the_app(qtbot, open_window, monkeypatch):
    window = open_window()
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    next(a for a in help_menu.actions() if a.text() == "About Draftlight").trigger()
    assert shown and "Draftlight" in shown[0] and "identical to plain decoding" in shown[0]


def test_the_window_opens_no_larger_than_its_screen(qtbot, open_window):
    """At 1100x760 by default, or a size kept from a larger screen: on a smaller screen (the
    offscreen platform's is 800x600) it fits, so the message box and Send are on it."""
    from PySide6.QtCore import QRect

    from draftlight.settings import load_settings
    settings = load_settings()[0]
    big = open_window(settings=settings)
    big.setGeometry(QRect(0, 0, 1900, 1200))
    settings.window_geometry = bytes(big.saveGeometry().toBase64()).decode()
    for window in (open_window(), open_window(settings=settings)):
        room = window.screen().availableGeometry()
        assert room.width() < 1100  # else this test shows nothing
        assert window.width() <= room.width() and window.height() <= room.height()
        assert room.contains(window.geometry().topLeft())
