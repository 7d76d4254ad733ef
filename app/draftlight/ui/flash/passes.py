"""The target passes of a reply, for the acceptance strip. No Qt here.

A reply saved since the strip exists has its passes in its figures (ReplyFigures.passes: end,
tokens, accepted, drafted per pass, see reply_builder.ReplyBuilder). Older replies only have
their runs: each accepted run and the target's own token after it (taken as the next word) make
one pass, and every other word is taken for one plain pass. That is an estimate (a word may be
several tokens), so their cells say "drafted: not recorded".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from draftlight.engine.auto.adaptive import WHY_NOT
from draftlight.ui.flash.reply_figures import ReplyFigures

_WORD = re.compile(r"\s*\S+|\s+")


@dataclass(frozen=True)
class Pass:
    start: int  # characters of the reply text
    end: int
    tokens: int  # tokens it produced: accepted + the target's own
    accepted: int
    drafted: int | None  # None: not recorded (an older reply)
    why: str = ""  # auto's reason it drafted nothing (adaptive.WHY_NOT's keys), if recorded
    # The reply's last pass, which also made the end token the reply does not show (counted
    # in `tokens`, as the footer's tokens/pass counts it: the cells and the footer agree)
    ends: bool = False


def from_table(table, text_length: int) -> list[Pass] | None:
    """Passes from a reply's recorded table (ReplyFigures.passes), or None if it does not fit
    the text."""
    out, start = [], 0
    for end, tokens, accepted, drafted in table:
        if not start <= end <= text_length:
            return None
        out.append(Pass(start, end, tokens, accepted, drafted))
        start = end
    return out


def estimated(text: str, runs: list[list[int]]) -> list[Pass]:
    out: list[Pass] = []
    position = 0
    for index, (start, end, tokens) in enumerate(runs):
        out += _word_passes(text, position, start)
        # The target's own token closes the run's pass: the next word, up to the next run.
        limit = runs[index + 1][0] if index + 1 < len(runs) else len(text)
        word = _WORD.match(text, end, limit)
        close = word.end() if word else end
        out.append(Pass(start, close, tokens + (1 if close > end else 0), tokens, None))
        position = close
    out += _word_passes(text, position, len(text))
    return out


def _word_passes(text: str, start: int, end: int) -> list[Pass]:
    return [Pass(m.start(), m.end(), 1, 0, None) for m in _WORD.finditer(text, start, end)]


def passes_of(text: str, runs: list[list[int]], figures: ReplyFigures | None) -> list[Pass]:
    table = figures.passes if figures is not None else None
    passes = from_table(table, len(text)) if table is not None else None
    recorded = passes is not None
    if passes is None:
        passes = estimated(text, runs)
    # The end token counts, as in the footer's tokens/pass: in the last cell where its pass also
    # wrote text, else in a cell of its own at the end (a pass that made only the end token)
    if passes and figures is not None and figures.stats.stop_reason == "eos":
        if len(passes) == figures.stats.target_passes:
            passes[-1] = replace(passes[-1], tokens=passes[-1].tokens + 1, ends=True)
        elif len(passes) + 1 == figures.stats.target_passes:
            passes.append(Pass(len(text), len(text), 1, 0, 0 if recorded else None, ends=True))
    return with_reasons(passes, figures.passes_why) if recorded else passes


def with_reasons(passes: list[Pass], reasons: tuple[str, ...] | list[str]) -> list[Pass]:
    """`passes` with auto's reasons for those that drafted nothing (ReplyFigures.passes_why)."""
    reasons = list(reasons) + [""] * (len(passes) - len(reasons))
    return [replace(p, why=why) if why in WHY_NOT and p.drafted == 0 else p
            for p, why in zip(passes, reasons)]


def describe(p: Pass, text: str) -> str:
    """The hover text of a cell: what the pass wrote and how its draft fared."""
    shown = text[p.start:p.end].strip() or ("(the end of the reply)" if p.ends and p.start == p.end
                                             else "(whitespace)")
    if len(shown) > 80:
        shown = shown[:77] + "…"
    if p.drafted is None:
        drafted = "drafted: not recorded"
    elif p.drafted == 0:
        drafted = "nothing drafted" + (f": {WHY_NOT[p.why]}" if p.why in WHY_NOT else "")
    else:
        drafted = f"{p.accepted} of {p.drafted} drafted accepted"
    wrote = f"{p.tokens} token" + ("" if p.tokens == 1 else "s")
    if p.ends:
        wrote += " (the last one ends the reply)"
    return f"“{shown}”\n{wrote} in one pass · {drafted}"
