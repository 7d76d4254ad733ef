"""The status bar at 800x600 (issue 75, point 8b): a long status line and the live figures of a
reply being written do not run into each other. The line is cut with "…" (the whole of it in its
tooltip); the figures keep their whole width at the right end; a passing message (showMessage)
takes the line's place, cut the same way, and is not painted under the figures."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

LONG_STATUS = ("Ready: qwen2.5-coder-1.5b-instruct-q8_0.gguf + draft qwen2.5-coder-0.5b-instruct"
               "-q8_0.gguf · context 32,768 tokens: the trained context, which fits in memory")
LIVE = "137 tokens · 41.3 tok/s · accepted 96/120 (80%) · 2.61 tokens/pass"
PASSING = ("Copied the reply to the clipboard, with its code blocks and the figures of the "
           "reply as they were written")


def shown(label) -> str:
    """What a label draws (an ElidedLabel's text() is its whole text)."""
    return QLabel.text(label)


def at_800x600(qtbot, open_window):
    window = open_window()
    window.resize(800, 600)
    qtbot.waitExposed(window)
    window.models.status.emit(LONG_STATUS)
    window.session.live_stats.emit(LIVE)
    qtbot.wait(50)
    return window


def test_a_long_status_is_cut_before_the_live_figures(qtbot, open_window):
    window = at_800x600(qtbot, open_window)
    line, figures = window.status_label, window.stats_label
    assert line.isVisible() and figures.isVisible()
    assert line.geometry().right() < figures.geometry().left()
    assert figures.width() >= figures.fontMetrics().horizontalAdvance(LIVE)  # whole
    text = shown(line)
    assert text.endswith("…") and text[:-1] in LONG_STATUS, text
    assert line.fontMetrics().horizontalAdvance(text) <= line.contentsRect().width()
    assert line.toolTip() == LONG_STATUS
    window.grab().save("/tmp/polish-status-800x600.png")


def test_a_passing_message_is_cut_and_not_painted_under_the_figures(qtbot, open_window):
    window = at_800x600(qtbot, open_window)
    figures = window.stats_label
    status_bar = window.statusBar()
    place = figures.geometry()
    before = status_bar.grab(place).toImage()
    window.show_status(PASSING)
    qtbot.wait(50)
    assert status_bar.currentMessage() == PASSING  # Qt's message, as before
    passing = window.status_line.passing
    assert passing.isVisible() and not window.status_label.isVisible()
    assert shown(passing).endswith("…") and passing.toolTip() == PASSING
    assert passing.geometry().right() < place.left()
    assert status_bar.grab(place).toImage() == before  # the figures' place: only the figures
    window.grab().save("/tmp/polish-passing-800x600.png")
    status_bar.clearMessage()
    qtbot.wait(20)
    assert window.status_label.isVisible() and not passing.isVisible()
