"""The words for where a run's drafted tokens came from (its origin), and the footer's share of
a reply that was copied or guessed. No Qt here.

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
          "assistant": "copied from earlier replies", "reply": "copied from earlier in it",
          "model": "guessed by the draft model"}


def category(origin: RunOrigin | None) -> str | None:
    """Which of SHARES an origin counts for (None: none)."""
    if origin is None:
        return None
    if origin.kind == "message":
        return origin.role if origin.role in SHARES else None
    return origin.kind if origin.kind in ("reply", "model") else None


def summary(text_length: int, runs: list, origins: list,
            resolve: Callable[[RunOrigin], Source | None] = lambda origin: None) -> str:
    """The footer's phrase: the largest share of the reply's characters by origin, e.g.
    "41% of this reply was copied from your messages", or "from report.pdf" where the copied
    text lies in a file attached to them (`resolve` finds an origin's message); "" when
    nothing is known."""
    chars: dict[str, int] = {}
    for (start, end, _tokens), origin in zip(runs, origins):
        key = category(origin)
        if key == "user":
            key = _attached_file(origin, resolve(origin)) or key
        if key is not None:
            chars[key] = chars.get(key, 0) + end - start
    if not chars or text_length <= 0:
        return ""
    key = max(chars, key=chars.get)
    share = round(100 * chars[key] / text_length)
    words = SHARES.get(key) or f"copied from {key.removeprefix(FILE)}"
    return f"{share}% of this reply was {words}" if share >= 1 else ""


FILE = "file:"  # summary()'s key for the text of an attached file: FILE + its name


def _attached_file(origin: RunOrigin, source: Source | None) -> str | None:
    start = origin.start
    if source is None or start is None or not 0 <= start <= len(source.text):
        return None
    attached = attachment_at(source.text, start)
    return FILE + attached[0] if attached else None
