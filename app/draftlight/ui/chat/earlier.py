"""A long conversation opens with its newest messages built and the rest kept as text: 72
message views of a 30,000-token conversation took 0.7 s to build and lay out (`draftlight bench
scale`); the newest ones fill the screen in a tenth of that. The earlier ones are built a page at
a time as the conversation is scrolled to its top (or its "Show earlier messages" is clicked),
or at once down to a message that is asked for (a search hit, a run's source)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

PAGE_CHARS = 8_000  # the newest messages down to this much text are built; then pages of it
PAGE_LEAST = 4  # ... and at least this many messages


@dataclass
class EarlierMessage:
    """A message of the open conversation not built yet: what its view will be made from."""
    role: str
    text: str
    options: Callable[[], dict] = dict  # MessageView's (runs, figures, status, mode), when built
    message_id: object = None  # its history row (session.Row), as a view's message_id


def page_start(texts: list[str], end: int | None = None) -> int:
    """Where a page ending before `end` (default: all of them) begins: back from `end` until
    PAGE_CHARS of text and PAGE_LEAST messages are in it."""
    end = len(texts) if end is None else end
    start, chars = end, 0
    while start > 0 and (chars < PAGE_CHARS or end - start < PAGE_LEAST):
        start -= 1
        chars += len(texts[start])
    return start
