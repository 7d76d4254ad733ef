"""A one-line label that cuts its text with "…" to the width it is given.

A plain QLabel asks for the width of its whole text, and a dialog grows to give it: a long
repository name or search made the picker 2,500 px wide. This one asks for its whole text
but makes do with a few characters, so the dialog keeps to its screen."""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QLabel, QWidget

from draftlight.ui.widgets.plain_text import plain_tip

FEWEST_CHARACTERS = 12  # what it shows, at least, however narrow the dialog


class ElidedLabel(QLabel):
    """Plain text only (it shows file, model and repository names: Qt must never read them as
    HTML). text() is the whole text; while it is cut, the whole text is the tooltip (unless the
    tooltip was set to something else)."""

    def __init__(self, text: str = "", parent: QWidget | None = None, *,
                 elide: Qt.TextElideMode = Qt.ElideRight) -> None:
        super().__init__(parent)
        self._whole, self._elide, self._own_tip = "", elide, ""
        self.setTextFormat(Qt.PlainText)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._whole = text
        self._show_what_fits()
        self.updateGeometry()

    def text(self) -> str:
        return self._whole

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        margins = self.contentsMargins()
        # rounded up: elidedText cuts a text whose fractional width passes the rounded one
        # (a bold "You" of 24.4 px in 24 px showed as "…")
        whole = math.ceil(QFontMetricsF(self.font()).horizontalAdvance(self._whole))
        return QSize(whole + margins.left() + margins.right(), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        fewest = self.fontMetrics().averageCharWidth() * FEWEST_CHARACTERS
        return QSize(min(self.sizeHint().width(), fewest), super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._show_what_fits()

    def _show_what_fits(self) -> None:
        shown = self.fontMetrics().elidedText(self._whole, self._elide, self.contentsRect().width())
        super().setText(shown)
        if self.toolTip() in ("", self._own_tip):  # a tooltip set from outside stays
            self._own_tip = plain_tip(self._whole) if shown != self._whole else ""
            self.setToolTip(self._own_tip)
