"""The small key to the highlight colours, shown in the toolbar; it follows the colour scheme."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from draftlight.ui.flash.palette import BUCKETS, DEFAULT, Scheme


class Legend(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(3)
        layout.addWidget(QLabel("Accepted runs:"))
        self.swatches = []
        for _start, label in BUCKETS:
            swatch = QLabel(f" {label} ")
            self.swatches.append(swatch)
            layout.addWidget(swatch)
        tokens = QLabel("tokens")
        layout.addWidget(tokens)
        self.setToolTip("Each coloured stretch is a run of draft tokens the target model "
                        "accepted in one pass; the longer the run, the stronger the colour. "
                        "Text the target produced itself stays plain.")
        self.setAttribute(Qt.WA_TransparentForMouseEvents, False)
        self.set_scheme(DEFAULT)

    def set_scheme(self, scheme: Scheme) -> None:
        for (start, _label), swatch in zip(BUCKETS, self.swatches):
            colour = scheme.tint(start)
            text = scheme.text_colour()
            swatch.setStyleSheet(
                f"background: rgba({colour.red()},{colour.green()},{colour.blue()},"
                f"{colour.alpha()}); border-radius: 3px; padding: 0 3px;"
                + (f" color: {text.name()};" if text is not None else ""))
