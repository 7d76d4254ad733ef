"""The words for where a run's drafted tokens came from (its origin), and the footer's count of
the accepted tokens that were copied or guessed, by where from. No Qt here.

An origin is a run's RunOrigin (run_origin.py, merged by reply_builder.ReplyBuilder): a copy
from a message of the chat (its role, and "at" its index there, None for the system prompt),
from earlier in the same reply, from the Predicted Output, from the template's markup, or a
draft model's guess; None when it is not known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from draftlight.store.attachments import attachment_at
from draftlight.ui.flash.reply_figures import ReplyFigures
from draftlight.ui.flash.run_origin import RunOrigin

EXCERPT = 60  # characters of the source shown around a copied span, at most
MAX_P = 8  # probabilities listed for a run, at most


@dataclass(frozen=True)
class Source:
    """What an origin points at: its role ("user", "system", "assistant" or "reply"), its text
    and, for a user message, which of the user's messages it is (1 = the first)."""

    role: str
    text: str
    number: int = 0
    # how to name it outside the user's own chat ("the request's message 3" of a served
    # request, ui/chat/served_chat.py); "" for the chat's own words (place)
    place: str = ""


def origins_of(runs: list, figures: ReplyFigures | None) -> list[RunOrigin | None]:
    """The recorded origins of a finished reply, one per run; a reply saved without them (or
    with a table that does not match its runs) has every origin unknown."""
    table = figures.origins if figures is not None else None
    if table is None or len(table) != len(runs):
        return [None] * len(runs)
    return list(table)


def excerpt(text: str, start: int, end: int, width: int = EXCERPT) -> str:
    """text[start:end] with some context either side, on one line, "…" where it was cut."""
    if end - start >= width:
        left, right = start, start + width - 1
    else:
        # The context either side, and what one side cannot use goes to the other.
        left = max(0, start - (width - (end - start)) // 2)
        right = min(len(text), left + width)
        left = max(0, right - width)
    shown = " ".join(text[left:right].split())
    return ("…" if left > 0 else "") + shown + ("…" if right < len(text) else "")


def place(source_role: str, number: int = 0) -> str:
    if source_role == "user":
        return f"your message {number}" if number else "your message"
    return {"system": "the system prompt", "assistant": "an earlier reply",
            "reply": "this reply, earlier"}.get(source_role, "an earlier message")


def describe(origin: RunOrigin | None, source: Source | None) -> str:
    """One line: "copied from your message 2: '…context…'", "guessed by X, which gave these
    tokens probabilities 0.93, 0.88"."""
    if origin is None:
        return ""
    kind = origin.kind
    if kind == "model":
        name = origin.name or "the draft model"
        p = origin.p
        if p:
            listed = ", ".join(f"{v:.2f}" for v in p[:MAX_P]) + (", …" if len(p) > MAX_P else "")
            return f"guessed by {name}, which gave these tokens probabilities {listed}"
        if origin.text:
            return f"guessed by {name}, which proposed '{' '.join(origin.text.split())}'"
        return f"guessed by {name}"
    if kind == "template":
        return "copied from the chat template"
    if kind == "prediction":
        if origin.source:  # a file attached to be edited, an earlier version's answer
            edited = " (the file being edited)" if origin.file is not False else ""
            return f"copied from {origin.source}{edited}"
        return "copied from the earlier answer (the one Regenerate replaced)"
    if kind == "reply":
        where = place("reply")
    elif kind == "message" and source is not None and source.place:
        where = source.place
    elif kind == "message":
        where = place(origin.role or "", source.number if source else 0)
    else:
        return ""
    start, end = origin.start, origin.end
    if (source is None or start is None or end is None
            or not 0 <= start <= end <= len(source.text)):
        return f"copied from {where}"
    attached = attachment_at(source.text, start) if kind == "message" else None
    if attached is not None:  # inside a file attached to that message: the file, the line
        name, line, page = attached  # (a PDF's page rather than its line)
        where = f"{name}, {f'page {page}' if page else f'line {line}'} (attached to {where})"
    return f"copied from {where}: '{excerpt(source.text, start, end)}'"


SHARES = {"user": "copied from your messages", "system": "copied from the system prompt",
          "assistant": "copied from earlier replies", "reply": "copied from earlier in this reply",
          "model": "guessed by the draft model",
          "request": "copied from the request's messages", "tool": "copied from tool results"}
FILE = "file:"  # a share's key for a file: FILE + its name (attached, or the one edited)
PREDICTION = "prediction:"  # a share's key for a Predicted Output that is no file


def category(origin: RunOrigin | None) -> str | None:
    """Which of SHARES an origin counts for (None: none; a prediction is keyed by share_key)."""
    if origin is None:
        return None
    if origin.kind == "message":
        return origin.role if origin.role in SHARES else None
    return origin.kind if origin.kind in ("reply", "model") else None


def share_key(origin: RunOrigin | None, source: Source | None) -> str | None:
    """What a run's tokens count for in the footer: its category, or the file it was copied
    from. A file being edited is both the Predicted Output and attached to the message: either
    way its tokens were copied from that file, and the footer says it once."""
    if origin is not None and origin.kind == "prediction":
        name = origin.source or "the earlier answer"
        return (FILE if origin.source and origin.file is not False else PREDICTION) + name
    key = category(origin)
    if key is not None and origin.kind == "message" and source is not None and source.place:
        return "tool" if origin.role == "tool" else "request"  # a served request's message
    if key == "user":
        return _attached_file(origin, source) or key
    return key


def summary(runs: list, origins: list,
            resolve: Callable[[RunOrigin], Source | None] = lambda origin: None) -> str:
    """The footer's words for where the accepted tokens came from, in tokens like the accepted
    count they follow (each run's tokens count for its origin, as hovering it tells): the
    largest share, and a Predicted Output's where that is another, e.g. "99 of them copied
    from inventory.py", "40 of them guessed by the draft model, 30 copied from your earlier
    answer (version 1)"; "" when nothing is known. `resolve` finds an origin's message (to name
    a file attached to it)."""
    tokens: dict[str, int] = {}
    for (_start, _end, count), origin in zip(runs, origins):
        key = share_key(origin, resolve(origin) if origin is not None else None)
        if key is not None and count > 0:
            tokens[key] = tokens.get(key, 0) + count
    if not tokens:
        return ""
    largest = max(tokens, key=tokens.get)
    predicted = dict.fromkeys(share_key(o, None) for o in origins
                              if o is not None and o.kind == "prediction")
    also = [key for key in predicted if key != largest][:1]  # what was given to edit or retry
    return (f"{tokens[largest]} of them {_share_words(largest)}"
            + "".join(f", {tokens[key]} {_share_words(key)}" for key in also))


def _share_words(key: str) -> str:
    for prefix in (FILE, PREDICTION):
        if key.startswith(prefix):
            return f"copied from {key.removeprefix(prefix)}"
    return SHARES[key]


def _attached_file(origin: RunOrigin, source: Source | None) -> str | None:
    start = origin.start
    if source is None or start is None or not 0 <= start <= len(source.text):
        return None
    attached = attachment_at(source.text, start)
    return FILE + attached[0] if attached else None
