"""A wheel passing over the toolbar changes nothing (issue "The window, third round", item 1):
one notch over Target unloaded the model and loaded another, one over Speculation set "Off".
The wheel is sent to the window as the platform sends it, so Qt finds the control under the
pointer (and gives a WheelFocus control the focus first) as it would for a real mouse."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from draftlight.modes import DRAFT, NGRAM, OFF
from draftlight.settings import load_settings
from draftlight.store.installed import add_local
from tests.support.scripted_engine import ScriptedFactory
from tests.support.waiting import wait_until, window_state


def wheel_over(widget, notches: int) -> None:
    """`notches` turns of the wheel (negative: towards the user) over the middle of `widget`."""
    top = widget.window()
    centre = widget.rect().center()
    event = QWheelEvent(QPointF(widget.mapTo(top, centre)), QPointF(widget.mapToGlobal(centre)),
                        QPoint(0, 0), QPoint(0, 120 * notches), Qt.NoButton, Qt.NoModifier,
                        Qt.NoScrollPhase, False)
    QApplication.sendEvent(top.windowHandle(), event)


@pytest.fixture
def window_and_factory(qtbot, open_window, tmp_path, bundled_model):
    """The window with a second target to switch to, its modes listed; and its engines' factory,
    which counts the loads."""
    copy = tmp_path / "smol-copy.gguf"
    shutil.copyfile(bundled_model, copy)
    add_local(copy, name="smol-copy")
    factory = ScriptedFactory(modes=(OFF, DRAFT, NGRAM))
    window = open_window(factory)
    qtbot.waitUntil(lambda: window.model_scan.scanned, timeout=10_000)
    qtbot.waitUntil(lambda: window.model_bar.target_box.count() >= 2, timeout=10_000)
    return window, factory


def test_a_wheel_over_the_toolbar_changes_no_model_and_no_mode(qtbot, window_and_factory):
    window, factory = window_and_factory
    bar, modes = window.model_bar, window.toolbar.mode_box
    boxes = (bar.engine_box, bar.target_box, bar.draft_box, modes)
    assert modes.count() >= 2 and modes.current_mode() == NGRAM
    before = [box.currentIndex() for box in boxes]
    loads, drafts = len(factory.loads), len(factory.drafts)
    saved = load_settings()[0]
    for box in boxes:
        for notches in (-1, -1, 1, 1, 1):
            wheel_over(box, notches)
    qtbot.wait(100)  # a load, had one been asked for, starts on the next turn of the loop
    assert [box.currentIndex() for box in boxes] == before
    assert not any(box.hasFocus() for box in boxes)  # no WheelFocus: a scroll is not a click
    assert len(factory.loads) == loads
    assert len(factory.drafts) == drafts
    assert window.ready and not window.models.loading
    assert modes.current_mode() == NGRAM
    now = load_settings()[0]
    assert (now.mode, now.target_path, now.draft_path, now.engine) == (
        saved.mode, saved.target_path, saved.draft_path, saved.engine)


def test_an_opened_drop_down_still_chooses_by_click_and_by_keyboard(qtbot, window_and_factory):
    window, factory = window_and_factory
    target = window.model_bar.target_box
    loads = len(factory.loads)
    other = next(i for i in range(target.count()) if i != target.currentIndex())
    wanted = target.itemData(other)
    qtbot.mouseClick(target, Qt.LeftButton)  # opens the list
    view = target.view()
    qtbot.waitUntil(view.isVisible)
    qtbot.wait(QApplication.doubleClickInterval() + 50)  # the list ignores a release this soon
    item = view.visualRect(target.model().index(other, 0)).center()
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=item)
    wait_until(qtbot, lambda: len(factory.loads) > loads and window.ready,
               "the chosen target to load", 10_000, lambda: window_state(window))
    assert target.currentIndex() == other and window.settings.target_path == wanted

    modes = window.toolbar.mode_box
    modes.setFocus()
    qtbot.waitUntil(modes.hasFocus)
    qtbot.keyClick(modes, Qt.Key_Up)  # from n-gram past the draft model's mode (none loaded)
    assert modes.current_mode() == OFF and load_settings()[0].mode == OFF
