"""Edit in the window: a user message's Edit button (or Up in an empty message box, for the
last one) puts its words in the message box; Send then makes a new version of it (branches.py)
and the first version stays, behind ‹ ›. Cancel in the banner, or a new conversation, leaves
the message as it was."""

from __future__ import annotations

from draftlight.ui.chat import branches


class MessageEdit:
    def __init__(self, window) -> None:
        self.window = window
        self.view = None  # the message being edited
        self.line = ""  # the banner's line about it

    def start(self, view) -> None:
        window = self.window
        if window.session.streaming or view not in window.chat.messages:
            return
        self.view = view
        window.composer.setPlainText(view.text[view.own_start:])
        window.composer.moveCursor(window.composer.textCursor().MoveOperation.End)
        window.composer.setFocus()
        number = window.chat.user_number(window.chat.index_of(view))
        self.window.banner.withdraw(self.line)
        self.line = (f"Editing your message {number}: Send asks again, and the first version "
                     "stays (‹ › switches between them).")
        window.banner.show_message(self.line, "Cancel", self.cancel)

    def start_last(self) -> None:
        last = next((v for v in reversed(self.window.chat.messages) if v.role == "user"), None)
        if last is not None:
            self.start(last)

    def cancel(self) -> None:
        """Stop editing (Cancel, a new conversation): the message box empties; another
        problem the banner shows stays."""
        if self.view is not None:
            self.view = None
            self.window.composer.clear()
            self.window.banner.withdraw(self.line)

    def send(self, text: str) -> bool:
        """Send `text` as the new version, if a message is being edited; False if none is."""
        if self.view is None:
            return False
        view, self.view = self.view, None
        self.window.banner.withdraw(self.line)
        return branches.edit(self.window.session, view, text, self.window.current_mode())
