"""A served request, read-only: its messages as the client sent them, and its reply as it was
written, with the flash and the origins of the window's own replies ("copied from the
request's message 3", "from the tool result in message 4", "from the request's prediction").

It is a ChatView of its own, never the user's: opening a request changes nothing in the
conversation on screen. `catch_up` is called by the Served list's timer (served_list.py), so a
reply being written is repainted a few times a second, not once a token.
"""

from __future__ import annotations

from draftlight.engine.reply.events import TextPiece
from draftlight.ui.chat.view import ChatView
from draftlight.ui.engine.served_log import CANCELLED, FAILED, ServedRequest
from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.origin_words import Source
from draftlight.ui.flash.reply_builder import ReplyBuilder
from draftlight.ui.flash.reply_figures import ReplyFigures
from draftlight.ui.flash.stats_text import live_line

PREDICTION_WORDS = "the request's prediction"  # how a Predicted Output's runs name it


class ServedChat(ChatView):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("served-chat")
        self.welcome.hide()
        self.served: ServedRequest | None = None
        self.reply: MessageView | None = None
        self._builder = ReplyBuilder(PREDICTION_WORDS)
        self._read = 0  # of served.events, those in the builder
        self._seen_version = -1

    def show_request(self, served: ServedRequest) -> None:
        """Show `served` from its start (what arrived so far, without flashing it)."""
        self.clear()
        self.welcome.hide()
        self.served, self._read, self._seen_version = served, 0, -1
        self._builder = ReplyBuilder(PREDICTION_WORDS)
        for at, (role, text) in enumerate(served.messages):
            view = self.add_message(role if role in ("user", "system") else "assistant", text)
            view.role = role  # a tool result keeps its role: origins name it by that
            view.title.setText(f"Message {at + 1} · {role}")
            if hasattr(view, "edit_button"):
                view.edit_button.hide()  # a client's message is not the user's to edit
        self.reply = self.add_message("assistant", streaming=True, mode=served.mode,
                                      model=f"Reply to {served.client or 'a client'}")
        self.catch_up(flash=False)

    def catch_up(self, flash: bool = True) -> None:
        """Show what the request's reply wrote since the last call; its end, once it ended."""
        served, reply = self.served, self.reply
        if served is None or reply is None or served.version == self._seen_version:
            return
        self._seen_version = served.version
        arrived = served.events[self._read:]  # appended to on the engine thread: read once
        self._read += len(arrived)
        for event in arrived:
            if isinstance(event, TextPiece):
                at = event.origin.message if event.origin is not None else None
                role = (served.messages[at][0] if isinstance(at, int)
                        and 0 <= at < len(served.messages) else None)
                self._builder.add(event.text, event.source, event.step, event.origin, role, at)
        builder = self._builder
        if not reply.streaming:
            return
        if served.finished is not None or served.state in (FAILED, CANCELLED):
            self._finish(served, builder)
            return
        reply.stream_update(builder.text, builder.runs, flash=flash)
        reply.set_live_passes(builder.pass_table)
        reply.run_origins.set_origins(builder.origins)
        seconds = (builder.last_piece_at or 0) - (builder.first_piece_at or 0)
        reply.set_live_stats(live_line(None, builder.tokens, builder.passes, builder.accepted,
                                       seconds))

    def _finish(self, served: ServedRequest, builder: ReplyBuilder) -> None:
        figures = None
        if served.finished is not None:
            figures = ReplyFigures(served.finished.stats,
                                   passes=tuple(tuple(row) for row in builder.pass_table),
                                   origins=tuple(builder.origins),
                                   prediction_from=PREDICTION_WORDS if served.prediction else "")
        else:
            self.reply.note = f"Not answered: {served.error or 'the client left'}"
        self.reply.finish(builder.text, builder.runs, figures,
                          "complete" if figures is not None else "interrupted")

    def origin_source(self, reply: MessageView, origin) -> Source | None:
        """What a run copied from the request names: its message, by number and role."""
        if origin is None or origin.kind != "message":
            return super().origin_source(reply, origin)
        at = origin.at
        if self.served is None or not isinstance(at, int) or not 0 <= at < len(
                self.served.messages):
            return None
        role, text = self.served.messages[at]
        place = (f"the tool result in message {at + 1}" if role == "tool"
                 else f"the request's message {at + 1} ({role})")
        return Source(role, text, at + 1, place=place)
