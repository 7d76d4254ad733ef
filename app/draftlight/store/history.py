"""Chat history in SQLite (paths.data_dir()/history.sqlite3). Imports no Qt.

Each assistant message keeps its provenance: the runs of accepted draft tokens, as
[[start, end, tokens], ...] with start/end character offsets into the message text (Python str
indices) and tokens the run's length in tokens; text outside the runs came from the target. Its
statistics are kept as the JSON of Stats.to_dict(), with the window's "passes" (one per target
pass) and "origins" (one per run: where its drafted tokens came from) when it recorded them;
older replies lack them and show them as not known.

A reply is saved as "interrupted" when it starts and marked "complete" when it finishes, so a
crash leaves it marked interrupted. A database that cannot be read is never overwritten: it is
opened read-only (or not at all) and `problem` says why; `start_fresh()` moves it aside (never
deletes it) and creates a new one when the user asks for that.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path

from draftlight import paths

FILE_NAME = "history.sqlite3"
SCHEMA_VERSION = 1
COMPLETE, INTERRUPTED = "complete", "interrupted"

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    text TEXT NOT NULL,
    provenance TEXT,  -- JSON [[start, end, tokens], ...] of accepted draft runs
    stats TEXT,  -- JSON of Stats.to_dict()
    status TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
    mode TEXT,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
"""


class HistoryError(Exception):
    """The history cannot be written (it is read-only or unavailable); one line for the UI."""


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


def history_path() -> Path:
    return paths.data_dir() / FILE_NAME


class History:
    """One connection, used from one thread (the GUI's). `problem` is None when all is well."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            path = history_path()
        self.path = None if str(path) == ":memory:" else Path(path)  # None: in memory
        self.problem: str | None = None
        self.read_only = False
        self._db: sqlite3.Connection | None = None
        self._open()

    # --- opening ---------------------------------------------------------------------------

    def _open(self) -> None:
        if self.path is None:
            self._db = self._connect(":memory:")
            self._create()
            return
        try:
            db = self._connect(str(self.path))
            db.execute("PRAGMA journal_mode=WAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                db.close()
                self._open_read_only(f"{self.path.name} was written by a newer Draftlight")
                return
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                db.close()
                self._open_read_only(f"{self.path.name} is damaged ({check})")
                return
            self._db = db
            self._create()
        except sqlite3.DatabaseError as exc:
            self._open_read_only(f"{self.path.name} cannot be used ({exc})")

    def _connect(self, target: str, read_only: bool = False) -> sqlite3.Connection:
        if read_only:
            db = sqlite3.connect(f"{Path(target).as_uri()}?mode=ro", uri=True)
        else:
            db = sqlite3.connect(target)
        db.execute("PRAGMA foreign_keys=ON")
        return db

    def _open_read_only(self, reason: str) -> None:
        self.read_only = True
        self.problem = (f"History is read-only: {reason}. It was left untouched; "
                        f"start a new history to keep chatting with history saved.")
        try:
            db = self._connect(str(self.path), read_only=True)
            db.execute("SELECT count(*) FROM conversations").fetchone()
            db.execute("SELECT count(*) FROM messages").fetchone()
            self._db = db
        except sqlite3.DatabaseError:
            self._db = None  # unreadable: show an empty list

    def _create(self) -> None:
        with self._db:
            self._db.executescript(SCHEMA)
            self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def start_fresh(self) -> Path | None:
        """Move an unusable file aside (history.sqlite3.corrupt-…) and create a new history.

        Returns where the old file went (None if there was none)."""
        self.close()
        moved = None
        if self.path is not None and self.path.exists():
            moved = self.path.with_name(
                f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            os.replace(self.path, moved)
            for suffix in ("-wal", "-shm"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    os.replace(side, moved.with_name(moved.name + suffix))
        self.problem, self.read_only = None, False
        self._open()
        return moved

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _writable(self) -> sqlite3.Connection:
        if self._db is None or self.read_only:
            raise HistoryError(self.problem or "history is closed")
        return self._db

    # --- conversations ---------------------------------------------------------------------

    def create_conversation(self, title: str) -> int:
        db = self._writable()
        now = time.time()
        with db:
            cursor = db.execute(
                "INSERT INTO conversations (title, created, updated) VALUES (?, ?, ?)",
                (title, now, now))
        return int(cursor.lastrowid)

    def conversations(self, search: str = "") -> list[Conversation]:
        """Newest first; `search` matches titles and message text (case-insensitive)."""
        if self._db is None:
            return []
        sql = "SELECT id, title, created, updated FROM conversations"
        args: tuple = ()
        if search:
            pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace(
                "_", "\\_") + "%"
            sql += (" WHERE title LIKE ? ESCAPE '\\' OR id IN (SELECT conversation_id FROM "
                    "messages WHERE text LIKE ? ESCAPE '\\')")
            args = (pattern, pattern)
        sql += " ORDER BY updated DESC, id DESC"
        return [Conversation(*row) for row in self._db.execute(sql, args)]

    def conversation(self, conversation_id: int) -> Conversation | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT id, title, created, updated FROM conversations "
                               "WHERE id = ?", (conversation_id,)).fetchone()
        return Conversation(*row) if row else None

    def rename(self, conversation_id: int, title: str) -> None:
        db = self._writable()
        with db:
            db.execute("UPDATE conversations SET title = ? WHERE id = ?",
                       (title, conversation_id))

    def delete(self, conversation_id: int) -> None:
        db = self._writable()
        with db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    # --- messages --------------------------------------------------------------------------

    def add_message(self, conversation_id: int, role: str, text: str, *,
                    runs: list | None = None, stats: dict | None = None,
                    status: str = COMPLETE, mode: str | None = None) -> int:
        db = self._writable()
        now = time.time()
        with db:
            cursor = db.execute(
                "INSERT INTO messages (conversation_id, role, text, provenance, stats, status, "
                "mode, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, role, text, _json(runs), _json(stats), status, mode, now))
            db.execute("UPDATE conversations SET updated = ? WHERE id = ?",
                       (now, conversation_id))
        return int(cursor.lastrowid)

    def update_message(self, message_id: int, text: str, *, runs: list | None = None,
                       stats: dict | None = None, status: str = COMPLETE) -> None:
        db = self._writable()
        with db:
            db.execute("UPDATE messages SET text = ?, provenance = ?, stats = ?, status = ? "
                       "WHERE id = ?", (text, _json(runs), _json(stats), status, message_id))

    def delete_message(self, message_id: int) -> None:
        db = self._writable()
        with db:
            db.execute("DELETE FROM messages WHERE id = ?", (message_id,))

    def messages(self, conversation_id: int) -> list[Message]:
        if self._db is None:
            return []
        rows = self._db.execute(
            "SELECT id, conversation_id, role, text, provenance, stats, status, mode "
            "FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,))
        return [Message(id_, conv, role, text, _runs(prov), _stats(stats), status, mode)
                for id_, conv, role, text, prov, stats, status, mode in rows]


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
                and 0 <= run[0] < run[1]):
            good.append(run)
    return good


def _stats(raw: str | None) -> dict | None:
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
