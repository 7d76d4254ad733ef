"""The numbers in a reply's figures (its stats), as an import or the history gives them back:
each a bool, or an int or a finite float of at most 2**53 either way, which every use can hold
(a float() in a footer, a sum, a rate, SQLite's integers). A 4,000-digit integer or an Infinity
in an imported file went in fine, then raised OverflowError each time its conversation was shown
or exported. A figure that holds any other number is dropped whole: its reply then shows it as
not known, as an older reply's."""

from __future__ import annotations

import math
import re

LARGEST = 2 ** 53  # float holds every int up to here exactly; no count or time comes near it

# What a number out of bounds looks like in JSON text: a constant, an integer part of 16 digits
# or more, a large exponent. Text without any is passed as it is (the walk is for the rest).
_SUSPECT = re.compile(r"Infinity|NaN|(?<![.\d])\d{16}|[eE]\+?\d\d")


def number_problem(value) -> str | None:
    """Why `value` is no figure's number (None: it is one, or it is no number at all)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value}"
    if abs(value) > LARGEST:  # str() of a long int is refused past 4,300 digits: its bits say
        return (f"an integer of {int(value.bit_length() * math.log10(2)) + 1:,} digits"
                if isinstance(value, int) else f"{value:.3g}")
    return None


def held_problem(value) -> str | None:
    """number_problem for the first bad number anywhere inside `value` (lists and objects)."""
    waiting = [value]
    while waiting:
        item = waiting.pop()
        if isinstance(item, dict):
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
        elif (problem := number_problem(item)) is not None:
            return problem
    return None


def sane_figures(stats: dict) -> tuple[dict, list[str]]:
    """`stats` less each figure that holds a number out of bounds, and one line per figure
    dropped ("seconds: inf")."""
    kept, dropped = {}, []
    for name, value in stats.items():
        problem = held_problem(value)
        if problem is None:
            kept[name] = value
        else:
            dropped.append(f"{name}: {problem}")
    return kept, dropped


def may_hold_bad_numbers(raw: str) -> bool:
    """Whether stored JSON text may hold a number out of bounds (False: it holds none), asked
    before the walk: the history reads every reply's figures each time a conversation opens."""
    return _SUSPECT.search(raw) is not None
