"""The current conversation: opening one, sending, regenerating, continuing, and keeping the
history in step; the reply under way is reply_stream.ReplyStream's half of it.

Writes go through SessionWrites (session_writes.py): the history failing softly.

Pieces arrive from the worker one signal per token and only go into a ReplyBuilder; a timer
repaints at most ~30 times a second (FLUSH_INTERVAL_MS), whatever the token rate.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from PySide6.QtCore import QObject, QTimer, Signal

from draftlight.settings import Settings
from draftlight.modes import OFF, Mode
from draftlight.store.history import INTERRUPTED, History, HistoryError
from draftlight.store.history_queue import Row, WriteQueue
from draftlight.ui.chat.view import ChatView
from draftlight.ui.flash.message_view import MessageView
from draftlight.store.attachments import attachment_blocks, own_text_start
from draftlight.ui.chat import branches
from draftlight.ui.chat.continue_reply import continuable, resume
from draftlight.ui.chat.earlier import EarlierMessage, page_start
from draftlight.ui.chat.reply_stream import ReplyStream, Stream
from draftlight.ui.chat.session_writes import SessionWrites
from draftlight.ui.flash.reply_builder import ReplyBuilder
from draftlight.ui.flash.reply_figures import Compared, ReplyFigures, model_named, model_record
from draftlight.ui.engine.engine_thread import EngineThread

TITLE_LENGTH = 60


class ChatSession(SessionWrites, ReplyStream, QObject):
    busy_changed = Signal(bool)  # a reply started (True) or ended (False)
    reply_finished = Signal(object)  # the MessageView of a reply that completed or stopped
    conversations_changed = Signal()
    current_changed = Signal(object)  # conversation id or None
    error = Signal(str)
    engine_crashed = Signal(str)  # the engine's process ended mid-reply: one line (kept reply)
    engine_answered = Signal()  # a reply came to its end: the engine is (back) at work
    info = Signal(str)
    saved_again = Signal(str)  # the history answers again; the line `error` showed till now
    live_stats = Signal(str)
    writing_changed = Signal(object)  # the conversation a reply is being written in, or None
    speed = Signal(float, float)  # tokens/s now, plain tokens/s (0 = unknown); now < 0: ended

    FLUSH_INTERVAL_MS = 33  # ≈30 repaints per second at most
    CHECKPOINT_SECONDS = 2.0  # how often a streaming reply's text is saved (crash safety)
    RETRY_MS = 2000  # how often writes the history refused are tried again
    CLOSING_WAIT_SECONDS = 5.0  # at closing, how long the last writes wait for another's lock

    def __init__(self, engine: EngineThread, history: History, chat: ChatView,
                 settings: Settings, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.engine, self.history, self.chat, self.settings = engine, history, chat, settings
        self.writes = WriteQueue(history)
        self.conversation: Row | None = None  # None: a new conversation, nothing sent yet
        self._kept_line: str | None = None  # the banner line while writes wait
        self._retry = QTimer(self)
        self._retry.setInterval(self.RETRY_MS)
        self._retry.timeout.connect(self.retry_writes)
        self.stream: Stream | None = None
        self.flush_count = 0
        self.plain_rate = 0.0  # plain decoding's tokens/s on this target (0 = not measured)
        self.model = ""  # the loaded target, as a reply's card names it (the window sets it)
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setInterval(self.FLUSH_INTERVAL_MS)
        self._timer.timeout.connect(self.flush)
        worker = engine.worker
        worker.reply.connect(self._on_reply)
        chat.earlier_shown.connect(lambda: branches.refresh(self))  # their ‹ n/m ›

    @property
    def streaming(self) -> bool:
        return self.stream is not None

    @property
    def conversation_id(self) -> int | None:
        """The conversation's row, once it is written."""
        return self.conversation.id if self.conversation is not None else None

    # --- conversations -------------------------------------------------------------------------

    def new_conversation(self) -> None:
        self._leave_stream()
        self.chat.clear()
        self.conversation = None
        self.current_changed.emit(None)

    def start_fresh_history(self) -> None:
        """A history that could not be read is set aside; a new, empty one is used."""
        self.writes.clear()  # their rows were in the file set aside
        moved = self.history.start_fresh()
        self.new_conversation()
        self.conversations_changed.emit()
        if moved:
            self.info.emit(f"The old history was kept as {moved.name}")

    def remember_plain_speed(self, result) -> None:
        """Compare timed plain decoding: the speed meter's plain figure, until the engine's own
        timing says otherwise. The result stays with the reply it compared (its footer, and
        the history), so it is not lost when the dialog closes."""
        if result.plain.tokens_per_second:
            self.plain_rate = result.plain.tokens_per_second
        reply = self.chat.messages[-1] if self.chat.messages else None
        if (reply is None or reply.role != "assistant" or reply.streaming
                or reply.figures is None):
            return
        reply.figures = replace(reply.figures, compared=Compared.of(result))
        reply.render()
        if reply.message_id is not None:
            self.save(self.writes.update_message, reply.message_id, reply.text,
                       runs=reply.runs, stats=reply.figures.record(), status=reply.status)

    def open_conversation(self, conversation_id: int) -> None:
        self._leave_stream()
        self.chat.clear()
        self.conversation = Row(conversation_id)
        self.chat.system_prompt = self.settings.system_prompt.strip()  # not saved: a best guess
        try:
            messages = self.history.messages(conversation_id)
        except HistoryError as exc:
            messages = []
            self.error.emit(str(exc))
        writing = self.stream if self._writes_in(conversation_id) else None
        shown = page_start([m.text for m in messages])  # the newest: earlier.py
        if writing is not None:  # the reply being written is always built
            shown = min([shown] + [i for i, m in enumerate(messages)
                                   if m.id == writing.message_id.id])
        self.chat.set_earlier([EarlierMessage(m.role, m.text, partial(_view_options, m),
                                              Row(m.id)) for m in messages[:shown]])
        for message in messages[shown:]:
            if writing is not None and message.id == writing.message_id.id:
                self._show_stream_again(writing)
                continue
            view = self.chat.add_message(message.role, message.text, **_view_options(message))
            view.message_id = Row(message.id)
        branches.refresh(self)  # ‹ n/m › where a message has other versions
        self.current_changed.emit(conversation_id)

    def forget_conversation(self, conversation_id: int) -> None:
        """It was deleted: a reply being written in it stops; if it is on screen, the screen
        is cleared."""
        if self._writes_in(conversation_id):
            self._abandon_stream()
        if conversation_id == self.conversation_id:
            self.new_conversation()

    # --- sending -------------------------------------------------------------------------------

    def send(self, text: str, mode: Mode, prediction: tuple[str, str] | None = None,
             files: list[dict] | None = None) -> bool:
        """`prediction`: (name, text) of a file being edited, the reply's Predicted Output;
        `files`: what the history keeps of each attached file besides its text (its name,
        type, pages and SHA-256: not a path that may move), as the message's "attachments"."""
        if self.streaming:
            return False
        if self.conversation is None:
            # the words typed, not the files attached before them (store/attachments.py)
            title = " ".join(text[own_text_start(text):].split())[:TITLE_LENGTH] or " ".join(
                block.name for block in attachment_blocks(text))[:TITLE_LENGTH]
            self.conversation = self.save(self.writes.create_conversation, title)
            self.conversations_changed.emit()
            self.current_changed.emit(self.conversation_id)
        view = self.chat.add_message("user", text)
        if self.conversation is not None:
            view.message_id = self.save(self.writes.add_message, self.conversation, "user", text,
                                         **({"stats": {"attachments": files}} if files else {}))
        name, predicted = prediction if prediction and mode != OFF else (None, None)
        self.start_reply(mode, prediction=predicted, prediction_from=name, prediction_file=True)
        return True

    def can_regenerate(self) -> bool:
        return not self.streaming and any(v.role == "user" for v in self.chat.messages)

    def regenerate(self, mode: Mode) -> bool:
        if not self.can_regenerate():
            return False
        last = self.chat.messages[-1]
        earlier, label = None, None
        if last.role == "assistant":
            earlier = last.text if last.text.strip() else None
            label = branches.version_label(self, last)
            self.chat.remove_message(last)  # kept in the history: the new reply is its sibling
        question = self.chat.messages[-1].message_id if self.chat.messages else None
        # The answer being replaced drafts the new one (a Predicted Output: the target never
        # sees it): an unchanged greedy retry repeats it, and flashes in where it still holds.
        self.start_reply(mode, prediction=earlier if mode != OFF else None,
                          parent=question, prediction_from=label if earlier else None,
                          prediction_id=branches.saved_id(last) if earlier else None)
        return True

    def can_continue(self) -> bool:
        return not self.streaming and bool(self.chat.messages) and continuable(
            self.chat.messages[-1])

    def continue_reply(self, mode: Mode) -> bool:
        """Write more of the last reply (stopped, or at its length limit), from its words."""
        if not self.can_continue():
            return False
        self.start_reply(mode, carry_on=self.chat.messages[-1])
        return True

    def engine_messages(self) -> list[dict[str, str]]:
        return [message for message, _at in self._sent_messages()]

    def _sent_messages(self) -> list[tuple[dict[str, str], int | None]]:
        """What the engine is sent, each with its index in the chat (None: the system prompt)."""
        sent: list[tuple[dict[str, str], int | None]] = []
        if self.settings.system_prompt.strip():
            sent.append(({"role": "system", "content": self.settings.system_prompt.strip()}, None))
        every = self.chat.earlier + self.chat.messages  # what is not built yet too
        sent += [({"role": m.role, "content": m.text}, at)
                 for at, m in enumerate(every) if m.text.strip()]
        return sent

    def messages_to_compare(self) -> list[dict[str, str]]:
        """The conversation up to and including its last user message (what Compare answers)."""
        messages = self.engine_messages()
        while messages and messages[-1]["role"] != "user":
            messages.pop()
        return messages

    def start_reply(self, mode: Mode, prediction: str | None = None,
                    prediction_from: str | None = None, parent: Row | None = None,
                    prediction_file: bool = False, carry_on: MessageView | None = None,
                    prediction_id: int | None = None) -> None:
        """A reply to the chat as it stands (send, regenerate, continue and an edited
        question all end here). `parent`: the message the reply answers, when it is not the
        last one saved (a regenerated reply is a sibling of the one it replaces); `carry_on`:
        the last reply, to be written on from its words (it is the last message sent:
        continue_reply.py); `prediction_from`, `prediction_file`, `prediction_id`: what the
        prediction is (ReplyBuilder)."""
        sent = self._sent_messages()
        messages = [message for message, _at in sent]
        self.chat.system_prompt = self.settings.system_prompt.strip()
        if carry_on is not None:
            self.chat.remove_message(carry_on)
        view = self.chat.add_message("assistant", streaming=True, mode=str(mode),
                                     model=self.model)
        builder = ReplyBuilder(prediction_from, prediction_file, prediction_id)
        message_id = None
        if carry_on is not None:
            resume(view, builder, carry_on)
            message_id = carry_on.message_id
        elif self.conversation is not None:
            message_id = self.save(self.writes.add_message, self.conversation, "assistant", "",
                                    runs=[], stats=model_record(self.model),
                                    status=INTERRUPTED, mode=str(mode),
                                    **({"parent": parent} if parent is not None else {}))
        view.message_id = message_id
        request_id = self.engine.generate(messages, self.settings.sampling_params(), mode,
                                          prediction)
        self.stream = Stream(request_id, mode, view, message_id, builder=builder,
                             sent=[(m["role"], at) for m, at in sent],
                             earlier=carry_on.figures if carry_on is not None else None,
                             conversation=self.conversation, model=self.model)
        self._dirty = False
        self._timer.start()
        self.busy_changed.emit(True)
        self.writing_changed.emit(self.conversation_id)

    def save_partial(self) -> None:
        """The window is closing: keep what arrived, marked interrupted; writes still waiting
        for another process's lock get one last, longer wait."""
        self._abandon_stream()
        self._retry.stop()
        if self.writes.waiting:
            self.history.set_busy_timeout(self.CLOSING_WAIT_SECONDS)
            self.writes.flush()


def _view_options(message) -> dict:
    """A stored message's MessageView options besides its role and text."""
    figures = ReplyFigures.from_record(message.stats) if message.role == "assistant" else None
    return {"runs": message.runs, "figures": figures, "status": message.status,
            "mode": message.mode, "model": model_named(message.stats)}
