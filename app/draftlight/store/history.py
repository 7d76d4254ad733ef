"""Chat history in SQLite (paths.data_dir()/history.sqlite3). Imports no Qt.

Each assistant message keeps its provenance: the runs of accepted draft tokens, as
[[start, end, tokens], ...] with start/end character offsets into the message text (Python str
indices) and tokens the run's length in tokens; text outside the runs came from the target. Its
figures are kept as JSON ("stats"): the window writes its ReplyFigures' record() (Stats.to_dict(),
with "passes", one per target pass, and "origins", one per run: where its drafted tokens came
from) and reads it back with from_record; older replies lack some and show them as not known.

A reply is saved as "interrupted" when it starts and marked "complete" when it finishes, so a
crash leaves it marked interrupted. The file itself is history_file.py's: a database that cannot
be read is never overwritten (checked before anything is written to it, opened read-only with
`problem` saying why, moved aside by `start_fresh()` when the user asks); the window checks it in
the background (`check_in_background`: SQLite's quick_check reads the whole file, 0.6-0.8 s for a
year of use), the history read at once and its first write waiting for the answer. Every sqlite
error comes out as a HistoryError with one line; HistoryUnavailable when the store may answer
later (locked by another Draftlight, disk full, I/O). A write waits for another process's lock
only `busy_timeout` seconds: the GUI thread does the writing.

A conversation is a tree: each message names the one it answers or follows (parent_id), and
siblings are branches (a regenerated reply beside the one it replaced, an edited question beside
the first); the conversation remembers the last message of the branch shown (shown_leaf), and
`messages` gives that branch. The tables and their migration are in history_schema.py.

Search goes through a trigram full-text index of the messages (messages_fts, FTS5), so it reads
the matching rows, not every message; version 1 files get the index when first opened.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from draftlight import paths
from draftlight.store.figure_numbers import LARGEST, may_hold_bad_numbers, sane_figures
from draftlight.store.history_file import (  # noqa: F401 - the errors are the history's words
    HistoryError, HistoryFile, HistoryUnavailable, sqlite_errors)
from draftlight.store.search_match import (SHORTEST_TEXT_SEARCH, messages_holding, searchable,
                                           title_pattern)

FILE_NAME = "history.sqlite3"
SHOWN = object()  # add_message's default parent: the conversation's last message shown
BUSY_TIMEOUT = 0.25  # seconds a write waits for another process's lock before giving up
COMPLETE, INTERRUPTED = "complete", "interrupted"


@dataclass
class Conversation:
    id: int
    title: str
    created: float
    updated: float


@dataclass
class Message:
    id: int
    conversation_id: int
    role: str
    text: str
    runs: list[list[int]] = field(default_factory=list)
    stats: dict | None = None
    status: str = COMPLETE
    mode: str | None = None
    parent_id: int | None = None  # the message it follows (None: the first of its branch)


def history_path() -> Path:
    return paths.data_dir() / FILE_NAME


class History(HistoryFile):
    """The conversations and their messages, on one connection used from one thread (the
    GUI's). Opening the file, its check and its writes are HistoryFile's (history_file.py);
    `problem` is None when all is well (while a background check runs: as far as is known yet,
    see `settle`)."""

    def __init__(self, path: str | Path | None = None, *,
                 busy_timeout: float = BUSY_TIMEOUT, check_in_background: bool = False) -> None:
        self._branched_for: sqlite3.Connection | None = None  # the connection _branched asked
        self._has_branches = False
        super().__init__(history_path() if path is None else path, busy_timeout=busy_timeout,
                         check_in_background=check_in_background)

    # --- conversations ---------------------------------------------------------------------

    def create_conversation(self, title: str) -> int:
        now = time.time()
        with self._writing() as db:
            cursor = db.execute(
                "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)",
                (title, now, now))
        return int(cursor.lastrowid)

    def conversations(self, search: str = "") -> list[Conversation]:
        """Newest first; `search` matches titles and message text (case-insensitive; a search
        shorter than SHORTEST_TEXT_SEARCH characters, titles only).

        Raises:
            SearchTooLong: `search` is over search_match.LONGEST_SEARCH characters."""
        if self._db is None or not searchable(search):
            return []
        if not search:
            with sqlite_errors("read"):
                return [Conversation(*row) for row in self._db.execute(
                    "SELECT id, title, created, updated FROM conversations "
                    "ORDER BY updated DESC, id DESC")]
        with sqlite_errors("read"):
            holding = ({row[0] for row in messages_holding(self._db, search,
                                                           indexed=self._indexed())}
                       if len(search) >= SHORTEST_TEXT_SEARCH else set())
            rows = self._db.execute("SELECT id, title, created, updated, title LIKE ? ESCAPE "
                                    "'\\' FROM conversations ORDER BY updated DESC, id DESC",
                                    (title_pattern(search),))
            return [Conversation(*row[:4]) for row in rows if row[4] or row[0] in holding]

    def _indexed(self) -> bool:
        with sqlite_errors("read"):
            return self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts'"
                                    ).fetchone() is not None

    def conversation(self, conversation_id: int) -> Conversation | None:
        if self._db is None:
            return None
        with sqlite_errors("read"):
            row = self._db.execute("SELECT id, title, created, updated FROM conversations "
                                   "WHERE id = ?", (conversation_id,)).fetchone()
        return Conversation(*row) if row else None

    def rename(self, conversation_id: int, title: str) -> None:
        with self._writing() as db:
            db.execute("UPDATE conversations SET title = ? WHERE id = ?",
                       (title, conversation_id))

    def delete(self, conversation_id: int) -> None:
        with self._writing() as db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    # --- messages --------------------------------------------------------------------------

    def add_message(self, conversation_id: int, role: str, text: str, *,
                    runs: list | None = None, stats: dict | None = None,
                    status: str = COMPLETE, mode: str | None = None,
                    parent: int | None | object = SHOWN) -> int:
        """A message after `parent` (by default the last one shown: the conversation goes on;
        a message with siblings starts a branch). The conversation then shows it."""
        now = time.time()
        with self._writing() as db:
            if parent is SHOWN:
                row = db.execute("SELECT shown_leaf FROM conversations WHERE id = ?",
                                 (conversation_id,)).fetchone()
                parent = row[0] if row else None
            cursor = db.execute(
                "INSERT INTO messages (conversation_id, role, text, provenance, stats, status, "
                "mode, created, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, role, text, _json(runs), _json(stats), status, mode, now,
                 parent))
            db.execute("UPDATE conversations SET updated = ?, shown_leaf = ? WHERE id = ?",
                       (now, cursor.lastrowid, conversation_id))
        return int(cursor.lastrowid)

    def update_message(self, message_id: int, text: str, *, runs: list | None = None,
                       stats: dict | None = None, status: str = COMPLETE) -> None:
        with self._writing() as db:
            db.execute("UPDATE messages SET text = ?, provenance = ?, stats = ?, status = ? "
                       "WHERE id = ?", (text, _json(runs), _json(stats), status, message_id))

    def delete_message(self, message_id: int) -> None:
        """The message and what follows it in its branch; a conversation that showed them
        shows the message before."""
        with self._writing() as db:
            row = db.execute("SELECT conversation_id, parent_id FROM messages WHERE id = ?",
                             (message_id,)).fetchone()
            db.execute("DELETE FROM messages WHERE id = ?", (message_id,))
            if row:
                db.execute("UPDATE conversations SET shown_leaf = ? WHERE id = ? AND "
                           "shown_leaf NOT IN (SELECT id FROM messages)", (row[1], row[0]))

    def _branched(self) -> bool:
        """Whether the file keeps branches (version 3; an older one opened read-only does not),
        asked once per connection: the chat asks it for every message it shows."""
        if self._branched_for is not self._db:
            with sqlite_errors():
                self._has_branches = any(row[1] == "parent_id" for row in
                                         self._db.execute("PRAGMA table_info(messages)"))
            self._branched_for = self._db
        return self._has_branches

    def siblings(self, message_id: int) -> list[int]:
        """The messages that answer or follow what `message_id` does (itself included), oldest
        first: the branches at that point."""
        if self._db is None or not self._branched():
            return [message_id]
        with sqlite_errors():
            rows = self._db.execute(
                "SELECT id FROM messages WHERE conversation_id = (SELECT conversation_id FROM "
                "messages WHERE id = ?1) AND parent_id IS (SELECT parent_id FROM messages "
                "WHERE id = ?1) ORDER BY id", (message_id,)).fetchall()
        return [row[0] for row in rows] or [message_id]

    def show_branch(self, message_id: int) -> None:
        """Show the branch through `message_id`: it, then the newest message after each."""
        with self._writing() as db:
            leaf = message_id
            while (child := db.execute("SELECT max(id) FROM messages WHERE parent_id = ?",
                                       (leaf,)).fetchone()[0]) is not None:
                leaf = child
            db.execute("UPDATE conversations SET shown_leaf = ? WHERE id = (SELECT "
                       "conversation_id FROM messages WHERE id = ?)", (leaf, message_id))

    def messages(self, conversation_id: int) -> list[Message]:
        """The branch shown: from the first message to the conversation's shown leaf."""
        every, leaf = self.tree(conversation_id)
        by_id = {m.id: m for m in every}
        at, branch = leaf, []
        while at is not None and at in by_id and len(branch) <= len(every):
            branch.append(by_id[at])
            at = by_id[at].parent_id
        return branch[::-1]

    def tree(self, conversation_id: int) -> tuple[list[Message], int | None]:
        """Every message of every branch, oldest first (each after its parent), and the one
        the conversation shows last (its shown leaf)."""
        if self._db is None:
            return [], None
        branches = self._branched()  # an older file opened read-only is one list
        with sqlite_errors():
            rows = self._db.execute(
                "SELECT id, conversation_id, role, text, provenance, stats, status, mode, "
                f"{'parent_id' if branches else 'NULL'} FROM messages WHERE "
                "conversation_id = ? ORDER BY id", (conversation_id,)).fetchall()
            leaf = self._db.execute("SELECT shown_leaf FROM conversations WHERE id = ?",
                                    (conversation_id,)).fetchone() if branches else None
        if not branches:
            rows = [row[:8] + (rows[i - 1][0] if i else None,) for i, row in enumerate(rows)]
        ids = {row[0] for row in rows}
        shown = leaf[0] if leaf and leaf[0] in ids else (rows[-1][0] if rows else None)
        return [Message(id_, conv, role, text, _runs(prov), _stats(stats), status, mode, parent)
                for id_, conv, role, text, prov, stats, status, mode, parent in rows], shown


def _json(value) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def _runs(raw: str | None) -> list[list[int]]:
    """Runs as stored; anything malformed is dropped rather than shown wrongly."""
    try:
        runs = json.loads(raw) if raw else []
    except ValueError:
        return []
    good = []
    for run in runs if isinstance(runs, list) else []:
        if (isinstance(run, list) and len(run) == 3 and all(isinstance(v, int) for v in run)
                and 0 <= run[0] < run[1] <= LARGEST and 0 <= run[2] <= LARGEST):
            good.append(run)
    return good


def _stats(raw: str | None) -> dict | None:
    """Figures as stored, less any that hold a number no use can hold (an import before these
    were checked kept an Infinity or a 4,000-digit count: figure_numbers.py)."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    return sane_figures(value)[0] if may_hold_bad_numbers(raw) else value
