"""The files attached to the next message, above the message box: a chip each ("report.pdf ·
3 pages · ~1,200 tokens", Edit, ×), added with the Attach… button or by dropping files on the
message box, and sent with the message (draftlight.store.attachments puts each under a header
naming it). Clicking a chip's name shows its text (read-only); **Edit** makes that file the
reply's Predicted Output, as `draftlight chat --edit` and serve's `prediction` do: an edited
file repeats most of the original, which then drafts (the target never sees it twice)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QDialog, QFileDialog, QFrame, QHBoxLayout, QLabel, QScrollArea,
                               QToolButton, QWidget)

from draftlight.store.attachments import (Attachment, AttachmentError, attachment_from_bytes,
                                          read_attachment)
from draftlight.ui.flash.text_viewer import TextViewer
from draftlight.ui.widgets.plain_text import plain_label, plain_tip

CHARS_PER_TOKEN = 4  # the chip's estimate; the engine counts exactly when it is sent


def estimated_tokens(attachment: Attachment) -> int:
    return max(1, round(len(attachment.text) / CHARS_PER_TOKEN))


class AttachmentTray(QWidget):
    problem = Signal(str)  # a file that cannot be attached: why, in one line
    changed = Signal()
    _read = Signal(str, object, str)  # from the reading thread: (name, Attachment, problem)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attachments: list[Attachment] = []
        self.editing: Attachment | None = None  # the file the reply is to edit
        # Files are read off the GUI thread, one at a time, in the order given: a document's
        # text can take seconds (it is read in a bounded process: store/attachments.py), and
        # a slow disk or a hostile file never freezes the window. Meanwhile a chip says so.
        self.reading: list[str] = []  # names of the files being read, in order
        self._then = None  # what to do once they are read (send the message that waits)
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attachments")
        self._read.connect(self._on_read)
        # The chips scroll sideways: many files never widen the window past a small screen.
        strip = QWidget()
        self._row = QHBoxLayout(strip)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        area = QScrollArea()
        area.setObjectName("attachment-tray")
        area.setWidget(strip)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.NoFrame)
        area.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(area)
        self.area = area
        self.chips: list[AttachmentChip] = []
        self.reading_chips: list[QLabel] = []  # "Reading report.pdf…", one per file being read
        self.viewer: QDialog | None = None
        self.hide()

    def ask(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Attach files", "",
                                                "Text, code, PDF, Word and HTML (*);;All files (*)")
        self.add_paths(paths)

    def add_paths(self, paths: list[str]) -> None:
        """Each file read now, in the background (a file that changes later is sent as it
        was); one that cannot be attached is said and left out, the others are attached."""
        for path in paths:
            self._start(Path(path).name, read_attachment, Path(path))

    def add_text(self, name: str, text: str) -> None:
        """Text that is not a file (a long paste) as an attachment named `name`."""
        self._start(name, attachment_from_bytes, name, text.encode("utf-8"))

    def when_read(self, then) -> None:
        """Call `then` once every file given is read, unless one cannot be attached: then
        the message is not sent without it, and the user decides again."""
        self._then = then

    def close(self) -> None:
        """Stop reading (the window closes): what is being read is let go."""
        self._reader.shutdown(wait=False, cancel_futures=True)

    def _start(self, name: str, read, *args) -> None:
        self.reading.append(name)
        self._reader.submit(self._read_in_background, name, read, *args)
        self._show()

    def _read_in_background(self, name: str, read, *args) -> None:
        try:
            attachment, problem = read(*args), ""
        except AttachmentError as exc:
            attachment, problem = None, f"Cannot attach {exc}"
        except Exception as exc:  # noqa: BLE001 - never lost on a thread: said in the banner
            attachment, problem = None, f"Cannot attach {name}: {type(exc).__name__}: {exc}"
        try:
            self._read.emit(name, attachment, problem)
        except RuntimeError:  # the window is gone
            pass

    def _on_read(self, name: str, attachment: Attachment | None, problem: str) -> None:
        if name in self.reading:
            self.reading.remove(name)
        if problem:
            self._then = None
            self.problem.emit(problem)
        elif attachment.sha256 not in {a.sha256 for a in self.attachments}:
            self.attachments.append(attachment)
        self._show()
        if not self.reading and self._then is not None:
            then, self._then = self._then, None
            then()

    def replace(self, old: Attachment, new: Attachment) -> None:
        """`new` in `old`'s place (the pages of a PDF that fit the context)."""
        self.attachments = [new if a is old else a for a in self.attachments]
        if self.editing is old:
            self.editing = new
        self._show()

    def remove(self, attachment: Attachment) -> None:
        self.attachments = [a for a in self.attachments if a is not attachment]
        if self.editing is attachment:
            self.editing = None
        self._show()

    def set_editing(self, attachment: Attachment, on: bool) -> None:
        """One file at a time is the one edited."""
        self.editing = attachment if on else (None if self.editing is attachment
                                               else self.editing)
        for chip in self.chips:
            chip.edit.setChecked(chip.attachment is self.editing)

    def take(self) -> list[Attachment]:
        """The attachments, for the message being sent; the tray is empty afterwards."""
        taken, self.attachments, self.editing = self.attachments, [], None
        self._show()
        return taken

    def show_text(self, attachment: Attachment) -> QDialog:
        """A read-only view of what will be sent for `attachment`."""
        self.viewer = TextViewer(attachment.describe(), attachment.text, self)
        self.viewer.show()
        return self.viewer

    def _show(self) -> None:
        for chip in self.chips + self.reading_chips:
            self._row.removeWidget(chip)
            chip.deleteLater()
        self.chips, self.reading_chips = [], []
        for attachment in self.attachments:
            chip = AttachmentChip(attachment, self)
            chip.edit.setChecked(attachment is self.editing)
            self._row.insertWidget(self._row.count() - 1, chip)
            self.chips.append(chip)
        for name in self.reading:
            chip = plain_label(f"Reading {name}…")
            chip.setObjectName("attachment-chip")
            chip.setContentsMargins(6, 4, 6, 4)
            self._row.insertWidget(self._row.count() - 1, chip)
            self.reading_chips.append(chip)
        self.setVisible(bool(self.attachments or self.reading))
        # As tall as a chip, and its scroll bar when the chips are wider than the window
        chip_height = max((chip.sizeHint().height() for chip in self.chips + self.reading_chips),
                          default=0)
        self.area.setFixedHeight(chip_height + self.area.horizontalScrollBar().sizeHint().height()
                                 + 2)
        self.changed.emit()


class AttachmentChip(QFrame):
    def __init__(self, attachment: Attachment, tray: AttachmentTray) -> None:
        super().__init__(tray)
        self.attachment = attachment
        self.setObjectName("attachment-chip")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 2, 0)
        layout.setSpacing(2)
        tokens = estimated_tokens(attachment)
        self.name = QToolButton(text=f"{attachment.describe()} · ~{tokens:,} tokens")
        self.name.setAutoRaise(True)
        self.name.setToolTip(plain_tip(f"{attachment.name}: sent with your next message, under "
                                       "a header that names it. Click to see its text."))
        self.name.clicked.connect(lambda: tray.show_text(attachment))
        self.edit = QToolButton(text="Edit")
        self.edit.setCheckable(True)
        self.edit.setAutoRaise(True)
        self.edit.setToolTip("Ask for a changed version of this file: its text drafts the reply "
                             "(a Predicted Output; the parts you keep flash in)")
        self.edit.toggled.connect(lambda on: tray.set_editing(attachment, on))
        self.remove = QToolButton(text="×")  # no emoji: DejaVu lacks it
        self.remove.setAutoRaise(True)
        self.remove.setToolTip("Remove it from the next message")
        self.remove.clicked.connect(lambda: tray.remove(attachment))
        for button in (self.name, self.edit, self.remove):
            layout.addWidget(button)
