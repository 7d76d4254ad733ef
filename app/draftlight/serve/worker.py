"""The thread that owns the engine, and the queue of requests waiting for it.

llama.cpp models are not thread-safe, so one thread loads the engine, runs every request in
turn and closes it. The HTTP side submits a Job and receives its items through `deliver`
(called on this thread; the server turns it into an asyncio queue):

    Started(prompt_tokens)  the request is running (its prompt fits)
    TextPiece(text, source, step) ...  the engine's own event, once the stop sequences let it out
    Finished(text, stats, finish_reason, prompt_tokens)  the engine's Done, and what the API adds
or one ApiError instead of all of them.

Cancelling a job (client gone) is seen between two yields of the engine's generator, which
yields after every token: at most one target pass later the generator is closed and the next
job starts.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import Callable

from draftlight.engine.errors import EngineError
from draftlight.engine.events import Done, Progress, Stats, TextPiece
from draftlight.serve.schema import ApiError, ChatRequest
from draftlight.serve.stops import StopFilter

log = logging.getLogger("draftlight.serve")


@dataclass(frozen=True)
class Started:
    """Before the engine's first event: the HTTP side answers with the prompt's size."""
    prompt_tokens: int


@dataclass(frozen=True)
class Finished(Done):
    """The engine's Done, with the text the client was sent (stop sequences cut out)."""
    finish_reason: str = ""  # the engine's stop reason, or "stop" for a stop sequence
    prompt_tokens: int = 0


@dataclass(eq=False)  # each job is itself: kept in sets by the window's server
class Job:
    request: ChatRequest
    deliver: Callable[[object], None]
    cancelled: threading.Event = field(default_factory=threading.Event)


class ServeWorker(threading.Thread):
    """Loads the engine with `load()` on its own thread; `ready` is set when it has loaded (or
    failed: `load_error`). `submit` raises queue.Full when `queue_size` jobs already wait.

    What the routes need of it (routes.py), and of the window's bridge likewise: `submit(job)`,
    `n_ctx` (the default max_tokens) and `model_id` (the one model served)."""

    def __init__(self, load: Callable[[], object], mode: str, queue_size: int,
                 model_id: str = "") -> None:
        super().__init__(name="draftlight-engine", daemon=True)
        self._load = load
        self.model_id = model_id
        self.mode = mode
        self.queue_size = queue_size
        self.jobs: queue.Queue[Job | None] = queue.Queue()  # bounded by submit, see there
        self._submitting = threading.Lock()
        self.ready = threading.Event()
        self.load_error: BaseException | None = None
        self.engine = None
        self.n_ctx = 0
        self._stopping = threading.Event()
        self.current: Job | None = None

    def run(self) -> None:
        try:
            self.engine = self._load()
            self.n_ctx = self.engine.n_ctx
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which reports it
            self.load_error = exc
            self.ready.set()
            return
        self.ready.set()
        try:
            while not self._stopping.is_set():
                job = self.jobs.get()
                if job is None:
                    break
                if job.cancelled.is_set():
                    continue
                self.current = job
                try:
                    run_job(self.engine, job, self.mode)
                finally:
                    self.current = None
        finally:
            self.engine.close()

    def submit(self, job: Job) -> None:
        """Queue `job`, or queue.Full when `queue_size` jobs already wait. A job whose client
        has left is skipped when its turn comes and holds no place meanwhile: dropped streams
        must not make the server answer "busy" to the clients still there."""
        with self._submitting:
            if self._stopping.is_set() or self.waiting() >= self.queue_size:
                raise queue.Full
            self.jobs.put_nowait(job)

    def waiting(self) -> int:
        """Jobs waiting for the engine whose clients are still there."""
        with self.jobs.mutex:
            return sum(1 for job in self.jobs.queue if job is not None
                       and not job.cancelled.is_set())

    def stop(self, timeout: float = 10.0) -> None:
        """Cancel the running job, refuse the waiting ones, close the engine (on its thread)."""
        self._stopping.set()
        if self.current is not None:
            self.current.cancelled.set()
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.deliver(ApiError(503, "the server is shutting down", type="server_error",
                                     code="shutting_down"))
        self.jobs.put(None)
        self.join(timeout)


def run_job(engine, job: Job, mode: str) -> None:
    """Answer `job` with `engine` on the calling thread (the one that owns the engine),
    delivering Started, TextPieces and Finished, or one ApiError. Also the window's server
    (app/draftlight/ui/engine/serve_switch.py) runs its jobs with it, on the window's engine thread."""
    request = job.request
    n_ctx = engine.n_ctx
    try:
        prompt_tokens = len(engine.tokenize_chat(request.messages))
    except EngineError as exc:  # e.g. a chat template that refuses these roles
        job.deliver(ApiError(400, str(exc), param="messages"))
        return
    reserve = engine.reserve(request.params)
    if prompt_tokens + reserve > n_ctx:
        job.deliver(ApiError(
            400, f"the messages are {prompt_tokens:,} tokens long; with room for a reply "
                 f"({reserve:,} tokens) they do not fit the {n_ctx:,}-token context",
            code="context_length_exceeded", param="messages"))
        return
    job.deliver(Started(prompt_tokens))
    events = engine.generate(request.messages, request.params, mode,
                             prediction=request.prediction)
    stops: StopFilter[tuple[str, int, dict | None]] = StopFilter(request.stop)
    sent: list[str] = []
    stats = Stats(mode=mode)

    def send(pieces) -> None:
        for text, (source, step, origin) in pieces:
            sent.append(text)
            # A stop filter may join or hold back tokens' text: a piece has no one token (-1)
            job.deliver(TextPiece(text, source, step, origin=origin))

    try:
        for event in events:
            if job.cancelled.is_set():
                return
            if isinstance(event, TextPiece) and event.text:
                send(stops.feed(event.text, (event.source, event.step, event.origin)))
            elif isinstance(event, Progress):
                stats = event.stats
                if stops.stopped:  # the pass that held the stop sequence is counted
                    stats.stop_reason = "stop"
                    break
            elif isinstance(event, Done):
                stats = event.stats
        send(stops.flush())
        job.deliver(Finished("".join(sent), stats, finish_reason=stats.stop_reason,
                             prompt_tokens=prompt_tokens))
    except EngineError as exc:
        job.deliver(ApiError(400, str(exc)))
    except Exception:  # noqa: BLE001 - one request fails, the server goes on
        log.exception("generation failed")
        job.deliver(ApiError(500, "generation failed; see the server's log",
                             type="server_error", code="internal_error"))
    finally:
        events.close()
