"""Compare: the same question answered greedily with speculation off and on, side by side, each
timed over several rounds in alternating order (draftlight.engine.reply.compare), with the median
speedup, the rounds' range and an "inconclusive" when they disagree or the machine is busy."""

from __future__ import annotations

import html
import statistics

from PySide6.QtCore import Signal
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QGridLayout, QLabel, QTextEdit,
                               QVBoxLayout)

from draftlight.engine.reply.compare import Comparison, SidePiece
from draftlight.engine.reply.events import Notice
from draftlight.ui.engine.loaded import Crashed, Failed
from draftlight.ui.flash.highlight import run_colour
from draftlight.ui.widgets.screen_fit import fit_to_screen
from draftlight.modes import Mode
from draftlight.ui.widgets.plain_text import plain_label


def open_compare(window) -> None:
    """Compare the window's latest question (a MainWindow), unless a reply is running."""
    messages = window.session.messages_to_compare()
    if not messages or not window.ready or window.session.streaming:
        return
    mode = window.choice.compare_mode(window.current_mode())
    window.compare_dialog = CompareDialog(window.engine, messages,
                                          window.settings.sampling_params(), mode, window)
    window.compare_dialog.compared.connect(window.session.remember_plain_speed)
    window.compare_dialog.open()


class CompareDialog(QDialog):
    """Sends one compare request to the engine thread and shows both answers as they stream."""

    compared = Signal(object)  # the Comparison, once both answers are in

    def __init__(self, engine, messages: list, params, mode: Mode, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare speculation off and on")
        fit_to_screen(self, 1000, 560)
        self.engine = engine
        self.mode = mode
        grid = QGridLayout()
        self.views: dict[str, QTextEdit] = {}
        self.headers: dict[str, QLabel] = {}
        for column, (side, title) in enumerate((("plain", "Speculation off"),
                                                ("speculative", mode.label))):
            # bold, so rich text: a mode's label can name llama-server's spec types as typed
            self.headers[side] = QLabel(f"<b>{html.escape(title)}</b> — generating…")
            # the timings that replace it are longer than half a small screen: wrapped, they
            # cannot widen the dialog past it (it grew to 1131 px inside a 1100 px window)
            self.headers[side].setWordWrap(True)
            view = QTextEdit(readOnly=True)
            self.views[side] = view
            grid.addWidget(self.headers[side], 0, column)
            grid.addWidget(view, 1, column)
        self.summary = plain_label("Both answers are greedy (temperature 0): speculation must not "
                              "change the text where the model's batched and one-token passes "
                              "agree (checked when it loaded).")
        self.summary.setWordWrap(True)
        self.summary.setObjectName("compare-summary")
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(grid, 1)
        layout.addWidget(self.summary)
        layout.addWidget(buttons)
        self.result = None
        worker = engine.worker
        worker.reply.connect(self._on_event)
        self.request_id = engine.compare(messages, params, mode)

    def _on_event(self, request_id: int, event) -> None:
        if request_id != self.request_id:
            return
        if isinstance(event, SidePiece):
            self._on_piece(event.side, event.piece.text, event.piece.source)
        elif isinstance(event, Comparison):
            self._on_compared(event)
        elif isinstance(event, Notice):
            self._on_notice(event.message)
        elif isinstance(event, (Failed, Crashed)):
            self.summary.setText(f"Compare failed: {event.message}")

    def _on_piece(self, side: str, text: str, source: str) -> None:
        if not text:
            return
        cursor = self.views[side].textCursor()
        cursor.movePosition(QTextCursor.End)
        fmt = QTextCharFormat()
        if source == "draft":
            fmt.setBackground(run_colour(4))
        cursor.insertText(text, fmt)

    def _on_compared(self, result: Comparison) -> None:
        self.result = result
        self.compared.emit(result)
        for side, stats, runs in (("plain", result.plain, result.plain_runs),
                                  ("speculative", result.speculative, result.speculative_runs)):
            title = html.escape("Speculation off" if side == "plain" else self.mode.label)
            decode = statistics.median(runs) if runs else stats.decode_seconds
            rate = stats.new_tokens / decode if decode > 0 else 0.0
            self.headers[side].setText(
                f"<b>{title}</b> — decoding {decode:.2f} s, {rate:.1f} tok/s (median of "
                f"{len(runs) or 1}; reading the prompt {stats.prefill_seconds:.2f} s apart)")
        verdict = ("identical text ✓" if result.identical
                   else f"the texts differ: {result.divergence}")
        if result.identity_note:
            verdict += f" ({result.identity_note})"
        low, high = result.interval
        speed = (f"Speedup {result.speedup:.2f}x ({self.mode.label} vs off, decoding time, "
                 f"median of {len(result.plain_runs) or 1} rounds in alternating order; "
                 f"rounds {low:.2f}-{high:.2f}x)")
        if result.inconclusive:
            speed = (f"Inconclusive: {result.inconclusive}. {speed}; run Compare again on a "
                     f"quieter machine or a longer answer")
        self.summary.setText(f"{speed}; {verdict}")

    def _on_notice(self, message: str) -> None:
        """Shown until the result replaces it (a recurrent model reading the prompt again)."""
        if self.result is None:
            self.summary.setText(message)

    def done(self, code: int) -> None:
        if self.result is None:
            self.engine.stop(self.request_id)
        self.engine.worker.reply.disconnect(self._on_event)
        super().done(code)
