"""A wheel over a drop-down, spin box or slider scrolls what is under it, not the value.

A scroll that passes over a control is not a choice: one notch over the toolbar's Target unloaded
the model and loaded another, one over Top-p in Settings took it from 1.00 to 0.01. The
guard takes the wheel from the control and gives it to the page the control sits on (Settings'
scroll area), if any, so that page still scrolls.

Qt gives a WheelFocus control (a QComboBox's default) the focus on the wheel's first notch
before the control sees it, which would make every passing scroll a focused one: guarded
controls take StrongFocus instead (a click or Tab)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (QAbstractScrollArea, QAbstractSlider, QAbstractSpinBox, QApplication,
                               QComboBox, QScrollBar, QWidget)


class _PassingWheel(QObject):
    """Keeps a wheel from the controls it watches, handing it to the page around them: always
    (`unless_focused` False), or while the control has not been clicked or tabbed into."""

    def __init__(self, parent: QObject, *, unless_focused: bool) -> None:
        super().__init__(parent)
        self.unless_focused = unless_focused

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Wheel:
            return False
        if self.unless_focused and watched.hasFocus():
            return False  # chosen first: the wheel is the control's
        page = _page_around(watched)
        if page is not None:
            # Given on by hand: Qt offers an ignored wheel to the parents only when it came from
            # the platform, not one sent by the app (or a test).
            vertical = event.angleDelta().y() != 0
            QApplication.sendEvent(page.verticalScrollBar() if vertical
                                   else page.horizontalScrollBar(), event)
        return True


def _page_around(control: QWidget) -> QAbstractScrollArea | None:
    """The scroll area the control sits in, inside its window."""
    widget = control.parentWidget()
    while widget is not None and not widget.isWindow():
        if isinstance(widget, QAbstractScrollArea):
            return widget
        widget = widget.parentWidget()
    return None


def _guard(controls, *, unless_focused: bool) -> None:
    for control in controls:
        control.setFocusPolicy(Qt.StrongFocus)
        control.installEventFilter(_PassingWheel(control, unless_focused=unless_focused))


def wheel_needs_focus(*controls: QWidget) -> None:
    """The wheel changes each control only once it has been clicked or tabbed into (a form in a
    scroll area: Settings, the picker)."""
    _guard(controls, unless_focused=True)


def wheel_never_chooses(*controls: QWidget) -> None:
    """The wheel never changes these controls, focused or not: a choice that loads a model or
    changes how every reply is made is made in the open list or by the keyboard."""
    _guard(controls, unless_focused=False)


def value_controls(container: QWidget) -> list[QWidget]:
    """The drop-downs, spin boxes and sliders inside `container` (not scroll bars: the wheel is
    theirs)."""
    sliders = [s for s in container.findChildren(QAbstractSlider) if not isinstance(s, QScrollBar)]
    return container.findChildren(QComboBox) + container.findChildren(QAbstractSpinBox) + sliders
