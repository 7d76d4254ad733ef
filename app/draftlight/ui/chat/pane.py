"""The main window's right side: the banner for problems, the chat, and the composer with its
Send, Stop and Regenerate buttons. The window connects them."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from draftlight.settings import Settings
from draftlight.ui.widgets.banner import Banner
from draftlight.ui.chat.view import ChatView
from draftlight.ui.chat.attachment_tray import AttachmentTray
from draftlight.ui.chat.composer import Composer
from draftlight.ui.flash.palette import scheme_named


class ChatPane(QWidget):
    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 6, 6, 6)
        self.banner = Banner()
        column.addWidget(self.banner)
        self.chat = ChatView()
        self.chat.highlights = settings.show_highlights
        self.chat.flash = settings.flash_drafts
        self.chat.scheme = scheme_named(settings.palette)
        column.addWidget(self.chat, 1)
        self.attachments = AttachmentTray()  # files for the next message, as chips
        self.attachments.problem.connect(self.banner.show_message)
        column.addWidget(self.attachments)
        row = QHBoxLayout()
        self.composer = Composer()
        self.composer.files_dropped.connect(self.attachments.add_paths)
        self.composer.long_paste.connect(self._offer_attachment)
        self._paste_offer: tuple[str, str] | None = None  # (banner line, the pasted text)
        self.setAcceptDrops(True)  # files dropped anywhere on the chat are attached too
        row.addWidget(self.composer, 1)
        buttons = QVBoxLayout()
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("send-button")
        self.stop_button = QPushButton("Stop")
        self.regenerate_button = QPushButton("Regenerate")
        self.stop_button.setToolTip("Stop the reply (Esc)")
        self.attach_button = QPushButton("Attach…")
        self.attach_button.setToolTip("Text, code, PDF, Word or HTML files to ask about (or drop "
                                      "them on the chat): sent with your next message")
        self.attach_button.clicked.connect(self.attachments.ask)
        for button in (self.send_button, self.stop_button, self.regenerate_button,
                       self.attach_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        row.addLayout(buttons)
        column.addLayout(row)

    def _offer_attachment(self, start: int, end: int) -> None:
        """A long paste: the banner offers to take it out of the message box and attach it,
        while it is there (sent, deleted, or another conversation's text shown: the offer
        goes)."""
        pasted = self.composer.toPlainText()[start:end]
        line = (f"You pasted {end - start:,} characters. As an attachment it is a chip you can "
                "look at, remove or edit, not a wall of text in your message.")

        def attach() -> None:
            self._withdraw_offer()
            self.attachments.add_text("pasted text.txt", self.composer.take_span(start, end))

        self._withdraw_offer()
        self._paste_offer = (line, pasted)
        self.composer.textChanged.connect(self._check_offer)
        self.banner.show_message(line, "Attach it", attach)

    def _check_offer(self) -> None:
        if self._paste_offer is not None and self._paste_offer[1] not in self.composer.toPlainText():
            self._withdraw_offer()

    def _withdraw_offer(self) -> None:
        if self._paste_offer is not None:
            self.composer.textChanged.disconnect(self._check_offer)
            self.banner.withdraw(self._paste_offer[0])
            self._paste_offer = None

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        files = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if files:
            self.attachments.add_paths(files)
            event.acceptProposedAction()
