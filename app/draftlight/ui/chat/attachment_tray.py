"""The files attached to the next message, above the message box: a chip each ("notes.md · 120
lines ×"), added with the Attach… button or by dropping files on the message box, and sent
with the message (draftlight.store.attachments puts each under a header naming it)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QToolButton, QWidget

from draftlight.store.attachments import Attachment, AttachmentError, read_attachment


class AttachmentTray(QWidget):
    problem = Signal(str)  # a file that cannot be attached: why, in one line
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.attachments: list[Attachment] = []
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addStretch(1)
        self.chips: list[QToolButton] = []
        self.hide()

    def ask(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Attach files", "",
                                                "Text, code, PDF, Word and HTML (*);;All files (*)")
        self.add_paths(paths)

    def add_paths(self, paths: list[str]) -> None:
        """Each file read now (a file that changes later is sent as it was); one that cannot
        be attached is said and left out, the others are attached."""
        for path in paths:
            try:
                attachment = read_attachment(Path(path))
            except AttachmentError as exc:
                self.problem.emit(f"Cannot attach {exc}")
                continue
            if attachment.sha256 in {a.sha256 for a in self.attachments}:
                continue
            self.attachments.append(attachment)
        self._show()

    def remove(self, attachment: Attachment) -> None:
        self.attachments = [a for a in self.attachments if a is not attachment]
        self._show()

    def take(self) -> list[Attachment]:
        """The attachments, for the message being sent; the tray is empty afterwards."""
        taken, self.attachments = self.attachments, []
        self._show()
        return taken

    def _show(self) -> None:
        for chip in self.chips:
            self._row.removeWidget(chip)
            chip.deleteLater()
        self.chips = []
        for attachment in self.attachments:
            chip = QToolButton(text=f"{attachment.describe()}  ×")  # no emoji: DejaVu lacks it
            chip.setObjectName("attachment-chip")
            chip.setToolTip(f"{attachment.name}: sent with your next message, under a header "
                            "that names it. Click to remove it.")
            chip.clicked.connect(lambda _=False, a=attachment: self.remove(a))
            self._row.insertWidget(self._row.count() - 1, chip)
            self.chips.append(chip)
        self.setVisible(bool(self.attachments))
        self.changed.emit()
