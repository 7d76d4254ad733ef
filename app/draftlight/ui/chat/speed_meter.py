"""The live speed meter in the toolbar while a reply streams: tokens per second now, plain
decoding's speed of this target on this machine, and the ratio of the two."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget


def meter_text(rate_now: float, plain_rate: float | None) -> str:
    line = f"{rate_now:.1f} tok/s now"
    if plain_rate:
        line += f" · plain {plain_rate:.1f} tok/s · {rate_now / plain_rate:.2f}× plain"
    return line


class SpeedMeter(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("speed-meter")
        self.setStyleSheet("font-weight: 600; padding: 0 6px;")
        self.setToolTip("Tokens per second over the last second, against this target's plain "
                        "decoding speed (its measured one-token pass, or the last Compare)")
        self.setVisible(False)

    def show_rates(self, rate_now: float, plain_rate: float) -> None:
        """rate_now < 0: no reply is streaming (the meter hides)."""
        if rate_now < 0:
            self.setVisible(False)
            return
        self.setText(meter_text(rate_now, plain_rate or None))
        self.setVisible(True)
