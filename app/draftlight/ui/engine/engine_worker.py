"""The one thread that owns the engine (the GUI-side handle that talks to it is
engine_thread.EngineThread).

EngineWorker lives on a QThread. It creates, uses and closes the Engine there (llama.cpp
objects are not thread-safe), and turns the engine's events into signals, superqt-style: the
generation loop checks a stop mark between tokens, and closing the event iterator cancels.
The GUI never calls the engine and never waits on it, except for at most one token when
the window closes.

A server engine (factory.py: llama-server or a remote server) is made, used and closed here too:
closing it stops the llama-server this thread started. Its log lines arrive on the server's
reader thread and leave as `server_log` signals, which Qt queues to the GUI thread.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import replace

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.reply.events import Done
from draftlight.engine_spec import EngineSpec, with_model_files
from draftlight.modes import Mode
from draftlight.ui.engine.factory import LlamaEngineFactory
from draftlight.ui.engine.background_steps import BackgroundSteps
from draftlight.ui.engine.loaded import (Crashed, DraftChanged, DraftFailed, Failed, Loading,
                                         Stopped)
from draftlight.ui.engine.load_words import one_line
from draftlight.ui.engine.model_opening import ModelOpening
from draftlight.ui.engine.pending_work import PendingWork
from draftlight.engine_kind import EngineKind

STOP_ALL = sys.maxsize
# A closing window waits this long for the request under way to stop (a reply or a background
# measurement stops at its next pass, a long read mid-way), then kills the engine's host: a
# native call that does not return. Closing the host, which writes the conversation's kept
# prompt, has its own bound (hosted.CLOSE_SECONDS).
SHUTDOWN_GRACE_MS = 3000


class EngineWorker(ModelOpening, BackgroundSteps, QObject):
    # about the models: one of loaded.py's Capabilities (once, first), Loading, Preparing,
    # Loaded, LoadFailed, DraftChanged, DraftFailed, Measuring
    load_event = Signal(object)
    # request, one of its events: the engine's (TextPiece, Notice, Progress, one per target
    # pass, then Done), Compare's (SidePiece, Notice, then Comparison: engine/reply/compare.py), or
    # how it ended otherwise (loaded.Stopped, Failed, Crashed)
    reply = Signal(int, object)
    served = Signal(object)  # an draftlight.serve.serve_worker.Job from the local server has ended
    server_log = Signal(str)  # a line llama-server printed (emitted on its log reader thread)
    closed = Signal()

    def __init__(self, factory=None) -> None:
        super().__init__()
        self.factory = factory or LlamaEngineFactory()
        self.engine = None
        self.engine_kind = EngineKind.LOCAL  # Settings.engine of the loaded engine
        self.n_ctx = 0  # the loaded target's context (an automatic one resolved)
        self._capabilities_sent = False
        # Requests up to this id are to stop. Written by the GUI thread, read here between
        # tokens; a plain int assignment is atomic, so no lock is needed.
        self.stop_upto = 0
        self.pending = PendingWork()  # requests queued here and not begun: they go first
        self.running_request = 0  # the window's reply under way (0: none)
        self._spec: EngineSpec | None = None  # the latest load's, as asked
        # the bundled model's shipped file stands in until its faster copy is made, in the
        # background (_make_default_copy), and the engine is then loaded again on the copy
        self._convert_default = False
        self._measuring_failed = False  # a measurement raised: not tried again on this engine
        self._measure_queued = False

    def request_stop(self, request_id: int) -> None:
        """Thread-safe: the request stops before its next token (a hosted engine's at its
        next pass, even in the middle of a long prompt's read)."""
        self.stop_upto = max(self.stop_upto, request_id)
        engine = self.engine
        if (engine is not None and hasattr(engine, "interrupt")
                and 0 < self.running_request <= request_id):
            engine.interrupt()

    def _close_engine(self) -> None:
        if self.engine is not None:
            engine, self.engine = self.engine, None
            engine.close()

    @Slot(object)
    def load(self, spec: EngineSpec) -> None:
        """Load the target, then the draft: a draft that is refused (another vocabulary, too
        big, gone) is reported on its own and the target stays usable. What is measured about
        the models follows in the background (_measure_step)."""
        self.pending.begin()
        self._load(spec)

    def _load(self, spec: EngineSpec, *, quiet: bool = False) -> None:
        """`quiet`: no `loading` signal (the window stays ready: a message sent meanwhile
        waits in the queue), for the default model loaded again on its faster copy."""
        self._spec, self._convert_default = spec, False
        self._measuring_failed = False
        opened = self._open(spec, quiet)
        if opened is not None:
            self.load_event.emit(self._with_draft(*opened, quiet=quiet))
            self._measure_soon()

    def _closing(self) -> bool:
        """The window is closing: a load or a start stops (asked from llama.cpp's loader)."""
        return self.stop_upto == STOP_ALL

    @Slot(object)
    def change_draft(self, spec: EngineSpec) -> None:
        self.pending.begin()
        if self.engine is None:
            return
        if self.engine_kind != EngineKind.LOCAL:
            self.load_event.emit(DraftFailed("a server engine takes its draft model when it starts"))
            return
        if spec.n_ctx == 0:  # automatic: the context the target was loaded with
            spec = replace(spec, n_ctx=self.n_ctx)
        spec = with_model_files(spec)
        try:
            if spec.draft_path:
                self.load_event.emit(Loading(f"Loading draft {spec.draft_name}…"))
                self.factory.attach_draft(self.engine, spec, should_cancel=self._closing)
            else:
                self.engine.detach_draft()
        except Exception as exc:  # noqa: BLE001
            self.load_event.emit(DraftFailed(one_line(exc)))
            return
        self.load_event.emit(DraftChanged(spec.draft_name))
        self._measure_soon()

    @Slot(int, object, object, object, object)
    def generate(self, request_id: int, messages: list, params, mode: Mode,
                 prediction: str | None = None) -> None:
        self.pending.begin()
        if self.stop_upto >= request_id:
            self.reply.emit(request_id, Stopped())
            return
        if self.engine is None:
            self.reply.emit(request_id, Failed("no model is loaded"))
            return
        events = None
        self.running_request = request_id
        try:
            events = self.engine.generate(messages, params, mode, prediction=prediction)
            for event in events:
                if self.stop_upto >= request_id:
                    events.close()
                    self.reply.emit(request_id, Stopped())
                    return
                self.reply.emit(request_id, event)
                if isinstance(event, Done):
                    return
            if self.stop_upto >= request_id:  # a hosted engine, interrupted mid-read
                self.reply.emit(request_id, Stopped())
            else:
                self.reply.emit(request_id, Failed("the reply ended without its statistics"))
        except EngineCrashed as exc:  # the host process ended: the window goes on
            if self.stop_upto >= request_id:  # ended because it did not stop in time
                self.reply.emit(request_id, Stopped())
            else:
                self.reply.emit(request_id, Crashed(one_line(exc)))
        except Exception as exc:  # noqa: BLE001
            if "draftlight." not in type(exc).__module__:
                traceback.print_exc()
            self.reply.emit(request_id, Failed(one_line(exc)))
        finally:
            self.running_request = 0
            if events is not None and hasattr(events, "close"):
                events.close()
            self._measure_soon()

    @Slot(int, object, object, object)
    def compare(self, request_id: int, messages: list, params, mode: Mode) -> None:
        """Plain and speculative greedy answers to the same messages (draftlight.engine.reply.compare)."""
        from draftlight.engine.reply.compare import compare
        self.pending.begin()
        if self.engine is None:
            self.reply.emit(request_id, Failed("no model is loaded"))
            return
        if self.engine_kind != EngineKind.LOCAL:
            self.reply.emit(request_id, Failed("Compare needs the engine on this computer"))
            return
        events = None
        try:
            events = compare(self.engine, messages, params, mode)
            for event in events:
                if self.stop_upto >= request_id:
                    self.reply.emit(request_id, Stopped())
                    return
                self.reply.emit(request_id, event)
        except Exception as exc:  # noqa: BLE001
            self.reply.emit(request_id, Failed(one_line(exc)))
        finally:
            if events is not None:
                events.close()
            self._measure_soon()

    @Slot(object, object)
    def serve(self, job, mode: Mode) -> None:
        """A request from the window's local server (serve_switch.py), answered between the
        window's own replies exactly as `draftlight serve` answers it."""
        from draftlight.serve.schema import ApiError
        from draftlight.serve.serve_worker import run_job
        self.pending.begin()
        try:
            if self.stop_upto == STOP_ALL or job.cancelled.is_set():
                job.deliver(ApiError(503, "the server was stopped", type="server_error",
                                     code="shutting_down"))
            elif self.engine is None:
                job.deliver(ApiError(503, "no model is loaded in the window", type="server_error",
                                     code="model_not_loaded"))
            elif self.engine_kind != EngineKind.LOCAL:
                job.deliver(ApiError(503, "the window answers through a server engine; serve "
                                     "from it directly", type="server_error",
                                     code="model_not_loaded"))
            else:
                run_job(self.engine, job, mode)
        finally:
            self.served.emit(job)
            self._measure_soon()

    @Slot()
    def shutdown(self) -> None:
        try:
            self._close_engine()
        finally:
            self.closed.emit()
            # Hand this object back to the main thread so it is not left in a dead thread.
            app = QCoreApplication.instance()
            if app is not None:
                self.moveToThread(app.thread())
            QThread.currentThread().quit()
