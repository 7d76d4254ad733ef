"""The flash of one message: its fading runs painted over its text as QTextEdit extra
selections, at their age on the FlashDriver's clock (draftlight.ui.flash.driver). The document and
the stored text never change; a run's resting tint is its own character format, which the
fade ends on. A mark is painted the same way: the source of a clicked run's origin, in that
run's colour, held a moment and then faded (driver.mark_alpha)."""

from __future__ import annotations

import math

from PySide6.QtGui import QPalette, QTextCursor
from PySide6.QtWidgets import QTextEdit

from draftlight.ui.flash.driver import (INTERVAL_MS, MAX_FLASHING, fade_colour, flash_alpha,
                                 mark_alpha, resting_colour)
from draftlight.ui.flash.palette import bucket


class FlashOverlay:
    """`view` is the MessageView it paints on: its body, runs, run_spans(), scheme and palette.
    `flasher` is the chat's FlashDriver, or None: no flashes."""

    def __init__(self, view, flasher) -> None:
        self.view = view
        self.flasher = flasher
        self._born: dict[int, float] = {}  # run index -> when it arrived (flasher's clock)
        self.painted_at = -math.inf  # when paint() last ran (flasher's clock)
        self._cursors: dict[tuple[int, int], QTextCursor] = {}  # span -> its selection
        self._mark: tuple[list[tuple[int, int]], int, float] | None = None  # spans, tokens, born
        self._mark_driver = None  # who ticks the mark (the chat's driver, even with no flash)

    def start(self, indices: list[int]) -> None:
        """Runs `indices` just arrived: start their flash (now, on the driver's clock)."""
        if not indices or self.flasher is None:
            return
        now = self.flasher.now()
        for index in indices:
            self._born.pop(index, None)
            self._born[index] = now
        # Faster than anyone can follow (a burst of hundreds of runs a second), the oldest
        # flashes end early: painting hundreds of selections a frame would slow the GUI.
        for index in list(self._born)[:-MAX_FLASHING]:
            del self._born[index]
        # At most one paint per frame: text arriving within a frame of the last paint
        # flashes on the next tick (≤ INTERVAL_MS later), not in a paint of its own.
        if now - self.painted_at >= INTERVAL_MS / 1000:
            self.paint(now)
        self.flasher.watch(self)

    def repaint(self) -> None:
        """The same runs at their new places (after the document was rendered anew)."""
        driver = self.flasher or self._mark_driver
        if (self._born or self._mark) and driver is not None:
            self.paint(driver.now())

    def mark(self, spans: list[tuple[int, int]], tokens: int, driver) -> None:
        """Show document `spans` in the colour of a run of `tokens` tokens for a moment (the
        source of a clicked origin); `driver` ticks its fade (a FlashDriver)."""
        if not spans or driver is None:
            return
        self._mark, self._mark_driver = (spans, tokens, driver.now()), driver
        self.paint(driver.now())
        driver.watch(self)

    def paint(self, now: float) -> bool:
        """Draw each fading run at its age; returns whether any still fades."""
        view = self.view
        self.painted_at = now
        selections = []
        rest: dict[int, tuple[float, ...]] = {}  # resting colour per run-length bucket
        base = view.palette().color(QPalette.Window).getRgb()[:3]
        flash = view.scheme.flash_colour().getRgb()[:3]
        cursors: dict[tuple[int, int], QTextCursor] = {}
        for index, born in list(self._born.items()):
            alpha = flash_alpha(now - born)
            if alpha <= 0 or index >= len(view.runs):
                del self._born[index]
                continue
            tokens = view.runs[index][2]
            key = bucket(tokens)
            if key not in rest:
                rest[key] = resting_colour(base, view.scheme.tint(tokens))
            colour = fade_colour(flash, rest[key], alpha)
            for span in view.run_spans(index):
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursors[span] = self._span_cursor(span)
                selection.format.setBackground(colour)
                selections.append(selection)
        if self._mark is not None:
            spans, tokens, born = self._mark
            alpha = mark_alpha(now - born)
            if alpha <= 0:
                self._mark = None
            else:
                colour = fade_colour(resting_colour(base, view.scheme.tint(tokens)), base, alpha)
                for span in spans:
                    selection = QTextEdit.ExtraSelection()
                    selection.cursor = cursors[span] = self._span_cursor(span)
                    selection.format.setBackground(colour)
                    selections.append(selection)
        self._cursors = cursors
        view.body.setExtraSelections(selections)
        return bool(self._born) or self._mark is not None

    def _span_cursor(self, span: tuple[int, int]) -> QTextCursor:
        """A cursor selecting `span`, kept from the last frame when it still does (appended
        text leaves it in place; a re-render moves it, and then it is made anew)."""
        cursor = self._cursors.get(span)
        start, end = span
        if cursor is None or (cursor.selectionStart(), cursor.selectionEnd()) != span:
            cursor = QTextCursor(self.view.document)
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.KeepAnchor)
        return cursor

    def stop(self) -> None:
        self._born.clear()
        self._mark = None
        self.view.body.setExtraSelections([])
        for driver in (self.flasher, self._mark_driver):
            if driver is not None:
                driver.forget(self)
