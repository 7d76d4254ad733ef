"""Switching the colour scheme repaints the runs in the text, the strip and the legend:
measured in pixels, on a finished reply of the scripted engine."""

from __future__ import annotations

import dataclasses

from PySide6.QtGui import QColor

from draftlight.settings import Settings
from draftlight.ui.flash.palette import SCHEMES
from tests.support.pixels import cells, distance, run_background
from tests.support.scripted_engine import ScriptedFactory
from tests.support.window import send_and_wait


def looks(window, view) -> tuple[QColor, QColor, QColor]:
    """(behind the first run, the strip cell of its pass, the legend's '2' swatch)."""
    strip = view.strip.grab().toImage()
    left, right = cells(view.strip)[1]
    swatch = window.toolbar.legend.swatches[1]
    image = swatch.grab().toImage()
    return (run_background(view, 0), QColor.fromRgb(strip.pixel((left + right) // 2, 4)),
            QColor.fromRgb(image.pixel(2, image.height() // 2)))


def test_each_palette_changes_text_strip_and_legend(qtbot, open_window):
    window = open_window(ScriptedFactory(), settings=Settings(flash_drafts=False))
    view = send_and_wait(qtbot, window)
    seen = {}
    for name in SCHEMES:
        window.apply_settings(dataclasses.replace(window.settings, palette=name))
        seen[name] = looks(window, view)
    names = list(SCHEMES)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            for part, x, y in zip(("text", "strip", "legend"), seen[names[a]], seen[names[b]]):
                assert distance(x, y) > 25, (part, names[a], names[b], x.name(), y.name())
    # New replies take the scheme too, and it is saved.
    view = send_and_wait(qtbot, window)
    assert distance(run_background(view, 0), seen[names[-1]][0]) <= 3
    assert window.settings.palette == names[-1]
