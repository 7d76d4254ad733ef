"""The bar the status bar shows while a model loads or converts: what is happening and to which
model, with its figures ("Loading qwen2.5-coder-1.5b (1.1 GB of weights)… 45% (12 s)").

Qt's own text is empty while a bar is busy, and llama.cpp's load and llama-server's start report
no figures at first: a bar that let Qt write its text named nothing for most of a load. This one
writes its own, on one line (the style would wrap a long name onto a second line that the
bar's height cuts off): its words cut with "…" to its width, its figures kept whole."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar
from draftlight.ui.widgets.plain_text import plain_tip

TEXT_MARGIN = 12  # the style's room around the text, inside the bar


class LoadBar(QProgressBar):
    def __init__(self) -> None:
        super().__init__()
        self.words = ""  # the load's running step (load_steps.py), its percentage taken off
        self.seconds = 0.0  # how long the load has taken
        self.setRange(0, 0)  # busy until a figure comes
        self.setTextVisible(True)
        self.setVisible(False)

    def show_step(self, words: str, seconds: float = 0.0) -> None:
        """What the load is doing now, and for how long it has been at it."""
        self.words, self.seconds = words, seconds
        self.setToolTip(plain_tip(words))  # whole, where the bar cuts it; it names models
        self.update()

    def show_percent(self, percent: int) -> None:
        """A step's progress (a conversion's, llama.cpp's load); -1 makes the bar busy again."""
        if percent < 0:
            self.setRange(0, 0)
        else:
            self.setRange(0, 100)
            self.setValue(percent)

    def figures(self) -> str:
        """" 45% (12 s)": the percentage where one is known, the time after its first second."""
        counting = self.maximum() > self.minimum() and self.value() >= self.minimum()
        percent = f" {self.value()}%" if counting else ""
        return percent + (f" ({self.seconds:.0f} s)" if self.seconds >= 1 else "")

    def text(self) -> str:  # QProgressBar's: what its style draws
        figures = self.figures()
        metrics = self.fontMetrics()
        room = self.width() - TEXT_MARGIN - metrics.horizontalAdvance(figures)
        return metrics.elidedText(self.words, Qt.ElideRight, max(room, 0)) + figures
