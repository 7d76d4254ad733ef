"""File ▸ Serve on localhost: the window's model over the OpenAI API, sharing the window's engine.

`draftlight serve` loads a model of its own; this switch serves the one the window has loaded
instead, so the two never hold two copies. Requests go to the window's engine thread and wait
there behind the window's own replies (one thread owns each model), in the speculation mode
the toolbar shows when they arrive. Only 127.0.0.1 is served, on the port set in Settings,
with the API key set there, if any (ui/chat/serve_key_field.py).

    ServeSwitch ── BackgroundServer (draftlight.serve: HTTP on its own thread)
         └──────── WindowRunner.submit(job) ── EngineThread.serve ── EngineWorker.serve
"""

from __future__ import annotations

import queue
import threading

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction

from draftlight.ui.engine.engine_thread import EngineThread
from draftlight.ui.engine.served_log import ServedLog
from draftlight.modes import AUTO, Mode
from draftlight.ui.widgets.plain_text import plain_label

QUEUE_SIZE = 8  # served requests that may wait; more are answered 429, as by `draftlight serve`


class WindowRunner(QObject):
    """What the server's routes need (submit, n_ctx, model_id), with the window's engine thread
    behind it. `submit` is called on the HTTP thread; the counts are kept under a lock."""

    changed = Signal()  # a request arrived or ended (emitted on any thread, received queued)

    def __init__(self, engine: EngineThread, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine = engine
        self.model_id = ""
        self.n_ctx = 4096
        self.mode = AUTO
        self.answered = 0
        self._jobs: dict = {}  # each waiting or running job, with its record in `log`
        self._lock = threading.Lock()
        self.log = ServedLog()  # what the window's Served list shows (ui/chat/served_list.py)
        engine.worker.served.connect(self._ended, Qt.QueuedConnection)

    @property
    def active(self) -> int:
        """Requests waiting for or running on the engine."""
        with self._lock:
            return len(self._jobs)

    def submit(self, job) -> None:
        from draftlight.serve.serve_worker import Finished

        with self._lock:
            live = sum(1 for waiting in self._jobs if not waiting.cancelled.is_set())
            if live > QUEUE_SIZE:  # one running, QUEUE_SIZE waiting; clients gone hold none
                raise queue.Full
            served = self._jobs[job] = self.log.add(
                job.request, getattr(job, "client", ""), str(self.mode))
        to_client = job.deliver

        def deliver(item) -> None:
            if isinstance(item, Finished):
                with self._lock:
                    self.answered += 1
            self.log.take(served, item)
            to_client(item)

        # The routes' own Job goes to the engine thread (not a copy), so that when its client
        # leaves, Job.cancel lets go of the body the engine thread's queue holds.
        job.deliver = deliver
        self.changed.emit()
        self.engine.serve(job, self.mode)

    def cancel_all(self) -> None:
        """Every waiting and running request ends now; their clients get a 503."""
        from draftlight.serve.schema import ApiError
        with self._lock:
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()
            job.deliver(ApiError(503, "the server was stopped", type="server_error",
                                 code="shutting_down"))

    def _ended(self, job) -> None:
        with self._lock:
            served = self._jobs.pop(job, None)
        if served is not None:
            self.log.ended(served)
        self.changed.emit()


class ServeSwitch(QObject):
    """The checkable action and the status-bar label; `problem` carries a one-line message
    (a port in use, no HTTP stack) for the window's banner, and the switch goes back off."""

    problem = Signal(str)

    def __init__(self, engine: EngineThread, port: int, parent: QObject | None = None, *,
                 allow_origins: tuple[str, ...] = (), api_key: str = "") -> None:
        super().__init__(parent)
        self.port, self.allow_origins = port, allow_origins  # web origins that may call it
        self.api_key = api_key  # clients must send it ("" = none asked for)
        self.runner = WindowRunner(engine, self)
        self.server = None
        self.action = QAction("Serve on localhost", self, checkable=True)
        self.action.setToolTip("Serve the loaded model to other programs over the OpenAI API, "
                               "on this computer only")
        self.label = plain_label()  # it names the model
        self.label.setObjectName("serve-status")
        self.label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.label.setVisible(False)
        self.action.toggled.connect(self.set_serving)
        self.runner.changed.connect(self._show)

    @property
    def serving(self) -> bool:
        return self.server is not None

    @property
    def url(self) -> str:
        return self.server.url if self.server else ""

    def set_model(self, model_id: str, n_ctx: int) -> None:
        self.runner.model_id, self.runner.n_ctx = model_id, n_ctx
        self._show()

    def set_mode(self, mode: Mode) -> None:
        self.runner.mode = mode

    def set_api_key(self, key: str) -> None:
        """A new key (or none) applies at once: a running server starts again with it (its
        requests end with 503), so a key turned on or replaced is never one that no longer
        protects anything. The port and origins wait for the next start instead."""
        if key == self.api_key:
            return
        self.api_key = key
        if self.serving:
            self.set_serving(False)
            self.set_serving(True)

    def set_serving(self, on: bool) -> None:
        if on and self.server is None:
            from draftlight.serve.background import BackgroundServer
            from draftlight.user_messages import UserError
            try:
                self.server = BackgroundServer(self.runner, port=self.port,
                                               allow_origins=self.allow_origins,
                                               api_key=self.api_key or None)
            except UserError as exc:
                self._set_checked(False)
                self.problem.emit(f"Could not serve on localhost: {exc}")
                return
            self.server.start()
        elif not on and self.server is not None:
            server, self.server = self.server, None
            self.runner.cancel_all()
            server.stop()
        self._set_checked(on)
        self._show()

    def shutdown(self) -> None:
        self.set_serving(False)

    def _set_checked(self, on: bool) -> None:
        self.action.blockSignals(True)
        self.action.setChecked(on)
        self.action.blockSignals(False)

    def _show(self) -> None:
        self.label.setVisible(self.serving)
        if not self.serving:
            return
        runner = self.runner
        text = f"Serving {runner.model_id or 'the model'} at {self.url}"
        if self.api_key:
            text += " · key required"
        if runner.answered:
            text += f" · {runner.answered} answered"
        if runner.active:
            text += f" · {runner.active} in progress"
        self.label.setText(text)
        key = ("the API key in Settings ▸ Serve on localhost" if self.api_key
               else "any API key")
        self.label.setToolTip(f"OpenAI-compatible: point a client's base URL here ({key}). "
                              "Requests wait behind this window's own replies.")
