"""The main window's status bar: a line saying what the models are doing ("Ready: qwen2.5-coder-1.5b
+ draft …"), a passing message in its place while it lasts (showMessage: "Message copied"), the
load's bar while a model loads, and at the right end the live figures of the reply being
written (and the serving line), which keep their whole width.

The line and the message are cut with "…" to the room the figures leave, the whole text in
their tooltip. Plain QLabels each asked for their whole text, so a long status and the live
figures cut each other off ("trained contex 3 tokens"); and QStatusBar paints a passing
message itself, across the whole bar and under the figures. Here a label of its own shows it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QSizeGrip, QStatusBar, QStyle, QStyleOption, QWidget

from draftlight.ui.engine.load_bar import LoadBar
from draftlight.ui.widgets.elided_label import ElidedLabel

LOAD_BAR_WIDTH = 480  # at most: wider, a busy bar is a stripe across the window


class StatusLine(QStatusBar):
    """The figures are added after it is built (addPermanentWidget): the right end is theirs."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.line = ElidedLabel()  # what the models are doing (the window's status_label)
        self.passing = ElidedLabel()  # showMessage's message, while it lasts
        self.load_bar = LoadBar()
        self.load_bar.setMaximumWidth(LOAD_BAR_WIDTH)
        self.loading = False
        for widget in (self.line, self.passing, self.load_bar):
            self.addWidget(widget, 1)
        # after QStatusBar has hidden (or shown again) these three for a message: which shows
        self.messageChanged.connect(self._arrange)
        self._arrange()

    def set_loading(self, loading: bool) -> None:
        """While a model loads, its bar takes the line's place (it says the same, with figures)."""
        self.loading = loading
        self._arrange()

    def _arrange(self, *_message) -> None:
        message = self.currentMessage()
        self.passing.setText(message)
        self.passing.setVisible(bool(message))
        self.load_bar.setVisible(self.loading)
        self.line.setVisible(not message and not self.loading)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """QStatusBar's painting but for the passing message's text, which `passing` shows: the
        panel, and each item's frame (most styles draw none)."""
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawPrimitive(QStyle.PE_PanelStatusBar, option, painter, self)
        for widget in self.findChildren(QWidget, options=Qt.FindDirectChildrenOnly):
            if widget.isVisible() and not isinstance(widget, QSizeGrip):
                frame = QStyleOption()
                frame.rect = widget.geometry().adjusted(-2, -1, 2, 1)
                frame.palette = self.palette()
                self.style().drawPrimitive(QStyle.PE_FrameStatusBarItem, frame, painter, widget)
