"""The model bar in the toolbar: which engine answers, the loaded target and the draft, each a
drop-down of the installed models. (The bar naming the model being loaded or converted is the
status bar's, load_bar.py: at 800 px this row had 95 px left for it, too few for a name.)

A server engine takes its draft model (Settings) on its command line, so the draft drop-down is
off there; a remote server chooses its own model, so the target drop-down is off too.

A draft of another vocabulary drafts through the tokens the two share (cross-vocabulary,
app/draftlight/engine/step/cross_vocab.py): such drafts are listed as "cross-vocabulary", from the GGUF headers
(tokenizer type, vocabulary size, as draftlight.engine.text.compat compares them); the engine measures the
overlap, and refuses a pair that shares too little, when it loads the draft. A file whose header
cannot be read is listed but disabled, with the reason. Nothing is read here: the headers
were read off the GUI thread (ui/chat/model_scan.py), and loading is the worker's.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from draftlight.engine_spec import model_name
from draftlight.modes import NGRAM as NGRAM_MODE, Mode
from draftlight.store.pairs import vocabulary_difference
# The draft drop-down's data besides a file: the target's own multi-token-prediction layers on
# llama-server (draft-mtp), n-gram lookup (no draft model), no drafting.
from draftlight.ui.engine.engine_choice import DRAFT_MTP as MTP, DRAFT_NGRAM as NGRAM, NO_DRAFT as NONE
from draftlight.ui.widgets.wheel_guard import wheel_never_chooses
from draftlight.engine_kind import EngineKind
from draftlight.ui.widgets.plain_text import plain_tip

# Settings.engine values, as the window names them
ENGINE_LABELS = {EngineKind.LOCAL: "This computer", EngineKind.LLAMA_SERVER: "llama.cpp server",
                 EngineKind.REMOTE: "Remote server"}


# The target and draft drop-downs show at least BOX_CHARACTERS of a name, and widen to show a
# chosen name whole, up to NAME_WIDTH pixels where the window has room (the drop-down's arrow
# and frame take BOX_PADDING).
BOX_CHARACTERS, NAME_WIDTH, BOX_PADDING = 14, 230, 36


class NameBox(QComboBox):
    """A drop-down of models that grows, where the window has room, to show its chosen model's
    whole name (found models are named like "ollama:qwen2.5-coder:1.5b": what tells them
    apart comes last), up to NAME_WIDTH pixels; in a narrow window it makes do with
    BOX_CHARACTERS. Its size hint stays that of BOX_CHARACTERS, so a long name never makes the
    window wider than its user left it."""

    def __init__(self) -> None:
        super().__init__()
        self.setMinimumContentsLength(BOX_CHARACTERS)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.currentIndexChanged.connect(self.fit)

    def fit(self) -> None:
        """At most as wide as the chosen name needs (called where signals were blocked)."""
        name = self.fontMetrics().horizontalAdvance(self.currentText()) + BOX_PADDING
        self.setMaximumWidth(max(self.minimumSizeHint().width(), min(name, NAME_WIDTH)))


class ModelBar(QWidget):
    engine_chosen = Signal(str)  # a key of ENGINE_LABELS
    target_chosen = Signal(str)  # a path; "" = the default model
    draft_chosen = Signal(str)  # a path, NGRAM or NONE

    TARGET_TIP = "The model that writes the reply; changing it reloads"
    DRAFT_TIP = "What guesses tokens for the target to check; changing it keeps the target loaded"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(QLabel("Engine:"))
        self.engine_box = QComboBox()
        for kind, label in ENGINE_LABELS.items():
            self.engine_box.addItem(label, kind)
        self.engine_box.setToolTip("Which engine answers: llama.cpp in Draftlight, llama.cpp's "
                                   "own server, or a server elsewhere (set up in Settings)")
        layout.addWidget(self.engine_box)
        layout.addWidget(QLabel("Target:"))
        self.target_box = NameBox()
        self.target_box.setToolTip(self.TARGET_TIP)
        layout.addWidget(self.target_box, 1)
        layout.addWidget(QLabel("Draft:"))
        self.draft_box = NameBox()
        self.draft_box.setToolTip(self.DRAFT_TIP)
        layout.addWidget(self.draft_box, 1)
        layout.addStretch(0)  # room the drop-downs' names do not need
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)  # the window's room
        # Each choice here reloads or swaps a model: a scroll passing over them must not.
        wheel_never_chooses(self.engine_box, self.target_box, self.draft_box)
        self.engine_box.activated.connect(
            lambda i: self.engine_chosen.emit(self.engine_box.itemData(i)))
        self.target_box.activated.connect(
            lambda i: self.target_chosen.emit(self.target_box.itemData(i)))
        self.draft_box.activated.connect(
            lambda i: self.draft_chosen.emit(self.draft_box.itemData(i)))

    def fill(self, target_path: str | None, draft_path: str | None, mode: Mode,
             modes: tuple[Mode, ...], models: list, facts, mtp: bool = False) -> None:
        """List `models` (Draftlight's own, then Ollama's, LM Studio's… as the window's
        ModelScan found them), the current ones chosen; `facts`: their headers as far as read
        (store.model_facts; none is read here); `mtp`: the target carries multi-token-prediction
        layers, which llama.cpp's server drafts with."""
        self._fill_targets(target_path or "", models)
        self._fill_drafts(_resolved_target(target_path, models), draft_path, mode, modes, models,
                          facts, mtp)

    def _fill_targets(self, current_target: str, models: list) -> None:
        """The default model, then `models`; `current_target` chosen, as whichever app's
        reference to its file the list has, or added when the list has it not."""
        self.target_box.blockSignals(True)
        self.target_box.clear()
        self.target_box.addItem("Default model", "")
        for model in models:
            self.target_box.addItem(model.name, _setting(model))
            _say_also(self.target_box, model)
        shown = self.target_box.findData(current_target)
        if shown < 0:  # the same file, as another app knows it
            found = next((m for m in models if current_target in m.also), None)
            shown = self.target_box.findData(_setting(found)) if found else -1
        if shown < 0:  # a found model's file (older settings), or a file not in the list
            found = next((m for m in models if str(m.path) == current_target), None)
            shown = self.target_box.findData(_setting(found)) if found else -1
        if shown < 0 and current_target:
            self.target_box.addItem(model_name(current_target), current_target)
            shown = self.target_box.count() - 1
        self.target_box.setCurrentIndex(max(shown, 0))
        self.target_box.fit()
        self.target_box.blockSignals(False)

    def _fill_drafts(self, resolved_target: str | None, draft_path: str | None, mode: Mode,
                     modes: tuple[Mode, ...], models: list, facts, mtp: bool) -> None:
        """No draft, n-gram lookup and MTP where they apply, then `models` but the target's
        file, each marked when it cannot draft for it as it is; the current one chosen."""
        self.draft_box.blockSignals(True)
        self.draft_box.clear()
        # "No draft model", not "None": auto drafts by n-gram lookup without one
        self.draft_box.addItem("No draft model", NONE)
        if NGRAM_MODE in modes or mode == NGRAM_MODE:  # before the engine says its modes, too
            self.draft_box.addItem("N-gram (no model)", NGRAM)
        if mtp:
            self.draft_box.addItem("MTP (built into the model)", MTP)
            self.draft_box.setItemData(self.draft_box.count() - 1,
                                       "The target's own prediction heads draft; runs on "
                                       "llama.cpp's server (--spec-type draft-mtp)",
                                       Qt.ToolTipRole)
        for model in models:
            if str(model.path) == resolved_target:
                continue
            self.draft_box.addItem(model.name, _setting(model))
            _mark_vocabulary(self.draft_box.model().item(self.draft_box.count() - 1), model,
                             resolved_target, facts)
        wanted = draft_path and next((_setting(m) for m in models if str(m.path) == draft_path),
                                     draft_path)
        wanted = wanted or (NGRAM if mode == NGRAM_MODE else MTP if mode == Mode.llama("draft-mtp")
                                else NONE)
        self.draft_box.setCurrentIndex(max(self.draft_box.findData(wanted), 0))
        self.draft_box.fit()
        self.draft_box.blockSignals(False)

    def show_engine(self, kind: str, server_url: str = "") -> None:
        """Select engine `kind`; turn off the drop-downs that engine does not take."""
        self.engine_box.setCurrentIndex(max(self.engine_box.findData(kind), 0))
        remote = self.engine_box.model().item(self.engine_box.findData(EngineKind.REMOTE))
        remote.setToolTip(plain_tip(server_url) or "Set the server's address in Settings")
        self.target_box.setEnabled(kind != EngineKind.REMOTE)
        self.target_box.setToolTip("The remote server answers with its own model" if
                                   kind == EngineKind.REMOTE else self.TARGET_TIP)
        self.draft_box.setEnabled(kind == EngineKind.LOCAL)
        self.draft_box.setToolTip(
            self.DRAFT_TIP if kind == EngineKind.LOCAL else
            "llama-server takes its draft model from Settings (for the draft-* speculation "
            "types)" if kind == EngineKind.LLAMA_SERVER else "The remote server drafts as it is set up")


def _resolved_target(target_path: str | None, models: list) -> str | None:
    """The target's file: a found model's reference resolved through `models`; with no
    target set, the model loaded by default (a converted one, else the bundled one)."""
    by_reference = {m.name: str(m.path) for m in models}
    return by_reference.get(target_path or "", target_path) or next(
        (str(m.path) for m in models if m.source == "converted"),
        next((str(m.path) for m in models if m.source == "bundled"), None))


def _mark_vocabulary(item, model, resolved_target: str | None, facts) -> None:
    """The draft drop-down's row for `model`: disabled when its header could not be read,
    marked cross-vocabulary when its vocabulary is not the target's."""
    try:
        difference = (vocabulary_difference(resolved_target, str(model.path), facts,
                                            read=False) if resolved_target else None)
    except Exception as exc:  # noqa: BLE001 - an unreadable file is a reason too
        item.setEnabled(False)
        item.setText(f"{model.name} — unreadable")
        item.setToolTip(plain_tip(f"Cannot draft: its header could not be read ({exc})"))
        return
    if difference:
        item.setText(f"{model.name} — cross-vocabulary")
        item.setToolTip(plain_tip(f"{difference}: drafts through the tokens both share; the "
                                  "overlap is measured when it loads"))


def _say_also(box, model) -> None:
    """The latest row's tooltip names the other apps' references to the same file."""
    if getattr(model, "also", ()):
        box.setItemData(box.count() - 1, plain_tip("Same file as " + ", ".join(model.also)),
                        Qt.ToolTipRole)


def _setting(model) -> str:
    """What Settings keep for a model of the list: store.found_models.kept_as, which the
    picker's Use as target / Use as draft keep too."""
    from draftlight.store.found_models import kept_as
    return kept_as(model)
