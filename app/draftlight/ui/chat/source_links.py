"""Where a reply's copied runs came from, in the chat: the message an origin names (read, not
built: a reply asks it as it is drawn), and going there when a run is clicked: the message
scrolled to and the copied text marked in the run's colour, a file attached to it opened at the
copy, or a run an earlier version's answer drafted asked for (version_requested). SourceLinks
holds it; ChatView extends it."""

from __future__ import annotations

from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.origin_words import Source
from draftlight.ui.flash.run_origin import RunOrigin
from draftlight.ui.flash.run_origins import source_spans


class SourceLinks:
    """The origins half of ChatView (which has the messages, the earlier ones, view_at,
    _message_at, user_number, the system prompt, the flasher and version_requested)."""

    def _source_at(self, reply: MessageView, origin: RunOrigin | None) -> int | None:
        """The conversation index of the message a copied run came from (a message of the
        chat, or the reply itself); None: not one on screen or before it."""
        if origin is None:
            return None
        if origin.kind == "reply":
            return self.index_of(reply) if reply in self.messages else None
        at = origin.at if origin.kind == "message" else None
        if at is None:
            return None
        source = self._message_at(at)
        return at if source is not None and source.role == origin.role else None

    def _source_view(self, reply: MessageView, origin: RunOrigin | None) -> MessageView | None:
        at = self._source_at(reply, origin)
        return self.view_at(at) if at is not None else None

    def origin_source(self, reply: MessageView, origin: RunOrigin | None) -> Source | None:
        """What a run's origin names (read, not built: a reply asks it as it is drawn)."""
        if origin is not None and origin.kind == "message" and origin.role == "system":
            return Source("system", self.system_prompt)
        at = self._source_at(reply, origin)
        if at is None:
            return None
        source = self._message_at(at)
        role = "reply" if origin.kind == "reply" else source.role
        return Source(role, source.text, self.user_number(at) if role == "user" else 0)

    def show_origin(self, reply: MessageView, index: int) -> None:
        """Scroll to where run `index` of `reply` was copied from; mark it in the run's colour.
        A run an earlier version's answer drafted asks for that version (version_requested)."""
        origin = reply.run_origins.origin(index)
        if origin is None:
            return
        start, end = origin.start or 0, origin.end or 0
        if origin.kind == "prediction" and origin.message_id is not None:
            self.version_requested.emit(origin.message_id, start, end, reply.runs[index][2])
            return
        source = self._source_view(reply, origin)
        if source is None:
            return
        spans = source_spans(source, start, end)
        block = source.files.block_at(start) if not spans and source.role == "user" else None
        if block is not None:  # copied from a file attached to that message: open it there
            self.ensureWidgetVisible(source)
            source.files.show(block, (start - block.start, min(end, block.end) - block.start),
                              reply.scheme.tint(reply.runs[index][2]))
        else:
            self.mark_copy(source, start, end, reply.runs[index][2])

    def mark_copy(self, source: MessageView, start: int, end: int, tokens: int) -> None:
        """Scroll to source.text[start:end] and mark it in the colour of a run of `tokens`."""
        spans = source_spans(source, start, end)
        if not spans:
            self.ensureWidgetVisible(source)
            return
        cursor = source.body.textCursor()
        cursor.setPosition(spans[0][0])
        rect = source.body.cursorRect(cursor)
        point = source.body.viewport().mapTo(self.widget(), rect.center())
        self.ensureVisible(point.x(), point.y(), 0, max(rect.height(), 40))
        source.flash.mark(spans, tokens, self.flasher)
