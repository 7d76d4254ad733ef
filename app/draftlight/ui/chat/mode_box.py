"""The toolbar's speculation modes. The list itself comes from the engine
(draftlight.modes.IN_PROCESS, reported by the worker, or a server engine's own modes), so a new
mode shows up without a change here; their names and sentences are the Mode's own. Each item's
data is its Mode; they are found by comparing values (Qt's findData cannot compare them)."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox

from draftlight.modes import AUTO, NGRAM, Mode
from draftlight.ui.widgets.wheel_guard import wheel_never_chooses


class ModeBox(QComboBox):
    """The toolbar's speculation modes; a mode that needs a draft model is listed but disabled
    while none is loaded."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # As wide as its longest mode name, which it only knows once filled: the toolbar lays
        # it out before the engine reports its modes, and "N-gra" is all it showed then.
        self.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        wheel_never_chooses(self)  # a passing scroll set "Off" for every message after it
        self.setToolTip("How tokens are guessed before the target model checks them; "
                        "takes effect from the next message")

    def current_mode(self) -> Mode:
        """The mode shown (auto while the box is still empty: no engine has said its modes)."""
        mode = self.currentData()
        return mode if isinstance(mode, Mode) else AUTO

    def index_of(self, mode: Mode) -> int:
        return next((i for i in range(self.count()) if self.itemData(i) == mode), -1)

    def select(self, mode: Mode) -> None:
        index = self.index_of(mode)
        if index >= 0:
            self.setCurrentIndex(index)

    def usable(self) -> list[Mode]:
        return [self.itemData(i) for i in range(self.count()) if self.model().item(i).isEnabled()]

    def fill(self, modes: tuple[Mode, ...], draft_loaded: bool, wanted: Mode) -> None:
        """List `modes` and select `wanted`, or n-gram (else the first usable mode) if it cannot
        be used now. Emits no signal."""
        self.blockSignals(True)
        self.clear()
        for mode in modes:
            self.addItem(mode.label, mode)
            item = self.model().item(self.count() - 1)
            item.setToolTip(mode.help)  # each mode in a sentence
            if mode.needs_draft_model and not draft_loaded:
                item.setEnabled(False)
                item.setToolTip(f"{mode.help} Choose a draft model first (Draft, above)."
                                .strip())
        usable = self.usable()
        if wanted not in usable:
            wanted = NGRAM if NGRAM in usable else (usable[0] if usable else wanted)
        self.setCurrentIndex(max(self.index_of(wanted), 0))
        self.blockSignals(False)
