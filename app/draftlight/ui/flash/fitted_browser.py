"""FittedBrowser, the read-only text view a message's text is shown in: exactly as tall as its
document (the chat scrolls, not it), and loading no resource a message's text names (an image
is answered with an empty one, anything else with empty text)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

_NO_IMAGE = QImage(1, 1, QImage.Format_ARGB32)  # what an image a message names shows as
_NO_IMAGE.fill(0)


class FittedBrowser(QTextBrowser):
    """A read-only text view exactly as tall as its document: the chat scrolls, not it. It loads
    no resource: a message's text can name images (`![x](/dev/zero)`, a FIFO, a remote URL), and
    Qt would read them; the app puts none there. Each is answered with an empty one: nothing
    (None) would make QTextDocument read a local path itself."""

    def loadResource(self, kind: int, name):  # noqa: N802 - Qt's name
        if kind == QTextDocument.ImageResource:
            return _NO_IMAGE
        return ""  # a style sheet or page: empty text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setOpenLinks(False)
        self.viewport().setAutoFillBackground(False)
        self.document().setDocumentMargin(2)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)

    def _fit(self, *_args) -> None:
        margins = self.contentsMargins()
        height = math.ceil(self.document().size().height()) + margins.top() + margins.bottom()
        if height != self.height():
            self.setFixedHeight(max(height, 8))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()
