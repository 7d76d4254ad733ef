"""What an empty chat shows: what the colours mean, a demo prompt to try, and a way to a real
model (with a word that the bundled model is a toy, while it is the one loaded)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)

from draftlight.ui.flash.legend import Legend
from draftlight.ui.flash.palette import DEFAULT, Scheme
from draftlight.ui.widgets.plain_text import plain_label

# Copies itself: the draft (n-gram lookup over the conversation) guesses the sentence from the
# message, and the target accepts it in a few passes. The README's demo, and the GIF's.
DEMO_PROMPT = "Repeat after me: the United States of America declared independence in 1776."

TOY_NOTE = ("You are chatting with the bundled SmolLM2-135M: small enough to load in seconds "
            "and show the flash, too small for real questions (it repeats itself and makes things "
            "up). A real model is a download away; a model of 1-2 GB takes a minute or more to "
            "load the first time on a laptop CPU.")


class WelcomeCard(QFrame):
    """The empty chat's card. `try_demo` sends DEMO_PROMPT; `get_model` opens the picker."""

    try_demo = Signal(str)
    get_model = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome-card")
        self.setFrameShape(QFrame.StyledPanel)
        self.setMaximumWidth(620)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Maximum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 16, 20, 16)
        layout.setSpacing(10)
        title = QLabel("Watch speculative decoding")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        title.setFont(font)
        layout.addWidget(title)
        layout.addWidget(_wrapped(
            "A draft guesses the next few tokens; the model checks all of them in one pass. "
            "Guesses it accepts appear at once, in colour: the longer the accepted run, the "
            "stronger the colour. The reply is exactly what the model alone would write."))
        self.legend = Legend()
        layout.addWidget(self.legend, 0, Qt.AlignLeft)
        layout.addWidget(_wrapped(
            "Copying pays most: summaries, quotes, code edits. Hover a coloured run to see "
            "where it came from; click it to jump there."))
        self.steps = _wrapped("")  # a load's steps with their times, while it runs
        self.steps.setObjectName("load-steps")
        self.steps.setStyleSheet("color: palette(mid);")
        self.steps.hide()
        layout.addWidget(self.steps)
        self.toy_note = _wrapped(TOY_NOTE)
        self.toy_note.setObjectName("toy-note")
        self.toy_note.hide()
        layout.addWidget(self.toy_note)
        buttons = QHBoxLayout()
        self.try_button = QPushButton("Try it")
        self.try_button.setToolTip(f"Send: {DEMO_PROMPT}")
        self.try_button.setDefault(True)
        self.try_button.clicked.connect(lambda: self.try_demo.emit(DEMO_PROMPT))
        self.model_button = QPushButton("Get a real model…")
        self.model_button.setToolTip("Pick a target and a matching draft from Hugging Face, or a "
                                     "model already on this computer")
        self.model_button.clicked.connect(self.get_model)
        buttons.addWidget(self.try_button)
        buttons.addWidget(self.model_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.set_scheme(DEFAULT)

    def set_scheme(self, scheme: Scheme) -> None:
        self.legend.set_scheme(scheme)

    def show_steps(self, lines: list[str]) -> None:
        """The model's load, step by step (empty: done, nothing shown)."""
        self.steps.setText("\n".join(lines))
        self.steps.setVisible(bool(lines))

    def set_state(self, *, ready: bool, toy_model: bool, picker: bool) -> None:
        """Try it needs a loaded model; the toy note shows while the bundled model is loaded;
        Get a real model needs the picker (huggingface_hub installed)."""
        self.try_button.setEnabled(ready)
        self.toy_note.setVisible(toy_model)
        self.model_button.setVisible(picker)


def _wrapped(text: str) -> QLabel:
    label = plain_label(text)  # a load's steps name its model
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    return label
