"""The conversation: messages stacked in a scroll area that follows new text while the user
is at the bottom (and stays put when they scrolled up to read). It also tells each reply what
its runs' origins point at, and shows the source of one when it is clicked."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QScrollArea, QVBoxLayout, QWidget
from PySide6.QtCore import Qt

from draftlight.ui.chat.welcome_card import WelcomeCard
from draftlight.ui.flash.driver import FlashDriver
from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.origin_words import Source
from draftlight.ui.flash.run_origins import source_spans
from draftlight.ui.flash.run_origin import RunOrigin
from draftlight.ui.flash.palette import DEFAULT, Scheme


class ChatView(QScrollArea):
    copied = Signal(str)
    regenerate_requested = Signal()  # a reply's right-click menu
    continue_requested = Signal()  # the latest reply's Continue (its button or menu)
    mode_requested = Signal(str)  # a reply's "Try N-gram": switch the mode box to it
    # a click on a run an earlier version drafted: (that answer's history id, start, end, tokens)
    version_requested = Signal(int, int, int, int)
    branch_step_requested = Signal(object, int)  # a message's ‹ or ›: (its view, -1 or +1)
    edit_requested = Signal(object)  # a user message's Edit: its view

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setObjectName("chat-view")
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        container = QWidget()
        container.setObjectName("chat-column")
        self._layout = QVBoxLayout(container)
        self._layout.setContentsMargins(18, 16, 18, 16)
        self._layout.setSpacing(14)
        self.welcome = WelcomeCard()  # the empty chat's card, centred (no alignment flag:
        centred = QHBoxLayout()  # with one, Qt sizes it without its wrapped lines' heights)
        centred.addStretch(1)
        centred.addWidget(self.welcome, 100)
        centred.addStretch(1)
        self._layout.addLayout(centred)
        self._layout.addStretch(1)
        self.setWidget(container)
        self.messages: list[MessageView] = []
        self.highlights = True
        self.flash = True  # runs arriving in a streaming reply flash (when highlights show)
        self.scheme: Scheme = DEFAULT
        self.flasher = FlashDriver(self)  # the one animation timer of all messages
        self.system_prompt = ""  # the one sent with the conversation (for its origins)
        self._follow = True
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._remember_position)
        bar.rangeChanged.connect(self._keep_following)

    def add_message(self, role: str, text: str = "", **kwargs) -> MessageView:
        view = MessageView(role, text, highlights=self.highlights, scheme=self.scheme,
                           flasher=self.flasher if self.flash else None, **kwargs)
        view.copied.connect(self.copied)
        view.regenerate_requested.connect(self.regenerate_requested)
        view.continue_requested.connect(self.continue_requested)
        view.mode_requested.connect(self.mode_requested)
        view.diff_requested.connect(partial(self.show_diff, view))
        view.branch_step.connect(partial(self.branch_step_requested.emit, view))
        view.edit_requested.connect(partial(self.edit_requested.emit, view))
        view.is_latest = lambda: bool(self.messages) and self.messages[-1] is view
        view.run_origins.resolve = partial(self.origin_source, view)
        view.run_origins.clicked.connect(partial(self.show_origin, view))
        self._layout.insertWidget(self._layout.count() - 1, view)
        self.messages.append(view)
        self.welcome.hide()
        self._follow = True
        return view

    def remove_message(self, view: MessageView) -> None:
        self.messages.remove(view)
        view.stop_flashes()
        view.hide()  # at once: it is deleted when the event loop next turns
        self._layout.removeWidget(view)
        view.deleteLater()
        self.welcome.setVisible(not self.messages)

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
        self.welcome.set_scheme(scheme)
        for view in self.messages:
            view.set_scheme(scheme)

    # --- origins ----------------------------------------------------------------------------

    def _source_view(self, reply: MessageView, origin: RunOrigin | None) -> MessageView | None:
        """The message a copied run came from: a message of the chat, or the reply itself."""
        if origin is None:
            return None
        if origin.kind == "reply":
            return reply
        at = origin.at if origin.kind == "message" else None
        if at is not None and 0 <= at < len(self.messages):
            source = self.messages[at]
            return source if source.role == origin.role else None
        return None

    def origin_source(self, reply: MessageView, origin: RunOrigin | None) -> Source | None:
        if origin is not None and origin.kind == "message" and origin.role == "system":
            return Source("system", self.system_prompt)
        source = self._source_view(reply, origin)
        if source is None:
            return None
        number = sum(1 for v in self.messages[:self.messages.index(source) + 1]
                     if v.role == "user")
        role = "reply" if origin.kind == "reply" else source.role
        return Source(role, source.text, number if role == "user" else 0)

    def show_diff(self, reply: MessageView):
        """A reply to an Edit as a diff against the file (the question before it holds its
        text); the dialog, or None when that file is not found."""
        from draftlight.ui.chat.diff_dialog import DiffDialog
        name = reply.edited_file()
        at = self.messages.index(reply)
        question = next((v for v in reversed(self.messages[:at]) if v.role == "user"), None)
        block = next((b for b in (question.files.blocks if question else [])
                      if b.name == name), None)
        if block is None:
            return None
        self.diff = DiffDialog(name, question.text[block.start:block.end], reply.text,
                               self.window())
        self.diff.show()
        return self.diff

    def show_origin(self, reply: MessageView, index: int) -> None:
        """Scroll to where run `index` of `reply` was copied from; mark it in the run's colour.
        A run an earlier version's answer drafted asks for that version (version_requested)."""
        origin = reply.run_origins.origin(index)
        if origin is None:
            return
        start, end = origin.start or 0, origin.end or 0
        if origin.kind == "prediction" and origin.message_id is not None:
            self.version_requested.emit(origin.message_id, start, end, reply.runs[index][2])
            return
        source = self._source_view(reply, origin)
        if source is None:
            return
        spans = source_spans(source, start, end)
        block = source.files.block_at(start) if not spans and source.role == "user" else None
        if block is not None:  # copied from a file attached to that message: open it there
            self.ensureWidgetVisible(source)
            source.files.show(block, (start - block.start, min(end, block.end) - block.start),
                              reply.scheme.tint(reply.runs[index][2]))
        else:
            self.mark_copy(source, start, end, reply.runs[index][2])

    def mark_copy(self, source: MessageView, start: int, end: int, tokens: int) -> None:
        """Scroll to source.text[start:end] and mark it in the colour of a run of `tokens`."""
        spans = source_spans(source, start, end)
        if not spans:
            self.ensureWidgetVisible(source)
            return
        cursor = source.body.textCursor()
        cursor.setPosition(spans[0][0])
        rect = source.body.cursorRect(cursor)
        point = source.body.viewport().mapTo(self.widget(), rect.center())
        self.ensureVisible(point.x(), point.y(), 0, max(rect.height(), 40))
        source.flash.mark(spans, tokens, self.flasher)

    def _remember_position(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 8

    def _keep_following(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)
