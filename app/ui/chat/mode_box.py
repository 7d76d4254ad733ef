"""The toolbar's speculation modes. The list itself comes from the engine
(app.engine.generator.MODES, reported by the worker, or a server engine's own modes), so a new
mode shows up without a change here; their names are app.ui.flash.stats_text.mode_label's."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from app.engine.server.engine import llama_mode
from app.engine.server.process import NEEDS_DRAFT_MODEL as SERVER_NEEDS_DRAFT_MODEL
from app.ui.flash.stats_text import mode_label

NEEDS_DRAFT_MODEL = {"draft"} | {llama_mode(spec) for spec in SERVER_NEEDS_DRAFT_MODEL}


class ModeBox(QComboBox):
    """The toolbar's speculation modes; a mode that needs a draft model is listed but disabled
    while none is loaded."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setToolTip("How tokens are guessed before the target model checks them; "
                        "takes effect from the next message")

    def current_mode(self) -> str:
        return self.currentData() or ""

    def select(self, mode: str) -> None:
        index = self.findData(mode)
        if index >= 0:
            self.setCurrentIndex(index)

    def usable(self) -> list[str]:
        return [self.itemData(i) for i in range(self.count()) if self.model().item(i).isEnabled()]

    def fill(self, modes: tuple[str, ...], draft_loaded: bool, wanted: str) -> None:
        """List `modes` and select `wanted`, or n-gram (else the first usable mode) if it cannot
        be used now. Emits no signal."""
        self.blockSignals(True)
        self.clear()
        for mode in modes:
            self.addItem(mode_label(mode), mode)
            if mode in NEEDS_DRAFT_MODEL and not draft_loaded:
                item = self.model().item(self.count() - 1)
                item.setEnabled(False)
                item.setToolTip("Choose a draft model in Settings first")
        usable = self.usable()
        if wanted not in usable:
            wanted = "ngram" if "ngram" in usable else (usable[0] if usable else wanted)
        self.setCurrentIndex(max(self.findData(wanted), 0))
        self.blockSignals(False)
