"""The words and numbers shown for a reply's statistics (live line and per-reply footer), and the
names of the speculation modes."""

from __future__ import annotations

from draftlight.engine.reply.events import Stats
from draftlight.ui.flash.reply_figures import Compared, ReplyFigures


def live_line(stats: Stats | None, tokens: int, passes: int, accepted: int,
              seconds: float) -> str:
    """While a reply streams. `stats` is the engine's latest when it gives them; otherwise the
    figures come from the pieces seen so far."""
    if stats is not None:
        return footer_line(stats, live=True)
    rate = tokens / seconds if seconds > 0 else 0.0
    per_pass = tokens / passes if passes else 0.0
    return (f"{tokens} tokens · {rate:.1f} tok/s · {accepted} accepted from drafts · "
            f"{per_pass:.2f} tokens/pass")


def finished_footer_line(figures: ReplyFigures, copied: str = "") -> str:
    """The footer of a finished reply, with what Compare found for it, when it was compared
    (`copied`: as footer_line)."""
    line = footer_line(figures.stats, prediction_from=figures.prediction_from or None,
                       copied=copied)
    compared = compared_line(figures.compared)
    return f"{line}\n{compared}" if compared else line


def stored_footer_line(stored) -> str:
    """The footer of a reply from the figures the history stored (an export's edge), "" for
    what is not a reply's figures."""
    figures = ReplyFigures.from_record(stored)
    return finished_footer_line(figures) if figures is not None else ""


def compared_line(compared: Compared | None) -> str:
    """"Compared with speculation off: 1.42x faster decoding (rounds 1.30-1.55x, median of 3),
    identical text", or "" for no comparison."""
    if compared is None:
        return ""
    text = "identical text" if compared.identical else "the texts differ"
    line = (f"Compared with speculation off: {compared.speedup:.2f}x decoding speed (rounds "
            f"{compared.low:.2f}-{compared.high:.2f}x, median of {compared.rounds}), {text}")
    if compared.inconclusive:
        line += f"; inconclusive: {compared.inconclusive}"
    return line


def footer_line(stats: Stats, live: bool = False, prediction_from: str | None = None,
                copied: str = "") -> str:
    """`prediction_from`: the file edited, when it was the Predicted Output (else the answer
    Regenerate replaced was). `copied`: where the accepted tokens came from, counted over the
    reply's runs ("72 of them copied from inventory.py", origin_words.summary); without it, the
    engine's count of those the Predicted Output drafted. Every count after "accepted" is of
    tokens, and of the accepted ones: a reader can add them up."""
    parts = [f"{stats.new_tokens} tokens", f"{stats.tokens_per_second:.1f} tok/s"]
    read = stats.prompt_tokens - stats.reused_prompt_tokens
    if not live and read > 0 and stats.prefill_seconds > 0:  # reading apart from writing
        parts[1] += " writing"
        parts.append(f"read {read:,} tokens at {read / stats.prefill_seconds:,.0f} tok/s")
    if stats.drafted:
        accepted = (f"accepted {stats.accepted} of {stats.drafted} drafted tokens "
                    f"({100 * stats.acceptance_rate:.0f}%)")
        if not copied and stats.prediction_drafted:  # the answer Regenerate replaced, a file
            source = prediction_from if isinstance(prediction_from, str) else "the earlier answer"
            copied = f"{stats.prediction_accepted} of them copied from {source}"
        parts.append(f"{accepted}, {copied}" if copied else accepted)
    else:
        parts.append("nothing drafted")
    parts.append(f"{stats.mean_accepted_length:.2f} tokens/pass")
    parts.append(f"draft {stats.draft_seconds:.2f} s / verify {stats.verify_seconds:.2f} s")
    if not live:
        mode = stats.mode.label
        if stats.draft_kind:  # "cross-vocabulary": the draft model drafts through text
            mode += f" ({stats.draft_kind})"
        parts.append(mode)
        if stats.stop_reason in ("max_tokens", "context_full"):
            parts.append("stopped: " + stats.stop_reason.replace("_", " "))
        for note in (stats.slower_note,  # a mode that ran slower than plain: why
                     stats.identity_note,
                     stats.rollback_note,  # a recurrent target: what a rejected draft costs
                     stats.engine_note):  # a server engine: what it could not tell
            if note:
                parts.append(note)
    return " · ".join(parts)


def reading_line(read: int, total: int, seconds_left: float | None) -> str:
    """While a long prompt is read: how far, and how long it should take still."""
    if read <= 0:
        return f"Reading what was sent: {total:,} tokens…"
    line = f"Reading what was sent: {read:,} of {total:,} tokens"
    if seconds_left is not None and read < total:
        line += f" · about {_duration(seconds_left)} left"
    return line


def stopped_reading_line(read: int, total: int) -> str:
    """A reply stopped while its prompt was read: what of it is kept for the next message."""
    return (f"Stopped while reading: {read:,} of {total:,} tokens were read, and are kept: "
            "the next message goes on from there.")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"
