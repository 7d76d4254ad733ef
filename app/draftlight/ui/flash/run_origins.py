"""Where each accepted run of a reply came from, in the window: hovering a run in the text or its
cell in the acceptance strip tells its origin (origin_words.describe); clicking a run that was
copied from a message of the chat asks the chat to show that message (`clicked`), where the
source is marked in the run's colour for a moment (FlashOverlay.mark).

The chat tells a reply what its origins point at (`resolve`): this room knows one message, not
the conversation.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtWidgets import QToolTip

from draftlight.ui.flash import highlight
from draftlight.ui.flash.origin_words import describe, origins_of, summary
from draftlight.ui.flash.run_origin import RunOrigin
from draftlight.ui.widgets.plain_text import plain_tip


class RunOrigins(QObject):
    clicked = Signal(int)  # index of the run whose origin was clicked (it has a source to show)

    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view  # the MessageView: its body, strip, runs and run_spans()
        self.origins: list[RunOrigin | None] = []  # one per run of the view
        self.resolve = lambda origin: None  # origin -> Source | None: set by the chat
        view.body.viewport().installEventFilter(self)
        view.strip.tip_extra = self.pass_tip

    def set_origins(self, origins: list[RunOrigin | None]) -> None:
        self.origins = list(origins)

    def load(self) -> None:
        """The origins in the view's figures (a finished or reopened reply)."""
        self.origins = origins_of(self.view.runs, self.view.figures)

    def origin(self, index: int | None) -> RunOrigin | None:
        return self.origins[index] if index is not None and 0 <= index < len(self.origins) else None

    def tip(self, index: int | None) -> str:
        origin = self.origin(index)
        return describe(origin, self.resolve(origin)) if origin else ""

    def summary(self) -> str:
        """Where the accepted tokens came from, for the footer (origin_words.summary)."""
        return summary(self.view.runs, self.origins, self.resolve)

    def pass_tip(self, pass_index: int) -> str:
        """The origin line of a strip cell: that of the run its pass accepted."""
        p = self.view.strip.passes[pass_index]
        return self.tip(next((i for i, r in enumerate(self.view.runs)
                              if p.start <= r[0] < p.end), None))

    def run_at(self, point) -> int | None:
        """The run under `point` (the text view's viewport coordinates), if any."""
        position = self.view.document.documentLayout().hitTest(QPointF(point), Qt.ExactHit)
        if position < 0:
            return None
        for index in range(len(self.view.runs)):
            if any(start <= position < end for start, end in self.view.run_spans(index)):
                return index
        return None

    def has_source(self, index: int | None) -> bool:
        origin = self.origin(index)
        return origin is not None and origin.has_source_in_chat

    def eventFilter(self, watched, event) -> bool:
        kind = event.type()
        if kind == QEvent.ToolTip:
            text = self.tip(self.run_at(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), plain_tip(text), self.view.body)
            else:
                QToolTip.hideText()
            return True
        if (kind == QEvent.MouseButtonRelease and event.button() == Qt.LeftButton
                and not self.view.body.textCursor().hasSelection()):
            index = self.run_at(event.position().toPoint())
            if self.has_source(index):
                self.clicked.emit(index)
        return False


def source_spans(view, start: int, end: int) -> list[tuple[int, int]]:
    """Where view.text[start:end] is in the view's document. A user's or system message is
    plain text, position for position; a reply's Markdown moved things, so its phrase is looked
    up in the rendered text, the occurrence nearest its place in the source."""
    text = view.text
    if not 0 <= start < end <= len(text):
        return []
    to = highlight.utf16_len
    if view.role != "assistant":  # its words after its attached files (shown as chips)
        own = getattr(view, "own_start", 0)
        if start < own:
            return []  # inside an attached file: the chat opens the file instead
        return [(to(text[own:start]), to(text[own:end]))]
    plain = view.document.toPlainText()
    for phrase in [text[start:end].strip()] + sorted(text[start:end].split("\n"), key=len)[::-1]:
        phrase = phrase.strip()
        if not phrase:
            continue
        found, at = [], plain.find(phrase)
        while at >= 0:
            found.append(at)
            at = plain.find(phrase, at + 1)
        if found:
            guess = start * len(plain) / max(len(text), 1)
            at = min(found, key=lambda i: abs(i - guess))
            return [(to(plain[:at]), to(plain[:at + len(phrase)]))]
    return []

