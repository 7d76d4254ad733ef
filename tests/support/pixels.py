"""Colours measured in the window's pixels: behind a run and behind plain text, the cells of the
acceptance strip, and a clock for the flash driver that the test sets, so that each frame is
grabbed at a known age of the run."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QTextCursor


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def run_background(view, index: int = 0) -> QColor:
    """The most common colour behind run `index` (glyph pixels are fewer than background)."""
    [(start, end)] = view.run_spans(index)
    body = view.body
    cursor = QTextCursor(view.document)
    cursor.setPosition(start + 1)
    first = body.cursorRect(cursor)
    cursor.setPosition(end)
    last = body.cursorRect(cursor)
    assert first.top() == last.top(), "the run should be on one line"
    rect = QRect(first.left(), first.top(), last.left() - first.left(), first.height())
    image = body.viewport().grab(rect).toImage()
    counts = Counter(image.pixel(x, y) for x in range(image.width())
                     for y in range(image.height()))
    return QColor.fromRgb(counts.most_common(1)[0][0])


def plain_background(view) -> QColor:
    """Behind "Hello" (target text, never tinted)."""
    body = view.body
    cursor = QTextCursor(view.document)
    cursor.setPosition(1)
    rect = body.cursorRect(cursor)
    image = body.viewport().grab(QRect(rect.left(), rect.top(), 4, rect.height())).toImage()
    counts = Counter(image.pixel(x, y) for x in range(image.width())
                     for y in range(image.height()))
    return QColor.fromRgb(counts.most_common(1)[0][0])


def distance(a: QColor, b: QColor) -> int:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue()))


def cells(strip) -> list[tuple[int, int]]:
    """(left, right) of each painted cell along the strip's middle row."""
    image = strip.grab().toImage()
    y = image.height() // 2
    background = strip.palette().color(strip.backgroundRole()).rgb()
    painted = [QColor.fromRgb(image.pixel(x, y)).rgb() != background
               for x in range(image.width())]
    out, start = [], None
    for x, on in enumerate(painted + [False]):
        if on and start is None:
            start = x
        elif not on and start is not None:
            out.append((start, x))
            start = None
    return out
