"""Enter (or Send) where nothing can be sent now: the message stays in the box, and the banner
says why and what ends the wait; the line goes once it is no longer true."""

from __future__ import annotations


class HeldMessage:
    """Told by the window when the message box held its text back (Composer.held)."""

    def __init__(self, window) -> None:
        self.window = window
        self.line = ""  # the banner's line about it, while it shows

    def explain(self) -> None:
        window = self.window
        session = window.session
        self.withdraw()
        if session.streaming:
            stream = session.stream
            here = (stream.conversation is None and session.conversation is None
                    or stream.conversation is not None
                    and stream.conversation.id == session.conversation_id)
            where = "here" if here else "in another conversation"
            self.line = (f"A reply is being written {where}: your message stays in the box "
                         "and can be sent when it ends (Stop ends it now).")
            window.banner.show_message(self.line, "Stop the reply", session.stop)
        elif not window.ready or window.loading:
            self.line = ("The model is still loading: your message stays in the box and can be "
                         "sent once it is ready.")
            window.banner.show_message(self.line)

    def withdraw(self, *_args) -> None:
        """A reply ended, or a model is ready: what the line said holds no more."""
        if self.line:
            self.window.banner.withdraw(self.line)
            self.line = ""
