"""Which models the window has loaded, and whether a load is under way.

The worker thread loads the models and reports through its signals; this object keeps the
state they describe and decides, when the settings change, whether to reload everything, swap
only the draft, or leave the models alone. It holds no widgets: the window shows what it says.

The modes on offer are the in-process engine's (reported once, as capabilities) or, for a
server engine, the ones that server runs (reported with each load).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from draftlight.engine_spec import EngineSpec
from draftlight.modes import Mode
from draftlight.ui.engine.load_steps import LoadSteps
from draftlight.ui.engine.loaded import (Capabilities, DraftChanged, DraftFailed, Loaded,
                                         LoadFailed, Loading, Measuring, Preparing)
from draftlight.ui.engine.engine_thread import EngineThread
from draftlight.engine_kind import EngineKind


class ModelLoader(QObject):
    changed = Signal()  # loading, ready, the draft or the modes on offer changed
    status = Signal(str)  # one line for the status bar
    percent = Signal(int)  # progress of a conversion before loading; -1: busy, no figure
    loaded = Signal(str)  # the target (named) is ready: messages can be sent
    failed = Signal(str)  # the target could not be loaded: why
    problem = Signal(str)  # something the user should see that did not stop the load
    about_to_change = Signal()  # the models are about to change: stop the reply that uses them

    def __init__(self, engine: EngineThread, spec: EngineSpec, modes: tuple[Mode, ...],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.spec = spec  # what should be loaded (what is, once `ready`)
        self.modes = modes  # speculation modes the loaded engine offers
        self.local_modes = modes  # those of the in-process engine
        self.gpu_offload = False  # whether this llama.cpp build can put layers on a GPU
        self.loading = True
        self.ready = False
        self.target_mtp = False  # the loaded target carries MTP layers (llama-server draft-mtp)
        self.draft_name: str | None = None  # the draft really loaded, not just asked for
        self.target_name = spec.target_name  # the target file really loaded, once ready
        self.placement = ""  # llama-server over other machines: what went where (rpc.placement)
        self.n_ctx = 0  # the loaded target's context in tokens (0: a remote server's own)
        self.target_path, self.draft_path = "", None  # the files loaded, once ready
        self.context_note = ""  # why, when Settings left it automatic
        self.steps = LoadSteps()  # the latest load's steps, with their times
        self.measuring = ""  # what the worker measures in the background now, in words
        engine.worker.load_event.connect(self._on_load_event)

    @property
    def engine_kind(self) -> str:
        """The EngineKind asked for (and loaded, once ready)."""
        return self.spec.engine

    @property
    def runs_locally(self) -> bool:
        """Compare, serving from the window and swapping draft models need the in-process
        engine."""
        return self.spec.engine == EngineKind.LOCAL

    def load(self) -> None:
        """Load `spec` (the first load, at start)."""
        self.steps.restart()
        self.engine.load(self.spec)

    def restart(self) -> None:
        """Load the same models again (their process ended: engine/host/hosted.py)."""
        self.about_to_change.emit()
        self.ready = False
        self.steps.restart()
        self.engine.load(self.spec)
        self.changed.emit()

    def apply(self, spec: EngineSpec) -> None:
        """Keep what can be kept: a new draft is swapped in, only a change to the target (or a
        target that never loaded) reloads everything; sampling settings need nothing here."""
        old, self.spec = self.spec, spec
        if not spec.same_target(old) or not self.ready:
            self.about_to_change.emit()
            self.ready = False
            self.steps.restart()
            self.engine.load(spec)
        elif spec.engine == EngineKind.LOCAL and (spec.draft_path, spec.draft_gpu_layers) != (
                old.draft_path, old.draft_gpu_layers):
            self.about_to_change.emit()
            self.steps.restart()
            self.engine.change_draft(spec)
        self.changed.emit()

    def _ready_line(self, target: str) -> str:
        line = f"Ready: {target}" + (f" + draft {self.draft_name}" if self.draft_name else "")
        line += " on llama-server" if self.engine_kind == EngineKind.LLAMA_SERVER else ""
        if self.measuring:  # replies do not wait for it; said early, before a long note
            line += f" · in the background, once: {self.measuring}…"
        line += f", split: {self.placement}" if self.placement else ""
        if self.context_note:  # chosen automatically: say what and why
            line += f" · context {self.n_ctx:,} tokens: {self.context_note}"
        return line

    def _on_load_event(self, event) -> None:
        """One of the worker's load events (loaded.py)."""
        match event:
            case Capabilities():
                self._on_capabilities(event)
            case Loading(words=words):
                self._on_loading(words)
            case Preparing(words=words, percent=percent):
                self._on_preparing(words, percent)
            case Loaded():
                self._on_loaded(event)
            case LoadFailed(message=message):
                self._on_load_failed(message)
            case DraftChanged(name=name):
                self._on_draft_changed(name)
            case DraftFailed(message=message):
                self._on_draft_failed(message)
            case Measuring(words=words):
                self._on_measuring(words)

    def _on_measuring(self, words: str) -> None:
        self.measuring = words
        if self.ready and not self.loading:
            self.status.emit(self._ready_line(self.target_name))

    def _on_capabilities(self, caps: Capabilities) -> None:
        self.local_modes = tuple(caps.modes)
        if self.runs_locally:
            self.modes = self.local_modes
        self.gpu_offload = caps.gpu_offload
        self.changed.emit()

    def _on_loading(self, what: str) -> None:
        self.steps.begin(what)
        self.loading = True
        self.changed.emit()
        self.status.emit(what)
        self.percent.emit(-1)

    def _on_preparing(self, what: str, percent: int) -> None:
        self.steps.begin(what)
        if not self.loading:
            self.loading = True
            self.changed.emit()
        self.status.emit(f"{what} {percent}%" if percent >= 0 else what)
        self.percent.emit(percent)

    def _on_loaded(self, loaded: Loaded) -> None:
        self.steps.finish()
        self.loading, self.ready = False, True
        self.draft_name = loaded.draft
        self.target_name = loaded.target
        self.placement = loaded.placement
        self.target_mtp = loaded.mtp_layers > 0  # the target can draft for itself
        self.n_ctx, self.context_note = loaded.n_ctx, loaded.context_note
        self.target_path, self.draft_path = loaded.target_path, loaded.draft_path
        self.modes = tuple(loaded.modes or self.local_modes)
        self.changed.emit()
        self.status.emit(self._ready_line(loaded.target))
        problems = list(loaded.notices)
        if loaded.draft_error:
            problems.append(f"Could not use the draft model: {loaded.draft_error}")
        if problems:
            self.problem.emit(". ".join(p.rstrip(".") for p in problems) + ".")
        self.loaded.emit(loaded.target)

    def _on_load_failed(self, message: str) -> None:
        self.steps.finish()
        self.loading, self.ready = False, False
        self.changed.emit()
        self.status.emit("No model loaded")
        self.failed.emit(message)

    def _on_draft_changed(self, name: str | None) -> None:
        self.steps.finish()
        self.loading = False
        self.draft_name = name
        self.changed.emit()
        self.status.emit(self._ready_line(self.target_name))

    def _on_draft_failed(self, message: str) -> None:
        self.steps.finish()
        self.loading = False
        self.changed.emit()
        self.problem.emit(f"Could not use the draft model: {message}")
