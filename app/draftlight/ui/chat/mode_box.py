"""The toolbar's speculation modes. The list itself comes from the engine
(draftlight.modes.IN_PROCESS, reported by the worker, or a server engine's own modes), so a new
mode shows up without a change here; their names are draftlight.modes.mode_label's."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from draftlight.modes import mode_help, mode_label, needs_draft_model


class ModeBox(QComboBox):
    """The toolbar's speculation modes; a mode that needs a draft model is listed but disabled
    while none is loaded."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # As wide as its longest mode name, which it only knows once filled: the toolbar lays
        # it out before the engine reports its modes, and "N-gra" is all it showed then.
        self.setSizeAdjustPolicy(QComboBox.AdjustToContents)
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
            item = self.model().item(self.count() - 1)
            item.setToolTip(mode_help(mode))  # each mode in a sentence
            if needs_draft_model(mode) and not draft_loaded:
                item.setEnabled(False)
                item.setToolTip(f"{mode_help(mode)} Choose a draft model first (Draft, above)."
                                .strip())
        usable = self.usable()
        if wanted not in usable:
            wanted = "ngram" if "ngram" in usable else (usable[0] if usable else wanted)
        self.setCurrentIndex(max(self.findData(wanted), 0))
        self.blockSignals(False)
