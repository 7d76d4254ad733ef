"""Honest about the context (issue 39, part 2): before a message with attached files is sent, its
size is held against the context window, with room for the reply. What does not fit is never
cut silently: the message is not sent, the banner gives the numbers and one choice, and the
typed message and its files stay where they are.

    a larger context, when this machine's free memory holds one (store.memory's fit rule, as
    the automatic context uses it): Settings' context is set to it and the model reloads;
    else, for a PDF, only the pages that fit, named on its chip ("pages 1-7 of 12");
    else only the numbers.

Sizes here are estimates (CHARS_PER_TOKEN characters a token, as the chips show them); the
engine counts exactly when the message is sent, and refuses, with its own numbers, a message
that still does not fit. Older turns are not counted: the engine leaves the oldest out when a
conversation outgrows the context, and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from draftlight.store.attachments import Attachment
from draftlight.store.documents import PAGE_MARK
from draftlight.ui.chat.attachment_tray import CHARS_PER_TOKEN
from draftlight.engine_kind import EngineKind

HEADER_TOKENS = 16  # a file's header and fences


@dataclass(frozen=True)
class Shortfall:
    needed: int  # estimated tokens: the message, its files and the reply's room
    n_ctx: int
    line: str  # the numbers, in a sentence


def estimate(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def shortfall(message: str, attachments: list[Attachment], n_ctx: int,
              reply_tokens: int) -> Shortfall | None:
    """None when the message, its files and a reply of `reply_tokens` fit in `n_ctx`."""
    files = sum(estimate(a.text) + HEADER_TOKENS for a in attachments)
    reserve = min(reply_tokens, n_ctx // 4)  # the engine's own rule leaves at least this
    needed = files + estimate(message) + reserve
    if not attachments or not n_ctx or needed <= n_ctx:
        return None
    what = (f"The attached file{'s are' if len(attachments) > 1 else ' is'} about "
            f"{files:,} tokens; with your message and room for a {reserve:,}-token reply "
            f"that is about {needed:,}, more than the {n_ctx:,}-token context.")
    return Shortfall(needed, n_ctx, what)


def pages_that_fit(attachment: Attachment, tokens: int) -> Attachment | None:
    """The first pages of a PDF attachment that fit in `tokens`, as an attachment named for
    them; None when it is not a PDF, or not even its first page fits, or all of it does."""
    if attachment.pages is None:
        return None
    marks = [PAGE_MARK.format(n) for n in range(1, attachment.pages + 1)]
    kept, text = 0, ""
    for number, mark in enumerate(marks, 1):
        end = attachment.text.find("\n\n" + marks[number], 0) if number < len(marks) else -1
        candidate = attachment.text[:end] if end >= 0 else attachment.text
        if estimate(candidate) + HEADER_TOKENS > tokens:
            break
        kept, text = number, candidate
    if kept == 0 or kept == attachment.pages:
        return None
    return replace(attachment, text=text, pages=kept, total_pages=attachment.pages)


def fits_or_offer(window, text: str) -> bool:
    """True when `text` and the window's attachments fit (send them); else False, with the
    typed text back in the message box and the banner's numbers and choice."""
    tray = window.attachments
    short = shortfall(text, tray.attachments, window.models.n_ctx, window.settings.max_tokens)
    if short is None:
        return True
    window.composer.setPlainText(text)  # nothing typed is lost
    larger = larger_context(window, short.needed)
    if larger:
        window.banner.show_message(
            f"{short.line} A {larger:,}-token context fits in this machine's free memory.",
            f"Use {larger:,} tokens",
            lambda: window.apply_settings(replace(window.settings, n_ctx=larger)))
        return False
    pdfs = [a for a in tray.attachments if a.pages is not None]
    if pdfs:
        pdf = max(pdfs, key=lambda a: len(a.text))
        room = short.n_ctx - (short.needed - estimate(pdf.text) - HEADER_TOKENS)
        trimmed = pages_that_fit(pdf, room)
        if trimmed is not None:
            def send_pages() -> None:
                tray.replace(pdf, trimmed)
                typed = window.composer.toPlainText().strip()
                window.composer.clear()
                window.send(typed)

            window.banner.show_message(
                f"{short.line} Pages 1-{trimmed.pages} of {pdf.name}'s {pdf.pages} fit.",
                f"Send pages 1-{trimmed.pages}", send_pages)
            return False
    window.banner.show_message(f"{short.line} Remove a file, or attach a shorter one.")
    return False


def larger_context(window, needed: int) -> int | None:
    """The largest context this machine's free memory holds for the loaded models, when it is
    larger than the one loaded and holds `needed` tokens; None otherwise (or for a remote
    server, whose context is its own)."""
    models = window.models
    if models.engine_kind == EngineKind.REMOTE or not models.target_path:
        return None
    from draftlight.store.memory import fitting_context
    choice = fitting_context(models.target_path, models.draft_path)
    return choice.n_ctx if choice.n_ctx > models.n_ctx and choice.n_ctx >= needed else None
