"""The reply under way in a conversation (ui/chat/session.py's ChatSession is one): the engine's
events for it go into its ReplyBuilder, a timer repaints what arrived, and its end (done, stopped,
failed, crashed) gives the reply its figures, its row in the history and its finished view.

A reply goes on while another conversation is on screen (its view is then None), saved as it
goes, and is shown again when its conversation is opened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from draftlight.engine.reply.events import Done, Notice, Progress, Reading, Stats, TextPiece
from draftlight.engine.step.origins import Origin
from draftlight.store.history import COMPLETE, INTERRUPTED
from draftlight.modes import Mode
from draftlight.store.history_queue import Row
from draftlight.ui.chat import branches
from draftlight.ui.engine.loaded import Crashed, Failed, Stopped
from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.reply_builder import ReplyBuilder
from draftlight.ui.flash.reply_figures import ReplyFigures, model_record
from draftlight.ui.flash.stats_text import live_line, reading_line, stopped_reading_line


@dataclass
class Stream:
    """The reply being generated."""

    request_id: int
    mode: Mode
    view: MessageView | None
    message_id: Row | None  # its row in the history (its id is None until it is written)
    builder: ReplyBuilder = field(default_factory=ReplyBuilder)
    # Per message sent to the engine: its role and its place in the chat (None: the system
    # prompt), to tell where a copied phrase came from.
    sent: list[tuple[str, int | None]] = field(default_factory=list)
    live: Stats | None = None  # the engine's latest statistics
    earlier: ReplyFigures | None = None  # a continued reply: the figures of what it had
    last_saved: float = field(default_factory=time.monotonic)
    stop_requested_at: float | None = None
    # the conversation it is written in: it goes on there while another one is on screen
    # (its view is then None), and is shown again when that one is opened
    conversation: Row | None = None
    reading: Reading | None = None  # how far its prompt's read came (a long one), if told
    model: str = ""  # the target writing it, as its card names it


class ReplyStream:
    """The streaming half of ChatSession: it uses the session's stream, chat, writes, _save,
    _timer and signals."""

    def stop(self) -> None:
        if self.stream is not None and self.stream.stop_requested_at is None:
            self.stream.stop_requested_at = time.perf_counter()
            self.engine.stop(self.stream.request_id)

    def _writes_in(self, conversation_id: int) -> bool:
        """Whether the reply being written belongs to that conversation (and is in the history)."""
        stream = self.stream
        return (stream is not None and stream.conversation is not None
                and stream.conversation.id == conversation_id and stream.message_id is not None
                and stream.message_id.id is not None)

    def _leave_stream(self) -> None:
        """Another conversation is opened, or a new one begun: the reply being written goes on
        in its own conversation, saved as it goes (only Stop stops it), unseen till then."""
        if self.stream is not None:
            self.stream.view = None
            self.live_stats.emit("")

    def _show_stream_again(self, stream: Stream) -> None:
        """Its conversation is open again: the reply shows what it has written so far (without
        flashing it again) and goes on streaming."""
        view = self.chat.add_message("assistant", streaming=True, mode=str(stream.mode),
                                     model=stream.model)
        view.message_id = stream.message_id
        view.stream_update(stream.builder.text, stream.builder.runs, flash=False)
        view.run_origins.set_origins(stream.builder.origins)
        stream.view = view
        if not stream.builder.text:
            self._show_reading(stream)

    def _show_reading(self, stream: Stream) -> None:
        """The prompt's read, as far as it came, in the reply's card and the status bar."""
        reading = stream.reading
        if reading is None:
            return
        line = reading_line(reading.read, reading.total, reading.seconds_left)
        if stream.view is not None:
            stream.view.show_reading(reading.read, reading.total, line)
            self.live_stats.emit(line)

    def _abandon_stream(self) -> None:
        """Leave the reply being written (another conversation is opened): stop it, save it."""
        if self.stream is not None:
            self.stop()
            self._end_stream(INTERRUPTED, self._stopped_stats())

    # --- worker signals ------------------------------------------------------------------------

    def _current(self, request_id: int) -> Stream | None:
        stream = self.stream
        return stream if stream is not None and stream.request_id == request_id else None

    def _on_reply(self, request_id: int, event) -> None:
        """One of the engine's events for reply `request_id`, or how it ended otherwise."""
        stream = self._current(request_id)
        if stream is None:
            return
        if isinstance(event, Stopped):
            self._on_stopped(request_id)
        elif isinstance(event, Failed):
            self._on_failed(request_id, event.message)
        elif isinstance(event, Crashed):
            self._on_crashed(request_id, event.message)
        elif isinstance(event, Reading):
            stream.reading = event
            self._show_reading(stream)
        elif isinstance(event, TextPiece):
            if stream.view is not None:
                stream.view.end_reading()
            if stream.stop_requested_at is None:
                stream.builder.add(event.text, event.source, event.step,
                                   *_placed(event.origin, stream.sent))
                self._dirty = True
        elif isinstance(event, Progress):
            stream.live = event.stats
            if event.pass_drafted or event.pass_why:  # the strip's cell of that pass
                stream.builder.note_drafted(event.stats.target_passes - 1, event.pass_drafted,
                                            event.pass_why)
            if event.stats.plain_token_seconds:  # auto mode timed a one-token pass
                self.plain_rate = 1.0 / event.stats.plain_token_seconds
        elif isinstance(event, Notice):
            self.info.emit(event.message)
        elif isinstance(event, Done):
            self.engine_answered.emit()
            if stream.stop_requested_at is not None:  # Stop came first: keep what was shown
                self._end_stream(INTERRUPTED, self._stopped_stats())
            else:
                self._end_stream(COMPLETE, event.stats)

    def _on_stopped(self, request_id: int) -> None:
        if self._current(request_id) is not None:
            self._end_stream(INTERRUPTED, self._stopped_stats())

    def _on_failed(self, request_id: int, message: str) -> None:
        if self._current(request_id) is not None:
            self._end_stream(INTERRUPTED, self._stopped_stats())
            self.error.emit(message)

    def _on_crashed(self, request_id: int, message: str) -> None:
        """The text so far is kept, as a stopped reply's; the window offers a restart."""
        if self._current(request_id) is not None:
            self._end_stream(INTERRUPTED, self._stopped_stats())
            self.engine_crashed.emit(message)

    def _stopped_stats(self) -> Stats | None:
        """The figures of a reply stopped before its end: the latest live ones."""
        if self.stream is None or self.stream.live is None:
            return None
        return replace(self.stream.live, stop_reason="cancelled")

    # --- painting and saving -------------------------------------------------------------------

    def flush(self) -> None:
        """Timer tick: show what arrived since the last tick, refresh the live figures."""
        stream = self.stream
        if stream is None:
            return
        builder = stream.builder
        if self._dirty and stream.view is not None:
            self.flush_count += 1
            self._dirty = False
            stream.view.stream_update(builder.text, builder.runs)
            stream.view.set_live_passes(builder.pass_table)
            stream.view.run_origins.set_origins(builder.origins)
            seconds = (builder.last_piece_at or 0) - (builder.first_piece_at or 0)
            line = live_line(stream.live, builder.tokens, builder.passes, builder.accepted,
                             seconds)
            stream.view.set_live_stats(line)
            self.live_stats.emit(line)
            self.speed.emit(builder.rate_now(), self.plain_rate)
        if (stream.message_id is not None
                and time.monotonic() - stream.last_saved >= self.CHECKPOINT_SECONDS):
            stream.last_saved = time.monotonic()
            self.save(self.writes.update_message, stream.message_id, builder.text,
                       runs=builder.runs, stats=model_record(stream.model), status=INTERRUPTED)

    def _end_stream(self, status: str, stats: Stats | None) -> None:
        stream, self.stream = self.stream, None
        self._timer.stop()
        builder = stream.builder
        text, runs = builder.text, builder.runs
        figures = stream.earlier  # a continuation stopped before its first token: as it was
        if stats is not None:  # the strip's cells, exactly (older replies estimate them)
            figures = ReplyFigures(
                stats, passes=tuple(tuple(row) for row in builder.pass_table),
                passes_why=tuple(builder.pass_why), origins=tuple(builder.origins),
                # the footer says what drafted (a file, an answer); a file's reply offers a diff
                prediction_from=builder.prediction_from or "",
                prediction_file=bool(builder.prediction_from and builder.prediction_file),
                model=stream.model)
            if stream.earlier is not None:
                figures = stream.earlier.continued_by(figures)
        if stream.message_id is not None:
            self.save(self.writes.update_message, stream.message_id, text, runs=runs,
                       stats=figures.record() if figures is not None
                       else model_record(stream.model), status=status)
            self.conversations_changed.emit()
        reading = stream.reading
        if stream.view is not None and stream.view in self.chat.messages:
            if not text and reading is not None and reading.read < reading.total:
                stream.view.note = stopped_reading_line(reading.read, reading.total)
            stream.view.finish(text, runs, figures, status)
        branches.refresh(self)  # a regenerated reply now has a sibling
        self.live_stats.emit("")
        self.speed.emit(-1.0, self.plain_rate)
        self.busy_changed.emit(False)
        self.writing_changed.emit(None)
        if stream.view is not None:
            self.reply_finished.emit(stream.view)


def _placed(origin: Origin | None, sent: list[tuple[str, int | None]]
            ) -> tuple[Origin | None, str | None, int | None]:
    """(origin, role, at): a copy from message I of what was sent, told by its role and its
    index in the chat (`at`, None for the system prompt): that is what stays true when the
    conversation is opened again, whatever system prompt is set then."""
    if origin is None or origin.kind != "message":
        return origin, None, None
    if not isinstance(origin.message, int) or not 0 <= origin.message < len(sent):
        return None, None, None
    role, at = sent[origin.message]
    return origin, role, at
