"""Writes to the history in the order they were made, kept in memory while the store does not
answer (another Draftlight holds its lock, the disk is full, an I/O error) and written, still in
order, at a later `flush()`. Imports no Qt.

A row that is not written yet has no id, so a write names its conversation or message by a Row,
whose `id` is filled in once it lands. Later changes to a message that waits are folded into
the waiting write: a reply checkpointed every two seconds while the store is locked is one write
when it answers again, not hundreds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from draftlight.store.history import COMPLETE, History, HistoryError, HistoryUnavailable


@dataclass(eq=False)
class Row:
    """A conversation or a message: `id` is None until it is written."""

    id: int | None = None


@dataclass(eq=False)
class _Write:
    kind: str  # "conversation", "add", "update" or "delete"
    row: Row
    conversation: Row | None = None  # what an "add" goes into
    fields: dict = field(default_factory=dict)


class WriteQueue:
    def __init__(self, history: History) -> None:
        self.history = history
        self._waiting: list[_Write] = []
        self.refusal: HistoryError | None = None  # why the last try left something unwritten

    @property
    def waiting(self) -> int:
        """How many writes wait for the store."""
        return len(self._waiting)

    def clear(self) -> None:
        """Forget what waits (the history was replaced by a new one)."""
        self._waiting.clear()

    # --- the writes: each is queued, then everything queued is tried; none raises --------

    def create_conversation(self, title: str) -> Row:
        return self._queue(_Write("conversation", Row(), fields={"title": title}))

    def add_message(self, conversation: Row, role: str, text: str, **fields) -> Row:
        """As History.add_message; `parent`, when given, is a Row (a message that may not be
        written yet): the new message starts a branch after it."""
        return self._queue(_Write("add", Row(), conversation,
                                  {"role": role, "text": text, **fields}))

    def update_message(self, message: Row, text: str, *, runs: list | None = None,
                       stats: dict | None = None, status: str = COMPLETE) -> None:
        """As History.update_message: all four fields are set."""
        state = {"text": text, "runs": runs, "stats": stats, "status": status}
        for write in self._waiting:
            if write.row is message and write.kind in ("add", "update"):
                # The latest state, in the write that waits; trying again now would only
                # meet the refusal that keeps it waiting.
                write.fields.update(state)
                return
        if message.id is not None:
            self._queue(_Write("update", message, fields=state))

    def delete_message(self, message: Row) -> None:
        never_written = any(w.row is message and w.kind == "add" for w in self._waiting)
        self._waiting = [w for w in self._waiting if w.row is not message]
        if not never_written and message.id is not None:
            self._queue(_Write("delete", message))

    def _queue(self, write: _Write) -> Row:
        self._waiting.append(write)
        self.flush()
        return write.row

    # --- writing -----------------------------------------------------------------------

    def flush(self) -> HistoryError | None:
        """Write what waits, in order. A write the store may take later stays, with all after
        it (HistoryUnavailable); one it never will (its conversation was deleted meanwhile) is
        dropped. Returns, and keeps in `refusal`, the first refusal; None when all landed."""
        self.refusal = None
        if self.history.read_only:
            self._waiting.clear()  # never writable: the banner says so already
            return None
        while self._waiting:
            try:
                self._write(self._waiting[0])
            except HistoryUnavailable as exc:
                self.refusal = self.refusal or exc
                break
            except HistoryError as exc:
                self.refusal = self.refusal or exc
            self._waiting.pop(0)
        return self.refusal

    def _write(self, write: _Write) -> None:
        history, fields = self.history, write.fields
        if write.kind == "conversation":
            write.row.id = history.create_conversation(fields["title"])
        elif write.kind == "add":
            if write.conversation.id is None:  # its conversation could not be made
                raise HistoryError("a message of a conversation that was not saved")
            fields = dict(fields)
            if "parent" in fields:
                parent = fields.pop("parent")
                if parent is not None and parent.id is None:
                    raise HistoryError("a message after one that was not saved")
                fields["parent"] = parent.id if parent is not None else None
            write.row.id = history.add_message(write.conversation.id, fields.pop("role"),
                                               fields.pop("text"), **fields)
        elif write.kind == "update":
            fields = dict(fields)
            history.update_message(write.row.id, fields.pop("text"), **fields)
        else:
            history.delete_message(write.row.id)
