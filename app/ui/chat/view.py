"""The conversation: messages stacked in a scroll area that follows new text while the user
is at the bottom (and stays put when they scrolled up to read)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget
from PySide6.QtCore import Qt

from app.ui.flash.driver import FlashDriver
from app.ui.flash.message_view import MessageView
from app.ui.flash.palette import DEFAULT, Scheme


class ChatView(QScrollArea):
    copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        container = QWidget()
        self._layout = QVBoxLayout(container)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self._layout.setSpacing(10)
        self.placeholder = QLabel("Type a message below to start. Accepted draft tokens are "
                                  "shown in colour as they arrive.")
        self.placeholder.setAlignment(Qt.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet("color: palette(mid);")
        self._layout.addWidget(self.placeholder)
        self._layout.addStretch(1)
        self.setWidget(container)
        self.messages: list[MessageView] = []
        self.highlights = True
        self.flash = True  # runs arriving in a streaming reply flash (when highlights show)
        self.scheme: Scheme = DEFAULT
        self.flasher = FlashDriver(self)  # the one animation timer of all messages
        self._follow = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._remember_position)
        bar.rangeChanged.connect(self._keep_following)

    def add_message(self, role: str, text: str = "", **kwargs) -> MessageView:
        view = MessageView(role, text, highlights=self.highlights, scheme=self.scheme,
                           flasher=self.flasher if self.flash else None, **kwargs)
        view.copied.connect(self.copied)
        self._layout.insertWidget(self._layout.count() - 1, view)
        self.messages.append(view)
        self.placeholder.hide()
        self._follow = True
        return view

    def remove_message(self, view: MessageView) -> None:
        self.messages.remove(view)
        view.stop_flashes()
        self._layout.removeWidget(view)
        view.deleteLater()
        self.placeholder.setVisible(not self.messages)

    def clear(self) -> None:
        for view in list(self.messages):
            self.remove_message(view)
        self._follow = True

    def set_highlights_visible(self, visible: bool) -> None:
        self.highlights = visible
        for view in self.messages:
            view.set_highlights_visible(visible)

    def set_flash(self, on: bool) -> None:
        """Applies to runs that arrive from now on; switching off also ends running flashes."""
        self.flash = on
        for view in self.messages:
            if not on:
                view.stop_flashes()
            view.flasher = self.flasher if on else None

    def set_scheme(self, scheme: Scheme) -> None:
        self.scheme = scheme
        for view in self.messages:
            view.set_scheme(scheme)

    def _remember_position(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 8

    def _keep_following(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
