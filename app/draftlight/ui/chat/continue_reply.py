"""Continue: the latest reply, stopped or cut at its length limit, written on from its words.

The engine is sent the conversation ending with that reply's text, and goes on from it (a
conversation ending with the assistant's words is continued: engine/text/chat_template.py); the
KV cache still holds what it wrote, so only the tokens after a change are evaluated again.
The reply keeps its row in the history, its runs, their origins and its strip; its figures
become the sum of both parts (Stats.after).
"""

from __future__ import annotations

from draftlight.store.history import INTERRUPTED
from draftlight.ui.flash.message_view import MessageView
from draftlight.ui.flash.origin_words import origins_of
from draftlight.ui.flash.passes import passes_of
from draftlight.ui.flash.reply_builder import ReplyBuilder


def continuable(view: MessageView | None) -> bool:
    """Whether `view` is a reply that stopped before its end: by Stop (or a closed window),
    or at its token limit."""
    return (view is not None and view.role == "assistant" and not view.streaming
            and bool(view.text.strip())
            and (view.status == INTERRUPTED
                 or (view.figures is not None
                     and view.figures.stats.stop_reason == "max_tokens")))


def resume(view: MessageView, builder: ReplyBuilder, earlier: MessageView) -> None:
    """`view` (a new streaming view in the place of `earlier`) and `builder` start from what
    `earlier` shows; nothing of it flashes again."""
    table = [[p.end, p.tokens, p.accepted, p.drafted or 0]
             for p in passes_of(earlier.text, earlier.runs, earlier.figures)]
    builder.carry_on(earlier.text, earlier.runs, origins_of(earlier.runs, earlier.figures), table)
    view.stream_update(builder.text, builder.runs, flash=False)
    view.set_live_passes(builder.pass_table)

