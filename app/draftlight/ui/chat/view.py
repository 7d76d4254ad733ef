"""The conversation: messages stacked in a scroll area that follows new text while the user
is at the bottom (and stays put when they scrolled up to read). It also tells each reply what
its runs' origins point at, and shows the source of one when it is clicked (source_links.py,
which ChatView extends). A long conversation's earlier messages are built when scrolled to
(earlier.py): `messages` are the views built, `earlier` the messages before them, and an index
into the conversation counts both."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QScrollArea, QVBoxLayout, QWidget

from draftlight.ui.chat.earlier import EarlierMessage, page_start
from draftlight.ui.chat.source_links import SourceLinks
from draftlight.ui.chat.welcome_card import WelcomeCard
from draftlight.ui.flash.driver import FlashDriver
from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.palette import DEFAULT, Scheme


EARLIER_AT_PX = 40  # scrolled this near the top, the next page of earlier messages is built
ANCHOR_MS = 400  # how long the view is held in place while a page's views are laid out


class ChatView(SourceLinks, QScrollArea):
    copied = Signal(str)
    regenerate_requested = Signal()  # a reply's right-click menu
    continue_requested = Signal()  # the latest reply's Continue (its button or menu)
    mode_requested = Signal(str)  # a reply's "Try N-gram": switch the mode box to it
    # a click on a run an earlier version drafted: (that answer's history id, start, end, tokens)
    version_requested = Signal(int, int, int, int)
    branch_step_requested = Signal(object, int)  # a message's ‹ or ›: (its view, -1 or +1)
    edit_requested = Signal(object)  # a user message's Edit: its view
    earlier_shown = Signal()  # views of earlier messages were built (their ‹ n/m › to set)

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
        self.earlier_button = QPushButton("Show earlier messages")
        self.earlier_button.setFlat(True)
        self.earlier_button.clicked.connect(lambda: self.show_earlier())
        self.earlier_button.hide()
        self._layout.addWidget(self.earlier_button, 0, Qt.AlignHCenter)
        self._layout.addStretch(1)
        self.setWidget(container)
        self.messages: list[MessageView] = []
        self.earlier: list[EarlierMessage] = []  # before messages[0], not built yet
        self._anchor: int | None = None  # distance from the bottom kept while pages arrive
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
        view = self._new_view(role, text, **kwargs)
        self._layout.insertWidget(self._layout.count() - 1, view)
        self.messages.append(view)
        view.update_footer()  # its origins' messages can be read now that it is in place
        self.welcome.hide()
        self._follow = True
        return view

    def _new_view(self, role: str, text: str, **kwargs) -> MessageView:
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
        return view

    # --- a long conversation's earlier messages (earlier.py) --------------------------------

    def set_earlier(self, earlier: list[EarlierMessage]) -> None:
        """The messages before the first view, built when scrolled to."""
        self.earlier = earlier
        self._update_earlier_button()

    def show_earlier(self, down_to: int | None = None, hold: bool = True) -> None:
        """Build a page of the earlier messages (or all of them down to conversation index
        `down_to`); `hold`: the view stays where it was on screen (else the caller scrolls)."""
        if not self.earlier:
            return
        start = page_start([m.text for m in self.earlier]) if down_to is None else \
            max(0, min(down_to, len(self.earlier)))
        built, self.earlier = self.earlier[start:], self.earlier[:start]
        bar = self.verticalScrollBar()
        self._anchor = bar.maximum() - bar.value() if hold else None
        first = self._layout.indexOf(self.earlier_button) + 1
        views = []
        for i, message in enumerate(built):
            view = self._new_view(message.role, message.text, **message.options())
            view.message_id = message.message_id
            self._layout.insertWidget(first + i, view)
            views.append(view)
        self.messages[:0] = views
        for view in views:  # as add_message: their origins' messages can be read now
            view.update_footer()
        self._update_earlier_button()
        if hold:
            QTimer.singleShot(ANCHOR_MS, self._let_go)
        self.earlier_shown.emit()

    def _let_go(self) -> None:
        self._anchor = None

    def _update_earlier_button(self) -> None:
        count = len(self.earlier)
        self.earlier_button.setText(f"Show earlier messages ({count:,} more)")
        self.earlier_button.setVisible(bool(count))

    def index_of(self, view: MessageView) -> int:
        """`view`'s index in the conversation (earlier messages counted)."""
        return len(self.earlier) + self.messages.index(view)

    def view_at(self, at: int) -> MessageView | None:
        """The view of the conversation's message `at`, built if it was not yet."""
        if at < len(self.earlier):
            self.show_earlier(down_to=at, hold=False)
            self._lay_out_now()  # the caller scrolls to it next
        at -= len(self.earlier)
        return self.messages[at] if 0 <= at < len(self.messages) else None

    def scroll_to(self, view: MessageView) -> None:
        """Bring `view` on screen, laid out first (a conversation just opened is not yet), and
        stay there: no longer following the newest text."""
        self._lay_out_now()
        self.ensureWidgetVisible(view)

    def _lay_out_now(self) -> None:
        self._follow = False  # what is built above is not a reason to jump to the bottom
        for _ in range(3):  # the views' layouts, then their fitted heights, then the column's
            QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)

    def _message_at(self, at: int):
        """The view or the earlier message at conversation index `at` (both have role, text)."""
        if 0 <= at < len(self.earlier):
            return self.earlier[at]
        at -= len(self.earlier)
        return self.messages[at] if 0 <= at < len(self.messages) else None

    def user_number(self, at: int) -> int:
        """Which of the user's messages the one at conversation index `at` is (from 1)."""
        return sum(1 for i in range(at + 1) if self._message_at(i).role == "user")

    def view_of(self, message_id: int) -> MessageView | None:
        """The view of history message `message_id`, built if it was not yet."""
        for at, message in enumerate(self.earlier):
            if message.message_id is not None and message.message_id.id == message_id:
                return self.view_at(at)
        return next((v for v in self.messages
                     if v.message_id is not None and v.message_id.id == message_id), None)

    def remove_message(self, view: MessageView) -> None:
        self.messages.remove(view)
        view.stop_flashes()
        view.hide()  # at once: it is deleted when the event loop next turns
        self._layout.removeWidget(view)
        view.deleteLater()
        self.welcome.setVisible(not self.messages and not self.earlier)

    def clear(self) -> None:
        for view in list(self.messages):
            self.remove_message(view)
        self.set_earlier([])
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

    def show_diff(self, reply: MessageView):
        """A reply to an Edit as a diff against the file (the question before it holds its
        text); the dialog, or None when that file is not found."""
        from draftlight.store.pasted_code import PASTED_CODE, edit_target
        from draftlight.ui.chat.diff_dialog import DiffDialog
        name = reply.edited_file()
        at = self.messages.index(reply)
        if at == 0 and self.earlier:  # its question is before the views: build it
            self.show_earlier(down_to=len(self.earlier) - 1)
            at = self.messages.index(reply)
        question = next((v for v in reversed(self.messages[:at]) if v.role == "user"), None)
        block = next((b for b in (question.files.blocks if question else [])
                      if b.name == name), None)
        if block is not None:
            old = question.text[block.start:block.end]
        elif name == PASTED_CODE and question is not None:  # the code block pasted in it
            _name, old = edit_target(question.text[question.own_start:]) or (None, None)
            if old is None:
                return None
        else:
            return None
        self.diff = DiffDialog(name, old, reply.text, self.window())
        self.diff.show()
        return self.diff

    def _remember_position(self, value: int) -> None:
        maximum = self.verticalScrollBar().maximum()
        self._follow = value >= maximum - 8
        if value <= EARLIER_AT_PX and maximum > 0 and self.earlier and self._anchor is None:
            QTimer.singleShot(0, self.show_earlier)  # scrolled to the top: the next page

    def _keep_following(self, _minimum: int, maximum: int) -> None:
        if self._anchor is not None:  # pages arrive above: what was on screen stays there
            self.verticalScrollBar().setValue(maximum - self._anchor)
        elif self._follow:
            self.verticalScrollBar().setValue(maximum)
