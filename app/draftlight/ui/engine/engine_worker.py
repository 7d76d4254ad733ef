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
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal, Slot

from draftlight.engine.core.errors import EngineCrashed
from draftlight.engine.reply.events import Done
from draftlight.engine.server.process import HEALTH_TIMEOUT
from draftlight.engine.server.rpc import placement
from draftlight.engine_spec import EngineSpec, with_model_files
from draftlight.launch import resolve_context
from draftlight.modes import Mode
from draftlight.ui.engine.factory import LlamaEngineFactory
from draftlight.ui.engine.background_steps import BackgroundSteps
from draftlight.ui.engine.loaded import (Crashed, DraftChanged, DraftFailed, Failed, Loaded, Loading,
                                         LoadFailed, Preparing, Stopped)
from draftlight.ui.engine.pending_work import PendingWork
from draftlight.engine_kind import EngineKind

STOP_ALL = sys.maxsize
SHUTDOWN_GRACE_MS = 3000  # a closing window waits this long for its engine's host


def mtp_layers(path: str) -> int:
    """The target's multi-token-prediction blocks (llama-server's draft-mtp drafts with them);
    read here, on the worker thread: a file without them is read to the end of its header."""
    from draftlight.store.gguf_info import has_mtp
    try:
        return has_mtp(path) if path else 0
    except (OSError, ValueError):
        return 0


def loading_words(name: str, path: str) -> str:
    """"Loading qwen2.5:7b (4.7 GB of weights)…": what the status line says while it loads."""
    from draftlight.units import format_bytes
    try:
        size = f" ({format_bytes(Path(path).stat().st_size)} of weights)"
    except (OSError, ValueError):
        size = ""
    return f"Loading {name}{size}…"


def one_line(exc: BaseException) -> str:
    from_engine = type(exc).__module__.startswith("draftlight.")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if from_engine else f"{type(exc).__name__}: {text}"


class EngineWorker(BackgroundSteps, QObject):
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
        try:
            if not self._capabilities_sent:
                self.load_event.emit(self.factory.capabilities())
                self._capabilities_sent = True
            self._close_engine()
            notices, context_note = [], ""
            # a found model is called by its reference ("ollama:qwen2.5:7b"), not its blob's hash
            reference = spec.target_path if spec.target_name == spec.target_path else None
            if spec.engine != EngineKind.REMOTE:
                spec = with_model_files(spec)  # "ollama:qwen2.5:7b" typed in Settings
                spec, notices = self._resolve_target(spec)
                spec, context_note = resolve_context(spec)  # automatic: what fits
            self.n_ctx = spec.n_ctx
            if spec.engine == EngineKind.LOCAL:
                words = loading_words(reference or spec.target_name, spec.target_path)
                if not quiet:
                    self.load_event.emit(Loading(words))
                self.engine = self.factory.load_engine(
                    replace(spec, draft_path=None), should_cancel=self._closing,
                    on_progress=None if quiet else self._load_progress(words))
            else:
                self.engine = self._open_server(spec)
            self.engine_kind = spec.engine
        except Exception as exc:  # noqa: BLE001 - shown as one line; the app stays usable
            if self._closing():
                return  # cancelled because the window closes: nobody is left to tell
            if not isinstance(exc, (OSError, ImportError)) and "draftlight." not in type(exc).__module__:
                traceback.print_exc()
            self.load_event.emit(LoadFailed(one_line(exc)))
            return
        loaded = Loaded(reference or spec.target_name, notices=tuple(notices + self._notices(spec)),
                        mtp_layers=mtp_layers(spec.target_path) if spec.engine != EngineKind.REMOTE else 0,
                        n_ctx=spec.n_ctx if spec.engine != EngineKind.REMOTE else 0,
                        context_note=context_note,
                        target_path=spec.target_path if spec.engine != EngineKind.REMOTE else "")
        if spec.engine != EngineKind.LOCAL:
            # the server's own modes; it is given its draft model on its command line
            loaded = replace(loaded, modes=tuple(self.engine.modes),
                             draft=spec.draft_name if spec.engine == EngineKind.LLAMA_SERVER else None,
                             placement=placement(self.engine.log) if spec.rpc_servers else "")
        elif spec.draft_path:
            try:
                if not quiet:
                    self.load_event.emit(Loading(f"Loading draft {spec.draft_name}…"))
                self.factory.attach_draft(self.engine, spec, should_cancel=self._closing)
                loaded = replace(loaded, draft=spec.draft_name, draft_path=spec.draft_path)
            except Exception as exc:  # noqa: BLE001
                loaded = replace(loaded, draft_error=one_line(exc))
        self.load_event.emit(loaded)
        self._measure_soon()

    def _load_progress(self, words: str):
        """A callback for llama.cpp's load reports (on this thread): `preparing` with the
        percentage, each once."""
        shown = [-1]

        def report(fraction: float) -> None:
            percent = int(100 * min(max(fraction, 0.0), 1.0))
            if percent != shown[0]:
                shown[0] = percent
                self.load_event.emit(Preparing(words, percent))

        return report

    def _open_server(self, spec: EngineSpec):
        """llama-server (found, else built, then started) or a remote server. Cancelled, like
        a conversion, when the window closes."""
        if spec.engine == EngineKind.REMOTE:
            self.load_event.emit(Loading(f"Connecting to {spec.server_url}…"))
            return self.factory.open_remote(spec)
        self.load_event.emit(Loading(f"Starting llama-server with {spec.target_name}… (it "
                                     f"has {HEALTH_TIMEOUT:.0f} s to load the model)"))
        return self.factory.open_llama_server(
            spec, report=lambda what, percent: self.load_event.emit(Preparing(what, percent)),
            on_log=self.server_log.emit, should_cancel=self._closing)

    def _closing(self) -> bool:
        """The window is closing: a load or a start stops (asked from llama.cpp's loader)."""
        return self.stop_upto == STOP_ALL

    def _resolve_target(self, spec: EngineSpec) -> tuple[EngineSpec, list[str]]:
        """A spec without a target means the default model: its converted copy, or until that
        is made (in the background, _make_default_copy) the bundled file itself."""
        if spec.target_path:
            return spec, []
        path, self._convert_default = self.factory.default_now()
        return replace(spec, target_path=path), []

    def _notices(self, spec: EngineSpec) -> list[str]:
        """What the user should know about the loaded target (how it was loaded, a missing
        chat template): the engine's own load notices."""
        return list(self.engine.load_notices)

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

    @Slot(int, object, object, str, object)
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

    @Slot(int, object, object, str)
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

    @Slot(object, str)
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
