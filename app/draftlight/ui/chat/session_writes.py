"""The chat session's writes to the history, failing softly. Writes go through a WriteQueue:
when the history does not answer (another Draftlight holds its lock, the disk is full) the
reply still ends, the error is one banner line, and what was not saved stays in memory and is
written, in order, when a retry every RETRY_MS finds it answering. ChatSession (session.py)
extends SessionWrites."""

from __future__ import annotations

from draftlight.store.history import HistoryUnavailable


class SessionWrites:
    """Uses the session's history, writes (a WriteQueue), retry timer, signals (error,
    saved_again, conversations_changed, current_changed) and conversation_id."""

    def save(self, write, *args, **kwargs):
        """One of self.writes' writes; None when the history is read-only (nothing is kept)."""
        if self.history.read_only:
            return None
        result = write(*args, **kwargs)
        self._after_writing()
        return result

    def retry_writes(self) -> None:
        """Timer tick while writes wait: try them again."""
        self.writes.flush()
        self._after_writing()

    def _after_writing(self) -> None:
        refusal = self.writes.refusal
        if isinstance(refusal, HistoryUnavailable):
            self._retry.start()
            if self._kept_line is None:  # one line for the whole outage, not one per write
                reason = str(refusal)
                self._kept_line = (f"{reason[:1].upper()}{reason[1:]}: this conversation is "
                                   f"kept here and saved when the history answers again.")
                self.error.emit(self._kept_line)
            return
        if refusal is not None:
            self.error.emit(str(refusal))
        if not self.writes.waiting and self._kept_line is not None:
            line, self._kept_line = self._kept_line, None
            self._retry.stop()
            self.saved_again.emit(line)
            self.conversations_changed.emit()
            self.current_changed.emit(self.conversation_id)
