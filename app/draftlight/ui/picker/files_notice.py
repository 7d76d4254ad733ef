"""What the picker's file table says where it has no files to show: the hub cannot be reached
(and why, with Retry, and the way to the models already here), the files are being asked for,
or a repository holds no single-file GGUF model. An empty table alone reads as "nothing
exists"; offline, the user must learn that the list could not be had, not that it is empty."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from draftlight.ui.widgets.plain_text import plain_label


class FilesNotice(QWidget):
    retry_clicked = Signal()
    installed_clicked = Signal()  # "Show Installed": the models already on this computer

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = plain_label(alignment=Qt.AlignCenter, wordWrap=True)  # the hub's words
        heading_font = self.heading.font()
        heading_font.setBold(True)
        self.heading.setFont(heading_font)
        self.detail = plain_label(alignment=Qt.AlignCenter, wordWrap=True)
        self.detail.setTextInteractionFlags(Qt.TextSelectableByMouse)  # a reason to copy
        self.retry_button = QPushButton("Retry")
        self.retry_button.clicked.connect(self.retry_clicked)
        self.installed_button = QPushButton("Show Installed")
        self.installed_button.setToolTip("Models on this computer: Draftlight's and other "
                                         "apps' (Ollama, LM Studio, …) work offline")
        self.installed_button.clicked.connect(self.installed_clicked)
        buttons = QHBoxLayout()
        buttons.addStretch()
        buttons.addWidget(self.retry_button)
        buttons.addWidget(self.installed_button)
        buttons.addStretch()
        layout = QVBoxLayout(self)
        layout.addStretch()
        layout.addWidget(self.heading)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        layout.addStretch(2)

    def say(self, heading: str, detail: str = "", *, retry: bool = False,
            installed: bool = False) -> None:
        """Show `heading` and `detail`, with the Retry and Show Installed buttons where asked."""
        self.heading.setText(heading)
        self.detail.setText(detail)
        self.detail.setVisible(bool(detail))
        self.retry_button.setVisible(retry)
        self.installed_button.setVisible(installed)

    def text(self) -> str:
        """Everything it says, on one line (for tests and the accessibility name)."""
        return " ".join(t for t in (self.heading.text(), self.detail.text()) if t)
