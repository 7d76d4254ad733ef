"""Settings ▸ Serve on localhost ▸ API key: whether File ▸ Serve on localhost asks clients for
a key, as `draftlight serve --api-key` does.

Off by default: tools on this computer then call it with any key, as they call Ollama or
llama-server. 127.0.0.1 is reachable by every program and every user account on the computer,
though, so a user who shares it, or runs programs they do not trust, turns the key on. The key
is made here (32 random characters, `secrets`), not typed, so it is never a weak one; it is
shown with Copy, for the client's settings, and New key, to shut out whoever had the old one.
"""

from __future__ import annotations

import secrets

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


def new_key() -> str:
    return secrets.token_urlsafe(24)  # 32 characters of A-Z a-z 0-9 - _


class ServeKeyField(QWidget):
    def __init__(self, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.required = QCheckBox("Require an API key")
        self.required.setToolTip("Clients must send 'Authorization: Bearer KEY' (the openai "
                                 "package: api_key=KEY). Without a key, any program or user on "
                                 "this computer may use the model.")
        self.key = QLineEdit(key)
        self.key.setReadOnly(True)
        self.key.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.key.setToolTip("The key clients send; takes effect when you press OK (a server "
                            "that is running starts again with it)")
        self.copy = QPushButton("Copy")
        self.copy.setToolTip("Copy the key to the clipboard")
        self.renew = QPushButton("New key")
        self.renew.setToolTip("Make another key: clients with the old one are refused")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.key, 1)
        row.addWidget(self.copy)
        row.addWidget(self.renew)
        self.key_row = QWidget()
        self.key_row.setLayout(row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.required)
        layout.addWidget(self.key_row)
        self.required.setChecked(bool(key))
        self.key_row.setVisible(bool(key))
        self.required.toggled.connect(self._set_required)
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.key.text()))
        self.renew.clicked.connect(lambda: self.key.setText(new_key()))

    def value(self) -> str:
        """The key to ask for; "" when none is."""
        return self.key.text() if self.required.isChecked() else ""

    def _set_required(self, on: bool) -> None:
        if on and not self.key.text():
            self.key.setText(new_key())
        self.key_row.setVisible(on)
