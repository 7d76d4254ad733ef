"""The flash: a run of accepted draft tokens arrives in a bright colour that fades, over
DURATION seconds, to the resting tint of its run length.

The flash is an overlay (QTextEdit extra selections), never a change to the document or to the
stored text: the resting tint is the run's own character format, and the overlay's alpha goes
from opaque to nothing over it. One FlashDriver per chat view owns the one timer; it runs only
while some run is fading, and each message's FlashOverlay repaints its own fading runs on a
tick.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QColor

DURATION = 0.6  # seconds from the flash colour to the resting tint
INTERVAL_MS = 67  # 15 frames per second while anything fades: 9 steps per fade
SKIP_AFTER_PAINT = 0.6 * INTERVAL_MS / 1000  # seconds: a tick this soon after a paint skips it
MAX_FLASHING = 48  # runs fading at once in one message, at most (≈80 tokens/s of 2-token runs)


def flash_alpha(age: float, duration: float = DURATION) -> int:
    """Opacity (0–255) of the flash colour `age` seconds after a run arrived: ease-out, so the
    colour is bright at first and settles gently."""
    if age <= 0:
        return 255
    if age >= duration:
        return 0
    return round(255 * (1 - age / duration) ** 1.5)


MARK_HOLD = 1.2  # seconds a clicked origin's source span stays in the run's colour, then fades


def mark_alpha(age: float) -> int:
    """Opacity (0–255) of a source span's mark `age` seconds after its origin was clicked:
    held long enough to find it after the scroll, then faded like a flash."""
    return 255 if age < MARK_HOLD else flash_alpha(age - MARK_HOLD)


def resting_colour(base: tuple[int, int, int], tint: QColor) -> tuple[float, float, float]:
    """A run's resting look as one opaque colour: its translucent tint over the message's
    background `base` (RGB). A selection replaces the character's background rather than
    painting over it, so the tint is mixed in here and the fade ends exactly on it."""
    t = tint.alphaF()
    return tuple(b * (1 - t) + c * t for b, c in zip(base, tint.getRgb()[:3]))


def fade_colour(flash: tuple[int, int, int], rest: tuple[float, ...], alpha: int) -> QColor:
    """The flash colour at opacity `alpha` (0–255) over the resting colour."""
    a = alpha / 255
    return QColor(*(round(f * a + r * (1 - a)) for f, r in zip(flash, rest)))


class FlashDriver(QObject):
    """Ticks the message overlays that have fading runs; stops when none has."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.clock = time.monotonic  # tests may set their own, to grab a frame at a set age
        self.ticks = 0
        self._overlays: list = []  # FlashOverlays with fading runs (flash_overlay.py)
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.tick)

    @property
    def active(self) -> bool:
        return bool(self._overlays)

    def now(self) -> float:
        return self.clock()

    def watch(self, overlay) -> None:
        if overlay not in self._overlays:
            self._overlays.append(overlay)
        if not self._timer.isActive():
            self._timer.start()

    def forget(self, overlay) -> None:
        if overlay in self._overlays:
            self._overlays.remove(overlay)

    def tick(self) -> None:
        now = self.clock()
        self.ticks += 1
        for overlay in list(self._overlays):
            # A view that painted its flashes moments ago (new text arrived) skips this frame:
            # every paint is GUI-thread time taken from generation on a busy CPU.
            if now - overlay.painted_at < SKIP_AFTER_PAINT:
                continue
            if not overlay.paint(now):
                self._overlays.remove(overlay)
        if not self._overlays:
            self._timer.stop()
