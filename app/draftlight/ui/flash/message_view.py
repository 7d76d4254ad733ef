"""One message in the chat: a header (who, Copy), the text, and for replies a statistics footer.

A reply is rendered as Markdown while it streams (draftlight.ui.flash.streaming_markdown, which
MessageView extends); once finished, the whole reply. Runs that arrive while it streams flash
(draftlight.ui.flash.driver): an overlay of extra selections, never a change to the text.
"""

from __future__ import annotations

from PySide6.QtCore import QUrl, Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication, QPalette, QTextCursor, QTextDocument
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QProgressBar, QToolButton,
                               QVBoxLayout, QWidget)

from draftlight.ui.flash import highlight, markdown_render, typed_code
from draftlight.ui.flash.attached_files import AttachedFiles
from draftlight.ui.flash.auto_note_row import AutoNoteRow
from draftlight.ui.flash.branch_switch import BranchSwitch
from draftlight.ui.flash.fitted_browser import FittedBrowser
from draftlight.ui.flash.run_origins import RunOrigins
from draftlight.ui.flash.overlay import FlashOverlay
from draftlight.ui.flash.palette import DEFAULT, Scheme
from draftlight.ui.flash.passes import from_table, passes_of
from draftlight.ui.flash.strip import AcceptanceStrip
from draftlight.modes import mode_label
from draftlight.ui.flash.message_menu import popup_menu
from draftlight.ui.flash.reply_figures import ReplyFigures
from draftlight.ui.flash.stats_text import finished_footer_line
from draftlight.ui.flash.streaming_markdown import StreamingMarkdown
from draftlight.ui.widgets.elided_label import ElidedLabel
from draftlight.ui.widgets.plain_text import plain_label


class MessageView(StreamingMarkdown, QFrame):
    copied = Signal(str)  # what was put on the clipboard, in words
    regenerate_requested = Signal()  # from the right-click menu of the latest reply
    diff_requested = Signal()  # … of a reply to an Edit: show it as a diff against the file
    branch_step = Signal(int)  # ‹ or ›: show the previous (-1) or next (+1) version
    edit_requested = Signal()  # a user message's Edit: change it (a new branch)
    continue_requested = Signal()  # the latest reply's Continue: write more of it
    mode_requested = Signal(str)  # a reply's "Try N-gram" (auto drafted little, and said why)

    def __init__(self, role: str, text: str = "", *, runs: list | None = None,
                 figures: ReplyFigures | None = None, status: str = "complete",
                 mode: str | None = None, model: str = "",
                 streaming: bool = False, highlights: bool = True,
                 scheme: Scheme = DEFAULT, flasher=None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.role = role
        self.text = text
        self.runs: list[list[int]] = [list(r) for r in runs or []]
        self.figures = figures  # a finished reply's (None: a user's message, or none kept)
        self.status = status
        self.mode = mode
        self.model = model  # the target that wrote it ("": not kept, an older reply)
        self.streaming = streaming
        self.highlights = highlights
        self.scheme = scheme
        self.flash = FlashOverlay(self, flasher)  # flasher: a FlashDriver, or None
        self._spans: dict[int, list[tuple[int, int]]] = {}  # run index -> document spans
        self.code_blocks: list[str] = []
        self.message_id = None  # its history Row (store/history_queue.py), None if unsaved
        self.reading = False  # its prompt is being read (a long paste or file): no text yet
        self.note = ""  # a line under the figures that the figures do not hold (a stopped read)
        self._shown = 0  # characters of `text` already in the document while streaming
        self._init_streaming()  # where Markdown ends and the plain tail starts (StreamingMarkdown)

        self.setObjectName("message-" + role)
        layout = self._card(role)
        layout.addLayout(self._header(role))
        self.files = AttachedFiles(self)  # a user's attached files, as chips
        layout.addWidget(self.files)
        self._body_and_figures(layout)
        self.run_origins = RunOrigins(self)  # hover and click: where each run came from
        self.render()

    # --- building ---------------------------------------------------------------------------

    def _card(self, role: str) -> QVBoxLayout:
        """The card's frame and colour (ui/chat/look.py paints palette(window)); the flash
        overlay blends the fading tint over this same colour."""
        self.setFrameShape(QFrame.StyledPanel)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(QPalette.Window, palette.color(
            QPalette.AlternateBase if role == "user" else QPalette.Base))
        self.setPalette(palette)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 8, 14, 10)
        layout.setSpacing(4)
        return layout

    def _header(self, role: str) -> QHBoxLayout:
        """Who wrote it (and in which mode), the branch switch, Edit or Continue, Copy."""
        header = QHBoxLayout()
        # a found model's name can be long ("ollama:hf.co/bartowski/…:Q4_K_M"): cut in the
        # middle, so the card never widens the chat and the mode and state at the end stay
        self.title = ElidedLabel(elide=Qt.ElideMiddle)
        bold = self.title.font()  # as a font, not a style sheet: it measures what it cuts
        bold.setWeight(QFont.DemiBold)
        self.title.setFont(bold)
        header.addWidget(self.title)
        header.addStretch(1)
        self.branches = BranchSwitch(self)  # ‹ 2/3 ›: other versions of this message
        self.branches.step.connect(self.branch_step)
        header.addWidget(self.branches)
        if role == "user":
            self.edit_button = _tool_button(
                "Edit", "Change this message and ask again: the first version stays, as a "
                "branch (‹ ›)", self.edit_requested)
            header.addWidget(self.edit_button)
        if role == "assistant":
            self.continue_button = _tool_button(
                "Continue", "Write more of this reply: it was stopped or reached its length "
                "limit", self.continue_requested)
            self.continue_button.setVisible(False)  # the window shows it where it applies
            header.addWidget(self.continue_button)
        self.copy_button = _tool_button("Copy", "Copy this message's text", self.copy_text)
        header.addWidget(self.copy_button)
        return header

    def _body_and_figures(self, layout: QVBoxLayout) -> None:
        """The text, then (a reply's) the acceptance strip, the figures and auto's note."""
        self.body = FittedBrowser(self)
        self.body.anchorClicked.connect(self._link_clicked)
        self.body.setContextMenuPolicy(Qt.CustomContextMenu)
        self.body.customContextMenuRequested.connect(self._menu)
        self.is_latest = lambda: False  # set by the chat: whether this is its last message
        layout.addWidget(self.body)
        self.reading_bar = QProgressBar()  # a long read's progress, before the first token
        self.reading_bar.setTextVisible(False)
        self.reading_bar.setMaximumHeight(6)
        self.reading_bar.setVisible(False)
        layout.addWidget(self.reading_bar)
        self.strip = AcceptanceStrip(self)
        self.strip.set_scheme(self.scheme)
        self.strip.cell_clicked.connect(self.select_pass)
        self.strip.setVisible(False)
        layout.addWidget(self.strip)
        self.footer = plain_label()  # it names the models
        self.footer.setWordWrap(True)
        self.footer.setStyleSheet("color: palette(mid); font-size: small;")
        self.footer.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.footer)
        self.why_row = AutoNoteRow()  # auto drafted little or nothing: why, and N-gram
        self.why_row.mode_requested.connect(self.mode_requested)
        layout.addWidget(self.why_row)

    # --- state --------------------------------------------------------------------------------

    @property
    def document(self) -> QTextDocument:
        return self.body.document()

    def render(self) -> None:
        """Rebuild the whole view from text, runs and figures."""
        self._update_title()
        doc = self.document
        self._spans = {}
        self._md_end = self._tail_at = 0
        self._md_spans, self._code = {}, None
        if self.role == "assistant" and self.streaming:
            self._render_streaming(markdown_render.complete_blocks_end(self.text, self._md_end))
        elif self.role == "assistant":
            self._render_markdown(doc, self.text, self._spans)
        else:
            doc.clear()
            self.code_blocks = []
            own = self.files.set_message(self.text) if self.role == "user" else 0
            self.body.setVisible(own < len(self.text) or not self.files.blocks)
            highlight.append_plain(doc, self.text[own:], 0, [], self.highlights, self.scheme)
            typed_code.show_code(doc, self.text[own:])  # fenced or pasted code: monospaced
        self._shown = len(self.text)
        if self.role == "assistant" and not self.streaming:
            self.strip.set_passes(passes_of(self.text, self.runs, self.figures), self.text)
            self.run_origins.load()
        self.flash.repaint()
        self.update_footer()

    def set_live_passes(self, table: list[list[int]]) -> None:
        """The strip while streaming, from the passes seen so far."""
        passes = from_table(table, len(self.text))
        if passes is not None:
            self.strip.set_passes(passes, self.text)

    def select_pass(self, index: int) -> None:
        """Select pass `index` in the reply: its accepted run, or its text while it streams."""
        p = self.strip.passes[index]
        run = next((i for i, r in enumerate(self.runs) if p.start <= r[0] < p.end), None)
        spans = self.run_spans(run) if run is not None else []
        if run is None and (self.streaming or self.role != "assistant"):
            spans = self._plain_span(p.start, p.end)
        if not spans:
            return
        cursor = QTextCursor(self.document)
        cursor.setPosition(spans[0][0])
        cursor.setPosition(spans[-1][1], QTextCursor.KeepAnchor)
        self.body.setTextCursor(cursor)

    def set_live_stats(self, line: str) -> None:
        self.footer.setText(line)
        self.footer.setVisible(bool(line))

    def show_reading(self, read: int, total: int, line: str) -> None:
        """The prompt is being read: `read` of `total` tokens, said in `line`."""
        self.reading_bar.setRange(0, max(total, 1))
        self.reading_bar.setValue(read)
        self.reading_bar.setVisible(True)
        if not self.reading:
            self.reading = True
            self._update_title()
        self.set_live_stats(line)

    def end_reading(self) -> None:
        """The read is over (the first token came, or the reply ended)."""
        if self.reading:
            self.reading = False
            self.reading_bar.setVisible(False)
            self._update_title()

    def finish(self, text: str, runs: list[list[int]], figures: ReplyFigures | None,
               status: str) -> None:
        unseen = [i for i, run in enumerate(runs) if run[1] > self._shown]  # the last batch
        self.text, self.runs, self.figures, self.status = text, runs, figures, status
        self.streaming = False
        self.end_reading()
        self._render_later.stop()
        self.render()
        if self.highlights:
            self.flash.start(unseen)

    def set_highlights_visible(self, visible: bool) -> None:
        if visible != self.highlights:
            self.highlights = visible
            if not visible:
                self.stop_flashes()
            highlight.restyle(self.document, visible, self.scheme)

    def set_scheme(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self.strip.set_scheme(scheme)
        highlight.restyle(self.document, self.highlights, scheme)

    # --- where runs are ---------------------------------------------------------------------

    def run_spans(self, index: int) -> list[tuple[int, int]]:
        """Where run `index` is in the document (several spans once Markdown split it)."""
        if index not in self._spans:
            start, end, _tokens = self.runs[index]
            if self.streaming or self.role != "assistant":
                spans = self._md_spans.get(index, []) + self._plain_span(start, end)
                self._spans[index] = spans
            else:
                self._spans[index] = []  # not found in the rendered text
        return self._spans[index]

    @property
    def own_start(self) -> int:
        """Where the words typed start in `text`, after the attached files (shown as chips)."""
        return self.files.own_start

    def stop_flashes(self) -> None:
        self.flash.stop()

    def _update_title(self) -> None:
        if self.role == "user":
            self.title.setText("You")
            return
        title = self.model or "Draftlight"
        if self.mode:
            title += f"  ·  {mode_label(self.mode)}"
        if self.streaming:
            title += "  ·  reading…" if self.reading else "  ·  writing…"
        elif self.status == "interrupted":
            title += "  ·  interrupted"
        self.title.setText(title)

    def update_footer(self) -> None:
        """The figures' line. The chat calls it again once it has placed the view: the line
        names the file a run was copied from, which only the message it was attached to knows
        (run_origins.resolve)."""
        line = (finished_footer_line(self.figures, copied=self.run_origins.summary())
                if self.figures is not None and self.role == "assistant" else "")
        if self.note:
            line = f"{line}\n{self.note}" if line else self.note
        self.footer.setText(line)
        self.footer.setVisible(bool(line))
        self.why_row.show_note(self.figures.stats if self.figures is not None else None,
                               self.role == "assistant" and not self.streaming)

    # --- menu and copying ---------------------------------------------------------------------

    def _menu(self, point) -> None:
        self.menu = popup_menu(self, point)  # kept for tests

    def edited_file(self) -> str:
        """The file this reply edits (its Predicted Output), "" where it edits none."""
        figures = self.figures
        return figures.prediction_from if figures is not None and figures.prediction_file else ""

    def copy_text(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        self.copied.emit("Message copied")

    def _link_clicked(self, url: QUrl) -> None:
        if url.scheme() == markdown_render.CODE_LINK_SCHEME:
            index = int(url.path() or -1)
            if 0 <= index < len(self.code_blocks):
                QGuiApplication.clipboard().setText(self.code_blocks[index])
                self.copied.emit("Code copied")


def _tool_button(text: str, tip: str, clicked) -> QToolButton:
    button = QToolButton(text=text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.clicked.connect(clicked)
    return button
