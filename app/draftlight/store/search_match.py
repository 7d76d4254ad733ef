"""Which messages hold a search, in memory linear in what is read (issue 76, hole 6).

The trigram index (messages_fts) was asked for the search as one phrase: every trigram of it a
term, each with the positions of all its matches. Over repetitive text that is the search's
length times the message's (a 400-character search over a 2 MB message: 11 s and 787 MB; one of
a million characters was killed at 21.5 GB). The index is now asked only which messages hold a
few of the search's distinct trigrams, each asked once; each of those is then read, one at a
time, and kept only if it holds the whole search (str.find, linear in the message).

A search is at most LONGEST_SEARCH characters (SearchTooLong beyond, one line); one holding a
NUL (where SQLite's text functions stop) or a lone surrogate (which no stored text can hold,
and which sqlite3 cannot even send) matches nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from draftlight.store.history_file import HistoryError

LONGEST_SEARCH = 100_000  # characters: a pasted page; a longer search is refused with one line
INDEX_TERMS = 16  # distinct trigrams of a search the index is asked for, at most
SHORTEST_TEXT_SEARCH = 3  # a trigram index cannot match less: shorter searches look at titles
# A title is never longer: a longer search can only be in a message (SQLite refuses LIKE
# patterns over 50,000 bytes, and a 100,000-character search failed as if it were a write)
LONGEST_TITLE_SEARCH = 1000


class SearchTooLong(HistoryError):
    """A search over LONGEST_SEARCH characters."""


def searchable(text: str) -> bool:
    """Whether `text` can be found at all (a NUL or a lone surrogate: nowhere).

    Raises:
        SearchTooLong: `text` is longer than LONGEST_SEARCH characters."""
    if len(text) > LONGEST_SEARCH:
        raise SearchTooLong(f"a search holds at most {LONGEST_SEARCH:,} characters; this one "
                            f"has {len(text):,}")
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def title_pattern(text: str) -> str | None:
    """A LIKE pattern (ESCAPE '\\') for titles holding `text`; None (LIKE NULL matches
    nothing) for a search longer than any title."""
    if len(text) > LONGEST_TITLE_SEARCH:
        return None
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def index_query(text: str) -> str:
    """An FTS5 query for the messages holding up to INDEX_TERMS of `text`'s distinct trigrams
    (spread over it), each quoted: no FTS5 syntax, and no trigram asked for twice."""
    distinct = list(dict.fromkeys(text[at:at + 3] for at in range(len(text) - 2)))
    picked = distinct[::max(1, -(-len(distinct) // INDEX_TERMS))]
    return " AND ".join('"' + trigram.replace('"', '""') + '"' for trigram in picked)


def messages_holding(db: sqlite3.Connection, text: str, *, indexed: bool = True
                     ) -> Iterator[tuple[int, int, str]]:
    """(conversation id, message id, text) of each message that holds `text` (any case),
    oldest first; `text` has SHORTEST_TEXT_SEARCH characters or more. `indexed`: False for a
    version 1 file opened read-only, which has no index: every message is read."""
    if indexed:
        rows = db.execute("SELECT conversation_id, id, text FROM messages WHERE id IN (SELECT "
                          "rowid FROM messages_fts WHERE messages_fts MATCH ?) ORDER BY id",
                          (index_query(text),))
    else:
        rows = db.execute("SELECT conversation_id, id, text FROM messages ORDER BY id")
    folded = text.lower()
    for conversation_id, message_id, message in rows:
        if folded in message.lower():
            yield conversation_id, message_id, message
