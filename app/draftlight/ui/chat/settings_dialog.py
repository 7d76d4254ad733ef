"""Settings: the engine, models, context, threads, GPU layers, sampling, display, the local
server's port, web origins and API key, and the system prompt."""

from __future__ import annotations

import dataclasses

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox,
                               QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QScrollArea, QSpinBox, QVBoxLayout,
                               QWidget)

from draftlight.settings import Settings
from draftlight.store.found_models import as_setting
from draftlight.ui.chat.engine_section import EngineSection
from draftlight.ui.chat.folder_list import FolderList
from draftlight.ui.chat.path_field import PathField
from draftlight.ui.chat.serve_key_field import ServeKeyField
from draftlight.ui.flash.palette import SCHEMES
from draftlight.ui.widgets.screen_fit import fit_to_screen
from draftlight.ui.widgets.wheel_guard import value_controls, wheel_needs_focus
from draftlight.engine_kind import EngineKind


def _spin(minimum: int, maximum: int, value: int, special: str | None = None) -> QSpinBox:
    box = QSpinBox()
    box.setRange(minimum, maximum)
    box.setValue(value)
    if special:
        box.setSpecialValueText(special)
    return box


def _double(minimum: float, maximum: float, step: float, value: float) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(minimum, maximum)
    box.setSingleStep(step)
    box.setDecimals(2)
    box.setValue(value)
    return box


class SettingsDialog(QDialog):
    def __init__(self, settings: Settings, *, gpu_offload: bool,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self._original = settings
        # The sections scroll: all of them are taller than a 768-pixel screen; OK and Cancel
        # stay in sight below them.
        body = QWidget()
        layout = QVBoxLayout(body)
        self.engine_section = EngineSection(settings)
        layout.addWidget(self.engine_section)
        layout.addWidget(self._models_section(settings, gpu_offload))
        layout.addWidget(self._sampling_section(settings))
        layout.addWidget(self._display_section(settings))
        layout.addWidget(self._server_section(settings))
        layout.addWidget(QLabel("System prompt:"))
        self.system_prompt = QPlainTextEdit(settings.system_prompt)
        self.system_prompt.setMaximumHeight(90)
        layout.addWidget(self.system_prompt)
        self._scroll_with_buttons(body)
        self.engine_section.offer_spec_types(self.draft.value() is not None)
        self.engine_section.engine.currentIndexChanged.connect(self._show_local_fields)
        self._show_local_fields()
        # A scroll over Top-p took it from 1.00 to 0.01: the page scrolls until a box is clicked.
        wheel_needs_focus(*value_controls(self))
        self._fit(body)

    def _models_section(self, settings: Settings, gpu_offload: bool) -> QGroupBox:
        """Files, folders, context, threads and GPU layers: hidden for a remote server."""
        models = QGroupBox("Models")
        form = QFormLayout(models)
        self.models_form = form
        self.target = PathField(settings.target_path, "bundled SmolLM2-135M-Instruct")
        form.addRow("Target model:", self.target)
        self.draft = PathField(settings.draft_path, "none (n-gram lookup needs no model)")
        self.draft.edit.textChanged.connect(
            lambda: self.engine_section.offer_spec_types(self.draft.value() is not None))
        form.addRow("Draft model:", self.draft)
        self.model_folders = FolderList(settings.added_model_folders())
        form.addRow("Model folders:", self.model_folders)
        self.n_ctx = _spin(0, 1 << 20, settings.n_ctx, "automatic: what fits")
        self.n_ctx.setSingleStep(1024)
        self.n_ctx.setToolTip("Automatic: the model's trained context, or less so that it and "
                              "its draft fit in free memory (the status bar says which)")
        form.addRow("Context size (tokens):", self.n_ctx)
        self.n_threads = _spin(0, 512, settings.n_threads, "automatic")
        form.addRow("CPU threads:", self.n_threads)
        self.target_gpu = _spin(-1, 1000, settings.target_gpu_layers)
        self.draft_gpu = _spin(-1, 1000, settings.draft_gpu_layers)
        for box in (self.target_gpu, self.draft_gpu):
            box.setToolTip("Layers offloaded to the GPU; -1 = all")
            box.setEnabled(gpu_offload)
        form.addRow("GPU layers, target:", self.target_gpu)
        form.addRow("GPU layers, draft:", self.draft_gpu)
        if not gpu_offload:
            note = QLabel("This llama.cpp build runs on the CPU only; GPU layers are ignored. "
                          "Install a CUDA or Metal build of llama-cpp-python to use a GPU.")
            note.setWordWrap(True)
            note.setObjectName("gpu-note")
            form.addRow(note)
        return models

    def _sampling_section(self, settings: Settings) -> QGroupBox:
        """Temperature, top-k, top-p, min-p, the seed and the reply's length."""
        sampling = QGroupBox("Sampling")
        form = QFormLayout(sampling)
        self.temperature = _double(0.0, 5.0, 0.1, settings.temperature)
        self.temperature.setToolTip("0 = greedy: speculation then gives exactly the plain text")
        form.addRow("Temperature:", self.temperature)
        self.top_k = _spin(0, 100_000, settings.top_k, "off")
        form.addRow("Top-k:", self.top_k)
        self.top_p = _double(0.01, 1.0, 0.05, settings.top_p)
        form.addRow("Top-p:", self.top_p)
        self.min_p = _double(0.0, 0.99, 0.01, settings.min_p)
        form.addRow("Min-p:", self.min_p)
        self.random_seed = QCheckBox("random")
        self.seed = _spin(0, 2**31 - 1, settings.seed or 0)
        self.random_seed.toggled.connect(lambda on: self.seed.setEnabled(not on))
        self.random_seed.setChecked(settings.seed is None)
        self.seed.setEnabled(settings.seed is not None)
        seed_row = QHBoxLayout()
        seed_row.addWidget(self.seed, 1)
        seed_row.addWidget(self.random_seed)
        form.addRow("Seed:", seed_row)
        self.max_tokens = _spin(1, 1 << 20, settings.max_tokens)
        form.addRow("Max new tokens:", self.max_tokens)
        return sampling

    def _display_section(self, settings: Settings) -> QGroupBox:
        """The flash of accepted drafts and the highlight colours."""
        display = QGroupBox("Display")
        form = QFormLayout(display)
        self.flash_drafts = QCheckBox("Flash accepted drafts")
        self.flash_drafts.setChecked(settings.flash_drafts)
        self.flash_drafts.setToolTip("A run of accepted draft tokens arrives in a bright colour "
                                     "that fades to its tint (only while Highlights are on)")
        form.addRow(self.flash_drafts)
        self.palette_box = QComboBox()
        for scheme in SCHEMES.values():
            self.palette_box.addItem(scheme.label, scheme.name)
        self.palette_box.setCurrentIndex(max(self.palette_box.findData(settings.palette), 0))
        self.palette_box.setToolTip("Colours of accepted runs, in the text, the strip and the "
                                    "legend")
        form.addRow("Highlight colours:", self.palette_box)
        return display

    def _server_section(self, settings: Settings) -> QGroupBox:
        """File ▸ Serve on localhost: its port, the web origins it answers and its key."""
        server = QGroupBox("Serve on localhost")
        form = QFormLayout(server)
        self.serve_port = _spin(0, 65535, settings.serve_port, "any free port")
        self.serve_port.setToolTip("File ▸ Serve on localhost answers OpenAI API requests at "
                                   "http://127.0.0.1:PORT/v1; takes effect when it next starts")
        form.addRow("Port:", self.serve_port)
        self.serve_origins = QLineEdit(settings.serve_origins)
        self.serve_origins.setPlaceholderText("none: web pages cannot call it")
        self.serve_origins.setToolTip("Web pages from these origins (as in http://localhost:3000), "
                                      "separated by spaces, may call the server from a "
                                      "browser; pages from anywhere else are refused")
        form.addRow("Allowed web origins:", self.serve_origins)
        self.serve_key = ServeKeyField(settings.serve_api_key)
        form.addRow("API key:", self.serve_key)
        return server

    def _scroll_with_buttons(self, body: QWidget) -> None:
        """The sections in a scroll area, OK and Cancel below it."""
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.NoFrame)
        self.scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.addWidget(self.scroll)
        outer.addWidget(buttons)

    def _show_local_fields(self) -> None:
        """A remote server chooses its own model, context and hardware: the fields for files,
        threads and GPU layers are hidden while it is the engine."""
        local = self.engine_section.engine.currentData() != EngineKind.REMOTE
        for widget in (self.target, self.draft, self.model_folders, self.n_ctx, self.n_threads,
                       self.target_gpu, self.draft_gpu):
            self.models_form.setRowVisible(widget, local)
        note = self.findChild(QLabel, "gpu-note")
        if note is not None:
            self.models_form.setRowVisible(note, local)

    def _fit(self, body: QWidget) -> None:
        """As tall as the sections, or the screen less a margin, whichever is less."""
        fit_to_screen(self, max(560, self.sizeHint().width(), body.sizeHint().width() + 40),
                      body.sizeHint().height() + 80)

    def result_settings(self) -> Settings:
        return _found_by_reference(self._original, dataclasses.replace(
            self._original,
            target_path=self.target.value(), draft_path=self.draft.value(),
            model_folders=self.model_folders.value(),
            n_ctx=self.n_ctx.value(), n_threads=self.n_threads.value(),
            target_gpu_layers=self.target_gpu.value(), draft_gpu_layers=self.draft_gpu.value(),
            temperature=self.temperature.value(), top_k=self.top_k.value(),
            top_p=self.top_p.value(), min_p=self.min_p.value(),
            seed=None if self.random_seed.isChecked() else self.seed.value(),
            max_tokens=self.max_tokens.value(), flash_drafts=self.flash_drafts.isChecked(),
            palette=self.palette_box.currentData(), serve_port=self.serve_port.value(),
            serve_origins=" ".join(self.serve_origins.text().replace(",", " ").split()),
            serve_api_key=self.serve_key.value(),
            system_prompt=self.system_prompt.toPlainText().strip(),
            **self.engine_section.values()))


def _found_by_reference(original: Settings, chosen: Settings) -> Settings:
    """A target or draft chosen here (Browse… into Ollama's blobs) that another app keeps is
    kept by its reference, as the model bar and the picker keep it; a path left as it was stays
    (rewriting it would reload the same file)."""
    folders = chosen.added_model_folders()
    return dataclasses.replace(chosen, **{
        name: as_setting(getattr(chosen, name), folders)
        for name in ("target_path", "draft_path")
        if getattr(chosen, name) != getattr(original, name)})
