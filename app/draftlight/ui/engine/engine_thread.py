"""The GUI-side handle of the engine's thread: it starts the worker (worker.EngineWorker) on a
QThread of its own and forwards the window's calls to it as queued signals; the GUI never calls
the engine and never waits on it, except for seconds when the window closes."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, QThread, Signal

from draftlight.engine_spec import EngineSpec
from draftlight.modes import Mode
from draftlight.ui.engine.engine_worker import SHUTDOWN_GRACE_MS, STOP_ALL, EngineWorker


class EngineThread(QObject):
    """GUI-side handle: starts the worker's thread and forwards calls to it as queued signals."""

    _load = Signal(object)
    _change_draft = Signal(object)
    _generate = Signal(int, object, object, object, object)  # ..., mode (a Mode), prediction
    _compare = Signal(int, object, object, object)
    _serve = Signal(object, object)
    _shutdown = Signal()

    def __init__(self, factory=None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.thread = QThread()
        self.thread.setObjectName("engine")
        self.worker = EngineWorker(factory)
        self.worker.moveToThread(self.thread)
        self._load.connect(self.worker.load)
        self._change_draft.connect(self.worker.change_draft)
        self._generate.connect(self.worker.generate)
        self._compare.connect(self.worker.compare)
        self._serve.connect(self.worker.serve)
        self._shutdown.connect(self.worker.shutdown)
        self._next_request = 0
        self.thread.start()

    def load(self, spec: EngineSpec) -> None:
        self.worker.pending.arrive()
        self._load.emit(spec)

    def change_draft(self, spec: EngineSpec) -> None:
        self.worker.pending.arrive()
        self._change_draft.emit(spec)

    def generate(self, messages: list, params, mode: Mode, prediction: str | None = None) -> int:
        """`prediction`: text the reply is expected to resemble (Predicted Outputs), which
        drafts first: the earlier answer, when a reply is regenerated."""
        self._next_request += 1
        self.worker.pending.arrive()
        self._generate.emit(self._next_request, messages, params, mode, prediction)
        return self._next_request

    def compare(self, messages: list, params, mode: Mode) -> int:
        self._next_request += 1
        self.worker.pending.arrive()
        self._compare.emit(self._next_request, messages, params, mode)
        return self._next_request

    def serve(self, job, mode: Mode) -> None:
        """Thread-safe: queue a local server's job behind the window's own requests."""
        self.worker.pending.arrive()
        self._serve.emit(job, mode)

    def stop(self, request_id: int) -> None:
        self.worker.request_stop(request_id)

    def shutdown(self) -> None:
        """Stop any reply, close the engine on its thread, and wait for the thread to end."""
        if not self.thread.isRunning():
            return
        self.worker.request_stop(STOP_ALL)
        self._shutdown.emit()
        # A model that is loading stops at llama.cpp's next progress report (_closing), and a
        # llama-server build or start likewise; what is left is seconds of closing. A hosted
        # engine still busy then (a native call that does not return) is ended.
        if not self.thread.wait(SHUTDOWN_GRACE_MS):
            engine = self.worker.engine
            if engine is not None and hasattr(engine, "kill"):
                engine.kill()
        while not self.thread.wait(30_000):
            print("draftlight: waiting for the model to finish loading…", file=sys.stderr)
