"""A conversation's time in words, as a chat list says it: "14:02" today, "Yesterday", the weekday
within a week, else the date (with its year when it is not this one); the long form, in a row's
tip, adds the time of day. Each date's words are worked out once (a long list has thousands of
rows)."""

from __future__ import annotations

import time
from datetime import date
from functools import lru_cache

from PySide6.QtCore import QDate, QDateTime, QLocale


def when(stamp: float, now: float | None = None, *, long: bool = False) -> str:
    """A conversation's time as a chat list says it: "14:02" today, "Yesterday", the weekday
    within a week, else the date (with the year when it is not this one); `long` adds the
    time of day to the older ones."""
    day = date.fromtimestamp(int(stamp))  # local time, as Qt's
    today = date.fromtimestamp(int(now if now is not None else time.time()))
    days = (today - day).days
    if days not in (0, 1) and not long:  # most rows of a long list: said once per date
        return _day_words(day, today)
    clock = QLocale().toString(QDateTime.fromSecsSinceEpoch(int(stamp)).time(),
                               QLocale.ShortFormat)
    if days == 0:
        return f"today {clock}" if long else clock
    words = "Yesterday" if days == 1 else _day_words(day, today)
    return f"{words} {clock}" if long else words


@lru_cache(maxsize=1024)
def _day_words(day: date, today: date) -> str:
    """when()'s words for a day neither today nor yesterday: the weekday within a week, else
    the date (with its year when it is not this one)."""
    at = QDate(day.year, day.month, day.day)
    locale = QLocale()
    if 1 < (today - day).days < 7:
        return locale.dayName(at.dayOfWeek(), QLocale.LongFormat)
    return locale.toString(at, "d MMM" if day.year == today.year else "d MMM yyyy")
