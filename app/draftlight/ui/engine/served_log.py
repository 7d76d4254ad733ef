"""What File ▸ Serve on localhost has answered lately, for the window's Served list. No Qt here.

The window's server (serve_switch.WindowRunner) records each request as it is submitted (on the
HTTP thread) and every item delivered to its client (on the engine thread), so the list can show
a reply while it is written, not only once it has ended. The GUI never waits for either thread:
it reads the records on a timer (ui/chat/served_list.py) and compares `version`s to see what
changed. Lists are only appended to, so a reader slicing `events` up to the length it read
sees whole items.

Only the latest MAX_KEPT requests are kept, and of each at most MAX_KEPT_CHARS of its messages:
a client may send 4 MiB a request, and the list is for watching, not an archive.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

MAX_KEPT = 50  # requests the list remembers; older ones are forgotten
MAX_KEPT_CHARS = 256 * 1024  # of one request's messages (and prediction), the rest cut

WAITING, RUNNING, DONE, FAILED, CANCELLED = "waiting", "writing", "done", "failed", "cancelled"


@dataclass
class ServedRequest:
    """One request and what its client was sent: `events` holds the TextPieces in order, then
    the Finished (serve_worker.py) once it ends; `error` says why it failed instead."""

    number: int  # 1 for the first request since the window opened
    client: str  # the request's `user`, else its User-Agent ("" when it sent neither)
    messages: list[tuple[str, str]]  # (role, text) as the engine read them, cut at MAX_KEPT_CHARS
    prediction: str | None  # its Predicted Output, if it sent one
    mode: str  # the speculation mode it was answered in
    arrived: float = field(default_factory=time.time)
    state: str = WAITING
    prompt_tokens: int = 0
    events: list = field(default_factory=list)
    tokens: int = 0  # pieces sent so far (one a token, but where a stop sequence joined some)
    drafted: int = 0  # of them, accepted draft tokens
    first_piece_at: float | None = None  # time.monotonic() of its first and latest piece
    last_piece_at: float | None = None
    finished: object | None = None  # the serve_worker.Finished, once it ended well
    error: str = ""
    version: int = 0  # bumped at every change, so the list redraws only what changed


class ServedLog:
    """The latest MAX_KEPT served requests, newest last; `version` changes with any of them."""

    def __init__(self, kept: int = MAX_KEPT) -> None:
        self.requests: deque[ServedRequest] = deque(maxlen=kept)
        self.version = 0
        self._count = 0
        self._lock = threading.Lock()

    def add(self, request, client: str, mode: str) -> ServedRequest:
        """A request arrived (`request`: serve's ChatRequest or text completion)."""
        messages, prediction = _kept_text(request)
        with self._lock:
            self._count += 1
            served = ServedRequest(self._count, client, messages, prediction, mode)
            self.requests.append(served)
            self.version += 1
        return served

    def take(self, served: ServedRequest, item) -> None:
        """One item delivered to the request's client (called on the engine thread)."""
        from draftlight.engine.reply.events import TextPiece
        from draftlight.serve.schema import ApiError
        from draftlight.serve.serve_worker import Finished, Started
        if isinstance(item, Started):
            served.prompt_tokens, served.state = item.prompt_tokens, RUNNING
        elif isinstance(item, TextPiece):
            now = time.monotonic()
            served.first_piece_at = served.first_piece_at or now
            served.last_piece_at = now
            served.tokens += 1
            served.drafted += item.source == "draft"
            served.events.append(item)
        elif isinstance(item, Finished):
            served.finished, served.state = item, DONE
            served.events.append(item)
        elif isinstance(item, ApiError):
            served.error = str(getattr(item, "message", "") or item)
            served.state = CANCELLED if getattr(item, "status", 0) == 503 else FAILED
        self._changed(served)

    def ended(self, served: ServedRequest) -> None:
        """The engine let go of it: one that never finished nor failed was cancelled."""
        if served.state in (WAITING, RUNNING):
            served.state = CANCELLED
            self._changed(served)

    def latest(self) -> list[ServedRequest]:
        with self._lock:
            return list(self.requests)

    def _changed(self, served: ServedRequest) -> None:
        with self._lock:
            served.version += 1
            self.version += 1


def _kept_text(request) -> tuple[list[tuple[str, str]], str | None]:
    """The request's messages (a text completion's prompt as its stand-in user message,
    raw_prompt.as_messages) and prediction, at most MAX_KEPT_CHARS of them together."""
    pairs = [(m.get("role", ""), str(m.get("content") or "")) for m in request.messages]
    left = MAX_KEPT_CHARS
    kept = []
    for role, text in pairs:
        kept.append((role, _cut(text, left)))
        left = max(0, left - len(text))
    prediction = getattr(request, "prediction", None)
    return kept, (_cut(prediction, left) if prediction is not None else None)


def _cut(text: str, left: int) -> str:
    if len(text) <= left:
        return text
    return text[:left] + f"\n\n[… {len(text) - left:,} more characters not kept]"
