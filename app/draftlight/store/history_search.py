"""Search over every conversation, off the GUI thread (issue 40, part 4): titles, and message
text through the trigram full-text index (messages_fts), on a read-only connection of its own,
so the window's thread never waits for a scan. Each hit names the first message that matched,
in any branch, with its line and where the match lies in it. Which messages hold a search, and
its bounds, are search_match.py's."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from draftlight.store.history import HistoryError
from draftlight.store.search_match import (SHORTEST_TEXT_SEARCH, messages_holding, searchable,
                                           title_pattern)

LINE_WIDTH = 80  # characters of the matching line shown around the match
LIMIT = 200  # conversations at most


@dataclass(frozen=True)
class Hit:
    conversation_id: int
    title: str
    updated: float
    message_id: int | None  # the first message that matched; None when only the title did
    line: str = ""  # the matching line, cut around the match
    start: int = 0  # the match in `line`
    end: int = 0


def search(path: Path, text: str) -> list[Hit]:
    """Conversations whose title or messages hold `text` (any case), newest first.

    Raises:
        SearchTooLong: `text` is over search_match.LONGEST_SEARCH characters.
        HistoryError: the file cannot be read."""
    text = text.strip()
    if not text or not searchable(text):
        return []
    try:
        db = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        raise HistoryError(f"search could not read the history ({exc})") from exc
    try:
        conversations = db.execute(
            "SELECT id, title, updated FROM conversations ORDER BY updated DESC, id DESC"
        ).fetchall()
        # the first message of each conversation that holds it, as the line shown: the
        # messages themselves are let go one by one
        first: dict[int, tuple] = {}
        if len(text) >= SHORTEST_TEXT_SEARCH:
            for conversation_id, message_id, message in messages_holding(db, text):
                if conversation_id not in first:
                    first[conversation_id] = (message_id, *matching_line(message, text))
        titled = {row[0] for row in db.execute(
            "SELECT id FROM conversations WHERE title LIKE ? ESCAPE '\\'", (title_pattern(text),))}
    except sqlite3.Error as exc:
        raise HistoryError(f"search could not read the history ({exc})") from exc
    finally:
        db.close()
    hits = []
    for conversation_id, title, updated in conversations:
        if conversation_id in first:
            hits.append(Hit(conversation_id, title, updated, *first[conversation_id]))
        elif conversation_id in titled:
            hits.append(Hit(conversation_id, title, updated, None))
        if len(hits) >= LIMIT:
            break
    return hits


def matching_line(message: str, text: str) -> tuple[str, int, int]:
    """(the line of `message` holding `text`, cut to about LINE_WIDTH characters around it,
    where `text` starts and ends in what is returned)."""
    at = message.lower().find(text.lower())
    if at < 0:
        return " ".join(message.split())[:LINE_WIDTH], 0, 0
    begin = message.rfind("\n", 0, at) + 1
    finish = message.find("\n", at + len(text))
    finish = len(message) if finish < 0 else finish
    left = max(begin, at - (LINE_WIDTH - len(text)) // 2)
    right = min(finish, max(at + len(text), left + LINE_WIDTH))
    prefix = "…" if left > begin else ""
    line = prefix + message[left:right] + ("…" if right < finish else "")
    start = len(prefix) + at - left
    return line, start, start + len(text)
