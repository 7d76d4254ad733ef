"""A user message's attached files, as chips above the words typed: their text is in the
message (store.attachments puts each under a header naming it, before the words) but is not
shown inline. A click on a chip opens the file's text; a reply's run copied from a file opens it
at that span, marked in the run's colour."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from draftlight.store.attachments import Block, attachment_blocks, own_text_start
from draftlight.ui.flash.text_viewer import TextViewer
from draftlight.ui.widgets.plain_text import plain_tip

MARK = QColor("#fff59d")  # a span marked with no run colour given


class AttachedFiles(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._row = QHBoxLayout(self)
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.setSpacing(4)
        self._row.addStretch(1)
        self.text = ""
        self.blocks: list[Block] = []
        self.chips: list[QToolButton] = []
        self.own_start = 0  # where the words typed start in the message, after its files
        self.viewer: TextViewer | None = None  # the last one opened
        self.hide()

    def set_message(self, text: str) -> int:
        """Chips for `text`'s attached files; where its own words start."""
        for chip in self.chips:
            self._row.removeWidget(chip)
            chip.deleteLater()
        self.text, self.blocks = text, attachment_blocks(text)
        self.own_start = own_text_start(text) if self.blocks else 0
        self.chips = []
        for block in self.blocks:
            chip = QToolButton(text=block.describe(text))
            chip.setObjectName("attachment-chip")
            chip.setToolTip(plain_tip(f"{block.name}, attached to this message: click to see its "
                                     "text"))
            chip.clicked.connect(lambda _=False, b=block: self.show(b))
            self._row.insertWidget(self._row.count() - 1, chip)
            self.chips.append(chip)
        self.setVisible(bool(self.blocks))
        return self.own_start

    def block_at(self, position: int) -> Block | None:
        """The attached file holding character `position` of the message."""
        return next((b for b in self.blocks if b.start <= position < b.end), None)

    def show(self, block: Block, span: tuple[int, int] | None = None,
             colour: QColor | None = None) -> TextViewer:
        """A read-only view of an attached file; `span` (offsets into the file's text) marked
        in `colour` and scrolled to."""
        self.viewer = TextViewer(block.describe(self.text), self.text[block.start:block.end],
                                 self.window())
        if span is not None:
            self.viewer.mark(span[0], span[1], colour or MARK)
        self.viewer.show()
        return self.viewer
