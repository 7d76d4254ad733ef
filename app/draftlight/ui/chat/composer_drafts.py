"""Each conversation keeps its own unsent text: the message box shows the open conversation's,
so words typed in one chat never wait, one Enter away, in another's box."""

from __future__ import annotations

from draftlight.ui.chat.composer import Composer


class ComposerDrafts:
    """What was typed and not sent, by conversation (None: the new conversation not yet sent).
    The window calls `show_for` whenever another conversation is shown."""

    def __init__(self, composer: Composer) -> None:
        self.composer = composer
        self._texts: dict[int | None, str] = {}
        self._shown: int | None = None  # whose text the box holds now

    def show_for(self, conversation_id: int | None) -> None:
        if conversation_id == self._shown:
            return
        typed = self.composer.toPlainText()
        if typed.strip():
            self._texts[self._shown] = typed
        else:
            self._texts.pop(self._shown, None)
        # A new conversation gets its id when its first message is sent: the box was emptied
        # by that send, so nothing is carried over to it.
        self._shown = conversation_id
        self.composer.setPlainText(self._texts.pop(conversation_id, ""))
        self.composer.moveCursor(self.composer.textCursor().MoveOperation.End)

    def forget(self, conversation_id: int) -> None:
        """The conversation was deleted: its unsent text goes with it."""
        self._texts.pop(conversation_id, None)
