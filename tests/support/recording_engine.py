"""EngineThread's stand-in for ModelLoader's tests: it records what it is asked to do, and its
worker's signals are emitted by the test."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from draftlight.engine_spec import EngineSpec


class ScriptedWorker(QObject):
    load_event = Signal(object)  # EngineWorker's: one of ui/engine/loaded.py's load events


class RecordingEngine:
    """Stands in for EngineThread: records the requests instead of sending them."""

    def __init__(self) -> None:
        self.worker = ScriptedWorker()
        self.calls: list[tuple[str, EngineSpec]] = []

    def load(self, spec: EngineSpec) -> None:
        self.calls.append(("load", spec))

    def change_draft(self, spec: EngineSpec) -> None:
        self.calls.append(("change_draft", spec))
