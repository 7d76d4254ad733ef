"""Colour schemes for accepted draft runs: the resting tint of each run-length bucket, the text
colour on it, and the bright flash a run arrives with. The text, the acceptance strip and the
legend all take their colours from one Scheme, so switching it switches all three.

Tints are translucent (drawn over the message background), so one scheme serves a light and a
dark window; in dark mode they are made a little stronger, since a translucent tint over a dark
background reads weaker than over white.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from PySide6.QtGui import QColor, QGuiApplication, QPalette

# Colour strength grows with the run length: 1, 2, 3–4, 5+ accepted tokens in one pass.
BUCKETS = ((1, "1"), (2, "2"), (3, "3–4"), (5, "5+"))


def bucket(run_tokens: int) -> int:
    starts = [start for start, _ in BUCKETS]
    return max(bisect.bisect_right(starts, run_tokens) - 1, 0)


@dataclass(frozen=True)
class Scheme:
    name: str  # settings key
    label: str  # as the Settings dialog shows it
    tints: tuple[tuple[int, int, int, int], ...]  # RGBA per bucket, weakest first
    flash: tuple[int, int, int]  # opaque: a run's colour the moment it arrives
    text: tuple[int, int, int] | None = None  # text colour on a tint; None = the window's
    dark: bool = False  # the window has a dark background

    def tint(self, run_tokens: int) -> QColor:
        r, g, b, a = self.tints[bucket(run_tokens)]
        if self.dark:
            a = min(255, round(a * 1.25))
        return QColor(r, g, b, a)

    def flash_colour(self) -> QColor:
        return QColor(*self.flash)

    def text_colour(self) -> QColor | None:
        return QColor(*self.text) if self.text else None

    def for_background(self, dark: bool) -> "Scheme":
        return Scheme(self.name, self.label, self.tints, self.flash, self.text, dark)


SCHEMES = {
    # A cyan: distinct from link blue and from selection colours; arrives as a warm yellow.
    "default": Scheme("default", "Default (cyan)",
                      ((0, 150, 200, 55), (0, 150, 200, 95), (0, 150, 200, 145),
                       (0, 150, 200, 200)), (255, 200, 0)),
    # Okabe–Ito orange then vermillion, growing in strength (told apart by lightness, so
    # under deuteranopia and protanopia too), arriving as Okabe–Ito sky blue: the blue–orange
    # contrast is the one those kinds of colour blindness keep.
    "colourblind": Scheme("colourblind", "Colour-blind safe (Okabe–Ito)",
                          ((230, 159, 0, 60), (230, 159, 0, 120), (213, 94, 0, 110),
                           (213, 94, 0, 170)), (86, 180, 233)),
    # Opaque yellows under black text: the strongest contrast whatever the window's colours.
    "contrast": Scheme("contrast", "High contrast",
                       ((255, 255, 150, 255), (255, 240, 80, 255), (255, 210, 0, 255),
                        (255, 160, 0, 255)), (255, 0, 255), text=(0, 0, 0)),
}
DEFAULT = SCHEMES["default"]


def system_is_dark() -> bool:
    app = QGuiApplication.instance()
    if app is None:
        return False
    return app.palette().color(QPalette.Base).lightness() < 128


def scheme_named(name: str, dark: bool | None = None) -> Scheme:
    """The scheme for a settings value (unknown names give the default), for this window."""
    scheme = SCHEMES.get(name, DEFAULT)
    return scheme.for_background(system_is_dark() if dark is None else dark)
