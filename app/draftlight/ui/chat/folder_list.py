"""Settings ▸ Models ▸ Model folders: the folders of GGUF files Draftlight lists besides its own
and other apps' (`draftlight models add-folder` keeps the same list). Nothing in them is ever
written, moved or deleted; a folder that is missing or unmounted lists nothing, silently."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QListWidget, QPushButton, QVBoxLayout,
                               QWidget)


class FolderList(QWidget):
    def __init__(self, folders: list[Path], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setMaximumHeight(90)
        self.list.setToolTip("GGUF files in these folders (three levels deep) are listed with "
                             "your models and used where they are")
        for folder in folders:
            self.list.addItem(str(folder))
        self.add_button = QPushButton("Add folder…")
        self.add_button.clicked.connect(self._ask_add)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Stop listing it (its files stay where they are)")
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.currentRowChanged.connect(
            lambda row: self.remove_button.setEnabled(row >= 0))
        self.remove_button.setEnabled(False)
        buttons = QVBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    def _ask_add(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder of GGUF models")
        if folder:
            self.add(Path(folder))

    def add(self, folder: Path) -> bool:
        """List `folder` (once); False if it is listed already."""
        if str(folder) in self.folders():
            return False
        self.list.addItem(str(folder))
        return True

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            self.list.takeItem(row)

    def folders(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def value(self) -> str:
        """As Settings.model_folders keeps them: one per line."""
        return "\n".join(self.folders())
