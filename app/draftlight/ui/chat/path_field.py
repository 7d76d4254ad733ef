"""A file path with a Browse… button (the Settings dialog's models and llama-server)."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLineEdit, QPushButton, QWidget

from draftlight import paths


class PathField(QWidget):
    """Empty means "none" (or the bundled model, or a llama-server Draftlight finds)."""

    def __init__(self, value: str | None, placeholder: str, parent: QWidget | None = None, *,
                 title: str = "Choose a GGUF model",
                 filters: str = "GGUF models (*.gguf);;All files (*)"):
        super().__init__(parent)
        self.title, self.filters = title, filters
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit(value or "", placeholderText=placeholder)
        self.edit.setClearButtonEnabled(True)
        layout.addWidget(self.edit, 1)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        layout.addWidget(browse)

    def _browse(self) -> None:
        start = self.edit.text() or str(paths.models_dir())
        path, _ = QFileDialog.getOpenFileName(self, self.title, start, self.filters)
        if path:
            self.edit.setText(path)

    def value(self) -> str | None:
        return self.edit.text().strip() or None
