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
job starts. A waiting job lets go of its request when it is cancelled (Job.cancel).

Each reply has a wall-clock limit (`time_limit`, counted from when the engine takes the job up,
so time spent waiting in the queue is not counted): past it, the reply ends after the pass in
progress, with what was written and finish_reason "length", as when max_tokens is reached.
"""

from __future__ import annotations

import inspect
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from draftlight.engine.core.errors import EngineCrashed, EngineError
from draftlight.engine.reply.events import Done, Progress, Stats, TextPiece
from draftlight.serve.schema import ApiError, ChatRequest
from draftlight.serve.stops import StopFilter
from draftlight.serve.tool_plan import ToolPlan, planned, template_source
from draftlight.modes import Mode

log = logging.getLogger("draftlight.serve")

# 5 minutes: the default max_tokens (schema.DEFAULT_MAX_TOKENS, 2,048) at 7 tokens/s, a 7B
# model on a laptop's CPU; and a JSON answer cut by it still reaches an `openai` client, whose
# own default timeout is 10 minutes, unless it waited in the queue more than 5 of them.
DEFAULT_TIME_LIMIT = 300.0
TIME_LIMIT_REASON = "time_limit"  # a Stats.stop_reason of serve's own: finish_reason "length"


@dataclass(frozen=True)
class Started:
    """Before the engine's first event: the HTTP side answers with the prompt's size, and reads
    the reply's tool calls by `tools` (tool_plan.py; None: it reads none)."""
    prompt_tokens: int
    tools: ToolPlan | None = None


@dataclass(frozen=True)
class Finished(Done):
    """The engine's Done, with the text the client was sent (stop sequences cut out)."""
    finish_reason: str = ""  # the engine's stop reason, or "stop" for a stop sequence
    prompt_tokens: int = 0


@dataclass(eq=False)  # each job is itself: kept in sets by the window's server
class Job:
    request: ChatRequest | None  # None once cancelled (see cancel)
    deliver: Callable[[object], None]
    cancelled: threading.Event = field(default_factory=threading.Event)
    # who asked, as the window's Served list names it: the request's `user`, else its User-Agent
    client: str = ""

    def cancel(self) -> None:
        """The client left or the server stops: the engine skips the job, or stops it at its
        next token. Its request (up to 4 MiB of messages and prediction) is let go now, not
        when the engine reaches the job: a queue of requests whose clients left would
        otherwise hold all their bodies behind one long reply."""
        self.cancelled.set()
        self.request = None  # run_job keeps its own reference while the job runs


class ServeWorker(threading.Thread):
    """Loads the engine with `load()` on its own thread; `ready` is set when it has loaded (or
    failed: `load_error`). `submit` raises queue.Full when `queue_size` jobs already wait.

    What the routes need of it (routes.py), and of the window's bridge likewise: `submit(job)`,
    `n_ctx` (the largest max_tokens) and `model_id` (the one model served). `time_limit`:
    seconds each reply may run (None: no limit)."""

    def __init__(self, load: Callable[[], object], mode: Mode, queue_size: int,
                 model_id: str = "", *, time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
        super().__init__(name="draftlight-engine", daemon=True)
        self._load = load
        self.model_id = model_id
        self.mode = mode
        self.queue_size = queue_size
        self.time_limit = time_limit
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
                    run_job(self.engine, job, self.mode, time_limit=self.time_limit)
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
            self.current.cancel()
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


def run_job(engine, job: Job, mode: Mode, *,
            time_limit: float | None = DEFAULT_TIME_LIMIT) -> None:
    """Answer `job` with `engine` on the calling thread (the one that owns the engine),
    delivering Started, TextPieces and Finished, or one ApiError; the reply ends after
    `time_limit` seconds (None: no limit). Also the window's server
    (app/draftlight/ui/engine/serve_switch.py) runs its jobs with it, on the window's engine thread."""
    request = job.request
    if request is None:  # cancelled after it was taken from the queue: nobody waits
        return
    deadline = None if time_limit is None else time.monotonic() + time_limit
    plan = None
    if getattr(request, "tools", None) is not None:  # here, where the model's template is known
        try:
            request, plan = planned(request, request.tools, template_source(engine))
        except ApiError as exc:
            job.deliver(exc)
            return
    grammar = getattr(request, "grammar", None)  # structured output (response_format.py)
    if grammar is not None and "grammar" not in inspect.signature(engine.generate).parameters:
        job.deliver(ApiError(400, "'response_format' other than text needs Draftlight's own "
                                  "engine; this server's engine applies no grammar",
                             param="response_format", code="unsupported_parameter"))
        return
    prompt_tokens = _prompt_that_fits(engine, job, request)
    if prompt_tokens is None:
        return
    job.deliver(Started(prompt_tokens, tools=plan))
    raw = getattr(request, "raw_prompt", None)  # a text completion (completion_schema.py)
    extra = {"raw_prompt": raw} if raw is not None else {}
    if grammar is not None:
        extra["grammar"] = grammar
    events = engine.generate(request.messages, request.params, mode,
                             prediction=request.prediction, **extra)
    try:
        _stream_reply(events, job, request.stop, mode, deadline, prompt_tokens)
    except EngineCrashed as exc:  # the host ended mid-reply: the next request restarts it
        log.error("%s", exc)
        job.deliver(ApiError(500, str(exc), type="server_error", code="engine_crashed"))
    except EngineError as exc:
        job.deliver(ApiError(400, str(exc)))
    except Exception:  # noqa: BLE001 - one request fails, the server goes on
        log.exception("generation failed")
        job.deliver(ApiError(500, "generation failed; see the server's log",
                             type="server_error", code="internal_error"))
    finally:
        events.close()


def _prompt_that_fits(engine, job: Job, request: ChatRequest) -> int | None:
    """The prompt's length in tokens, or None when `job` was answered with an ApiError
    instead: the messages cannot be tokenized, or they leave no room for the reply."""
    n_ctx = engine.n_ctx
    raw = getattr(request, "raw_prompt", None)  # a text completion: its prompt as given
    what, param = ("the prompt is", "prompt") if raw is not None else ("the messages are",
                                                                       "messages")
    try:
        if raw is not None and not hasattr(engine, "tokenize_raw"):
            raise EngineError("text completions (/v1/completions) need the in-process engine")
        prompt_tokens = len(engine.tokenize_raw(raw) if raw is not None
                            else engine.tokenize_chat(request.messages))
    except EngineCrashed as exc:
        job.deliver(ApiError(500, str(exc), type="server_error", code="engine_crashed"))
        return None
    except EngineError as exc:  # a chat template that refuses these roles; a suffix, no FIM
        job.deliver(ApiError(400, str(exc), param="suffix" if raw and raw.suffix else param))
        return None
    reserve = engine.reserve(request.params)
    if prompt_tokens + reserve > n_ctx:
        job.deliver(ApiError(
            400, f"{what} {prompt_tokens:,} tokens long; with room for a reply "
                 f"({reserve:,} tokens) {'it does' if raw else 'they do'} not fit the "
                 f"{n_ctx:,}-token context", code="context_length_exceeded", param=param))
        return None
    return prompt_tokens


def _stream_reply(events, job: Job, stop: tuple[str, ...], mode: Mode,
                  deadline: float | None, prompt_tokens: int) -> None:
    """Deliver the engine's `events` as TextPieces through the stop sequences `stop`, then
    Finished; the reply ends at a stop sequence, at `deadline` (time.monotonic), or quietly
    when the job is cancelled. The engine's errors are the caller's to answer."""
    stops: StopFilter[tuple[str, int, dict | None]] = StopFilter(stop)
    sent: list[str] = []
    stats = Stats(mode=mode)

    def send(pieces) -> None:
        for text, (source, step, origin) in pieces:
            sent.append(text)
            # A stop filter may join or hold back tokens' text: a piece has no one token (-1)
            job.deliver(TextPiece(text, source, step, origin=origin))

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
            if deadline is not None and time.monotonic() > deadline:
                stats.stop_reason = TIME_LIMIT_REASON  # so is the pass that ran past it
                break
        elif isinstance(event, Done):
            stats = event.stats
    send(stops.flush())
    job.deliver(Finished("".join(sent), stats, finish_reason=stats.stop_reason,
                         prompt_tokens=prompt_tokens))
